// The HNSW graph (search/ann_graph.h) and VectorIndex above its threshold: recall against the
// exact scan on clustered vectors, the graph file beside the store loaded, updated and rebuilt,
// and a search never building one.
#include "search/ann_graph.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "search/vector_index.h"
#include "test_util.h"

namespace pf {
namespace {

constexpr int kDim = 32;

// n unit vectors around 40 centres (real embeddings cluster; uniform random ones do not).
std::vector<float> clustered(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g;
  std::vector<float> centres(40 * kDim);
  for (auto& x : centres) x = g(rng);
  std::vector<float> v(n * kDim);
  for (size_t i = 0; i < n; ++i) {
    size_t c = rng() % 40;
    double norm = 0;
    for (int d = 0; d < kDim; ++d) {
      v[i * kDim + d] = centres[c * kDim + d] + 0.4f * g(rng);
      norm += double(v[i * kDim + d]) * v[i * kDim + d];
    }
    for (int d = 0; d < kDim; ++d) v[i * kDim + d] = static_cast<float>(v[i * kDim + d] / std::sqrt(norm));
  }
  return v;
}

std::vector<int64_t> ids(size_t n, int64_t first = 1) {
  std::vector<int64_t> r(n);
  for (size_t i = 0; i < n; ++i) r[i] = first + static_cast<int64_t>(i);
  return r;
}

EmbeddingMatrix matrix(const std::vector<int64_t>& rowids, const std::vector<float>& v) {
  EmbeddingMatrix m;
  m.dim = kDim;
  m.rowids = rowids;
  m.values = v;
  return m;
}

TEST(AnnGraph, RecallAgainstTheExactScan) {
  auto v = clustered(4000, 1);
  auto rows = ids(4000);
  VectorIndex exact(matrix(rows, v), SIZE_MAX);
  VectorIndex ann(matrix(rows, v), 1);
  ASSERT_TRUE(ann.graph());
  ASSERT_FALSE(exact.graph());
  EXPECT_EQ(ann.size(), 4000u);
  auto queries = clustered(50, 2);
  double hits = 0;
  for (int q = 0; q < 50; ++q) {
    std::vector<float> query(queries.begin() + q * kDim, queries.begin() + (q + 1) * kDim);
    auto want = exact.search(query, 10);
    auto got = ann.search(query, 10);
    ASSERT_EQ(got.size(), 10u);
    for (size_t i = 1; i < got.size(); ++i) EXPECT_GE(got[i - 1].cosine, got[i].cosine);
    std::set<int64_t> truth;
    for (auto& h : want) truth.insert(h.rowid);
    for (auto& h : got) hits += truth.count(h.rowid);
    EXPECT_NEAR(got[0].cosine, want[0].cosine, 0.02);
  }
  EXPECT_GE(hits / 500, 0.95);
}

TEST(AnnGraph, TheFileIsLoadedUpdatedAndRebuilt) {
  test::TempDir dir;
  std::string file = dir / "g/m.hnsw";
  auto v = clustered(3000, 3);
  auto rows = ids(3000);
  AnnOptions opt;
  auto g = AnnGraph::open(file, kDim, rows, v, opt);
  EXPECT_EQ(g->how_opened(), 0);
  ASSERT_TRUE(std::filesystem::exists(file));
  EXPECT_EQ(AnnGraph::open(file, kDim, rows, v, opt)->how_opened(), 1);
  // 100 rows gone, 200 new: updated in place, and the new rows are found.
  auto more = clustered(200, 4);
  std::vector<int64_t> rows2(rows.begin() + 100, rows.end());
  std::vector<float> v2(v.begin() + 100 * kDim, v.end());
  for (size_t i = 0; i < 200; ++i) rows2.push_back(10000 + static_cast<int64_t>(i));
  v2.insert(v2.end(), more.begin(), more.end());
  auto updated = AnnGraph::open(file, kDim, rows2, v2, opt);
  EXPECT_EQ(updated->how_opened(), 2);
  EXPECT_EQ(updated->size(), 3100u);
  auto found = updated->search(&more[5 * kDim], 1);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].rowid, 10005);
  for (auto& h : updated->search(&v[3 * kDim], 20)) EXPECT_GT(h.rowid, 100) << "a deleted row came back";
  // A search may only load and lightly update; building is the index run's.
  AnnOptions search = opt;
  search.may_build = false;
  EXPECT_EQ(AnnGraph::open(file, kDim, rows2, v2, search)->how_opened(), 1);
  EXPECT_EQ(AnnGraph::open(dir / "none.hnsw", kDim, rows2, v2, search), nullptr);
  search.max_search_changes = 10;
  std::vector<int64_t> rows3(rows2.begin() + 50, rows2.end());
  std::vector<float> v3(v2.begin() + 50 * kDim, v2.end());
  EXPECT_EQ(AnnGraph::open(file, kDim, rows3, v3, search), nullptr);
  // Most of it gone: rebuilt, not patched.
  std::vector<int64_t> few(rows2.begin(), rows2.begin() + 500);
  std::vector<float> vfew(v2.begin(), v2.begin() + 500 * kDim);
  EXPECT_EQ(AnnGraph::open(file, kDim, few, vfew, opt)->how_opened(), 0);
  // A corrupt file is rebuilt.
  std::ofstream(file, std::ios::trunc) << "not a graph";
  EXPECT_EQ(AnnGraph::open(file, kDim, few, vfew, opt)->how_opened(), 0);
  EXPECT_EQ(AnnGraph::open(file, kDim, few, vfew, opt)->how_opened(), 1);
  // Another dimension: not this graph.
  std::vector<float> wide(500 * 2 * kDim, 0.1f);
  EXPECT_EQ(AnnGraph::open(file, 2 * kDim, few, wide, opt)->how_opened(), 0);
}

TEST(AnnGraph, VectorIndexKeepsItsGraphBesideTheStore) {
  test::TempDir dir;
  auto store = open_sqlite_store(dir / "s.db", OpenMode::kReadWrite);
  std::string file = VectorIndex::graph_file(*store, "srv:embed/small");
  EXPECT_EQ(file, dir / "s.db.vectors/srv_embed_small.hnsw");
}

}  // namespace
}  // namespace pf
