// GGUF models in process through llama.cpp (see local_model.h).
#include "llm/local_model.h"

#include <algorithm>
#include <numeric>
#include <atomic>
#include <boost/asio.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "core/cancel.h"
#include "core/config.h"
#include "core/log.h"

#ifdef PILOTFISH_HAVE_LLAMA
#include <llama.h>

#include "llm/local_chat_template.h"
#endif

namespace pf {

bool is_gguf_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  char magic[4] = {0, 0, 0, 0};
  size_t got = std::fread(magic, 1, 4, f);
  std::fclose(f);
  return got == 4 && std::memcmp(magic, "GGUF", 4) == 0;
}

#ifndef PILOTFISH_HAVE_LLAMA

bool local_models_available() { return false; }

std::unique_ptr<Embedder> make_local_embedder(const std::string& model_id, const std::string&,
                                              int) {
  throw ConfigError("model \"" + model_id +
                    "\": this pilotfish was built without llama.cpp (scripts/build.sh builds it)");
}

std::unique_ptr<ChatModel> make_local_chat_model(const std::string& model_id, const std::string&,
                                                 int, const Sampling&) {
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

// A missing file and one that is not GGUF, each said as such.
void check_file(const std::string& model_id, const std::string& path) {
  if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
    std::fclose(f);
  } else {
    throw ConfigError("model \"" + model_id + "\": cannot open " + path + ": " + std::strerror(errno));
  }
  if (!is_gguf_file(path))
    throw ConfigError("model \"" + model_id + "\": " + path + " is not a GGUF file");
}

// text as tokens of vocab (special tokens added; with parse_special, the template's markers read
// as the special tokens they name).
std::vector<llama_token> tokenize(const llama_vocab* vocab, const std::string& text,
                                  bool parse_special) {
  std::vector<llama_token> tokens(text.size() + 16);
  int n = llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), tokens.data(),
                         static_cast<int32_t>(tokens.size()), true, parse_special);
  if (n < 0) {
    tokens.resize(static_cast<size_t>(-n));
    n = llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), tokens.data(),
                       static_cast<int32_t>(tokens.size()), true, parse_special);
  }
  tokens.resize(static_cast<size_t>(std::max(n, 0)));
  return tokens;
}

// Models are loaded once per file and shared (llama.cpp allows many contexts on one model); an
// embedder or a chat holds a reference while it lives.
std::shared_ptr<llama_model> shared_model(const std::string& model_id, const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<llama_model>> loaded;
  std::lock_guard<std::mutex> lock(mu);
  if (auto m = loaded[path].lock()) return m;
  check_file(model_id, path);
  init_backend();
  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  llama_model* raw = llama_model_load_from_file(path.c_str(), mp);
  if (!raw)
    throw ConfigError("model \"" + model_id + "\": llama.cpp cannot load " + path +
                      " (a damaged file, or an architecture this llama.cpp does not know)");
  std::shared_ptr<llama_model> m(raw, llama_model_free);
  loaded[path] = m;
  return m;
}

// The context a model runs with: the configured contextWindow, else the trained context, else
// fallback; at most 8192 tokens (a context's memory grows with it).
int context_size(const llama_model& model, int configured, int fallback) {
  int trained = llama_model_n_ctx_train(&model);
  return std::min(configured > 0 ? configured : (trained > 0 ? trained : fallback), 8192);
}

class LocalEmbedder : public Embedder {
 public:
  LocalEmbedder(std::string id, const std::string& path, int context_window)
      : id_(std::move(id)), model_(shared_model(id_, path)) {
    n_ctx_ = context_size(*model_, context_window, 512);
    llama_context_params cp = llama_context_default_params();
    cp.embeddings = true;
    cp.n_ctx = static_cast<uint32_t>(n_ctx_);
    cp.n_batch = static_cast<uint32_t>(n_ctx_);
    cp.n_ubatch = static_cast<uint32_t>(n_ctx_);  // a BERT input must fit one micro-batch
    // Several inputs per decode, each its own sequence, sharing the whole cache (a decoder's
    // input may use all of n_ctx; not split between the sequences).
    cp.n_seq_max = kSequencesPerDecode;
    cp.kv_unified = true;
    int threads = std::max(1u, std::thread::hardware_concurrency() / 2);
    cp.n_threads = threads;
    cp.n_threads_batch = threads;
    ctx_ = llama_init_from_model(model_.get(), cp);
    if (!ctx_)
      throw ConfigError("model \"" + id_ + "\": llama.cpp cannot make an embedding context for " + path);
    dim_ = llama_model_n_embd_out(model_.get());
    log::info("llm", "embedding model " + id_ + ": " + path + ", " + std::to_string(dim_) +
                         " dimensions, inputs up to " + std::to_string(n_ctx_) + " tokens, " +
                         std::to_string(threads) + " threads");
  }
  ~LocalEmbedder() override { llama_free(ctx_); }  // before the model it was made from

  const std::string& model_id() const override { return id_; }
  InputLimit input_limit() override { return {n_ctx_, "the GGUF file"}; }

  EmbeddingBatch embed_batch(const std::vector<std::string>& inputs) override {
    EmbeddingBatch out;
    const llama_vocab* vocab = llama_model_get_vocab(model_.get());
    std::vector<std::vector<llama_token>> tokens;
    tokens.reserve(inputs.size());
    for (const std::string& text : inputs) {
      tokens.push_back(tokenize(vocab, text, false));
      int n = static_cast<int>(tokens.back().size());
      if (n > n_ctx_)
        throw EmbeddingRefused("embedding model " + id_ + ": input (" + std::to_string(n) +
                                   " tokens) is too long for the model's context (" +
                                   std::to_string(n_ctx_) + " tokens)",
                               413, true, n_ctx_, n);
      out.prompt_tokens += n;
    }
    // Batched by length: longest first, each decode takes the next inputs while they fit the
    // context together (kSequencesPerDecode at most), so inputs of like length share a decode
    // and a long one never leaves a decode of short ones half empty. The vectors go back in the
    // inputs' order. The context is taken per decode, not per batch, so a search's query waits
    // for one decode of the indexer's batch, not all of it.
    std::vector<size_t> order(tokens.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return tokens[a].size() > tokens[b].size(); });
    out.vectors.resize(tokens.size());
    for (size_t first = 0; first < order.size();) {
      std::vector<const std::vector<llama_token>*> group;
      size_t used = 0;
      while (first + group.size() < order.size() && group.size() < kSequencesPerDecode) {
        const std::vector<llama_token>& next = tokens[order[first + group.size()]];
        if (!group.empty() && used + next.size() > static_cast<size_t>(n_ctx_)) break;
        used += next.size();
        group.push_back(&next);
      }
      std::lock_guard<std::mutex> lock(mu_);
      std::vector<std::vector<float>> vectors = embed_sequences(group);
      for (size_t i = 0; i < group.size(); ++i) out.vectors[order[first + i]] = std::move(vectors[i]);
      first += group.size();
    }
    return out;
  }

 private:
  static constexpr uint32_t kSequencesPerDecode = 8;

  // The inputs of one decode, sequence i each; their unit vectors, in the same order.
  std::vector<std::vector<float>> embed_sequences(
      const std::vector<const std::vector<llama_token>*>& group) {
    if (llama_memory_t mem = llama_get_memory(ctx_)) llama_memory_clear(mem, true);
    size_t total = 0;
    for (const auto* seq : group) total += seq->size();
    llama_batch batch = llama_batch_init(static_cast<int32_t>(std::max<size_t>(total, 1)), 0, 1);
    std::vector<int32_t> last_index(group.size(), -1);  // each input's last token in the batch
    for (size_t i = 0; i < group.size(); ++i) {
      for (size_t t = 0; t < group[i]->size(); ++t) {
        int32_t at = batch.n_tokens++;
        batch.token[at] = (*group[i])[t];
        batch.pos[at] = static_cast<llama_pos>(t);
        batch.n_seq_id[at] = 1;
        batch.seq_id[at][0] = static_cast<llama_seq_id>(i);
        batch.logits[at] = true;
        last_index[i] = at;
      }
    }
    int rc = batch.n_tokens == 0 ? 0 : llama_decode(ctx_, batch);
    std::vector<std::vector<float>> out;
    if (rc == 0) {
      bool pooled = llama_pooling_type(ctx_) != LLAMA_POOLING_TYPE_NONE;
      for (size_t s = 0; s < group.size(); ++s) {
        const float* e = nullptr;
        if (last_index[s] >= 0)
          e = pooled ? llama_get_embeddings_seq(ctx_, static_cast<llama_seq_id>(s))
                     : llama_get_embeddings_ith(ctx_, last_index[s]);
        out.push_back(unit_vector(e));
      }
    }
    llama_batch_free(batch);
    if (rc != 0) throw Error("embedding model " + id_ + ": llama.cpp failed to run the model (" + std::to_string(rc) + ")");
    return out;
  }

  // Unit length, as llama-server's /v1/embeddings returns them (embd_normalize 2); zeros for an
  // empty input.
  std::vector<float> unit_vector(const float* e) const {
    std::vector<float> v(static_cast<size_t>(dim_), 0.0f);
    if (!e) return v;
    double sum = 0;
    for (int i = 0; i < dim_; ++i) sum += double(e[i]) * e[i];
    double norm = sum > 0 ? std::sqrt(sum) : 1.0;
    for (int i = 0; i < dim_; ++i) v[static_cast<size_t>(i)] = static_cast<float>(e[i] / norm);
    return v;
  }

  std::string id_;
  std::shared_ptr<llama_model> model_;
  llama_context* ctx_ = nullptr;
  int n_ctx_ = 512, dim_ = 0;
  std::mutex mu_;
};

// What the generating thread hands the coroutine: events, then done (with an error or not).
struct Generation {
  std::mutex mu;
  std::deque<ChatEvent> events;
  bool done = false;
  std::string error;
  std::atomic<bool> stop{false};
};

// The longest prefix of text that ends on a whole UTF-8 sequence (the rest waits for the next
// piece: a token can end inside a character).
size_t complete_utf8(const std::string& text) {
  size_t end = text.size(), i = end;
  while (i > 0 && end - i < 4 && (static_cast<unsigned char>(text[i - 1]) & 0xC0) == 0x80) --i;
  if (i == 0) return end;
  unsigned char lead = static_cast<unsigned char>(text[i - 1]);
  size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  return (end - (i - 1)) < need ? i - 1 : end;
}

class LocalChat : public ChatModel {
 public:
  LocalChat(std::string id, const std::string& path, int context_window, Sampling sampling)
      : id_(std::move(id)), model_(shared_model(id_, path)), sampling_(sampling) {
    n_ctx_ = context_size(*model_, context_window, 2048);
    try {
      template_ = std::make_unique<LocalChatTemplate>(model_.get(), "");
    } catch (const Error& e) {
      log::warn("llm", "local model " + id_ + ": " + e.what() + "; ChatML is used instead");
      template_ = std::make_unique<LocalChatTemplate>(model_.get(), "chatml");
    }
  }

  const std::string& model_id() const override { return id_; }

  boost::asio::awaitable<void> async_stream(
      const ChatRequest& request, const std::function<bool(const ChatEvent&)>& on_event) override {
    bool tools = request.tools && !request.tools->empty();
    if (tools && !template_->supports_tools()) note_no_tools();
    auto prompt = std::make_shared<TemplatedPrompt>(render(request, tools && template_->supports_tools()));
    std::vector<llama_token> tokens = tokenize(llama_model_get_vocab(model_.get()), prompt->text, true);
    int max_tokens = request.max_tokens > 0 ? request.max_tokens : 1024;
    if (static_cast<int>(tokens.size()) + 1 > n_ctx_)
      throw Error("model " + id_ + ": the conversation (" + std::to_string(tokens.size()) +
                  " tokens) does not fit the model's context (" + std::to_string(n_ctx_) + ")");
    if (request.sent) request.sent();
    if (request.written) request.written();
    auto gen = std::make_shared<Generation>();
    auto executor = co_await boost::asio::this_coro::executor;
    auto wake = std::make_shared<boost::asio::steady_timer>(executor);
    CancelRegistration on_cancel(request.cancel, [gen] { gen->stop = true; });
    std::thread worker([this, gen, wake, executor, prompt, tokens = std::move(tokens), max_tokens] {
      generate(*gen, *prompt, tokens, max_tokens, [&] {
        boost::asio::post(executor, [wake] { wake->cancel(); });
      });
    });
    // However this coroutine ends (an exception, a destroyed frame), the worker stops and is
    // joined before what it uses goes.
    struct Joiner {
      std::thread& t;
      Generation& g;
      ~Joiner() {
        g.stop = true;
        if (t.joinable()) t.join();
      }
    } joiner{worker, *gen};
    for (;;) {
      std::deque<ChatEvent> ready;
      bool done;
      std::string error;
      {
        std::lock_guard<std::mutex> lock(gen->mu);
        ready.swap(gen->events);
        done = gen->done;
        error = gen->error;
      }
      for (const ChatEvent& e : ready) {
        if (gen->stop) break;
        if (!on_event(e)) gen->stop = true;
      }
      if (done) {
        worker.join();
        if (!error.empty() && !gen->stop) throw Error("model " + id_ + ": " + error);
        co_return;
      }
      wake->expires_at(boost::asio::steady_timer::time_point::max());
      boost::system::error_code ec;
      co_await wake->async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
    }
  }

 private:
  void note_no_tools() {
    static std::mutex mu;
    static std::set<std::string> said;
    std::lock_guard<std::mutex> lock(mu);
    if (said.insert(id_).second)
      log::info("llm", "local model " + id_ + " answers without tools (its chat template "
                       "does not describe tools)");
  }

  TemplatedPrompt render(const ChatRequest& request, bool with_tools) const {
    try {
      return template_->render(request, with_tools);
    } catch (const Error& e) {
      throw Error("model " + id_ + ": " + e.what());
    }
  }

  // The sampler of one generation: the tool-call grammar when the prompt has one (strict: past
  // the template's generation prompt, the last tokens of `tokens`; lazy: from its first trigger
  // on), then greedy or the configured sampling. Null when llama.cpp cannot read the grammar.
  llama_sampler* make_sampler(const TemplatedPrompt& prompt, const std::vector<llama_token>& tokens) const {
    llama_sampler* chain = llama_sampler_chain_init(llama_sampler_chain_default_params());
    if (!prompt.grammar.empty()) {
      const llama_vocab* vocab = llama_model_get_vocab(model_.get());
      llama_sampler* grammar;
      if (prompt.grammar_lazy) {
        std::vector<const char*> patterns;
        for (const std::string& p : prompt.trigger_patterns) patterns.push_back(p.c_str());
        grammar = llama_sampler_init_grammar_lazy_patterns(
            vocab, prompt.grammar.c_str(), "root", patterns.data(), patterns.size(),
            prompt.trigger_tokens.data(), prompt.trigger_tokens.size());
      } else {
        grammar = llama_sampler_init_grammar(vocab, prompt.grammar.c_str(), "root");
      }
      if (!grammar) {
        llama_sampler_free(chain);
        return nullptr;
      }
      llama_sampler_chain_add(chain, grammar);  // the chain owns it now
      if (!prompt.generation_prompt.empty())
        for (llama_token t : generation_prompt_tokens(vocab, tokens, prompt.generation_prompt))
          llama_sampler_accept(grammar, t);
    }
    // Greedy unless a temperature is configured: top-k, top-p, the temperature, then a draw
    // (llama.cpp's usual order), from the configured seed or a fresh one per generation.
    double temperature = sampling_.temperature.value_or(0);
    if (temperature <= 0) {
      llama_sampler_chain_add(chain, llama_sampler_init_greedy());
      return chain;
    }
    llama_sampler_chain_add(chain, llama_sampler_init_top_k(sampling_.top_k.value_or(40)));
    llama_sampler_chain_add(chain, llama_sampler_init_top_p(static_cast<float>(sampling_.top_p.value_or(0.95)), 1));
    llama_sampler_chain_add(chain, llama_sampler_init_temp(static_cast<float>(temperature)));
    llama_sampler_chain_add(chain, llama_sampler_init_dist(sampling_.seed.value_or(LLAMA_DEFAULT_SEED)));
    return chain;
  }

  // On the worker thread: decode the prompt, then sample until end of generation, a stop string,
  // the token cap, the context's end or a stop; the reply's text goes to gen as it is written (a
  // tool call's markup held back by the template's parser) and its tool calls at the end;
  // `notify` wakes the coroutine.
  void generate(Generation& gen, TemplatedPrompt& prompt, const std::vector<llama_token>& tokens,
                int max_tokens, const std::function<void()>& notify) {
    auto push = [&](ChatEvent e) {
      std::lock_guard<std::mutex> lock(gen.mu);
      gen.events.push_back(std::move(e));
    };
    auto text = [&](const std::string& t) {
      if (t.empty()) return;
      push(ChatEvent{ChatEvent::Kind::kTextDelta, t, {}, {}});
      notify();
    };
    auto finish = [&](const std::string& reason, const std::string& error) {
      {
        std::lock_guard<std::mutex> lock(gen.mu);
        if (error.empty()) gen.events.push_back(ChatEvent{ChatEvent::Kind::kFinish, {}, {}, reason});
        gen.error = error;
        gen.done = true;
      }
      notify();
    };
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = static_cast<uint32_t>(n_ctx_);
    cp.n_batch = 512;
    int threads = std::max(1u, std::thread::hardware_concurrency() / 2);
    cp.n_threads = threads;
    cp.n_threads_batch = threads;
    std::unique_ptr<llama_context, decltype(&llama_free)> ctx(
        llama_init_from_model(model_.get(), cp), llama_free);
    if (!ctx) return finish("", "llama.cpp cannot make a context");
    std::unique_ptr<llama_sampler, decltype(&llama_sampler_free)> sampler(nullptr, llama_sampler_free);
    try {  // a grammar that cannot go on throws, from make_sampler or a sample
      sampler.reset(make_sampler(prompt, tokens));
      if (!sampler) return finish("", "llama.cpp cannot read the chat template's tool-call grammar");
      run(gen, prompt, tokens, max_tokens, ctx.get(), sampler.get(), text, push, finish);
    } catch (const std::exception& e) {
      finish("", std::string("the tool-call grammar stopped the reply: ") + e.what());
    }
  }

  // generate's loop, on its context and sampler.
  template <typename Text, typename Push, typename Finish>
  void run(Generation& gen, TemplatedPrompt& prompt, const std::vector<llama_token>& tokens,
           int max_tokens, llama_context* ctx, llama_sampler* sampler, Text& text, Push& push,
           Finish& finish) {
    const llama_vocab* vocab = llama_model_get_vocab(model_.get());
    StopText stops(prompt.stops);
    std::string error, reason = "length", pending;
    std::vector<llama_token> feed(tokens);
    int produced = 0, used = 0;
    while (!gen.stop && !stops.stopped()) {
      // The prompt goes in pieces of n_batch; then one token at a time.
      for (size_t at = 0; at < feed.size() && error.empty(); at += 512) {
        int32_t n = static_cast<int32_t>(std::min<size_t>(512, feed.size() - at));
        if (llama_decode(ctx, llama_batch_get_one(feed.data() + at, n)) != 0)
          error = "llama.cpp failed to run the model";
      }
      if (!error.empty()) break;
      used += static_cast<int>(feed.size());
      if (produced >= max_tokens || used >= n_ctx_) break;
      llama_token tok = llama_sampler_sample(sampler, ctx, -1);
      if (llama_vocab_is_eog(vocab, tok)) {
        reason = "stop";
        break;
      }
      char buf[256];
      int n = llama_token_to_piece(vocab, tok, buf, sizeof buf, 0, prompt.preserved_tokens.count(tok) > 0);
      if (n > 0) pending.append(buf, static_cast<size_t>(n));
      if (size_t whole = complete_utf8(pending)) {
        text(prompt.parser.feed(stops.feed(pending.substr(0, whole))));
        pending.erase(0, whole);
      }
      ++produced;
      feed.assign(1, tok);
    }
    if (gen.stop) return finish("", "");
    if (stops.stopped()) reason = "stop";
    std::vector<ToolCall> calls;
    text(prompt.parser.feed(stops.feed(pending) + stops.rest()));
    text(prompt.parser.finish(calls));
    for (ToolCall& c : calls) push(ChatEvent{ChatEvent::Kind::kToolCall, {}, std::move(c), {}});
    finish(calls.empty() ? reason : "tool_calls", error);
  }

  std::string id_;
  std::shared_ptr<llama_model> model_;
  Sampling sampling_;
  int n_ctx_ = 2048;
  std::unique_ptr<LocalChatTemplate> template_;
};

}  // namespace

std::unique_ptr<Embedder> make_local_embedder(const std::string& model_id, const std::string& path,
                                              int context_window) {
  return std::make_unique<LocalEmbedder>(model_id, path, context_window);
}

std::unique_ptr<ChatModel> make_local_chat_model(const std::string& model_id,
                                                 const std::string& path, int context_window,
                                                 const Sampling& sampling) {
  return std::make_unique<LocalChat>(model_id, path, context_window, sampling);
}

#endif

}  // namespace pf
