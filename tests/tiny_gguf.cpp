// Tiny random-weight GGUF models for the local-model tests (see tiny_gguf.h).
#include "tiny_gguf.h"

#include <ggml.h>
#include <gguf.h>

#include <cmath>
#include <functional>
#include <random>
#include <stdexcept>

namespace pf::test {
namespace {

// A GGUF file being written: the tokenizer (and every other key) of one of llama.cpp's vocabulary
// files, then hyperparameters and random (or constant) f32 tensors.
class GgufWriter {
 public:
  GgufWriter(const std::string& vocab_file, uint32_t seed) : rng_(seed) {
    std::string path = std::string(PILOTFISH_LLAMA_DIR) + "/models/" + vocab_file;
    gguf_init_params vp{true, nullptr};
    gguf_context* vocab = gguf_init_from_file(path.c_str(), vp);
    if (!vocab) throw std::runtime_error("cannot read " + path);
    g_ = gguf_init_empty();
    gguf_set_kv(g_, vocab);
    gguf_free(vocab);
    gguf_set_val_u32(g_, "general.file_type", 0);
    ggml_init_params ip{static_cast<size_t>(64) << 20, nullptr, false};
    ctx_ = ggml_init(ip);
  }
  ~GgufWriter() {
    gguf_free(g_);
    ggml_free(ctx_);
  }
  void u32(const char* key, uint32_t v) { gguf_set_val_u32(g_, key, v); }
  void str(const char* key, const std::string& v) { gguf_set_val_str(g_, key, v.c_str()); }
  int64_t vocab_size() const {
    return static_cast<int64_t>(gguf_get_arr_n(g_, gguf_find_key(g_, "tokenizer.ggml.tokens")));
  }
  // ne1 0: a vector. fill NaN: N(0, 0.05) values.
  void tensor(const std::string& name, int64_t ne0, int64_t ne1, float fill = NAN) {
    ggml_tensor* t = ne1 > 0 ? ggml_new_tensor_2d(ctx_, GGML_TYPE_F32, ne0, ne1)
                             : ggml_new_tensor_1d(ctx_, GGML_TYPE_F32, ne0);
    ggml_set_name(t, name.c_str());
    std::normal_distribution<float> normal(0.0f, 0.05f);
    auto* data = static_cast<float*>(t->data);
    for (int64_t i = 0; i < ggml_nelements(t); ++i) data[i] = std::isnan(fill) ? normal(rng_) : fill;
    gguf_add_tensor(g_, t);
  }
  // The same, with columns 0 to 2 of every row (its first three values) set by columns(row, c).
  void tensor(const std::string& name, int64_t ne0, int64_t ne1,
              const std::function<float(int64_t, int)>& columns) {
    tensor(name, ne0, ne1);
    ggml_tensor* t = ggml_get_tensor(ctx_, name.c_str());
    auto* data = static_cast<float*>(t->data);
    for (int64_t row = 0; row < ne1; ++row)
      for (int c = 0; c < 3; ++c) data[row * ne0 + c] = columns(row, c);
  }
  // Tokens added at the end of the vocabulary as user-defined (written and read as their text);
  // returns their ids.
  std::vector<int64_t> add_tokens(const std::vector<std::string>& words) {
    int64_t tk = gguf_find_key(g_, "tokenizer.ggml.tokens");
    int64_t sk = gguf_find_key(g_, "tokenizer.ggml.scores");
    int64_t yk = gguf_find_key(g_, "tokenizer.ggml.token_type");
    size_t n = gguf_get_arr_n(g_, tk);
    std::vector<std::string> texts;
    for (size_t i = 0; i < n; ++i) texts.emplace_back(gguf_get_arr_str(g_, tk, i));
    auto* scores0 = static_cast<const float*>(gguf_get_arr_data(g_, sk));
    auto* types0 = static_cast<const int32_t*>(gguf_get_arr_data(g_, yk));
    std::vector<float> scores(scores0, scores0 + n);
    std::vector<int32_t> types(types0, types0 + n);
    std::vector<int64_t> ids;
    for (const std::string& w : words) {
      ids.push_back(static_cast<int64_t>(texts.size()));
      texts.push_back(w);
      scores.push_back(0.0f);
      types.push_back(4);  // LLAMA_TOKEN_TYPE_USER_DEFINED
    }
    std::vector<const char*> ptrs;
    for (const std::string& t : texts) ptrs.push_back(t.c_str());
    gguf_set_arr_str(g_, "tokenizer.ggml.tokens", ptrs.data(), ptrs.size());
    gguf_set_arr_data(g_, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, scores.data(), scores.size());
    gguf_set_arr_data(g_, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, types.data(), types.size());
    return ids;
  }
  int64_t find_token(const std::string& text) const {
    int64_t tk = gguf_find_key(g_, "tokenizer.ggml.tokens");
    for (size_t i = 0; i < gguf_get_arr_n(g_, tk); ++i)
      if (text == gguf_get_arr_str(g_, tk, i)) return static_cast<int64_t>(i);
    throw std::runtime_error("no token " + text);
  }
  int64_t eos() const {
    return static_cast<int64_t>(gguf_get_val_u32(g_, gguf_find_key(g_, "tokenizer.ggml.eos_token_id")));
  }
  bool write(const std::string& path) { return gguf_write_to_file(g_, path.c_str(), false); }

 private:
  std::mt19937 rng_;
  gguf_context* g_ = nullptr;
  ggml_context* ctx_ = nullptr;
};

}  // namespace

void write_tiny_bert(const std::string& path, int pooling, uint32_t seed) {
  GgufWriter w("ggml-vocab-bert-bge.gguf", seed);
  w.u32("bert.block_count", 2);
  w.u32("bert.context_length", kTinyCtx);
  w.u32("bert.embedding_length", kTinyEmbd);
  w.u32("bert.feed_forward_length", 64);
  w.u32("bert.attention.head_count", 4);
  w.u32("bert.pooling_type", static_cast<uint32_t>(pooling));
  w.tensor("token_embd.weight", kTinyEmbd, w.vocab_size());
  w.tensor("token_types.weight", kTinyEmbd, 2);
  w.tensor("position_embd.weight", kTinyEmbd, kTinyCtx);
  w.tensor("token_embd_norm.weight", kTinyEmbd, 0, 1.0f);
  w.tensor("token_embd_norm.bias", kTinyEmbd, 0, 0.0f);
  for (int l = 0; l < 2; ++l) {
    std::string b = "blk." + std::to_string(l) + ".";
    for (const char* t : {"attn_q", "attn_k", "attn_v", "attn_output"}) {
      w.tensor(b + t + ".weight", kTinyEmbd, kTinyEmbd);
      w.tensor(b + t + ".bias", kTinyEmbd, 0);
    }
    w.tensor(b + "attn_output_norm.weight", kTinyEmbd, 0, 1.0f);
    w.tensor(b + "attn_output_norm.bias", kTinyEmbd, 0, 0.0f);
    w.tensor(b + "ffn_up.weight", kTinyEmbd, 64);
    w.tensor(b + "ffn_up.bias", 64, 0);
    w.tensor(b + "ffn_down.weight", 64, kTinyEmbd);
    w.tensor(b + "ffn_down.bias", kTinyEmbd, 0);
    w.tensor(b + "layer_output_norm.weight", kTinyEmbd, 0, 1.0f);
    w.tensor(b + "layer_output_norm.bias", kTinyEmbd, 0, 0.0f);
  }
  if (!w.write(path)) throw std::runtime_error("cannot write " + path);
}

namespace {

// The llama of write_tiny_llama; with markers, the biased one of write_tiny_tool_calling_llama.
void write_llama(const std::string& path, uint32_t seed, int pooling,
                 const std::string& chat_template, const std::vector<std::string>& markers) {
  GgufWriter w("ggml-vocab-llama-spm.gguf", seed);
  if (!chat_template.empty()) w.str("tokenizer.chat_template", chat_template);
  if (pooling >= 0) w.u32("llama.pooling_type", static_cast<uint32_t>(pooling));
  std::vector<int64_t> added = w.add_tokens(markers);
  w.u32("llama.block_count", 2);
  w.u32("llama.context_length", 256);
  w.u32("llama.embedding_length", kTinyEmbd);
  w.u32("llama.feed_forward_length", 64);
  w.u32("llama.attention.head_count", 4);
  w.u32("llama.attention.head_count_kv", 4);
  w.u32("llama.rope.dimension_count", kTinyEmbd / 4);
  if (markers.empty()) {
    w.tensor("token_embd.weight", kTinyEmbd, w.vocab_size());
    w.tensor("output.weight", kTinyEmbd, w.vocab_size());
  } else {
    // A large dimension of the current token's embedding dominates the last hidden state
    // whatever the (small, random) layers add, so a token's logit is mostly its output row's
    // value in that dimension: 1 after the opening marker, 2 after the closing one, 0 after any
    // other token.
    int64_t open = added[0], close = added[1], newline = w.find_token("<0x0A>"), eos = w.eos();
    w.tensor("token_embd.weight", kTinyEmbd, w.vocab_size(), [&](int64_t row, int c) {
      int dim = row == open ? 1 : row == close ? 2 : 0;
      return c == dim ? 10.0f : 0.0f;
    });
    w.tensor("output.weight", kTinyEmbd, w.vocab_size(), [&](int64_t row, int c) -> float {
      if (c == 1) return row == newline ? 10.0f : 0.0f;
      if (c == 2) return row == eos ? 10.0f : 0.0f;
      return row == open ? 10.0f : row == close ? 9.0f : row == eos ? 8.0f : 0.0f;
    });
  }
  w.tensor("output_norm.weight", kTinyEmbd, 0, 1.0f);
  for (int l = 0; l < 2; ++l) {
    std::string b = "blk." + std::to_string(l) + ".";
    w.tensor(b + "attn_norm.weight", kTinyEmbd, 0, 1.0f);
    for (const char* t : {"attn_q", "attn_k", "attn_v", "attn_output"}) w.tensor(b + t + ".weight", kTinyEmbd, kTinyEmbd);
    w.tensor(b + "ffn_norm.weight", kTinyEmbd, 0, 1.0f);
    w.tensor(b + "ffn_gate.weight", kTinyEmbd, 64);
    w.tensor(b + "ffn_up.weight", kTinyEmbd, 64);
    w.tensor(b + "ffn_down.weight", 64, kTinyEmbd);
  }
  if (!w.write(path)) throw std::runtime_error("cannot write " + path);
}

}  // namespace

void write_tiny_llama(const std::string& path, uint32_t seed, int pooling,
                      const std::string& chat_template) {
  write_llama(path, seed, pooling, chat_template, {});
}

void write_tiny_tool_calling_llama(const std::string& path, const std::string& chat_template,
                                   const std::string& open_marker, const std::string& close_marker) {
  write_llama(path, 1, -1, chat_template, {open_marker, close_marker});
}

}  // namespace pf::test
