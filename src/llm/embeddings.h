// Embedding models: text in, vectors out. One implementation today, for OpenAI-compatible
// servers (POST {baseUrl}/embeddings: OpenAI, Ollama, vLLM, llama.cpp server, TEI, LM Studio).
// Requests are retried on rate limits, overload and dropped connections, with backoff that
// honours what the server asked for (Retry-After and its relatives). A server that refuses the
// inputs themselves (too long, invalid) raises EmbeddingRefused, so a caller can cut or split
// them (llm/embedding_fit.h); anything else fails with the server's own message.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/error.h"

namespace pf {

// The server refused what it was asked to embed (HTTP 400, 413, 422, or a message saying an input
// is too long), not the request as a whole: the model works, these inputs do not fit it. Also
// raised, with status 500, for a server error that outlived the retries: one input can break a
// server, and only a caller that has seen the server answer other inputs can tell.
class EmbeddingRefused : public Error {
 public:
  EmbeddingRefused(const std::string& message, int status, bool too_long, int limit_tokens,
                   int requested_tokens)
      : Error(message),
        status(status),
        too_long(too_long),
        limit_tokens(limit_tokens),
        requested_tokens(requested_tokens) {}
  int status;            // the HTTP status
  bool too_long;         // an input is longer than the model takes
  int limit_tokens;      // the limit the message names, or 0
  int requested_tokens;  // how many tokens the message says an input had, or 0
};

// How long a model's inputs may be, and who said so.
struct InputLimit {
  int tokens = 0;
  std::string source;  // "config", "llama.cpp /props", "Ollama /api/show", "default", ...
};

struct EmbeddingBatch {
  std::vector<std::vector<float>> vectors;  // one per input, in order
  int64_t prompt_tokens = 0;                // the server's usage count, or 0 if it sent none
};

// Thread safety: an Embedder may be used from several threads at once (searches embed queries
// on the workers while the indexer embeds chunks).
class Embedder {
 public:
  virtual ~Embedder() = default;
  virtual const std::string& model_id() const = 0;  // "provider:model"
  // One vector per input, in order, with the token count the server reported. Throws
  // EmbeddingRefused when the server refuses the inputs, pf::Error naming the model and what
  // went wrong otherwise (unreachable, credentials, retries used up, a malformed answer).
  virtual EmbeddingBatch embed_batch(const std::vector<std::string>& inputs) = 0;
  // The longest input the model takes: the config's contextWindow, else what the server says
  // (llama.cpp /props, Ollama /api/show, vLLM's model list, TEI /info), else a known model's
  // limit, else a safe default. The first call may ask the server (a few seconds at most); the
  // answer is kept.
  virtual InputLimit input_limit() = 0;

  std::vector<std::vector<float>> embed(const std::vector<std::string>& inputs) {
    return embed_batch(inputs).vectors;
  }
};

struct EmbedderOptions {
  int max_attempts = 3;
  int timeout_ms = 60000;
  int max_backoff_ms = 10000;
  int probe_timeout_ms = 3000;  // each question input_limit() asks the server
};

// Inputs of an unknown model on a server that does not say: BERT-style models' 512 tokens.
inline constexpr int kDefaultInputTokens = 512;

// Throws pf::ConfigError if the model id names no configured provider, the provider cannot
// embed (anthropic), or its credential variable is not set.
std::unique_ptr<Embedder> make_embedder(const Config& config, const std::string& model_id,
                                        const EmbedderOptions& options = {});

// The limit an error message from a known server names ("current batch size: 512", "maximum
// context length is 8192 tokens", "must have less than 512 tokens"), and the size of the input it
// names ("input (600 tokens)", "requested 9000 tokens", "Given: 600"); 0 where it names none.
// Whether the message says an input is too long at all. Exposed for the tests.
struct TooLongMessage {
  bool too_long = false;
  int limit_tokens = 0;
  int requested_tokens = 0;
};
TooLongMessage read_too_long_message(const std::string& message);

}  // namespace pf
