// Shared provider plumbing (see provider.h).
#include "llm/provider.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/json.h"

namespace pf {

std::pair<const ProviderConfig*, std::string> find_provider(const Config& config,
                                                            const std::string& model_id) {
  auto parts = split_model_id(model_id);
  if (!parts) throw ConfigError("model \"" + model_id + "\": expected provider:model");
  const ProviderConfig* p = config.provider(parts->first);
  if (!p)
    throw ConfigError("model \"" + model_id + "\": no provider \"" + parts->first +
                      "\" is configured");
  return {p, parts->second};
}

const ModelConfig& local_model_config(const ProviderConfig& p, const std::string& model,
                                      const std::string& model_id) {
  for (const ModelConfig& m : p.models)
    if (m.id == model) return m;
  throw ConfigError("model \"" + model_id + "\": provider " + p.name +
                    " is local and lists no model \"" + model + "\" with a path");
}

std::string provider_credential(const ProviderConfig& p, const std::string& model_id) {
  const std::string& var = !p.api_key_env.empty() ? p.api_key_env : p.bearer_token_env;
  if (var.empty()) return {};
  const char* value = std::getenv(var.c_str());
  if (!value || !*value)
    throw ConfigError("model \"" + model_id + "\": the environment variable " + var +
                      " (providers." + p.name + ") is not set");
  return value;
}

std::string endpoint(const ProviderConfig& p, const std::string& path) {
  std::string base = p.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + "/" + path;
}

ProviderAuth provider_auth(const ProviderConfig& p, const std::string& model_id) {
  std::string key = provider_credential(p, model_id);
  if (key.empty()) return {};
  if (p.type == "azure" && !p.api_key_env.empty()) return {"api-key", key};
  return {"Authorization", "Bearer " + key};
}

namespace {

const ModelConfig* model_config(const ProviderConfig& p, const std::string& model) {
  for (const ModelConfig& m : p.models)
    if (m.id == model) return &m;
  return nullptr;
}

}  // namespace

std::string wire_api(const ProviderConfig& p, const std::string& model) {
  const ModelConfig* m = model_config(p, model);
  if (m && !m->wire_api.empty()) return m->wire_api;
  return p.wire_api.empty() ? "chat" : p.wire_api;
}

std::string wire_model(const ProviderConfig& p, const std::string& model) {
  const ModelConfig* m = model_config(p, model);
  return p.type == "azure" && m && !m->deployment.empty() ? m->deployment : model;
}

std::string model_url(const ProviderConfig& p, const std::string& model, const std::string& kind) {
  if (p.type != "azure") return endpoint(p, kind);
  std::string version = "?api-version=" + p.api_version;
  if (kind == "responses") return endpoint(p, "openai/responses" + version);
  return endpoint(p, "openai/deployments/" + wire_model(p, model) + "/" + kind + version);
}

std::string provider_error_message(const std::string& body) {
  auto j = parse_json(body);
  if (j.is_object() && j.contains("error")) {
    const auto& e = j["error"];
    if (e.is_object() && e.contains("message") && e["message"].is_string())
      return e["message"].get<std::string>();
    if (e.is_string()) return e.get<std::string>();
  }
  // vLLM's shape: {"object": "error", "message": ..., "type": ..., "code": 400}.
  if (j.is_object() && j.contains("message") && j["message"].is_string())
    return j["message"].get<std::string>();
  return body.size() > 200 ? body.substr(0, 200) + "..." : body;
}

}  // namespace pf
