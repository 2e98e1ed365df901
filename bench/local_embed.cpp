// Embedding throughput of the in-process llama.cpp embedder (llm/local_model.cpp): inputs in
// batches of 50, as the indexer sends them (packed several to a decode, batched by length),
// against the baseline of the same inputs one call each, on the same model in the same run.
// The models are the tests' tiny random-weight GGUFs (tests/tiny_gguf.h: width 32, two layers),
// so the figure is the per-decode overhead that packing saves, not a real model's compute.
//
// usage: pf_local_embed [--inputs N] [--repeat R]   prints one JSON object
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config.h"
#include "llm/embeddings.h"
#include "../tests/tiny_gguf.h"

namespace {

using Clock = std::chrono::steady_clock;

pf::Config local_config(const std::string& path) {
  nlohmann::json c = {{"providers", {{"here", {{"type", "local"}, {"models", {{{"id", "tiny"}, {"path", path}}}}}}}},
                      {"defaults", {{"embeddingModel", "here:tiny"}}}};
  return pf::parse_config(c.dump(), "bench");
}

// Chunk-like inputs of 3 to 90 words (a few share most of the context, most are short), fixed
// seed.
std::vector<std::string> inputs(int n) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> words(3, 90);
  const char* vocab[] = {"function", "handler", "route", "request", "return", "const", "hook",
                         "server", "error", "value", "register", "options", "plugin", "reply"};
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    std::string t;
    int w = words(rng);
    for (int k = 0; k < w; ++k) t += std::string(k ? " " : "") + vocab[rng() % 14];
    out.push_back(t);
  }
  return out;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  int n = 400, repeat = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--inputs") n = std::atoi(argv[i + 1]);
    else if (a == "--repeat") repeat = std::atoi(argv[i + 1]);
  }
  auto dir = std::filesystem::temp_directory_path() / ("pf-local-embed-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::vector<std::string> texts = inputs(n);
  nlohmann::json result = {{"inputs", n}, {"repeat", repeat}};
  for (const char* kind : {"bert-mean", "llama-last"}) {
    std::string path = (dir / (std::string(kind) + ".gguf")).string();
    if (std::string(kind) == "bert-mean") pf::test::write_tiny_bert(path, 1, 7);
    else pf::test::write_tiny_llama(path, 5, 3);
    auto e = pf::make_embedder(local_config(path), "here:tiny");
    e->embed({"warm up"});
    double alone = 1e9, packed = 1e9;
    for (int r = 0; r < repeat; ++r) {
      auto t0 = Clock::now();
      for (const auto& t : texts) e->embed({t});
      alone = std::min(alone, seconds_since(t0));
      t0 = Clock::now();
      for (size_t at = 0; at < texts.size(); at += 50) {
        std::vector<std::string> batch(texts.begin() + at,
                                       texts.begin() + std::min(texts.size(), at + 50));
        e->embed(batch);
      }
      packed = std::min(packed, seconds_since(t0));
    }
    result[kind] = {{"one_at_a_time_inputs_per_s", n / alone},
                    {"batches_of_50_inputs_per_s", n / packed},
                    {"ratio", alone / packed}};
  }
  std::filesystem::remove_all(dir);
  std::printf("%s\n", result.dump(2).c_str());
  return 0;
}
