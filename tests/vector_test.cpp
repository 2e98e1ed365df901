// Embeddings in the store, the exact vector index, and rank fusion.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/error.h"
#include "index/indexer.h"
#include "search/fusion.h"
#include "search/vector_cache.h"
#include "search/vector_index.h"
#include "test_util.h"

namespace pf {
namespace {

class EmbeddingStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_file(repo_ / "a.js", "function alpha () {}\n\nfunction beta () {}\n");
    test::write_file(repo_ / "b.md", "# Title\n\nSome text.\n");
    store_ = open_sqlite_store(dir_ / "e.db", OpenMode::kReadWrite);
    IndexOptions opt;
    opt.root = repo_.path();
    index_repository(*store_, opt);
  }
  test::TempDir repo_, dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(EmbeddingStoreTest, VectorsRoundTripPerModel) {
  auto todo = store_->chunks_to_embed("m1", 100);
  ASSERT_EQ(todo.size(), 3u);
  std::vector<std::string> texts;
  for (auto& c : todo) texts.push_back(c.text);
  std::sort(texts.begin(), texts.end());
  EXPECT_EQ(texts, (std::vector<std::string>{"# Title\n\nSome text.", "function alpha () {}",
                                             "function beta () {}"}));
  EXPECT_LT(todo[0].rowid, todo[1].rowid);
  std::vector<std::pair<int64_t, std::vector<float>>> vectors;
  for (size_t i = 0; i < 2; ++i)
    vectors.push_back({todo[i].rowid, {0.5f + float(i), -1.25f, 3e-8f, 1e30f}});
  store_->begin_batch();
  store_->set_embeddings("m1", vectors);
  store_->commit_batch();
  auto left = store_->chunks_to_embed("m1", 100);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].rowid, todo[2].rowid);
  EXPECT_EQ(store_->chunks_to_embed("m2", 100).size(), 3u);  // another model: re-embed all
  EXPECT_EQ(store_->chunks_to_embed("m1", 0).size(), 0u);

  EmbeddingMatrix m = store_->load_embeddings("m1");
  EXPECT_EQ(m.dim, 4);
  ASSERT_EQ(m.rowids.size(), 2u);
  EXPECT_EQ(m.rowids[0], todo[0].rowid);
  EXPECT_EQ(m.values, (std::vector<float>{0.5f, -1.25f, 3e-8f, 1e30f, 1.5f, -1.25f, 3e-8f, 1e30f}));
  EXPECT_TRUE(store_->load_embeddings("m2").rowids.empty());
}

TEST_F(EmbeddingStoreTest, MixedDimensionsAreRefused) {
  auto todo = store_->chunks_to_embed("m", 10);
  store_->begin_batch();
  EXPECT_THROW(store_->set_embeddings("m", {{todo[0].rowid, {1, 2}}, {todo[1].rowid, {1, 2, 3}}}),
               Error);
  store_->rollback_batch();
}

TEST_F(EmbeddingStoreTest, ChangedFilesNeedNewEmbeddings) {
  auto todo = store_->chunks_to_embed("m", 10);
  std::vector<std::pair<int64_t, std::vector<float>>> all;
  for (auto& c : todo) all.push_back({c.rowid, {1, 0}});
  store_->begin_batch();
  store_->set_embeddings("m", all);
  store_->commit_batch();
  EXPECT_TRUE(store_->chunks_to_embed("m", 10).empty());
  test::write_file(repo_ / "a.js", "function gamma () {}\n");
  IndexOptions opt;
  opt.root = repo_.path();
  index_repository(*store_, opt);
  auto again = store_->chunks_to_embed("m", 10);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].text, "function gamma () {}");
}

TEST_F(EmbeddingStoreTest, TheVectorIndexIsLoadedOnceUntilTheStoreChanges) {
  auto todo = store_->chunks_to_embed("m", 10);
  std::vector<std::pair<int64_t, std::vector<float>>> all;
  for (auto& c : todo) all.push_back({c.rowid, {1, 0}});
  int64_t g0 = store_->generation();
  store_->begin_batch();
  store_->set_embeddings("m", all);
  store_->commit_batch();
  EXPECT_GT(store_->generation(), g0);
  int64_t loads = vector_index_loads();
  auto first = shared_vector_index(*store_, "m");
  EXPECT_EQ(first->size(), 3u);
  // Another connection to the same file shares the loaded index.
  auto other = open_sqlite_store(dir_ / "e.db", OpenMode::kReadOnly);
  EXPECT_EQ(shared_vector_index(*other, "m").get(), first.get());
  EXPECT_EQ(shared_vector_index(*store_, "m").get(), first.get());
  EXPECT_EQ(vector_index_loads(), loads + 1);
  // A batch that changes nothing (a touched file) keeps it; a changed embedding does not.
  int64_t g1 = store_->generation();
  store_->begin_batch();
  store_->commit_batch();
  EXPECT_EQ(store_->generation(), g1);
  EXPECT_EQ(shared_vector_index(*other, "m").get(), first.get());
  store_->begin_batch();
  store_->set_embeddings("m", {{todo[0].rowid, {0, 1}}});
  store_->commit_batch();
  auto second = shared_vector_index(*other, "m");
  EXPECT_NE(second.get(), first.get());
  EXPECT_EQ(vector_index_loads(), loads + 2);
  auto hits = second->search({0, 1}, 1);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].rowid, todo[0].rowid) << "the new vector is searched";
  // Re-indexing a changed file moves the generation too (its chunks and vectors go).
  test::write_file(repo_ / "a.js", "function gamma () {}\n");
  IndexOptions opt;
  opt.root = repo_.path();
  int64_t g2 = store_->generation();
  index_repository(*store_, opt);
  EXPECT_GT(store_->generation(), g2);
  EXPECT_EQ(shared_vector_index(*store_, "m")->size(), 1u);
}

TEST(VectorIndex, FindsTheExactNearestNeighbours) {
  std::mt19937 rng(42);
  std::normal_distribution<float> g;
  EmbeddingMatrix m;
  m.dim = 32;
  for (int r = 0; r < 500; ++r) {
    m.rowids.push_back(1000 + r);
    for (int i = 0; i < 32; ++i) m.values.push_back(g(rng) * float(1 + r % 7));  // norms differ
  }
  EmbeddingMatrix copy = m;
  VectorIndex index(std::move(m));
  std::vector<float> q(32);
  for (float& x : q) x = g(rng);
  // Brute force in double precision.
  std::vector<std::pair<double, int64_t>> truth;
  double qn = 0;
  for (float x : q) qn += double(x) * x;
  for (size_t r = 0; r < copy.rowids.size(); ++r) {
    double d = 0, n = 0;
    for (int i = 0; i < 32; ++i) {
      double v = copy.values[r * 32 + static_cast<size_t>(i)];
      d += v * q[static_cast<size_t>(i)];
      n += v * v;
    }
    truth.push_back({d / std::sqrt(n * qn), copy.rowids[r]});
  }
  std::sort(truth.begin(), truth.end(), [](auto& a, auto& b) { return a.first > b.first; });
  auto hits = index.search(q, 10);
  ASSERT_EQ(hits.size(), 10u);
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(hits[i].rowid, truth[i].second) << i;
    EXPECT_NEAR(hits[i].cosine, truth[i].first, 1e-5);
  }
  EXPECT_EQ(index.search(q, 10000).size(), 500u);
  EXPECT_THROW(index.search(std::vector<float>(31, 1.0f), 5), Error);
  EXPECT_TRUE(VectorIndex().search(q, 5).empty());
}

TEST(Fusion, ReciprocalRankFusion) {
  auto fused = fuse_rrf({{1, 0.9}, {2, 0.8}}, {{2, 10}, {3, 5}});
  ASSERT_EQ(fused.size(), 3u);
  EXPECT_EQ(fused[0].id, 2);  // 1/62 + 1/61
  EXPECT_NEAR(fused[0].score, 1.0 / 62 + 1.0 / 61, 1e-12);
  EXPECT_EQ(fused[1].id, 1);  // 1/61, ahead of 3 (1/62)
  EXPECT_EQ(fused[2].id, 3);
  EXPECT_NEAR(fused[2].score, 1.0 / 62, 1e-12);
}

TEST(Fusion, WeightedLikeTheReference) {
  // Vector cosines stay raw; text scores are divided by the best text score.
  auto fused = fuse_weighted({{1, 0.5}, {2, 0.4}}, {{2, 8}, {3, 4}});
  ASSERT_EQ(fused.size(), 3u);
  EXPECT_EQ(fused[0].id, 2);
  EXPECT_NEAR(fused[0].score, 0.7 * 0.4 + 0.3 * 1.0, 1e-12);
  EXPECT_EQ(fused[1].id, 1);
  EXPECT_NEAR(fused[1].score, 0.35, 1e-12);
  EXPECT_NEAR(fused[2].score, 0.15, 1e-12);
  // Ties keep first appearance, vector hits first.
  auto tie = fuse_weighted({{7, 0.3 / 0.7}}, {{9, 1}});
  EXPECT_EQ(tie[0].id, 7);
  EXPECT_EQ(tie[1].id, 9);
  // A text leg that scored nothing adds nothing.
  EXPECT_NEAR(fuse_weighted({}, {{4, 0}})[0].score, 0.0, 1e-12);
}

}  // namespace
}  // namespace pf
