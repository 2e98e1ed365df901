// The OpenAI-compatible embeddings client, and how it learns a model's input limit from the
// server in front of it.
#include "llm/embeddings.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <thread>

#include "core/json.h"
#include "core/log.h"
#include "core/retry.h"
#include "core/text.h"
#include "llm/local_model.h"
#include "llm/provider.h"
#include "net/http_client.h"

namespace pf {
namespace {

bool retryable(int status) {
  return status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

// A status that says "these inputs", not "this server": the request was understood and refused.
bool refusal_status(int status) { return status == 400 || status == 413 || status == 422; }

int first_number(const std::string& text, const std::regex& re) {
  std::smatch m;
  if (!std::regex_search(text, m, re)) return 0;
  try {
    return std::stoi(m[1].str());
  } catch (const std::exception&) {
    return 0;
  }
}

// The server's origin: baseUrl without a trailing /v1, where llama.cpp, Ollama and TEI keep their
// own routes.
std::string origin_of(std::string base) {
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (std::string_view(base).ends_with("/v1")) base.resize(base.size() - 3);
  return base;
}

std::optional<int> positive_int(const nlohmann::json& j) {
  if (j.is_number_integer() && j.get<int64_t>() > 0 && j.get<int64_t>() < (1 << 24))
    return static_cast<int>(j.get<int64_t>());
  return std::nullopt;
}

// Models whose limit is published but which no server here reports.
std::optional<int> known_model_limit(const std::string& model) {
  if (model.rfind("text-embedding-3-", 0) == 0 || model == "text-embedding-ada-002") return 8191;
  return std::nullopt;
}

class OpenAiEmbedder : public Embedder {
 public:
  OpenAiEmbedder(std::string id, const ProviderConfig& provider, std::string model,
                 std::string auth, EmbedderOptions options)
      : id_(std::move(id)),
        model_(std::move(model)),
        url_(endpoint(provider, "embeddings")),
        base_(provider.base_url),
        auth_(std::move(auth)),
        options_(options) {
    for (const auto& m : provider.models)
      if (m.id == model_ && m.context_window) configured_limit_ = *m.context_window;
  }

  const std::string& model_id() const override { return id_; }

  EmbeddingBatch embed_batch(const std::vector<std::string>& inputs) override {
    if (inputs.empty()) return {};
    HttpRequest req = request("POST", url_, options_.timeout_ms);
    req.body = nlohmann::json{{"model", model_}, {"input", inputs}}.dump();
    RetryPolicy policy{options_.max_attempts, 500, options_.max_backoff_ms, 0.25};
    std::string last_error;
    int last_status = 0;
    for (int attempt = 1;; ++attempt) {
      int64_t wait_ms = policy.backoff_ms(attempt);
      try {
        HttpResponse res = http_request(req);
        if (res.status / 100 == 2) return parse(res.body, inputs.size());
        std::string message = provider_error_message(res.body);
        last_error = "HTTP " + std::to_string(res.status) + ": " + message;
        last_status = res.status;
        TooLongMessage said = read_too_long_message(message);
        if (said.too_long || refusal_status(res.status))
          throw EmbeddingRefused("embedding model " + id_ + ": " + last_error, res.status,
                                 said.too_long, said.limit_tokens, said.requested_tokens);
        if (!retryable(res.status)) break;
        if (int64_t asked = requested_wait_ms(res.headers); asked >= 0)
          wait_ms = std::min<int64_t>(asked, options_.max_backoff_ms);
      } catch (const NetError& e) {
        last_error = e.what();
        last_status = 0;
      }
      if (policy.gives_up_after(attempt)) break;
      log::warn("llm", "embedding model " + id_ + ": " + last_error + "; retrying in " +
                           std::to_string(wait_ms) + " ms");
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    }
    // A server error that outlived the retries may be one input breaking the server: say so,
    // so a batch can be split to find it (EmbeddingFitter decides whether the server is alive).
    if (last_status == 500)
      throw EmbeddingRefused("embedding model " + id_ + ": " + last_error, 500, false, 0, 0);
    throw Error("embedding model " + id_ + ": " + last_error);
  }

  InputLimit input_limit() override {
    std::lock_guard<std::mutex> lock(limit_mu_);
    if (!limit_) {
      limit_ = discover_limit();
      log::info("llm", "embedding model " + id_ + ": inputs up to " +
                           std::to_string(limit_->tokens) + " tokens (" + limit_->source + ")");
    }
    return *limit_;
  }

 private:
  HttpRequest request(const std::string& method, const std::string& url, int timeout_ms) const {
    HttpRequest req;
    req.method = method;
    req.url = url;
    req.timeout = std::chrono::milliseconds(timeout_ms);
    req.headers = {{"Content-Type", "application/json"}};
    if (!auth_.empty()) req.headers.emplace_back("Authorization", "Bearer " + auth_);
    return req;
  }

  // The JSON a probe got back, or null when the route is not there or says nothing.
  nlohmann::json probe(const std::string& method, const std::string& url,
                       const std::string& body = "") const {
    HttpRequest req = request(method, url, options_.probe_timeout_ms);
    if (method == "GET") req.headers.erase(req.headers.begin());
    req.body = body;
    try {
      HttpResponse res = http_request(req);
      if (res.status != 200) return nullptr;
      return parse_json(res.body);
    } catch (const Error&) {
      return nullptr;
    }
  }

  InputLimit discover_limit() const {
    if (configured_limit_ > 0) return {configured_limit_, "config contextWindow"};
    std::string origin = origin_of(base_);
    // llama.cpp's llama-server: the slot's context. Its batch size can be smaller and is not
    // reported; a refusal names it, and EmbeddingFitter takes it from there.
    nlohmann::json j = probe("GET", origin + "/props");
    if (j.is_object() && j.contains("default_generation_settings") &&
        j["default_generation_settings"].is_object())
      if (auto n = positive_int(j["default_generation_settings"].value("n_ctx", nlohmann::json())))
        return {*n, "llama.cpp /props"};
    // Ollama: the model's trained context, capped by the num_ctx it runs with (2048 unless the
    // Modelfile says otherwise).
    j = probe("POST", origin + "/api/show", nlohmann::json{{"model", model_}}.dump());
    if (j.is_object() && j.contains("model_info") && j["model_info"].is_object()) {
      int trained = 0;
      for (const auto& [key, value] : j["model_info"].items())
        if (std::string_view(key).ends_with(".context_length"))
          if (auto n = positive_int(value)) trained = *n;
      int num_ctx = 2048;
      if (j.contains("parameters") && j["parameters"].is_string())
        if (int n = first_number(j["parameters"].get<std::string>(),
                                 std::regex(R"((?:^|\n)num_ctx\s+(\d+))"));
            n > 0)
          num_ctx = n;
      if (trained > 0) return {std::min(trained, num_ctx), "Ollama /api/show"};
    }
    // vLLM (and others) list max_model_len with the model.
    j = probe("GET", endpoint_url("models"));
    if (j.is_object() && j.contains("data") && j["data"].is_array())
      for (const auto& m : j["data"])
        if (m.is_object() && m.value("id", "") == model_)
          if (auto n = positive_int(m.value("max_model_len", nlohmann::json())))
            return {*n, "the server's model list"};
    // Hugging Face text-embeddings-inference.
    j = probe("GET", origin + "/info");
    if (j.is_object())
      if (auto n = positive_int(j.value("max_input_length", nlohmann::json())))
        return {*n, "TEI /info"};
    if (auto n = known_model_limit(model_)) return {*n, "the model's published limit"};
    return {kDefaultInputTokens, "default"};
  }

  std::string endpoint_url(const std::string& path) const {
    std::string base = base_;
    while (!base.empty() && base.back() == '/') base.pop_back();
    return base + "/" + path;
  }

  EmbeddingBatch parse(const std::string& body, size_t expected) const {
    auto j = parse_json(body);
    if (!j.is_object() || !j.contains("data") || !j["data"].is_array())
      throw Error("embedding model " + id_ + ": the response has no data array");
    EmbeddingBatch batch;
    std::vector<std::vector<float>>& out = batch.vectors;
    out.resize(expected);
    size_t filled = 0;
    for (const auto& item : j["data"]) {
      if (!item.is_object() || !item.contains("embedding") || !item["embedding"].is_array())
        throw Error("embedding model " + id_ + ": a data item has no embedding array");
      size_t index = item.contains("index") && item["index"].is_number_unsigned()
                         ? item["index"].get<size_t>()
                         : filled;
      if (index >= expected || !out[index].empty())
        throw Error("embedding model " + id_ + ": unexpected embedding index " +
                    std::to_string(index));
      for (const auto& x : item["embedding"]) {
        if (!x.is_number())
          throw Error("embedding model " + id_ + ": an embedding holds a non-number");
        out[index].push_back(x.get<float>());
      }
      if (out[index].empty()) throw Error("embedding model " + id_ + ": an empty embedding");
      ++filled;
    }
    if (filled != expected)
      throw Error("embedding model " + id_ + ": asked for " + std::to_string(expected) +
                  " embeddings, got " + std::to_string(filled));
    if (j.contains("usage") && j["usage"].is_object())
      if (auto n = positive_int(j["usage"].value("prompt_tokens", nlohmann::json())))
        batch.prompt_tokens = *n;
    return batch;
  }

  std::string id_, model_, url_, base_, auth_;
  EmbedderOptions options_;
  int configured_limit_ = 0;
  std::mutex limit_mu_;
  std::optional<InputLimit> limit_;
};

}  // namespace

TooLongMessage read_too_long_message(const std::string& message) {
  TooLongMessage out;
  std::string m = ascii_lower(message);
  for (const char* phrase :
       {"too large", "too long", "maximum context length", "exceeds the context length",
        "exceeds the available context", "larger than the max context", "must have less than",
        "reduce the length", "context_length_exceeded", "exceeds maximum input length"})
    if (m.find(phrase) != std::string::npos) out.too_long = true;
  if (!out.too_long) return out;
  static const std::regex limit_re(
      R"((?:current batch size:\s*|max context size \(|available context size \(|maximum context length is |must have less than |maximum input length (?:is |of )?)(\d+))");
  static const std::regex requested_re(
      R"((?:input \(|request \(|requested |given:\s*)(\d+)(?: tokens)?)");
  out.limit_tokens = first_number(m, limit_re);
  out.requested_tokens = first_number(m, requested_re);
  return out;
}

std::unique_ptr<Embedder> make_embedder(const Config& config, const std::string& model_id,
                                        const EmbedderOptions& options) {
  auto [p, model] = find_provider(config, model_id);
  if (p->type == "local") {
    const ModelConfig& m = local_model_config(*p, model, model_id);
    return make_local_embedder(model_id, m.path, m.context_window.value_or(0));
  }
  if (p->type != "openai")
    throw ConfigError("embedding model \"" + model_id + "\": provider " + p->name + " (" + p->type +
                      ") has no embeddings endpoint; use an OpenAI-compatible provider");
  return std::make_unique<OpenAiEmbedder>(model_id, *p, model, provider_credential(*p, model_id),
                                          options);
}

}  // namespace pf
