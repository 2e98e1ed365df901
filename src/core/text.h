// Small text encodings more than one component needs: lower-case hex of bytes (key hashes, random
// keys) and one round of percent-decoding (URLs on the server, paths a model sends to the tools).
#pragma once

#include <string>
#include <string_view>

namespace pf {

// Two lower-case hex digits per byte.
std::string hex_encode(std::string_view bytes);

// Decodes %XX escapes once (a malformed escape stays as written); with plus_is_space, '+' is a
// space as in a query string.
std::string percent_decode(std::string_view text, bool plus_is_space = false);

}  // namespace pf
