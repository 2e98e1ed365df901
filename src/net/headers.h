// HTTP header fields as both the client and the server hand them over: (name, value) pairs in
// the order received, looked up without regard to case as RFC 9110 says names compare.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pf {

using HeaderFields = std::vector<std::pair<std::string, std::string>>;

// The first value of the named field, or empty.
std::string header_value(const HeaderFields& fields, std::string_view name);

}  // namespace pf
