// Lexical search across shards (search/sharded.h): this repository's sources split over two
// stores rank exactly as one store holding them all, score for score, with or without a match
// budget; and a shard's own statistics are what it reports.
#include "search/sharded.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "core/error.h"
#include "index/indexer.h"
#include "pg_server.h"
#include "test_util.h"

namespace pf {
namespace {

const char* const kQuestions[] = {
    "How does the permission engine decide a shell command?",
    "where is the websocket reconnect backoff",
    "HttpServer keep-alive ping chunked stream",
    "sqlite WAL writer lock flock",
    "bm25 idf average row length",
    "slack envelope acknowledged before any work",
};

class ShardedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string src = test::source_dir() + "/src/";
    a_ = open_store(dir_ / "a.db", OpenMode::kReadWrite);
    b_ = open_store(dir_ / "b.db", OpenMode::kReadWrite);
    whole_ = open_store(dir_ / "whole.db", OpenMode::kReadWrite);
    for (const char* folder : {"store", "search"}) index(*a_, src + folder);
    for (const char* folder : {"net", "chat"}) index(*b_, src + folder);
    for (const char* folder : {"store", "search", "net", "chat"}) index(*whole_, src + folder);
  }
  static void index(Store& store, const std::string& root) {
    IndexOptions opt;
    opt.root = root;
    index_repository(store, opt);
  }
  test::TempDir dir_;
  std::unique_ptr<Store> a_, b_, whole_;
};

TEST_F(ShardedTest, ShardsRankAsOneStoreHoldingThemAll) {
  int mixed = 0;  // questions answered from both shards
  for (int64_t budget : {int64_t{3000}, int64_t{0}, int64_t{20}}) {
    SearchOptions opt;
    opt.match_budget = budget;
    for (const char* question : kQuestions) {
      SCOPED_TRACE(std::string(question) + " budget " + std::to_string(budget));
      auto one = lexical_search(*whole_, question, opt);
      auto split = sharded_lexical_search({a_.get(), b_.get()}, question, opt);
      ASSERT_FALSE(one.empty());
      ASSERT_EQ(split.size(), one.size());
      bool both = false;
      for (size_t k = 0; k < one.size(); ++k) {
        const SearchResult& r = split[k].result;
        EXPECT_EQ(r.repo_root, one[k].repo_root) << k;
        EXPECT_EQ(r.hit.chunk.path, one[k].hit.chunk.path) << k;
        EXPECT_EQ(r.hit.chunk.start_line, one[k].hit.chunk.start_line) << k;
        EXPECT_EQ(r.hit.score, one[k].hit.score) << k;  // bit for bit
        EXPECT_EQ(r.hit.chunk.content, one[k].hit.chunk.content) << k;
        EXPECT_EQ(split[k].shard, r.repo_root.find("/src/store") != std::string::npos ||
                                          r.repo_root.find("/src/search") != std::string::npos
                                      ? 0u
                                      : 1u);
        both |= split[k].shard != split[0].shard;
      }
      mixed += both ? 1 : 0;
    }
  }
  EXPECT_GT(mixed, 3);
}

// A PostgreSQL shard (its ranking in memory) beside a SQLite one ranks as the single store too.
TEST_F(ShardedTest, APostgresShardBesideASqliteOneRanksAsOneStore) {
  auto pg = open_store(test::PostgresServer::shared().new_database(), OpenMode::kReadWrite);
  for (const char* folder : {"net", "chat"}) index(*pg, test::source_dir() + "/src/" + folder);
  for (const char* question : kQuestions) {
    SCOPED_TRACE(question);
    auto one = lexical_search(*whole_, question);
    auto split = sharded_lexical_search({a_.get(), pg.get()}, question);
    ASSERT_EQ(split.size(), one.size());
    for (size_t k = 0; k < one.size(); ++k) {
      EXPECT_EQ(split[k].result.hit.chunk.path, one[k].hit.chunk.path) << k;
      EXPECT_EQ(split[k].result.hit.score, one[k].hit.score) << k;
    }
  }
}

TEST_F(ShardedTest, EachShardRankingWithItsOwnStatisticsIsItsPlainRanking) {
  // Given its own statistics, a store ranks exactly as without any: the path a shard takes is
  // the path a store takes.
  for (const char* question : kQuestions) {
    SCOPED_TRACE(question);
    auto plain = lexical_search(*a_, question);
    auto sharded = sharded_lexical_search({a_.get()}, question);
    ASSERT_EQ(plain.size(), sharded.size());
    for (size_t k = 0; k < plain.size(); ++k)
      EXPECT_EQ(plain[k].hit.score, sharded[k].result.hit.score) << k;
  }
  LexicalStats s = a_->lexical_stats({"bm25", "nosuchtermatall"});
  EXPECT_GT(s.rows, 100);
  EXPECT_GT(s.tokens, s.rows * 10);
  ASSERT_EQ(s.df.size(), 2u);
  EXPECT_GT(s.df[0], 0);
  EXPECT_EQ(s.df[1], 0);
  // The whole is the sum of its parts.
  LexicalStats sa = a_->lexical_stats({"bm25"}), sb = b_->lexical_stats({"bm25"}),
               sw = whole_->lexical_stats({"bm25"});
  EXPECT_EQ(sa.rows + sb.rows, sw.rows);
  EXPECT_EQ(sa.tokens + sb.tokens, sw.tokens);
  EXPECT_EQ(sa.df[0] + sb.df[0], sw.df[0]);
}

// A damaged FTS5 averages record (a store written by something else) gives wrong statistics,
// never a crash or a read past the record.
TEST_F(ShardedTest, ADamagedAveragesRecordIsReadWithinItsBounds) {
  a_.reset();
  for (const char* blob : {"x''", "x'ff'", "x'ffffffffffffffffff'", "x'81'", "x'0102'"}) {
    SCOPED_TRACE(blob);
    {
      sqlite3* db = nullptr;
      ASSERT_EQ(sqlite3_open((dir_ / "a.db").c_str(), &db), SQLITE_OK);
      ASSERT_EQ(sqlite3_exec(db,
                             (std::string("UPDATE copilot_code_chunks_fts_data SET block = ") +
                              blob + " WHERE id = 1")
                                 .c_str(),
                             nullptr, nullptr, nullptr),
                SQLITE_OK);
      sqlite3_close(db);
    }
    auto store = open_store(dir_ / "a.db", OpenMode::kReadOnly);
    LexicalStats s = store->lexical_stats({"bm25"});
    EXPECT_GE(s.rows, 0);
    EXPECT_GE(s.tokens, 0);
  }
}

TEST_F(ShardedTest, StatisticsForAnotherNumberOfTermsAreRefused) {
  LexicalQuery q;
  q.terms = {"bm25", "idf"};
  q.stats = LexicalStats{10, 100, {1}};
  EXPECT_THROW(a_->lexical_search(q), Error);
}

}  // namespace
}  // namespace pf
