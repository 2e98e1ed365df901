// The one configuration loader. pilotfish reads a JSON file: the one named by --config, else
// $PILOTFISH_CONFIG, else the first of ./pilotfish.json, $XDG_CONFIG_HOME/pilotfish/config.json
// (~/.config/pilotfish/config.json) and /etc/pilotfish/config.json. No file at all is fine: the
// embedded default needs no model. A file that is there but wrong is an error that names the
// key and what is wrong with it ("providers.local.baseUrl: expected a string").
//
//   {
//     "providers": {
//       "openai": {"type": "openai", "baseUrl": "https://api.openai.com/v1",
//                  "apiKeyEnv": "OPENAI_API_KEY",
//                  "models": [{"id": "gpt-4o-mini", "contextWindow": 128000}]}
//     },
//     "defaults": {"chatModel": "openai:gpt-4o-mini", "fallbackModels": [],
//                  "embeddingModel": "openai:text-embedding-3-small"},
//     "server": {"listen": "127.0.0.1:8080", "repository": "/srv/repo",
//                "apiKeys": [{"name": "ops", "hash": "sha256:...", "role": "admin"}],
//                "reindexSchedule": "0 3 * * 0",
//                "limits": {"maxBodyBytes": 1048576, "maxMessageChars": 8000,
//                           "maxHistoryMessages": 50},
//                "sendFinishReason": true, "corsOrigins": ["https://portal.example.com"]},
//     "bridge": {...}, "memory": {...},   (the chat bridge's: bridge/bridge_config.h)
//     "actions": {"enabled": [], "permissionMode": "interactive", "network": false,
//                 "commandTimeoutSeconds": 60, "maxOutputBytes": 32768,
//                 "allowPrivateUrls": false, "fetchMaxBytes": 1048576, "fetchTimeoutSeconds": 20},
//     "permissions": {"allow": ["shell(git status)", "write"], "deny": ["shell(rm)"],
//                     "allowPaths": ["/srv/shared"], "allowUrls": ["github.com"]}
//   }
//
// Secrets never live in the file: a provider names the environment variable that holds its key
// (apiKeyEnv) or bearer token (bearerTokenEnv); an inline apiKey is refused. Sections owned by
// components above core are parsed by those components (ConfigSection below).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace pf {

class ConfigError : public UsageError {
 public:
  using UsageError::UsageError;
};

// How a model's tokens are drawn; unset fields are the provider's defaults. A local model with
// no temperature (or 0) decodes greedily. OpenAI's API has no top_k, Anthropic's no seed: the
// config refuses them there.
struct Sampling {
  std::optional<double> temperature;  // 0 to 2
  std::optional<double> top_p;        // above 0, at most 1
  std::optional<int> top_k;           // 1 to 1000
  std::optional<uint32_t> seed;       // a local model's draws repeat with the same seed
};

struct ModelConfig {
  std::string id;  // the provider's own id, e.g. "gpt-4o-mini"
  std::optional<int> context_window;
  // Whether the model takes a reasoning effort (llm/chat.h model_reasons); unset: known families.
  std::optional<bool> reasoning;
  // Whether the model takes images as input (llm/chat.h model_sees_images); unset: known families.
  std::optional<bool> vision;
  // US dollars per million input and output tokens ("price": {"input", "output"}), for /model.
  std::optional<double> price_input, price_output;
  std::string deployment;  // Azure OpenAI: the deployment that serves it; empty: its id
  std::string wire_api;    // "chat" or "responses"; empty: the provider's
  std::string path;  // a local provider's GGUF file
  Sampling sampling;
};

struct ProviderConfig {
  std::string name;  // no ':' or whitespace
  std::string type;  // "openai" (any OpenAI-compatible server), "azure" (Azure OpenAI),
                     // "anthropic", or "local" (GGUF files run in process by llama.cpp; no baseUrl)
  std::string api_version;  // Azure OpenAI's api-version (required there)
  std::string wire_api;     // "chat" (chat/completions) or "responses"; empty: "chat"
  std::string base_url;
  std::string api_key_env;       // name of the environment variable holding the key
  std::string bearer_token_env;  // or of one holding a bearer token
  std::vector<ModelConfig> models;
};

struct ModelDefaults {
  std::string chat_model;  // "provider:model", empty: retrieval-only answers
  std::vector<std::string> fallback_models;
  std::string embedding_model;  // empty: lexical search only
};

// An API key of `pilotfish serve`: only its SHA-256 is in the file ("sha256:<64 hex digits>",
// printed by `pilotfish hash-key`), so the file can be read by more people than the keys.
struct ApiKeyConfig {
  std::string name;  // who holds it, for logs
  std::string sha256_hex;
  std::string role;  // "user" (chat, search) or "admin" (also /index)
};

// The "logging" section: where log lines go and how they read (core/log.h). Applied by the
// commands that run for long (serve, bridge, mcp, index) when they start; a reload does not.
struct LoggingConfig {
  std::string level;          // debug, info, warn, error, off; empty: warn (--log-level wins)
  std::string file;           // empty: stderr; a leading "~/" is the home folder
  int64_t max_size_mb = 10;   // rotated past this
  int64_t max_files = 3;      // rotated files kept, gzipped
  bool json = false;          // "format": "json"; else "text"
};

struct ServerConfig {
  std::string listen = "127.0.0.1:8080";  // host:port
  std::vector<ApiKeyConfig> api_keys;
  // What /index and the schedule index: a folder or a git URL (index/git_source.h); empty: the
  // store's only repository.
  std::string repository;
  std::string reindex_schedule = "0 3 * * 0";  // cron (minute hour day month weekday), "" = never
  int64_t max_body_bytes = 1 << 20;
  int64_t max_message_chars = 8000;
  int64_t max_history_messages = 50;
  // Chats between retrieval and their model request written, at most (more wait their turn
  // before retrieval, holding almost nothing); 0: no bound. See net/async_gate.h. Below 32
  // chats in set-up at once nothing waits; at 1,000 at once it halves the memory per stream
  // and delays the first token by ~250 ms at p99 (docs/BENCHMARKS.md, issue 12).
  int64_t answers_in_setup = 32;
  bool send_finish_reason = true;  // clients older than ai 5.0.92 reject it
  bool web_page = true;            // GET / serves the chat page (its API calls need a key)
  // Origins (scheme://host[:port]) whose pages may call the API from a browser; "*" for any.
  // Empty: no cross-origin use (CORS off).
  std::vector<std::string> cors_origins;
};

// One permission rule as written in the config: `kind` or `kind(arg)`, with kind shell, write,
// read, url or mcp; `mcp(server(tool))` names one tool of a server.
struct PermissionSpec {
  std::string text;  // as written, for explanations
  std::string kind;
  std::string arg;   // empty: every request of the kind
  std::string tool;  // mcp only: the tool inside the server's parentheses
};

// The "permissions" section (spec §8 check 4): deny rules before allow rules, then paths and
// URL hosts approved outright (a host also approves its subdomains). Specs are shell, write, url
// or mcp ("read" is refused: the read tools stay inside the workspace).
struct PermissionsConfig {
  std::vector<PermissionSpec> allow, deny;
  std::vector<std::string> allow_paths;  // absolute directories writable outside the workspace
  std::vector<std::string> read_paths;   // absolute directories run_command may read (readPaths)
  std::vector<std::string> allow_urls;   // hosts
  std::string write_inside_workspace = "allow";  // or "ask": writes in the workspace ask too
};

// What the agent may do besides reading (the "actions" section): the kinds of side-effecting
// tools offered, and the limits they run under. Nothing is offered by default.
struct ActionsConfig {
  std::vector<std::string> enabled;  // of "write" (write_file, edit_file), "shell", "url"
  std::string permission_mode = "interactive";  // or "autopilot": approve all but hard denies
  bool network = false;            // run_command may reach the network
  int64_t command_timeout_seconds = 60;
  int64_t max_output_bytes = 32 * 1024;
  bool allow_private_urls = false;  // fetch_url may reach loopback and private addresses
  int64_t fetch_max_bytes = 1 << 20;
  int64_t fetch_timeout_seconds = 20;
};

// One MCP server whose tools the agent may call (as server__tool), from the config's
// "mcp.servers" or a workspace's mcp-config.json ("mcpServers"): a local one started with
// command and args (its working directory the workspace), or a remote one at url (Streamable
// HTTP). "${VAR}" in command, args, env values, url and header values is replaced by the
// environment variable when the server is started.
struct McpServerConfig {
  std::string name;  // letters, digits, '-' and '_'
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  int64_t timeout_seconds = 60;  // per call; a server that takes longer is restarted
};

struct Config;

// A top-level section owned by a component above core (the bridge's "bridge" and "memory"):
// the component registers its parser, and the loader keeps what the parser returns.
class ConfigSection {
 public:
  virtual ~ConfigSection() = default;
  // Files the component keeps as its own, given the index store's path: the tools and the
  // sandbox keep out of them (runtime/own_paths.h).
  virtual std::vector<std::string> own_stores(const std::string& /*db_path*/) const { return {}; }
};

// Parses a section: value is null when the file has no such key (the parser returns its
// defaults); config holds the sections core parses (providers, to check model ids) and the
// registered sections parsed before it (see `after` below). Throws ConfigError naming the key.
using ConfigSectionParser = std::shared_ptr<const ConfigSection> (*)(
    const nlohmann::ordered_json& value, const Config& config, const std::string& source);

// Makes key a known top-level key whose value parse reads, in every later parse_config; call
// it from a static initializer of the component (see bridge/bridge_config.h). Sections are
// parsed in key order, except that one comes after the registered sections it names in after.
// Thread-safe; registering a key again replaces its parser. Returns true.
bool register_config_section(const std::string& key, ConfigSectionParser parse,
                             std::vector<std::string> after = {});

struct Config {
  std::string source;                     // the file it came from, empty for the built-in default
  std::vector<ProviderConfig> providers;  // in file order
  ModelDefaults defaults;
  ServerConfig server;
  ActionsConfig actions;
  PermissionsConfig permissions;
  std::vector<McpServerConfig> mcp_servers;
  LoggingConfig logging;
  // The registered sections, by key (each parsed, with its defaults when the file has none).
  std::map<std::string, std::shared_ptr<const ConfigSection>> sections;

  // The provider of that name: the exact name, else one that differs only in case; nullptr.
  const ProviderConfig* provider(std::string_view name) const;
  // The section of that key as its component's type; nullptr when none is registered.
  template <class T>
  const T* section(const std::string& key) const {
    auto it = sections.find(key);
    return it == sections.end() ? nullptr : dynamic_cast<const T*>(it->second.get());
  }
};

// Parses and validates a configuration; source names it in error messages.
Config parse_config(std::string_view json, const std::string& source);

// Finds and loads the configuration (see above); explicit_path is --config, or empty.
Config load_config(const std::string& explicit_path);

// Parses an "mcpServers"-style object (the config's mcp.servers, a workspace's mcp-config.json
// mcpServers); at names the object in errors (a ConfigError).
std::vector<McpServerConfig> parse_mcp_servers(std::string_view json_object, const std::string& source,
                                               const std::string& at);

// Parses a permission spec ("shell(git status)", "mcp(github(create_issue))"); nullopt (with
// *why) when it is not one.
std::optional<PermissionSpec> parse_permission_spec(std::string_view text, std::string* why);

// Splits "provider:model" at the first ':'; nullopt if either side is empty.
std::optional<std::pair<std::string, std::string>> split_model_id(std::string_view id);

}  // namespace pf
