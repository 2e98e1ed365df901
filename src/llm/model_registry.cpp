// Fuzzy model resolution (see model_registry.h).
#include "llm/model_registry.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "core/json.h"
#include "llm/local_model.h"
#include "llm/provider.h"
#include "core/text.h"
#include "net/http_client.h"

namespace pf {
namespace {

std::vector<std::string> tokens(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : ascii_lower(s)) {
    if (c == '-' || c == '.' || c == '_' || c == ' ' || c == '/' || c == ':') {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

std::vector<ModelRef> configured_models(const Config& config) {
  std::vector<ModelRef> out;
  for (const auto& p : config.providers)
    for (const auto& m : p.models) out.push_back(ModelRef{p.name, m.id});
  return out;
}

ModelResolution resolve_model(const std::vector<ModelRef>& available, std::string_view input) {
  ModelResolution r;
  std::string query = ascii_lower(input);
  while (!query.empty() && std::isspace(static_cast<unsigned char>(query.back()))) query.pop_back();
  while (!query.empty() && std::isspace(static_cast<unsigned char>(query.front())))
    query.erase(0, 1);
  if (query.empty()) {
    r.error = "no model named";
    return r;
  }
  // Exact: the full id, or a bare model id (first in configuration order).
  for (const auto& m : available) {
    if (ascii_lower(m.id()) == query) {
      r.model = m;
      return r;
    }
  }
  for (const auto& m : available) {
    if (ascii_lower(m.model) == query) {
      r.model = m;
      break;
    }
  }
  if (r.model) return r;

  // A known provider prefix scopes the search.
  std::vector<const ModelRef*> scope;
  std::string needle = query;
  if (size_t colon = query.find(':'); colon != std::string::npos) {
    std::string provider = query.substr(0, colon);
    needle = query.substr(colon + 1);
    for (const auto& m : available)
      if (ascii_lower(m.provider) == provider) scope.push_back(&m);
    if (scope.empty()) {
      r.error = "no configured provider named \"" + std::string(input.substr(0, colon)) + "\"";
      return r;
    }
    if (needle.empty()) {
      r.error = "no model named after \"" + std::string(input) + "\"";
      return r;
    }
  } else {
    for (const auto& m : available) scope.push_back(&m);
  }

  // Against the model id and the whole "provider:model" id ("azure-prod" names a provider's
  // models); the tokens need only be contained ("qwen 3 8b" finds qwen3:8b).
  std::vector<const ModelRef*> matches;
  for (const ModelRef* m : scope)
    if (ascii_lower(m->id()).find(needle) != std::string::npos) matches.push_back(m);
  if (matches.empty()) {
    auto want = tokens(needle);
    for (const ModelRef* m : scope) {
      const std::string id = ascii_lower(m->id());
      bool all = !want.empty();
      for (const auto& t : want) all &= id.find(t) != std::string::npos;
      if (all) matches.push_back(m);
    }
  }
  if (matches.empty()) {
    r.error = "no configured model matches \"" + std::string(input) + "\"";
    return r;
  }
  std::stable_sort(matches.begin(), matches.end(), [&](const ModelRef* a, const ModelRef* b) {
    bool ea = ends_with(ascii_lower(a->model), needle), eb = ends_with(ascii_lower(b->model), needle);
    if (ea != eb) return ea;
    return a->model.size() < b->model.size();
  });
  r.model = *matches.front();
  for (size_t i = 1; i < matches.size() && r.alternatives.size() < 8; ++i)
    r.alternatives.push_back(*matches[i]);
  return r;
}

std::vector<std::string> list_provider_models(const ProviderConfig& p, int timeout_ms) {
  if (p.type == "local") {
    // A local provider offers the models whose files are there and are GGUF files.
    std::vector<std::string> offered;
    for (const ModelConfig& m : p.models)
      if (is_gguf_file(m.path)) offered.push_back(m.id);
    return offered;
  }
  HttpRequest req;
  req.method = "GET";
  req.timeout = std::chrono::milliseconds(timeout_ms);
  std::string key = provider_credential(p, p.name);
  if (p.type == "anthropic") {
    std::string url = endpoint(p, "");
    req.url = (url.size() >= 4 && url.compare(url.size() - 4, 4, "/v1/") == 0) ? url + "models"
                                                                               : url + "v1/models";
    req.headers = {{"anthropic-version", "2023-06-01"}};
    if (!key.empty())
      req.headers.emplace_back(p.api_key_env.empty() ? "Authorization" : "x-api-key",
                               p.api_key_env.empty() ? "Bearer " + key : key);
  } else if (p.type == "azure") {
    // Its data plane lists base models, not deployments: the call proves the key and the
    // api-version work; the configured models (deployments) are what it offers.
    req.url = endpoint(p, "openai/models?api-version=" + p.api_version);
    ProviderAuth auth = provider_auth(p, p.name);
    if (!auth.header.empty()) req.headers.emplace_back(auth.header, auth.value);
  } else {
    req.url = endpoint(p, "models");
    if (!key.empty()) req.headers.emplace_back("Authorization", "Bearer " + key);
  }
  HttpResponse res;
  try {
    res = http_request(req);
  } catch (const NetError& e) {
    throw Error("provider " + p.name + ": " + e.what());
  }
  if (res.status / 100 != 2)
    throw Error("provider " + p.name + ": HTTP " + std::to_string(res.status) + ": " +
                provider_error_message(res.body));
  auto j = parse_json(res.body);
  if (!j.is_object() || !j.contains("data") || !j["data"].is_array())
    throw Error("provider " + p.name + ": the model list has no data array");
  if (p.type == "azure") {
    std::vector<std::string> deployments;
    for (const ModelConfig& m : p.models) deployments.push_back(m.id);
    return deployments;
  }
  std::vector<std::string> ids;
  for (const auto& m : j["data"])
    if (m.is_object() && m.contains("id") && m["id"].is_string())
      ids.push_back(m["id"].get<std::string>());
  return ids;
}

}  // namespace pf

namespace pf {

Config narrow_to_offered_models(const Config& config, std::vector<std::string>* warnings,
                                int timeout_ms) {
  Config out = config;
  for (ProviderConfig& p : out.providers) {
    if (p.models.empty()) continue;
    std::vector<std::string> offered;
    try {
      offered = list_provider_models(p, timeout_ms);
    } catch (const Error& e) {
      warnings->push_back("provider " + p.name + ": could not list its models (" + e.what() +
                          "); using the configured ones unchecked");
      continue;
    }
    std::vector<ModelConfig> kept;
    for (const ModelConfig& m : p.models) {
      if (std::find(offered.begin(), offered.end(), m.id) != offered.end())
        kept.push_back(m);
      else
        warnings->push_back("model " + p.name + ":" + m.id +
                            " is configured but its provider does not offer it; not used");
    }
    p.models = std::move(kept);
  }
  return out;
}

}  // namespace pf
