// Embedding models: text in, vectors out. One implementation today, for OpenAI-compatible
// servers (POST {baseUrl}/embeddings: OpenAI, Ollama, vLLM, llama.cpp server, LM Studio, ...).
// Requests are retried on rate limits, overload and dropped connections, with backoff that
// honours Retry-After; anything else fails at once with the server's own message.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/config.h"

namespace pf {

class Embedder {
 public:
  virtual ~Embedder() = default;
  virtual const std::string& model_id() const = 0;  // "provider:model"
  // One vector per input, in order. Throws pf::Error naming the model and what went wrong.
  virtual std::vector<std::vector<float>> embed(const std::vector<std::string>& inputs) = 0;
};

struct EmbedderOptions {
  int max_attempts = 3;
  int timeout_ms = 60000;
  int max_backoff_ms = 10000;
};

// Throws pf::ConfigError if the model id names no configured provider, the provider cannot
// embed (anthropic), or its credential variable is not set.
std::unique_ptr<Embedder> make_embedder(const Config& config, const std::string& model_id,
                                        const EmbedderOptions& options = {});

}  // namespace pf
