// The in-memory BM25 ranking (store/bm25_index.h) against FTS5's bm25() on a real index (this
// repository's own sources): the same rows, the same scores, the same order, before and after
// files change; and the store uses it without changing what a search returns.
#include "store/bm25_index.h"
#include "store/fts5_search.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <map>

#include "index/indexer.h"
#include "search/lexical.h"
#include "search/query.h"
#include "store/bm25_cache.h"
#include "store/fts_tokenizer.h"
#include "store/schema.h"
#include "ranking_paths.h"
#include "test_util.h"

namespace pf {
namespace {

const char* const kQuestions[] = {
    "How does the permission engine decide a shell command?",
    "where is the websocket reconnect backoff",
    "embedding refused too long split",
    "HttpServer keep-alive ping chunked stream",
    "parse_json nesting depth",
    "tree-sitter code chunker declarations per language",
    "retry policy jitter",
    "how are tool approvals signed HMAC",
    "sqlite WAL writer lock flock",
    "mattermost posted event seq replay",
};

class Bm25IndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A copy of the sources, so the test can change files.
    std::filesystem::copy(test::source_dir() + "/src", repo_ / "src",
                          std::filesystem::copy_options::recursive);
    store_ = open_sqlite_store(dir_ / "s.db", OpenMode::kReadWrite);
    reindex();
    ASSERT_EQ(sqlite3_open_v2((dir_ / "s.db").c_str(), &db_, SQLITE_OPEN_READONLY, nullptr),
              SQLITE_OK);
    register_store_functions(db_);
  }
  void TearDown() override { sqlite3_close(db_); }
  void reindex() {
    IndexOptions opt;
    opt.root = repo_.path();
    index_repository(*store_, opt);
  }

  // The first column of sql's first row, as text ("" when none).
  std::string query(const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
    std::string out;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
      out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return out;
  }

  // FTS5's own scores for every matching row.
  std::map<int64_t, double> fts5_scores(const std::string& match, const double (&w)[4]) {
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_,
                                 "SELECT rowid, bm25(copilot_code_chunks_fts, ?, ?, ?, ?) FROM "
                                 "copilot_code_chunks_fts WHERE copilot_code_chunks_fts MATCH ?",
                                 -1, &st, nullptr),
              SQLITE_OK);
    for (int i = 0; i < 4; ++i) sqlite3_bind_double(st, i + 1, w[i]);
    sqlite3_bind_text(st, 5, match.c_str(), -1, SQLITE_TRANSIENT);
    std::map<int64_t, double> out;
    while (sqlite3_step(st) == SQLITE_ROW) out[sqlite3_column_int64(st, 0)] = sqlite3_column_double(st, 1);
    sqlite3_finalize(st);
    return out;
  }

  void expect_same_as_fts5(const double (&w)[4]) {
    sqlite3_exec(db_, "BEGIN", nullptr, nullptr, nullptr);
    auto index = Bm25Index::build(db_, 1ll << 30);
    ASSERT_TRUE(index);
    for (const char* question : kQuestions) {
      SCOPED_TRACE(question);
      AnalyzedQuery q = analyze_query(question);
      std::map<int64_t, double> want = fts5_scores(fts5_match(q.stems), w);
      ASSERT_FALSE(want.empty());
      auto got = index->rank(q.stems, w, std::nullopt, 1 << 30);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_TRUE(want.count(got[i].rowid));
        EXPECT_EQ(got[i].score, want[got[i].rowid]) << "row " << got[i].rowid;  // bit for bit
        if (i > 0) {
          EXPECT_LE(got[i - 1].score, got[i].score);
        }
      }
      for (const std::string& t : q.stems) {
        std::map<int64_t, double> rows = fts5_scores("\"" + t + "\"", w);
        EXPECT_EQ(index->doc_frequency(t), static_cast<int64_t>(rows.size())) << t;
      }
    }
    sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
  }

  test::TempDir repo_, dir_;
  std::unique_ptr<Store> store_;
  sqlite3* db_ = nullptr;
};

TEST_F(Bm25IndexTest, ScoresEqualFts5BitForBit) {
  const double defaults[4] = {LexicalQuery{}.w_symbols, LexicalQuery{}.w_path,
                              LexicalQuery{}.w_headings, LexicalQuery{}.w_body};
  expect_same_as_fts5(defaults);
  const double odd[4] = {0.3, 1.7, 0.1, 2.9};
  expect_same_as_fts5(odd);
}

TEST_F(Bm25IndexTest, StillEqualAfterFilesChangeAndGo) {
  std::filesystem::remove(repo_ / "src/core/retry.h");
  test::write_file(repo_ / "src/core/new_retry.h",
                   "// retry retry jitter jitterJitter backoff_backoff\nint retryPolicyJitter();\n");
  test::write_file(repo_ / "src/llm/embeddings.h", "// the embedder, rewritten: too long refused\n");
  reindex();
  const double defaults[4] = {LexicalQuery{}.w_symbols, LexicalQuery{}.w_path,
                              LexicalQuery{}.w_headings, LexicalQuery{}.w_body};
  expect_same_as_fts5(defaults);
}

// An index updated from the previous one with only the changed files' rows ranks exactly as one
// built from every row: the same rows, scores bit for bit, order and document frequencies. The
// file holding the highest rowids goes, so SQLite gives its rowids to new chunks: a rowid alone
// does not tell a row kept from a row replaced.
TEST_F(Bm25IndexTest, AnIncrementalUpdateRanksAsAFullRebuild) {
  sqlite3_exec(db_, "BEGIN", nullptr, nullptr, nullptr);
  auto before = Bm25Index::build(db_, 1ll << 30);
  std::string last = query("SELECT path FROM copilot_code_chunks ORDER BY chunk_id DESC LIMIT 1");
  std::string first_rowid =
      query("SELECT min(chunk_id) FROM copilot_code_chunks WHERE path = '" + last + "'");
  sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
  ASSERT_TRUE(before);
  ASSERT_FALSE(last.empty());
  std::filesystem::remove(repo_ / last);
  reindex();  // then the new chunks below take the rowids the removed file had
  test::write_file(repo_ / "src/core/new_retry.h",
                   "// retry jitter jitterJitter backoff_backoff\nint retryPolicyJitter();\n");
  test::write_file(repo_ / "src/llm/embeddings.h", "// the embedder, rewritten: refused\n");
  reindex();
  sqlite3_exec(db_, "BEGIN", nullptr, nullptr, nullptr);
  auto full = Bm25Index::build(db_, 1ll << 30);
  auto updated = Bm25Index::build(db_, 1ll << 30, before.get());
  sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
  ASSERT_NE(query("SELECT count(*) FROM copilot_code_chunks WHERE chunk_id >= " + first_rowid),
            "0")
      << "no rowid of the removed file went to a new chunk";
  ASSERT_TRUE(full && updated);
  EXPECT_EQ(full->rows_reused(), 0u);
  EXPECT_GT(updated->rows_reused(), full->rows() * 9 / 10) << "not incremental";
  EXPECT_EQ(updated->rows(), full->rows());
  const double weights[2][4] = {{4, 2, 2, 1}, {0.3, 1.7, 0.1, 2.9}};
  for (const auto& w : weights) {
    for (const char* question : kQuestions) {
      SCOPED_TRACE(question);
      AnalyzedQuery q = analyze_query(question);
      auto want = full->rank(q.stems, w, std::nullopt, 1 << 30);
      auto got = updated->rank(q.stems, w, std::nullopt, 1 << 30);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].rowid, want[i].rowid) << i;
        EXPECT_EQ(got[i].score, want[i].score) << i;  // bit for bit
      }
      for (const std::string& t : q.stems)
        EXPECT_EQ(updated->doc_frequency(t), full->doc_frequency(t)) << t;
    }
  }
  for (const char* t : {"retrypolicyjitt", "jitterjitt", "embedd"})
    EXPECT_EQ(updated->doc_frequency(t), full->doc_frequency(t)) << t;
}

TEST_F(Bm25IndexTest, RepositoryFilterKeepsTheWholeTablesStatistics) {
  test::TempDir other;
  test::write_file(other / "a.js", "function retryWithJitter () { return backoff(); }\n");
  IndexOptions opt;
  opt.root = other.path();
  index_repository(*store_, opt);
  auto repo = store_->find_repository(other.path());
  ASSERT_TRUE(repo);
  sqlite3_exec(db_, "BEGIN", nullptr, nullptr, nullptr);
  auto index = Bm25Index::build(db_, 1ll << 30);
  const double w[4] = {4, 2, 2, 1};
  AnalyzedQuery q = analyze_query("retry jitter backoff");
  std::map<int64_t, double> all = fts5_scores(fts5_match(q.stems), w);
  auto mine = index->rank(q.stems, w, repo->id, 10);
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].score, all.at(mine[0].rowid));
  sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
}

TEST_F(Bm25IndexTest, SearchesReturnWhatFts5RankingReturns) {
  // A process's first search of a store ranks in FTS5 and its second starts the in-memory
  // index in the background (store/bm25_cache.h); the searches after it is made rank in memory.
  // Each question's results are the same both ways, score for score.
  auto store = open_sqlite_store(dir_ / "s.db", OpenMode::kReadOnly);
  test::expect_database_then_memory_the_same(*store, kQuestions);
}

// The ranking read from FTS5's index (Fts5Search::rank, for stores too large for memory) scores
// exactly as FTS5's bm25(); under a match budget it returns what the in-memory ranking returns,
// and whenever either says its result is exact, that is the unbounded ranking's top.
TEST_F(Bm25IndexTest, Fts5RankingEqualsBm25AndTheInMemoryRankingUnderAnyBudget) {
  sqlite3_exec(db_, "BEGIN", nullptr, nullptr, nullptr);
  auto index = Bm25Index::build(db_, 1ll << 30);
  ASSERT_TRUE(index);
  Fts5Search fts(db_);
  const double w[4] = {8, 4, 3, 1};
  int exact = 0, bounded = 0;
  for (const char* question : kQuestions) {
    SCOPED_TRACE(question);
    LexicalQuery q;
    q.terms = analyze_query(question).stems;
    q.limit = 1 << 30;
    auto all = fts.rank(q, 0);
    std::map<int64_t, double> want = fts5_scores(fts5_match(q.terms), w);
    ASSERT_EQ(all.size(), want.size());
    for (const auto& r : all) EXPECT_EQ(-r.score, want.at(r.rowid)) << r.rowid;  // bit for bit
    int64_t matches = static_cast<int64_t>(want.size());
    test::for_each_budget(matches, [&](int64_t budget, int limit) {
      q.match_budget = budget;
      q.limit = limit;
      bool fts_exact = false, memory_exact = false;
      auto got = fts.rank(q, 0, &fts_exact);
      auto mine = index->rank(q.terms, w, std::nullopt, limit, budget, &memory_exact);
      EXPECT_EQ(fts_exact, memory_exact);
      ASSERT_EQ(got.size(), mine.size());
      for (size_t k = 0; k < got.size(); ++k) {
        EXPECT_EQ(-got[k].score, mine[k].score) << k;  // ties may order apart; scores may not
        EXPECT_EQ(got[k].score, -want.at(got[k].rowid)) << "the row's full score";
      }
      if (fts_exact) {
        ++exact;
        for (size_t k = 0; k < got.size(); ++k) EXPECT_EQ(got[k].score, all[k].score) << k;
      } else {
        ++bounded;
      }
    });
  }
  EXPECT_GT(exact, 5);
  EXPECT_GT(bounded, 5);
  sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
}

// With a repository filter the FTS5 table must stay the outer loop: the other way round, the
// MATCH runs once per row of the repository (a search on the Linux tree never ended).
TEST_F(Bm25IndexTest, ARepositoryFilterKeepsTheMatchOutside) {
  Fts5Search fts(db_);
  LexicalQuery q;
  q.terms = {"retri"};
  q.repo_id = 1;
  ASSERT_FALSE(fts.rank(q, 0).empty());  // registers pf_counts on db_
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db_, ("EXPLAIN QUERY PLAN " + fts5_rows_sql(true)).c_str(), -1, &st,
                               nullptr),
            SQLITE_OK);
  std::vector<std::string> plan;
  while (sqlite3_step(st) == SQLITE_ROW)
    plan.push_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 3)));
  sqlite3_finalize(st);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_NE(plan[0].find("copilot_code_chunks_fts VIRTUAL TABLE"), std::string::npos) << plan[0];
}

TEST(Fts5Match, QuotesEachTermAndJoinsThemWithOr) {
  EXPECT_EQ(fts5_match({"a", "b2_c"}), "\"a\" OR \"b2_c\"");
  EXPECT_EQ(fts5_match({"keep-alive"}), "\"keep-alive\"");
  EXPECT_EQ(fts5_match({"say\"hi"}), "\"say\"\"hi\"");  // a quote inside is doubled
  EXPECT_EQ(fts5_match({}), "");
}

// Telling that a store is too large to rank in memory must not cost a read of the store: the
// command line asks once per search, and summing the chunks' text read every page of a 2.4 GB
// store (3 s). Here the text is about 1 MB; the limit is set under it.
TEST_F(Bm25IndexTest, TooLargeIsToldWithoutReadingTheChunks) {
  int64_t text = std::stoll(query("SELECT sum(size) FROM files"));
  ASSERT_GT(text, 500000);
  int64_t pages = std::stoll(query("SELECT count(*) FROM dbstat WHERE name = 'copilot_code_chunks'"));
  sqlite3_close(db_);  // a fresh connection: nothing cached
  ASSERT_EQ(sqlite3_open_v2((dir_ / "s.db").c_str(), &db_, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  register_store_functions(db_);
  EXPECT_EQ(Bm25Index::build(db_, text - 1), nullptr);
  int misses = 0, high = 0;
  sqlite3_db_status(db_, SQLITE_DBSTATUS_CACHE_MISS, &misses, &high, 0);
  EXPECT_LT(misses, pages / 4) << "pages read: " << misses << " of the chunk table's " << pages;
  EXPECT_NE(Bm25Index::build(db_, text + 1), nullptr);
}

}  // namespace
}  // namespace pf
