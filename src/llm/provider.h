// Internal to llm: what every provider client needs — the credential named in the config, the
// endpoint URL, and the one-line message a provider puts in its error bodies.
#pragma once

#include <string>

#include "core/config.h"

namespace pf {

// The provider of a "provider:model" id and the model part. Throws pf::ConfigError if the id is
// malformed or names no configured provider.
std::pair<const ProviderConfig*, std::string> find_provider(const Config& config,
                                                            const std::string& model_id);

// The configured model `model` of local provider p (its GGUF path); model_id names it in the
// ConfigError thrown when p lists no such model.
const ModelConfig& local_model_config(const ProviderConfig& p, const std::string& model,
                                      const std::string& model_id);

// The key or token from the variable named by apiKeyEnv / bearerTokenEnv ("" if none is named).
// Throws pf::ConfigError if the variable is named but not set.
std::string provider_credential(const ProviderConfig& provider, const std::string& model_id);

// baseUrl + "/" + path, without doubled slashes.
std::string endpoint(const ProviderConfig& provider, const std::string& path);

// How a request proves who sends it: OpenAI-compatible servers and Anthropic's bearer tokens,
// "Authorization: Bearer <key>"; Azure OpenAI's key, "api-key: <key>" (its Entra ID token is a
// bearer token). Empty header: none (no credential named).
struct ProviderAuth {
  std::string header, value;
};
ProviderAuth provider_auth(const ProviderConfig& provider, const std::string& model_id);

// The wire API a hosted model is asked in: "chat" (chat/completions) or "responses" (the
// Responses API): the model's wireApi, else its provider's, else "chat".
std::string wire_api(const ProviderConfig& provider, const std::string& model);

// The URL of a model's requests of a kind ("chat/completions" or "responses"): baseUrl + path,
// or on Azure OpenAI the deployment's (the model's deployment, else its id):
// {baseUrl}/openai/deployments/{deployment}/chat/completions?api-version=V, and
// {baseUrl}/openai/responses?api-version=V (the deployment goes in the body).
std::string model_url(const ProviderConfig& provider, const std::string& model,
                      const std::string& kind);
// The name a request's body gives the model: on Azure OpenAI its deployment, else its id.
std::string wire_model(const ProviderConfig& provider, const std::string& model);

// {"error": {"message": ...}}, {"error": "..."} or {"message": ...}, else the start of the body.
std::string provider_error_message(const std::string& body);

}  // namespace pf
