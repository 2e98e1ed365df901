// The PostgreSQL store's lexical ranking in the database (store/pg_search.h) and the postings it
// reads (store/pg_segments.h), on a real server (tests/pg_server.h) against FTS5's ranking of the
// same files (this repository's sources) in a SQLite store: the same scores under any match
// budget, the same statistics after files change, go and batches roll back, segments merged
// into postings equal to a rebuild's, a store from before rebuilt by the next index run, and the
// store's searches the same in the database and in memory.
#include "store/pg_search.h"

#include <gtest/gtest.h>

#include "pg_search_fixture.h"

namespace pf {
namespace {

using PgSearchTest = test::PgStoreFixture;
using test::kQuestions;
namespace fs = std::filesystem;

TEST_F(PgSearchTest, ScoresAsFts5UnderAnyBudget) {
  Fts5Search fts(db_);
  PgSearch pg(*conn_);
  int exact = 0, bounded = 0;
  for (const char* question : kQuestions) {
    SCOPED_TRACE(question);
    LexicalQuery q;
    q.terms = analyze_query(question).stems;
    q.limit = 1 << 30;
    auto want = fts.rank(q, 0);
    auto got = pg.rank(q);
    ASSERT_FALSE(want.empty());
    ASSERT_EQ(got.size(), want.size());
    std::map<int64_t, std::string> at_pg = places(*pg_, got), at_sqlite = places(*sqlite_, want);
    std::map<std::string, double> scores;
    for (const auto& r : want) scores[at_sqlite.at(r.rowid)] = r.score;
    for (const auto& r : got) EXPECT_EQ(r.score, scores.at(at_pg.at(r.rowid)));  // bit for bit
    int64_t matches = static_cast<int64_t>(want.size());
    test::for_each_budget(matches, [&](int64_t budget, int limit) {
      q.match_budget = budget;
      q.limit = limit;
      bool fts_exact = false, pg_exact = false;
      auto a = fts.rank(q, 0, &fts_exact);
      auto b = pg.rank(q, &pg_exact);
      EXPECT_EQ(pg_exact, fts_exact);
      ASSERT_EQ(b.size(), a.size());
      for (size_t k = 0; k < a.size(); ++k) EXPECT_EQ(b[k].score, a[k].score) << k;
      (fts_exact ? exact : bounded) += 1;
    });
  }
  EXPECT_GT(exact, 3);
  EXPECT_GT(bounded, 3);
}

TEST_F(PgSearchTest, StatisticsFollowEveryChangeAndEqualARecount) {
  expect_same_statistics();
  const fs::path dir = fs::path(repo_.path()) / "src" / "store";
  {
    std::ofstream(dir / "pg_search.cpp", std::ios::app) << "\nint added_retry_jitter() { return 1; }\n";
    std::ofstream(dir / "new_file.cpp") << "// websocket replay\nint replay_backoff() { return 2; }\n";
  }
  fs::remove(dir / "stemmer.cpp");
  reindex();
  expect_same_statistics();
  // A batch rolled back changes nothing, and the next one counts only itself.
  pg_->begin_batch();
  pg_->remove_file(1, "src/store/new_file.cpp");
  pg_->rollback_batch();
  pg_->begin_batch();
  pg_->touch_file(1, FileRecord{"src/store/new_file.cpp", 1, 1, "h", "cpp", ""});
  pg_->commit_batch();
  expect_same_statistics();
}

TEST_F(PgSearchTest, AStoreFromBeforeIsRebuiltByTheNextIndexRun) {
  // Schema 4: each chunk's terms in a GIN-indexed "searchVector", its length, the term counts.
  pg_.reset();
  test::PostgresServer::shared().psql(
      pg_name_,
      "DROP TABLE lexical_segments, lexical_blocks, lexical_lengths; "
      "ALTER TABLE copilot_code_chunks ADD COLUMN lexical_length INTEGER; "
      "UPDATE copilot_code_chunks SET \"searchVector\" = to_tsvector('simple', content), "
      "lexical_length = 1; "
      "CREATE INDEX idx_copilot_code_chunks_search ON copilot_code_chunks USING GIN(\"searchVector\"); "
      "CREATE TABLE lexical_terms(term TEXT COLLATE \"C\" PRIMARY KEY, chunks BIGINT NOT NULL); "
      "UPDATE pilotfish_meta SET value = '4' WHERE key = 'schema_version'; "
      "UPDATE pilotfish_meta SET value = '0' WHERE key IN ('lexical_rows', 'lexical_tokens'); "
      "UPDATE pilotfish_meta SET value = '" + std::string(kTokenizerVersion) +
          "+counts' WHERE key = 'tokenizer_version'");
  try {
    open_store(url_, OpenMode::kReadOnly);
    ADD_FAILURE() << "a store without postings was searched";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("pilotfish index"), std::string::npos) << e.what();
  }
  pg_ = open_store(url_, OpenMode::kReadWrite);
  reindex();
  expect_same_statistics();
  EXPECT_EQ(conn_->exec("SELECT count(*) FROM copilot_code_chunks WHERE \"searchVector\" IS NOT NULL")
                .int64(0, 0), 0);
  EXPECT_TRUE(conn_->exec("SELECT to_regclass('lexical_terms')").is_null(0, 0));
  auto reader = open_store(url_, OpenMode::kReadOnly);
  EXPECT_FALSE(lexical_search(*reader, kQuestions[0]).empty());
}

TEST_F(PgSearchTest, TheFirstSearchesRankInTheDatabaseAndLaterOnesInMemoryTheSame) {
  auto store = open_store(url_, OpenMode::kReadOnly);
  test::expect_database_then_memory_the_same(*store, kQuestions);
}

}  // namespace
}  // namespace pf
