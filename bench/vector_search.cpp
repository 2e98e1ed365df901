// Exact vector search speed: the in-process scan over N random unit vectors of D dimensions,
// against a plain one-accumulator scalar loop over the same matrix (the baseline), and the
// one-off cost of building the index. Usage: pf_vector_search [N=100000] [D=768] [QUERIES=50]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "search/vector_index.h"

using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 100000;
  int dim = argc > 2 ? std::atoi(argv[2]) : 768;
  int queries = argc > 3 ? std::atoi(argv[3]) : 50;
  std::mt19937 rng(1);
  std::normal_distribution<float> g;
  pf::EmbeddingMatrix m;
  m.model = "bench";
  m.dim = dim;
  m.values.resize(n * static_cast<size_t>(dim));
  for (auto& v : m.values) v = g(rng);
  for (size_t i = 0; i < n; ++i) m.rowids.push_back(static_cast<int64_t>(i + 1));
  std::vector<float> raw = m.values;  // for the baseline
  auto t0 = Clock::now();
  pf::VectorIndex index(std::move(m));
  double build_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();

  std::vector<double> ours, base;
  float sink = 0;
  for (int q = 0; q < queries; ++q) {
    std::vector<float> query(static_cast<size_t>(dim));
    for (auto& v : query) v = g(rng);
    auto a = Clock::now();
    auto hits = index.search(query, 50);
    ours.push_back(std::chrono::duration<double, std::milli>(Clock::now() - a).count());
    sink += hits.empty() ? 0 : hits[0].cosine;
    auto b = Clock::now();
    float best = -1e30f;
    for (size_t r = 0; r < n; ++r) {
      const float* row = &raw[r * static_cast<size_t>(dim)];
      float s = 0;
      for (int i = 0; i < dim; ++i) s += row[i] * query[static_cast<size_t>(i)];
      best = std::max(best, s);
    }
    base.push_back(std::chrono::duration<double, std::milli>(Clock::now() - b).count());
    sink += best;
  }
  std::sort(ours.begin(), ours.end());
  std::sort(base.begin(), base.end());
  auto p = [](const std::vector<double>& v, double q) {
    return v[static_cast<size_t>(q * (v.size() - 1))];
  };
  std::printf("vectors %zu x %d (%.0f MB), index build %.0f ms\n", n, dim, n * dim * 4.0 / 1e6,
              build_ms);
  std::printf("exact top-50 search: p50 %.2f ms, p99 %.2f ms\n", p(ours, 0.5), p(ours, 0.99));
  std::printf("baseline scalar dot scan (no top-k): p50 %.2f ms, p99 %.2f ms\n", p(base, 0.5),
              p(base, 0.99));
  std::printf("ratio baseline / ours (p50): %.2fx   (checksum %g)\n", p(base, 0.5) / p(ours, 0.5),
              static_cast<double>(sink));
  return 0;
}
