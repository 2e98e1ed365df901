// GGUF models in process through llama.cpp (see local_model.h).
#include "llm/local_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "core/config.h"
#include "core/log.h"

#ifdef PILOTFISH_HAVE_LLAMA
#include <llama.h>
#endif

namespace pf {

#ifndef PILOTFISH_HAVE_LLAMA

bool local_models_available() { return false; }

std::unique_ptr<Embedder> make_local_embedder(const std::string& model_id, const std::string&,
                                              int) {
  throw ConfigError("model \"" + model_id +
                    "\": this pilotfish was built without llama.cpp (scripts/build.sh builds it)");
}

#else

bool local_models_available() { return true; }

namespace {

// llama.cpp's own log goes to ours at debug level (it reports every tensor it loads); its errors
// stay errors.
void llama_log(ggml_log_level level, const char* text, void*) {
  std::string line(text);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  if (line.empty()) return;
  if (level == GGML_LOG_LEVEL_ERROR) log::warn("llama", line);
  else log::debug("llama", line);
}

void init_backend() {
  static std::once_flag once;
  std::call_once(once, [] {
    llama_log_set(llama_log, nullptr);
    llama_backend_init();
  });
}

// The first bytes of a GGUF file are "GGUF": checked before llama.cpp is asked, for a message that
// says what is wrong with the file.
void check_file(const std::string& model_id, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw ConfigError("model \"" + model_id + "\": cannot open " + path + ": " + std::strerror(errno));
  char magic[4] = {0, 0, 0, 0};
  size_t got = std::fread(magic, 1, 4, f);
  std::fclose(f);
  if (got != 4 || std::memcmp(magic, "GGUF", 4) != 0)
    throw ConfigError("model \"" + model_id + "\": " + path + " is not a GGUF file");
}

class LocalEmbedder : public Embedder {
 public:
  LocalEmbedder(std::string id, const std::string& path, int context_window) : id_(std::move(id)) {
    check_file(id_, path);
    init_backend();
    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    model_ = llama_model_load_from_file(path.c_str(), mp);
    if (!model_)
      throw ConfigError("model \"" + id_ + "\": llama.cpp cannot load " + path +
                        " (a damaged file, or an architecture this llama.cpp does not know)");
    int trained = llama_model_n_ctx_train(model_);
    n_ctx_ = std::min(context_window > 0 ? context_window : (trained > 0 ? trained : 512), 8192);
    llama_context_params cp = llama_context_default_params();
    cp.embeddings = true;
    cp.n_ctx = static_cast<uint32_t>(n_ctx_);
    cp.n_batch = static_cast<uint32_t>(n_ctx_);
    cp.n_ubatch = static_cast<uint32_t>(n_ctx_);  // a BERT input must fit one micro-batch
    cp.n_seq_max = 1;
    int threads = std::max(1u, std::thread::hardware_concurrency() / 2);
    cp.n_threads = threads;
    cp.n_threads_batch = threads;
    ctx_ = llama_init_from_model(model_, cp);
    if (!ctx_) {
      llama_model_free(model_);
      throw ConfigError("model \"" + id_ + "\": llama.cpp cannot make an embedding context for " + path);
    }
    dim_ = llama_model_n_embd_out(model_);
    log::info("llm", "embedding model " + id_ + ": " + path + ", " + std::to_string(dim_) +
                         " dimensions, inputs up to " + std::to_string(n_ctx_) + " tokens, " +
                         std::to_string(threads) + " threads");
  }
  ~LocalEmbedder() override {
    llama_free(ctx_);
    llama_model_free(model_);
  }

  const std::string& model_id() const override { return id_; }
  InputLimit input_limit() override { return {n_ctx_, "the GGUF file"}; }

  EmbeddingBatch embed_batch(const std::vector<std::string>& inputs) override {
    EmbeddingBatch out;
    const llama_vocab* vocab = llama_model_get_vocab(model_);
    for (const std::string& text : inputs) {
      std::vector<llama_token> tokens(text.size() + 8);
      int n = llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), tokens.data(),
                             static_cast<int32_t>(tokens.size()), true, false);
      if (n < 0) {
        tokens.resize(static_cast<size_t>(-n));
        n = llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), tokens.data(),
                           static_cast<int32_t>(tokens.size()), true, false);
      }
      if (n > n_ctx_)
        throw EmbeddingRefused("embedding model " + id_ + ": input (" + std::to_string(n) +
                                   " tokens) is too long for the model's context (" +
                                   std::to_string(n_ctx_) + " tokens)",
                               413, true, n_ctx_, n);
      tokens.resize(static_cast<size_t>(std::max(n, 0)));
      // One context, one input at a time; taken per input, not per batch, so a search's query
      // waits for one chunk of the indexer's batch, not all of it.
      std::lock_guard<std::mutex> lock(mu_);
      out.vectors.push_back(embed_tokens(tokens));
      out.prompt_tokens += n;
    }
    return out;
  }

 private:
  std::vector<float> embed_tokens(const std::vector<llama_token>& tokens) {
    if (llama_memory_t mem = llama_get_memory(ctx_)) llama_memory_clear(mem, true);
    llama_batch batch = llama_batch_init(static_cast<int32_t>(std::max<size_t>(tokens.size(), 1)), 0, 1);
    for (size_t i = 0; i < tokens.size(); ++i) {
      batch.token[i] = tokens[i];
      batch.pos[i] = static_cast<llama_pos>(i);
      batch.n_seq_id[i] = 1;
      batch.seq_id[i][0] = 0;
      batch.logits[i] = true;
    }
    batch.n_tokens = static_cast<int32_t>(tokens.size());
    int rc = tokens.empty() ? 0 : llama_decode(ctx_, batch);
    std::vector<float> v(static_cast<size_t>(dim_), 0.0f);
    const float* e = nullptr;
    if (rc == 0 && !tokens.empty())
      e = llama_pooling_type(ctx_) == LLAMA_POOLING_TYPE_NONE
              ? llama_get_embeddings_ith(ctx_, batch.n_tokens - 1)
              : llama_get_embeddings_seq(ctx_, 0);
    llama_batch_free(batch);
    if (rc != 0) throw Error("embedding model " + id_ + ": llama.cpp failed to run the model (" + std::to_string(rc) + ")");
    if (!e) return v;
    // Unit length, as llama-server's /v1/embeddings returns them (embd_normalize 2).
    double sum = 0;
    for (int i = 0; i < dim_; ++i) sum += double(e[i]) * e[i];
    double norm = sum > 0 ? std::sqrt(sum) : 1.0;
    for (int i = 0; i < dim_; ++i) v[static_cast<size_t>(i)] = static_cast<float>(e[i] / norm);
    return v;
  }

  std::string id_;
  llama_model* model_ = nullptr;
  llama_context* ctx_ = nullptr;
  int n_ctx_ = 512, dim_ = 0;
  std::mutex mu_;
};

}  // namespace

std::unique_ptr<Embedder> make_local_embedder(const std::string& model_id, const std::string& path,
                                              int context_window) {
  return std::make_unique<LocalEmbedder>(model_id, path, context_window);
}

#endif

}  // namespace pf
