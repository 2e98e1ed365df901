// In-process search latency: opens a store read-only once, runs every query of a file (one a
// line) through pf::lexical_search with the CLI's defaults (10 results, 2 per file), one
// unmeasured warm-up pass then --repeat measured passes, and prints percentiles as JSON.
//
//   pf_search_latency DB QUERIES [--repeat N] [--limit N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include "search/lexical.h"
#include "store/store.h"

namespace {

double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  auto k = static_cast<size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(k, sorted.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: pf_search_latency DB QUERIES [--repeat N] [--limit N]\n");
    return 2;
  }
  std::string db = argv[1], queries_path = argv[2];
  int repeat = 3, limit = 10;
  for (int i = 3; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--repeat")
      repeat = std::atoi(argv[i + 1]);
    else if (a == "--limit")
      limit = std::atoi(argv[i + 1]);
  }
  std::vector<std::string> queries;
  std::ifstream in(queries_path);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) queries.push_back(line);
  if (queries.empty()) {
    std::fprintf(stderr, "no queries in %s\n", queries_path.c_str());
    return 2;
  }
  try {
    using Clock = std::chrono::steady_clock;
    auto t_open = Clock::now();
    auto store = pf::open_store(db, pf::OpenMode::kReadOnly);
    double open_ms = std::chrono::duration<double, std::milli>(Clock::now() - t_open).count();
    pf::SearchOptions opt;
    opt.limit = limit;
    size_t hits = 0, empty = 0;
    for (const auto& q : queries) {  // warm-up: page cache, statement cache
      size_t n = pf::lexical_search(*store, q, opt).size();
      hits += n;
      empty += n == 0;
    }
    std::vector<double> ms;
    ms.reserve(queries.size() * static_cast<size_t>(repeat));
    for (int r = 0; r < repeat; ++r) {
      for (const auto& q : queries) {
        auto t0 = Clock::now();
        auto res = pf::lexical_search(*store, q, opt);
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      }
    }
    double sum = 0;
    for (double v : ms) sum += v;
    std::sort(ms.begin(), ms.end());
    std::printf(
        "{\"queries\": %zu, \"samples\": %zu, \"hits_first_pass\": %zu, \"empty_results\": %zu, "
        "\"open_ms\": %.3f, \"p50_ms\": %.4f, \"p90_ms\": %.4f, \"p99_ms\": %.4f, "
        "\"mean_ms\": %.4f, \"max_ms\": %.4f}\n",
        queries.size(), ms.size(), hits, empty, open_ms, percentile(ms, 0.5), percentile(ms, 0.9),
        percentile(ms, 0.99), sum / static_cast<double>(ms.size()), ms.back());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pf_search_latency: %s\n", e.what());
    return 1;
  }
  return 0;
}
