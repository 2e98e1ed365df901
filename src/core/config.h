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
//                  "embeddingModel": "openai:text-embedding-3-small"}
//   }
//
// Secrets never live in the file: a provider names the environment variable that holds its key
// (apiKeyEnv) or bearer token (bearerTokenEnv); an inline apiKey is refused.
#pragma once

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

struct ModelConfig {
  std::string id;  // the provider's own id, e.g. "gpt-4o-mini"
  std::optional<int> context_window;
};

struct ProviderConfig {
  std::string name;  // no ':' or whitespace
  std::string type;  // "openai" (any OpenAI-compatible server) or "anthropic"
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

struct Config {
  std::string source;                     // the file it came from, empty for the built-in default
  std::vector<ProviderConfig> providers;  // in file order
  ModelDefaults defaults;

  const ProviderConfig* provider(std::string_view name) const;
};

// Parses and validates a configuration; source names it in error messages.
Config parse_config(std::string_view json, const std::string& source);

// Finds and loads the configuration (see above); explicit_path is --config, or empty.
Config load_config(const std::string& explicit_path);

// Splits "provider:model" at the first ':'; nullopt if either side is empty.
std::optional<std::pair<std::string, std::string>> split_model_id(std::string_view id);

}  // namespace pf
