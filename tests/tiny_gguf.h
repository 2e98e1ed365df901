// Tiny random-weight GGUF models written at test time with ggml's gguf API, on the real
// vocabularies of llama.cpp's models/ggml-vocab-*.gguf: nothing is downloaded, and every file is
// small enough to load in milliseconds. For the local-model tests; throw std::runtime_error when
// a file cannot be written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pf::test {

constexpr int kTinyEmbd = 32;  // the models' width
constexpr int kTinyCtx = 128;  // the BERT's trained context

// A 2-layer BERT of width 32 with random weights (seed) and the WordPiece vocabulary of
// ggml-vocab-bert-bge.gguf; pooling 1 = mean, 2 = CLS.
void write_tiny_bert(const std::string& path, int pooling, uint32_t seed);

// A 2-layer llama of width 32 (4 heads of 8), trained context 256, with random weights and the
// 32,000-token SentencePiece vocabulary of ggml-vocab-llama-spm.gguf. pooling >= 0: the file
// names its pooling (1 mean, 3 last), as decoder embedding models do. chat_template: the file's
// tokenizer.chat_template (Jinja), none when empty.
void write_tiny_llama(const std::string& path, uint32_t seed, int pooling = -1,
                      const std::string& chat_template = "");

// The same llama (no pooling) with a bias, for tool calls under a grammar: open_marker and
// close_marker are added to the vocabulary as single tokens (as a real model's call markers
// are), and greedy decoding picks, of the tokens allowed, the open marker first, then the close
// marker, then the end of generation, then any other in an order of its own; right after the
// open marker a newline first, right after the close marker the end. Where a call begins
// open_marker + newline (Qwen, Hermes), it writes one call (well formed under the template's
// grammar) and ends.
void write_tiny_tool_calling_llama(const std::string& path, const std::string& chat_template,
                                   const std::string& open_marker, const std::string& close_marker);

}  // namespace pf::test
