// Bounded JSON parsing (see json.h).
#include "core/json.h"

#include <algorithm>

namespace pf {
namespace {

// The deepest nesting of arrays and objects in text, counting brackets outside strings only.
// One pass, no allocation; for text that is not JSON the figure is meaningless but harmless.
int nesting_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;  // the escaped character cannot end the string
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

nlohmann::json parse_json(std::string_view text, std::string* why) {
  if (nesting_depth(text) > kMaxJsonDepth) {
    if (why) *why = "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
    return nlohmann::json(nlohmann::json::value_t::discarded);
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() && why) *why = "not valid JSON";
  return j;
}

std::string json_string(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return {};
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t json_int(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return 0;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return 0;
  if (it->is_number_unsigned()) return static_cast<int64_t>(it->get<uint64_t>() & INT64_MAX);
  if (it->is_number_integer()) return it->get<int64_t>();
  double d = it->get<double>();
  return d > -9e18 && d < 9e18 ? static_cast<int64_t>(d) : 0;  // NaN fails both
}

}  // namespace pf
