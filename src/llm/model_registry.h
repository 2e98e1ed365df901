// The models pilotfish knows (those configured under providers) and fuzzy resolution of what a
// user types ("sonnet", "openai:mini", "gpt-4o") to one of them, so a model can be named the way
// people say it in a chat.
//
// Resolution, in order: an exact id ("provider:model", or a bare model id) wins; a "provider:"
// prefix scopes the search to that provider; otherwise a case-insensitive substring match of the
// whole "provider:model" id, then a match where every token of the input (split at '-', '.',
// '_', ' ', '/', ':') is contained in it ("qwen 3 8b" finds qwen3:8b). Ties prefer ids that end
// with the input, then shorter ids, then configuration order. The other matches are returned as
// alternatives (at most 8) so a caller can say "also matched".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"

namespace pf {

struct ModelRef {
  std::string provider;
  std::string model;
  std::string id() const { return provider + ":" + model; }
  bool operator==(const ModelRef&) const = default;
};

struct ModelResolution {
  std::optional<ModelRef> model;
  std::vector<ModelRef> alternatives;
  std::string error;  // set when model is empty: what was wrong, in one line
};

// Every configured model, in configuration order.
std::vector<ModelRef> configured_models(const Config& config);

ModelResolution resolve_model(const std::vector<ModelRef>& available, std::string_view input);

// The model ids a provider offers (GET {baseUrl}/models for OpenAI-compatible servers,
// {baseUrl}/v1/models for Anthropic). Throws pf::Error naming the provider when it cannot be
// reached or answers with an error.
std::vector<std::string> list_provider_models(const ProviderConfig& provider,
                                              int timeout_ms = 10000);

// The config with each provider's models narrowed to those the provider says it offers, so that
// resolution and fallback never pick a model the provider would refuse. A provider that cannot
// be asked (down, no list endpoint) keeps its whole list. warnings: one line per model dropped
// and per provider that could not be asked.
Config narrow_to_offered_models(const Config& config, std::vector<std::string>* warnings,
                                int timeout_ms = 5000);

}  // namespace pf
