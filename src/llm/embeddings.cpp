// The OpenAI-compatible embeddings client.
#include "llm/embeddings.h"

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/json.h"
#include "core/log.h"
#include "llm/provider.h"
#include "net/http_client.h"

namespace pf {
namespace {

bool retryable(int status) {
  return status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

class OpenAiEmbedder : public Embedder {
 public:
  OpenAiEmbedder(std::string id, std::string model, std::string url, std::string auth,
                 EmbedderOptions options)
      : id_(std::move(id)),
        model_(std::move(model)),
        url_(std::move(url)),
        auth_(std::move(auth)),
        options_(options) {}

  const std::string& model_id() const override { return id_; }

  std::vector<std::vector<float>> embed(const std::vector<std::string>& inputs) override {
    if (inputs.empty()) return {};
    HttpRequest req;
    req.url = url_;
    req.timeout = std::chrono::milliseconds(options_.timeout_ms);
    req.headers = {{"Content-Type", "application/json"}};
    if (!auth_.empty()) req.headers.emplace_back("Authorization", "Bearer " + auth_);
    req.body = nlohmann::json{{"model", model_}, {"input", inputs}}.dump();
    std::string last_error;
    for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
      int wait_ms = 500 * (1 << (attempt - 1));
      try {
        HttpResponse res = http_request(req);
        if (res.status / 100 == 2) return parse(res.body, inputs.size());
        last_error = "HTTP " + std::to_string(res.status) + ": " + provider_error_message(res.body);
        if (!retryable(res.status)) break;
        if (std::string after = res.header("retry-after"); !after.empty()) {
          char* end = nullptr;
          double seconds = std::strtod(after.c_str(), &end);
          if (end != after.c_str() && seconds >= 0) wait_ms = static_cast<int>(seconds * 1000);
        }
      } catch (const NetError& e) {
        last_error = e.what();
      }
      if (attempt < options_.max_attempts) {
        wait_ms = std::min(wait_ms, options_.max_backoff_ms);
        log::warn("llm", "embedding model " + id_ + ": " + last_error + "; retrying in " +
                             std::to_string(wait_ms) + " ms");
        std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
      }
    }
    throw Error("embedding model " + id_ + ": " + last_error);
  }

 private:
  std::vector<std::vector<float>> parse(const std::string& body, size_t expected) const {
    auto j = parse_json(body);
    if (!j.is_object() || !j.contains("data") || !j["data"].is_array())
      throw Error("embedding model " + id_ + ": the response has no data array");
    std::vector<std::vector<float>> out(expected);
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
    return out;
  }

  std::string id_, model_, url_, auth_;
  EmbedderOptions options_;
};

}  // namespace

std::unique_ptr<Embedder> make_embedder(const Config& config, const std::string& model_id,
                                        const EmbedderOptions& options) {
  auto [p, model] = find_provider(config, model_id);
  if (p->type != "openai")
    throw ConfigError("embedding model \"" + model_id + "\": provider " + p->name + " (" + p->type +
                      ") has no embeddings endpoint; use an OpenAI-compatible provider");
  return std::make_unique<OpenAiEmbedder>(model_id, model, endpoint(*p, "embeddings"),
                                          provider_credential(*p, model_id), options);
}

}  // namespace pf
