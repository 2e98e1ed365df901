// Content hashing for change detection. Not cryptographic: it decides whether a file changed
// since the last index run, so it must be fast (it runs over every changed byte) and stable
// across runs, machines and builds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace pf {

uint64_t hash64(std::string_view data);
// 16 lower-case hex digits.
std::string hash_hex(std::string_view data);

}  // namespace pf
