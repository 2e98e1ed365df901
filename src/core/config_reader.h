// What every part of the configuration loader uses, core's (config.cpp, config_actions.cpp) and
// the sections components parse themselves (ConfigSection, e.g. bridge/bridge_config.cpp): a
// reader that checks each key's type and names the key in its errors (a ConfigError).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/config.h"

namespace pf::config_detail {

// ordered_json keeps the file's order: providers and models are listed, and ties resolved, in it.
using json = nlohmann::ordered_json;

[[noreturn]] inline void fail(const std::string& source, const std::string& key,
                              const std::string& what) {
  throw ConfigError("config " + source + ": " + key + ": " + what);
}

inline const char* kind(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::discarded:
      return "nothing";
    default:
      return "a number";
  }
}

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  void only_keys(const json& obj, const std::string& at, std::initializer_list<const char*> keys) {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      bool known = false;
      for (const char* k : keys) known |= it.key() == k;
      if (!known) {
        std::string list;
        for (const char* k : keys) list += (list.empty() ? "" : ", ") + std::string(k);
        fail(source_, join(at, it.key()), "unknown key (expected one of: " + list + ")");
      }
    }
  }
  const json& object(const json& parent, const std::string& at, const char* key) {
    auto it = parent.find(key);  // not at(): its out_of_range is no ConfigError (fuzz_config)
    if (it == parent.end()) fail(source_, join(at, key), "missing");
    const json& v = *it;
    if (!v.is_object())
      fail(source_, join(at, key), std::string("expected an object, got ") + kind(v));
    return v;
  }
  std::string string(const json& parent, const std::string& at, const char* key, bool required) {
    auto it = parent.find(key);
    if (it == parent.end()) {
      if (required) fail(source_, join(at, key), "missing");
      return {};
    }
    if (!it->is_string())
      fail(source_, join(at, key), std::string("expected a string, got ") + kind(*it));
    return it->get<std::string>();
  }
  int64_t integer(const json& parent, const std::string& at, const char* key, int64_t min,
                  int64_t max, int64_t fallback) {
    auto it = parent.find(key);
    if (it == parent.end()) return fallback;
    if (!it->is_number_integer() || it->get<int64_t>() < min || it->get<int64_t>() > max)
      fail(source_, join(at, key),
           "expected a whole number from " + std::to_string(min) + " to " + std::to_string(max));
    return it->get<int64_t>();
  }
  const std::string& source() const { return source_; }
  static std::string join(const std::string& at, const std::string& key) {
    return at.empty() ? key : at + "." + key;
  }

 private:
  std::string source_;
};

// A provider, platform or bot name may not be empty or contain ':' or whitespace.
bool bad_name(std::string_view name);

// id is "provider:model" with a configured provider, else a ConfigError naming key.
void check_model_id(const Config& cfg, const std::string& key, const std::string& id);

// Parses an mcpServers object into out (config_actions.cpp).
void parse_mcp(Reader& r, const json& servers, const std::string& at, std::vector<McpServerConfig>& out);

// Parses the "actions" and "permissions" sections (config_actions.cpp).
void parse_actions(Reader& r, const json& actions, ActionsConfig& out);
void parse_permissions(Reader& r, const json& permissions, PermissionsConfig& out);

// A list of strings under key (absent: empty), or a ConfigError naming the element.
std::vector<std::string> strings(Reader& r, const json& parent, const std::string& at,
                                 const char* key);
// A list of action kinds ("write", "shell", "url").
std::vector<std::string> action_kinds(Reader& r, const json& parent, const std::string& at,
                                      const char* key);

}  // namespace pf::config_detail
