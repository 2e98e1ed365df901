// Vector search at scale: the exact scan (VectorIndex below its threshold) against the HNSW graph
// (search/ann_graph.h) and an 8-bit exact scan, on one set of vectors, in one run: build time,
// memory per vector, query latency p50/p99 and recall@10 against the exact top 10.
//
//   pf_ann_search --random N --dim D [--queries Q] [--ef 32,64,96,128,256] [--m 16]
//   pf_ann_search --file VECTORS.f32 --dim D [--limit N] ...   (rows of D little-endian floats;
//                                          the last Q rows are the queries, left out of the index)
//   ... --replicate K [--noise S]   each indexed row K times, copies moved by Gaussian noise of
//                                   S per component (0.05) before normalising: 341k GloVe
//                                   vectors become 1M with the same neighbourhood structure
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "search/ann_graph.h"
#include "search/vector_index.h"

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double pct(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5))];
}

void unit(float* v, int dim) {
  double n = 0;
  for (int i = 0; i < dim; ++i) n += double(v[i]) * v[i];
  if (n > 0)
    for (int i = 0; i < dim; ++i) v[i] = static_cast<float>(v[i] / std::sqrt(n));
}

double recall(const std::vector<int64_t>& truth, const std::vector<int64_t>& got) {
  std::set<int64_t> t(truth.begin(), truth.end());
  int hit = 0;
  for (int64_t g : got) hit += t.count(g) ? 1 : 0;
  return truth.empty() ? 1.0 : double(hit) / double(truth.size());
}

}  // namespace

int main(int argc, char** argv) {
  size_t n = 0, limit = 0, nq = 200, replicate = 1;
  float noise = 0.05f;
  int dim = 0, m = 16;
  std::string file;
  std::vector<int> efs = {32, 64, 96, 128, 256};
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--random") n = std::stoul(v);
    else if (a == "--file") file = v;
    else if (a == "--dim") dim = std::stoi(v);
    else if (a == "--limit") limit = std::stoul(v);
    else if (a == "--queries") nq = std::stoul(v);
    else if (a == "--m") m = std::stoi(v);
    else if (a == "--replicate") replicate = std::stoul(v);
    else if (a == "--noise") noise = std::stof(v);
    else if (a == "--ef") {
      efs.clear();
      std::stringstream ss(v);
      for (std::string e; std::getline(ss, e, ',');) efs.push_back(std::stoi(e));
    }
  }
  if (dim <= 0 || (n == 0 && file.empty())) {
    std::fprintf(stderr, "usage: pf_ann_search (--random N | --file F) --dim D [--queries Q]\n");
    return 2;
  }
  std::vector<float> data, queries;
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    in.seekg(0, std::ios::end);
    size_t rows = static_cast<size_t>(in.tellg()) / (sizeof(float) * static_cast<size_t>(dim));
    in.seekg(0);
    data.resize(rows * static_cast<size_t>(dim));
    in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data.size() * 4));
    n = rows - nq;
    if (limit && limit < n) n = limit;
    queries.assign(data.end() - static_cast<std::ptrdiff_t>(nq * static_cast<size_t>(dim)), data.end());
    data.resize(n * static_cast<size_t>(dim));
  } else {
    std::mt19937 rng(42);
    std::normal_distribution<float> g;
    data.resize(n * static_cast<size_t>(dim));
    for (auto& x : data) x = g(rng);
    queries.resize(nq * static_cast<size_t>(dim));
    for (auto& x : queries) x = g(rng);
  }
  for (size_t r = 0; r < n; ++r) unit(&data[r * static_cast<size_t>(dim)], dim);
  if (replicate > 1) {
    std::mt19937 rng(7);
    std::normal_distribution<float> g(0.0f, noise);
    std::vector<float> base = data;
    data.resize(n * replicate * static_cast<size_t>(dim));
    for (size_t k = 1; k < replicate; ++k)
      for (size_t i = 0; i < base.size(); ++i) data[k * base.size() + i] = base[i] + g(rng);
    n *= replicate;
    for (size_t r = 0; r < n; ++r) unit(&data[r * static_cast<size_t>(dim)], dim);
  }
  for (size_t q = 0; q < nq; ++q) unit(&queries[q * static_cast<size_t>(dim)], dim);
  std::vector<int64_t> rowids(n);
  for (size_t r = 0; r < n; ++r) rowids[r] = static_cast<int64_t>(r + 1);

  // Exact: the truth and the baseline.
  pf::EmbeddingMatrix mat;
  mat.dim = dim;
  mat.rowids = rowids;
  mat.values = data;
  pf::VectorIndex exact(std::move(mat), SIZE_MAX);
  std::vector<std::vector<int64_t>> truth(nq);
  std::vector<double> exact_ms;
  for (size_t q = 0; q < nq; ++q) {
    std::vector<float> query(queries.begin() + static_cast<std::ptrdiff_t>(q * dim),
                             queries.begin() + static_cast<std::ptrdiff_t>((q + 1) * dim));
    auto t0 = std::chrono::steady_clock::now();
    auto hits = exact.search(query, 10);
    exact_ms.push_back(ms_since(t0));
    for (auto& h : hits) truth[q].push_back(h.rowid);
  }
  std::printf("{\"n\": %zu, \"dim\": %d, \"queries\": %zu, \"exact_p50_ms\": %.3f, \"exact_p99_ms\": %.3f, "
              "\"exact_bytes_per_vector\": %d}\n",
              n, dim, nq, pct(exact_ms, 0.5), pct(exact_ms, 0.99), dim * 4);

  // 8-bit: each unit vector's components times 127, rounded; dot products in integers.
  std::vector<int8_t> q8(n * static_cast<size_t>(dim));
  for (size_t i = 0; i < q8.size(); ++i) q8[i] = static_cast<int8_t>(std::lround(data[i] * 127.0f));
  std::vector<double> q8_ms, q8_recall;
  for (size_t q = 0; q < nq; ++q) {
    std::vector<int8_t> qq(static_cast<size_t>(dim));
    for (int d = 0; d < dim; ++d) qq[static_cast<size_t>(d)] = static_cast<int8_t>(std::lround(queries[q * dim + d] * 127.0f));
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::pair<int32_t, int64_t>> scored(n);
    for (size_t r = 0; r < n; ++r) {
      const int8_t* row = &q8[r * static_cast<size_t>(dim)];
      int32_t s = 0;
      for (int d = 0; d < dim; ++d) s += int32_t(row[d]) * int32_t(qq[static_cast<size_t>(d)]);
      scored[r] = {s, rowids[r]};
    }
    std::partial_sort(scored.begin(), scored.begin() + 10, scored.end(),
                      [](auto& a, auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
    q8_ms.push_back(ms_since(t0));
    std::vector<int64_t> got;
    for (int i = 0; i < 10; ++i) got.push_back(scored[static_cast<size_t>(i)].second);
    q8_recall.push_back(recall(truth[q], got));
  }
  double r8 = 0;
  for (double r : q8_recall) r8 += r;
  std::printf("{\"int8_p50_ms\": %.3f, \"int8_p99_ms\": %.3f, \"int8_recall_at_10\": %.4f, \"int8_bytes_per_vector\": %d}\n",
              pct(q8_ms, 0.5), pct(q8_ms, 0.99), r8 / double(nq), dim);

  // HNSW.
  pf::AnnOptions opt;
  opt.m = m;
  auto t0 = std::chrono::steady_clock::now();
  auto graph = pf::AnnGraph::open("", dim, rowids, data, opt);
  if (!graph) return 1;
  double build_s = ms_since(t0) / 1000;
  std::printf("{\"hnsw_m\": %d, \"hnsw_ef_construction\": %d, \"hnsw_build_s\": %.1f, \"hnsw_bytes_per_vector\": %.0f}\n",
              m, opt.ef_construction, build_s, double(graph->memory_bytes()) / double(n));
  for (int ef : efs) {
    graph->set_ef(ef);
    std::vector<double> lat, rec;
    for (size_t q = 0; q < nq; ++q) {
      auto s0 = std::chrono::steady_clock::now();
      auto hits = graph->search(&queries[q * static_cast<size_t>(dim)], 10);
      lat.push_back(ms_since(s0));
      std::vector<int64_t> got;
      for (auto& h : hits) got.push_back(h.rowid);
      rec.push_back(recall(truth[q], got));
    }
    double r = 0;
    for (double x : rec) r += x;
    std::printf("{\"ef\": %d, \"hnsw_p50_ms\": %.3f, \"hnsw_p99_ms\": %.3f, \"recall_at_10\": %.4f, \"speedup_p50\": %.1f}\n",
                ef, pct(lat, 0.5), pct(lat, 0.99), r / double(nq), pct(exact_ms, 0.5) / pct(lat, 0.5));
  }
  return 0;
}
