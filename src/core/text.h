// Small text encodings more than one component needs: lower-case hex of bytes (key hashes, random
// keys), one round of percent-decoding (URLs on the server, paths a model sends to the tools) and
// URL redaction (error messages that leave the server).
#pragma once

#include <string>
#include <string_view>

namespace pf {

// n random letters and digits (not for secrets: ids of messages and conversations).
std::string random_id(size_t n = 16);

// ASCII letters lower-cased (identifiers, host and user names; not for prose).
std::string ascii_lower(std::string_view text);

// text without leading and trailing spaces, tabs and line ends.
std::string trim_space(std::string_view text);

// Two lower-case hex digits per byte.
std::string hex_encode(std::string_view bytes);

// Decodes %XX escapes once (a malformed escape stays as written); with plus_is_space, '+' is a
// space as in a query string.
std::string percent_decode(std::string_view text, bool plus_is_space = false);

// Replaces each http:// or https:// URL (through the next whitespace) with replacement. One pass,
// no regular expression: the text can be a provider's error message of any length.
std::string redact_urls(std::string_view text, std::string_view replacement);

// An estimate of model tokens: words plus punctuation marks (code tokenizes near one token per
// word or symbol; prose a little under). Closer than the reference's characters / 4 on code.
int estimate_tokens(std::string_view text);

// Counts UTF-8 code points (bytes that do not continue a sequence).
size_t code_points(std::string_view text);

// Standard base64 (RFC 4648, with '=' padding) of bytes.
std::string base64_encode(std::string_view bytes);

}  // namespace pf
