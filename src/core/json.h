// The one way JSON from outside enters pilotfish (request bodies, provider replies, a model's tool
// arguments, package.json files of an indexed repository). nlohmann's parser and destructor do
// not recurse, but dump() and every walk over a value do: a document nested 150,000 deep parses
// fine and then overflows the stack wherever it is next written out, far from where it came in.
// Parsing through here refuses such documents at the door.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace pf {

// Deeper than any real request, reply or package.json; shallow enough for any recursion.
inline constexpr int kMaxJsonDepth = 256;

// Parses text. Returns a discarded value (is_discarded()) when text is not JSON or nests arrays
// and objects deeper than kMaxJsonDepth; then *why, when given, says which.
nlohmann::json parse_json(std::string_view text, std::string* why = nullptr);

// Reading members of outside JSON without trusting their types: the member as a string, or ""
// when absent or not a string; as a whole number (a float truncated, one out of int64's range
// or not a number: 0); never throws.
std::string json_string(const nlohmann::json& object, const char* key);
int64_t json_int(const nlohmann::json& object, const char* key);

}  // namespace pf
