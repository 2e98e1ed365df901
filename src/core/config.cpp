// Configuration loading and validation (see config.h). Every check says where it failed with a
// JSON-path-like key, so that a user can fix the file without reading code.
#include "core/config.h"

#include <sys/stat.h>

#include <cstdlib>
#include <functional>
#include <mutex>
#include <set>
#include <nlohmann/json.hpp>

#include "core/config_reader.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/text.h"

namespace pf {

using config_detail::fail;
using config_detail::json;
using config_detail::kind;
using config_detail::Reader;

bool config_detail::bad_name(std::string_view name) {
  if (name.empty()) return true;
  for (char c : name)
    if (c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r') return true;
  return false;
}

void config_detail::check_model_id(const Config& cfg, const std::string& key, const std::string& id) {
  auto parts = split_model_id(id);
  if (!parts) fail(cfg.source, key, "expected \"provider:model\", got \"" + id + "\"");
  if (!cfg.provider(parts->first))
    fail(cfg.source, key,
         "unknown provider \"" + parts->first + "\" (configure it under providers)");
}

namespace {

// The components' sections (register_config_section), guarded: registration runs from static
// initializers, parsing from any thread.
std::mutex& sections_mutex() {
  static std::mutex m;
  return m;
}
struct SectionEntry {
  ConfigSectionParser parse = nullptr;
  std::vector<std::string> after;  // sections parsed before this one
};
std::map<std::string, SectionEntry>& sections_registry() {
  static std::map<std::string, SectionEntry> parsers;
  return parsers;
}
std::map<std::string, SectionEntry> sections_snapshot() {
  std::lock_guard<std::mutex> lock(sections_mutex());
  return sections_registry();
}
// The keys in parsing order: by key, except that a section comes after those it names (a name
// that is not registered, or a cycle, is ignored).
std::vector<std::string> parse_order(const std::map<std::string, SectionEntry>& sections) {
  std::vector<std::string> order;
  std::set<std::string> done, visiting;
  std::function<void(const std::string&)> visit = [&](const std::string& key) {
    if (done.count(key) || visiting.count(key) || !sections.count(key)) return;
    visiting.insert(key);
    for (const auto& a : sections.at(key).after) visit(a);
    visiting.erase(key);
    done.insert(key);
    order.push_back(key);
  };
  for (const auto& [key, entry] : sections) visit(key);
  return order;
}

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// scheme://host[:port], nothing after: what a browser sends in Origin. Not std::regex: its
// matcher recurses once a character, and a long string overflowed the stack.
bool is_origin(std::string_view v) {
  size_t scheme = v.rfind("http://", 0) == 0 ? 7 : v.rfind("https://", 0) == 0 ? 8 : 0;
  if (scheme == 0) return false;
  std::string_view rest = v.substr(scheme), host;
  bool bracketed = !rest.empty() && rest[0] == '[';
  size_t end = bracketed ? rest.find(']') : rest.find(':');
  if (bracketed && end == std::string_view::npos) return false;
  host = bracketed ? rest.substr(1, end - 1) : rest.substr(0, end);
  rest = end == std::string_view::npos ? std::string_view() : rest.substr(bracketed ? end + 1 : end);
  const char* allowed = bracketed ? "0123456789abcdefABCDEF:."
                                  : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-";
  if (host.empty() || host.find_first_not_of(allowed) != std::string_view::npos) return false;
  if (rest.empty()) return true;
  std::string_view port = rest.substr(1);
  return rest[0] == ':' && !port.empty() && port.size() <= 5 &&
         port.find_first_not_of("0123456789") == std::string_view::npos;
}

// A provider's or model's wireApi: "chat" or "responses" (OpenAI's and Azure's APIs only).
std::string wire_api_of(Reader& r, const json& obj, const std::string& at, const std::string& type) {
  std::string v = r.string(obj, at, "wireApi", false);
  if (v.empty()) return v;
  if (v != "chat" && v != "responses")
    fail(r.source(), at + ".wireApi", "expected \"chat\" or \"responses\", got \"" + v + "\"");
  if (v == "responses" && type != "openai" && type != "azure")
    fail(r.source(), at + ".wireApi", "the Responses API is OpenAI's (and Azure OpenAI's)");
  return v;
}

// A model's temperature, topP, topK and seed, each checked against what its provider's API has.
Sampling parse_sampling(Reader& r, const json& m, const std::string& at, const std::string& type) {
  Sampling out;
  auto real = [&](const char* key, bool zero_allowed, double max, const char* range) -> std::optional<double> {
    if (!m.contains(key)) return std::nullopt;
    const json& v = m.at(key);
    double d = v.is_number() ? v.get<double>() : -1;
    if (!v.is_number() || d > max || d < 0 || (!zero_allowed && d == 0))
      fail(r.source(), at + "." + key, std::string("expected a number ") + range);
    return d;
  };
  out.temperature = real("temperature", true, 2, "from 0 to 2");
  out.top_p = real("topP", false, 1, "above 0, at most 1");
  if (m.contains("topK")) {
    if (type == "openai" || type == "azure") fail(r.source(), at + ".topK", "OpenAI's API has no top_k");
    out.top_k = static_cast<int>(r.integer(m, at, "topK", 1, 1000, 40));
  }
  if (m.contains("seed")) {
    if (type == "anthropic") fail(r.source(), at + ".seed", "Anthropic's API has no seed");
    out.seed = static_cast<uint32_t>(r.integer(m, at, "seed", 0, 4294967295LL, 0));
  }
  return out;
}

void parse_logging(Reader& r, const json& l, LoggingConfig& out) {
  r.only_keys(l, "logging", {"level", "file", "maxSizeMb", "maxFiles", "format"});
  out.level = r.string(l, "logging", "level", false);
  log::Level level;
  if (!out.level.empty() && !log::parse_level(out.level, &level))
    fail(r.source(), "logging.level", "expected debug, info, warn, error or off");
  out.file = r.string(l, "logging", "file", false);
  if (out.file.rfind("~/", 0) == 0) out.file = home_dir() + out.file.substr(1);
  if (l.contains("file") && out.file.empty()) fail(r.source(), "logging.file", "empty");
  out.max_size_mb = r.integer(l, "logging", "maxSizeMb", 1, 10240, out.max_size_mb);
  out.max_files = r.integer(l, "logging", "maxFiles", 0, 100, out.max_files);
  std::string format = r.string(l, "logging", "format", false);
  if (!format.empty() && format != "text" && format != "json")
    fail(r.source(), "logging.format", "expected \"text\" or \"json\", got \"" + format + "\"");
  out.json = format == "json";
}

void parse_server(Reader& r, const json& s, ServerConfig& out) {
  const std::string& source = r.source();
  r.only_keys(s, "server",
              {"listen", "apiKeys", "repository", "reindexSchedule", "limits", "sendFinishReason",
               "corsOrigins", "webPage"});
  if (s.contains("webPage")) {
    if (!s.at("webPage").is_boolean()) fail(source, "server.webPage", "expected true or false");
    out.web_page = s.at("webPage").get<bool>();
  }
  if (s.contains("corsOrigins")) {
    const json& o = s.at("corsOrigins");
    if (!o.is_array()) fail(source, "server.corsOrigins", std::string("expected an array, got ") + kind(o));
    for (size_t i = 0; i < o.size(); ++i) {
      std::string at = "server.corsOrigins[" + std::to_string(i) + "]";
      if (!o[i].is_string()) fail(source, at, std::string("expected a string, got ") + kind(o[i]));
      std::string v = o[i];
      if (v != "*" && !is_origin(v))
        fail(source, at, "expected an origin such as https://portal.example.com (scheme, host, "
                         "optional port, no path) or \"*\", got \"" + v + "\"");
      out.cors_origins.push_back(v);
    }
  }
  if (s.contains("listen")) {
    out.listen = r.string(s, "server", "listen", true);
    size_t colon = out.listen.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == out.listen.size() ||
        out.listen.find_first_not_of("0123456789", colon + 1) != std::string::npos)
      fail(source, "server.listen", "expected host:port, got \"" + out.listen + "\"");
  }
  out.repository = r.string(s, "server", "repository", false);
  if (s.contains("reindexSchedule"))
    out.reindex_schedule = r.string(s, "server", "reindexSchedule", true);
  if (s.contains("sendFinishReason")) {
    if (!s.at("sendFinishReason").is_boolean())
      fail(source, "server.sendFinishReason", "expected true or false");
    out.send_finish_reason = s.at("sendFinishReason").get<bool>();
  }
  if (s.contains("limits")) {
    const json& l = r.object(s, "server", "limits");
    r.only_keys(l, "server.limits",
                {"maxBodyBytes", "maxMessageChars", "maxHistoryMessages", "answersInSetup"});
    out.max_body_bytes =
        r.integer(l, "server.limits", "maxBodyBytes", 1024, int64_t(1) << 30, out.max_body_bytes);
    out.max_message_chars =
        r.integer(l, "server.limits", "maxMessageChars", 1, 10000000, out.max_message_chars);
    out.max_history_messages =
        r.integer(l, "server.limits", "maxHistoryMessages", 0, 10000, out.max_history_messages);
    out.answers_in_setup =
        r.integer(l, "server.limits", "answersInSetup", 0, 100000, out.answers_in_setup);
  }
  if (s.contains("apiKeys")) {
    const json& keys = s.at("apiKeys");
    if (!keys.is_array())
      fail(source, "server.apiKeys", std::string("expected an array, got ") + kind(keys));
    for (size_t i = 0; i < keys.size(); ++i) {
      std::string at = "server.apiKeys[" + std::to_string(i) + "]";
      const json& k = keys[i];
      if (!k.is_object()) fail(source, at, std::string("expected an object, got ") + kind(k));
      if (k.contains("key"))
        fail(source, at + ".key",
             "keys do not belong in the config file: give its hash (pilotfish hash-key)");
      r.only_keys(k, at, {"name", "hash", "role"});
      ApiKeyConfig key;
      key.name = r.string(k, at, "name", true);
      std::string hash = r.string(k, at, "hash", true);
      key.role = r.string(k, at, "role", true);
      if (hash.size() != 71 || hash.rfind("sha256:", 0) != 0 ||
          hash.find_first_not_of("0123456789abcdef", 7) != std::string::npos)
        fail(source, at + ".hash",
             "expected \"sha256:\" and 64 lower-case hex digits (pilotfish hash-key prints it)");
      key.sha256_hex = hash.substr(7);
      if (key.role != "user" && key.role != "admin")
        fail(source, at + ".role", "expected \"user\" or \"admin\", got \"" + key.role + "\"");
      out.api_keys.push_back(std::move(key));
    }
  }
}

}  // namespace

const ProviderConfig* Config::provider(std::string_view name) const {
  for (const auto& p : providers)
    if (p.name == name) return &p;
  for (const auto& p : providers)  // then without regard to case: /model OLLAMA-LOCAL
    if (ascii_lower(p.name) == ascii_lower(name)) return &p;
  return nullptr;
}

std::optional<std::pair<std::string, std::string>> split_model_id(std::string_view id) {
  size_t colon = id.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 >= id.size()) return std::nullopt;
  return std::pair{std::string(id.substr(0, colon)), std::string(id.substr(colon + 1))};
}

bool register_config_section(const std::string& key, ConfigSectionParser parse,
                             std::vector<std::string> after) {
  std::lock_guard<std::mutex> lock(sections_mutex());
  sections_registry()[key] = SectionEntry{parse, std::move(after)};
  return true;
}

Config parse_config(std::string_view text, const std::string& source) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    // A parse error, or a number too large for a double (out_of_range): e.what() names the
    // byte offset; keep the message on one line.
    throw ConfigError("config " + source + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  Reader r(source);
  Config cfg;
  cfg.source = source;
  if (!root.is_object())
    fail(source, "(top level)", std::string("expected an object, got ") + kind(root));
  const auto sections = sections_snapshot();
  for (auto it = root.begin(); it != root.end(); ++it) {
    static const std::set<std::string> kCore = {"providers", "defaults",    "server", "actions",
                                                "permissions", "mcp", "logging"};
    if (kCore.count(it.key()) || sections.count(it.key())) continue;
    std::string list = "actions, defaults, logging, mcp, permissions, providers, server";
    for (const auto& [key, parse] : sections) list += ", " + key;
    fail(source, it.key(), "unknown key (expected one of: " + list + ")");
  }

  if (root.contains("providers")) {
    const json& providers = r.object(root, "", "providers");
    for (auto it = providers.begin(); it != providers.end(); ++it) {
      std::string at = "providers." + it.key();
      if (config_detail::bad_name(it.key()))
        fail(source, at, "a provider name may not be empty or contain ':' or whitespace");
      if (!it->is_object()) fail(source, at, std::string("expected an object, got ") + kind(*it));
      const json& p = *it;
      if (p.contains("apiKey") || p.contains("bearerToken"))
        fail(source, Reader::join(at, p.contains("apiKey") ? "apiKey" : "bearerToken"),
             "secrets do not belong in the config file: put the key in an environment variable and "
             "name it in apiKeyEnv or bearerTokenEnv");
      r.only_keys(p, at, {"type", "baseUrl", "apiKeyEnv", "bearerTokenEnv", "models", "apiVersion",
                          "wireApi"});
      ProviderConfig pc;
      pc.name = it.key();
      pc.type = r.string(p, at, "type", true);
      if (pc.type != "openai" && pc.type != "azure" && pc.type != "anthropic" && pc.type != "local")
        fail(source, at + ".type",
             "expected \"openai\", \"azure\", \"anthropic\" or \"local\", got \"" + pc.type + "\"");
      pc.api_version = r.string(p, at, "apiVersion", pc.type == "azure");
      if (pc.type == "azure" && pc.api_version.empty())
        fail(source, at + ".apiVersion", "Azure OpenAI needs its api-version, e.g. \"2024-10-21\"");
      if (pc.type != "azure" && !pc.api_version.empty())
        fail(source, at + ".apiVersion", "only an Azure OpenAI provider (type \"azure\") has one");
      pc.wire_api = wire_api_of(r, p, at, pc.type);
      // A local provider runs GGUF files in process: no server, so no URL.
      pc.base_url = r.string(p, at, "baseUrl", pc.type != "local");
      if (pc.type == "local" && !pc.base_url.empty())
        fail(source, at + ".baseUrl", "a local provider has no server; give each model a path");
      if (pc.type != "local" && pc.base_url.rfind("http://", 0) != 0 &&
          pc.base_url.rfind("https://", 0) != 0)
        fail(source, at + ".baseUrl",
             "expected an http:// or https:// URL, got \"" + pc.base_url + "\"");
      pc.api_key_env = r.string(p, at, "apiKeyEnv", false);
      pc.bearer_token_env = r.string(p, at, "bearerTokenEnv", false);
      if (!pc.api_key_env.empty() && !pc.bearer_token_env.empty())
        fail(source, at, "give apiKeyEnv or bearerTokenEnv, not both");
      if (p.contains("models")) {
        const json& models = p.at("models");
        if (!models.is_array())
          fail(source, at + ".models", std::string("expected an array, got ") + kind(models));
        for (size_t i = 0; i < models.size(); ++i) {
          std::string mat = at + ".models[" + std::to_string(i) + "]";
          const json& m = models[i];
          if (!m.is_object()) fail(source, mat, std::string("expected an object, got ") + kind(m));
          r.only_keys(m, mat, {"id", "contextWindow", "path", "temperature", "topP", "topK", "seed",
                               "reasoning", "vision", "price", "deployment", "wireApi"});
          ModelConfig mc;
          mc.id = r.string(m, mat, "id", true);
          if (mc.id.empty()) fail(source, mat + ".id", "must not be empty");
          mc.path = r.string(m, mat, "path", pc.type == "local");
          if (pc.type == "local" && mc.path.empty()) fail(source, mat + ".path", "must not be empty");
          if (pc.type != "local" && !mc.path.empty())
            fail(source, mat + ".path", "only a local provider's models are files");
          if (m.contains("contextWindow")) {
            const json& cw = m.at("contextWindow");
            if (!cw.is_number_integer() || cw.get<long long>() <= 0 ||
                cw.get<long long>() > 100000000)
              fail(source, mat + ".contextWindow", "expected a positive whole number of tokens");
            mc.context_window = cw.get<int>();
          }
          if (m.contains("reasoning")) {
            if (!m.at("reasoning").is_boolean())
              fail(source, mat + ".reasoning", "expected true or false");
            mc.reasoning = m.at("reasoning").get<bool>();
          }
          if (m.contains("vision")) {
            if (!m.at("vision").is_boolean()) fail(source, mat + ".vision", "expected true or false");
            if (pc.type == "local" && m.at("vision").get<bool>())
              fail(source, mat + ".vision", "a local model does not take images here");
            mc.vision = m.at("vision").get<bool>();
          }
          mc.deployment = r.string(m, mat, "deployment", false);
          if (!mc.deployment.empty() && pc.type != "azure")
            fail(source, mat + ".deployment", "only an Azure OpenAI provider's models have one");
          mc.wire_api = wire_api_of(r, m, mat, pc.type);
          if (m.contains("price")) {
            const json& pr = m.at("price");
            if (!pr.is_object()) fail(source, mat + ".price", "expected {\"input\": USD, \"output\": USD} per million tokens");
            r.only_keys(pr, mat + ".price", {"input", "output"});
            for (const char* k : {"input", "output"}) {
              if (!pr.contains(k)) continue;
              if (!pr.at(k).is_number() || pr.at(k).get<double>() < 0)
                fail(source, mat + ".price." + k, "expected US dollars per million tokens (0 or more)");
              (std::string(k) == "input" ? mc.price_input : mc.price_output) = pr.at(k).get<double>();
            }
          }
          mc.sampling = parse_sampling(r, m, mat, pc.type);
          pc.models.push_back(std::move(mc));
        }
      }
      cfg.providers.push_back(std::move(pc));
    }
  }

  if (root.contains("defaults")) {
    const json& d = r.object(root, "", "defaults");
    r.only_keys(d, "defaults", {"chatModel", "fallbackModels", "embeddingModel"});
    cfg.defaults.chat_model = r.string(d, "defaults", "chatModel", false);
    cfg.defaults.embedding_model = r.string(d, "defaults", "embeddingModel", false);
    if (d.contains("fallbackModels")) {
      const json& f = d.at("fallbackModels");
      if (!f.is_array())
        fail(source, "defaults.fallbackModels", std::string("expected an array, got ") + kind(f));
      for (size_t i = 0; i < f.size(); ++i) {
        std::string at = "defaults.fallbackModels[" + std::to_string(i) + "]";
        if (!f[i].is_string())
          fail(source, at, std::string("expected a string, got ") + kind(f[i]));
        cfg.defaults.fallback_models.push_back(f[i].get<std::string>());
      }
    }
    if (!cfg.defaults.chat_model.empty())
      config_detail::check_model_id(cfg, "defaults.chatModel", cfg.defaults.chat_model);
    if (!cfg.defaults.embedding_model.empty())
      config_detail::check_model_id(cfg, "defaults.embeddingModel", cfg.defaults.embedding_model);
    for (size_t i = 0; i < cfg.defaults.fallback_models.size(); ++i)
      config_detail::check_model_id(cfg, "defaults.fallbackModels[" + std::to_string(i) + "]",
                     cfg.defaults.fallback_models[i]);
  }
  if (root.contains("server")) parse_server(r, r.object(root, "", "server"), cfg.server);
  if (root.contains("actions"))
    config_detail::parse_actions(r, r.object(root, "", "actions"), cfg.actions);
  if (root.contains("mcp")) {
    const json& m = r.object(root, "", "mcp");
    r.only_keys(m, "mcp", {"servers"});
    if (m.contains("servers")) config_detail::parse_mcp(r, r.object(m, "mcp", "servers"), "mcp.servers", cfg.mcp_servers);
  }
  if (root.contains("permissions"))
    config_detail::parse_permissions(r, r.object(root, "", "permissions"), cfg.permissions);
  if (root.contains("logging")) parse_logging(r, r.object(root, "", "logging"), cfg.logging);
  // The components' sections last: they may check model ids against the providers.
  static const json kAbsent;
  for (const auto& key : parse_order(sections)) {
    auto it = root.find(key);
    cfg.sections[key] = sections.at(key).parse(it == root.end() ? kAbsent : *it, cfg, source);
  }
  return cfg;
}

Config load_config(const std::string& explicit_path) {
  auto load = [](const std::string& path) {
    std::string text;
    try {
      text = read_file(path);
    } catch (const Error& e) {
      throw ConfigError(std::string(e.what()));
    }
    return parse_config(text, path);
  };
  if (!explicit_path.empty()) return load(explicit_path);
  if (const char* env = std::getenv("PILOTFISH_CONFIG"); env && *env) return load(env);
  std::vector<std::string> candidates = {"pilotfish.json"};
  if (std::string dir = user_config_dir(); !dir.empty()) candidates.push_back(dir + "/config.json");
  candidates.push_back("/etc/pilotfish/config.json");
  for (const auto& c : candidates)
    if (is_file(c)) return load(c);
  return parse_config("{}", "");  // the built-in default, with every section's defaults
}

}  // namespace pf
