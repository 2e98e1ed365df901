// The PostgreSQL store's lexical ranking in the database (store/pg_search.h), on a real server
// (tests/pg_server.h) against FTS5's ranking of the same files (this repository's sources) in a
// SQLite store: the same scores under any match budget, the same statistics after files change,
// go and batches roll back, a store from before rebuilt by the next index run, and the store's
// searches the same in the database and in memory.
#include "store/pg_search.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>

#include "core/error.h"
#include "index/indexer.h"
#include "pg_server.h"
#include "ranking_paths.h"
#include "search/lexical.h"
#include "search/query.h"
#include "store/bm25_cache.h"
#include "store/bm25_index.h"
#include "store/fts5_search.h"
#include "store/fts_tokenizer.h"
#include "store/schema.h"
#include "store/pg_util.h"
#include "test_util.h"

namespace pf {
namespace {

namespace fs = std::filesystem;

const char* const kQuestions[] = {
    "How does the permission engine decide a shell command?",
    "where is the websocket reconnect backoff",
    "embedding refused too long split",
    "parse_json nesting depth",
    "retry policy jitter",
    "sqlite WAL writer lock flock",
    "mattermost posted event seq replay",
};

class PgSearchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::copy(test::source_dir() + "/src", repo_ / "src", fs::copy_options::recursive);
    url_ = test::PostgresServer::shared().new_database(&pg_name_);
    pg_ = open_store(url_, OpenMode::kReadWrite);
    sqlite_ = open_sqlite_store(dir_ / "s.db", OpenMode::kReadWrite);
    reindex();
    ASSERT_EQ(sqlite3_open_v2((dir_ / "s.db").c_str(), &db_, SQLITE_OPEN_READONLY, nullptr),
              SQLITE_OK);
    register_store_functions(db_);
    conn_ = std::make_unique<pg::Connection>(url_);
  }
  void TearDown() override { sqlite3_close(db_); }
  void reindex() {
    IndexOptions opt;
    opt.root = repo_.path();
    index_repository(*pg_, opt);
    index_repository(*sqlite_, opt);
  }
  // "path:start-end" of each row, as the store has it.
  static std::map<int64_t, std::string> places(Store& s, const std::vector<BoundedTopK::Row>& rows) {
    std::vector<int64_t> ids;
    for (const auto& r : rows) ids.push_back(r.rowid);
    std::map<int64_t, std::string> out;
    for (const StoredChunk& c : s.chunks_by_rowid(ids))
      out[c.rowid] = c.chunk.path + ":" + std::to_string(c.chunk.start_line) + "-" +
                     std::to_string(c.chunk.end_line);
    return out;
  }
  // Rows whose count of chunks holding a term differs from a recount of the vectors.
  int64_t miscounted_terms() {
    return conn_
        ->exec("SELECT count(*) FROM (SELECT t, count(*) AS n FROM copilot_code_chunks, "
               "unnest(tsvector_to_array(\"searchVector\")) t GROUP BY t) x FULL JOIN "
               "lexical_terms l ON l.term = x.t WHERE x.n IS DISTINCT FROM l.chunks")
        .int64(0, 0);
  }
  void expect_same_statistics() {
    std::vector<std::string> terms;
    for (const char* q : kQuestions)
      for (const std::string& t : analyze_query(q).stems) terms.push_back(t);
    LexicalStats want = sqlite_->lexical_stats(terms), got = pg_->lexical_stats(terms);
    EXPECT_GT(want.rows, 100);
    EXPECT_EQ(got.rows, want.rows);
    EXPECT_EQ(got.tokens, want.tokens);
    EXPECT_EQ(got.df, want.df);
    EXPECT_EQ(miscounted_terms(), 0);
  }

  test::TempDir repo_, dir_;
  std::string url_, pg_name_;
  std::unique_ptr<Store> pg_, sqlite_;
  sqlite3* db_ = nullptr;
  std::unique_ptr<pg::Connection> conn_;
};

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

TEST_F(PgSearchTest, RowsOfOneCommonTermAreLeftOutOnlyWhenTheyCannotReachTheTop) {
  // Tiered from the first row (at the Linux tree's size only from 3,000), against not tiered:
  // the same scores as FTS5 under every budget, the same exactness, and fewer rows read where
  // the best rows hold two of a question's common words.
  Fts5Search fts(db_);
  PgSearch tiered(*conn_, 0), flat(*conn_, std::numeric_limits<int64_t>::max());
  const char* const questions[] = {
      "how does the store rank a lexical query with a match budget",
      "where does the bridge retry a post after a websocket reconnect",
      "which function parses the json body of a request",
      "how is the permission of a shell command decided",
  };
  size_t fewer = 0;
  for (const char* question : questions) {
    SCOPED_TRACE(question);
    LexicalQuery q;
    q.terms = analyze_query(question).stems;
    q.limit = 1 << 30;
    const int64_t matches = static_cast<int64_t>(fts.rank(q, 0).size());
    ASSERT_GT(matches, 0);
    test::for_each_budget(matches, [&](int64_t budget, int limit) {
      q.match_budget = budget;
      q.limit = limit;
      bool fts_exact = false, tiered_exact = false, flat_exact = false;
      auto want = fts.rank(q, 0, &fts_exact);
      auto got = tiered.rank(q, &tiered_exact);
      flat.rank(q, &flat_exact);
      EXPECT_EQ(tiered_exact, fts_exact);
      EXPECT_EQ(flat_exact, fts_exact);
      ASSERT_EQ(got.size(), want.size());
      for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(got[k].score, want[k].score) << k;
      EXPECT_LE(tiered.last_candidates(), flat.last_candidates());
      if (tiered.last_candidates() < flat.last_candidates()) ++fewer;
    });
  }
  EXPECT_GT(fewer, 0u);
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
  EXPECT_EQ(miscounted_terms(), 0);
  expect_same_statistics();
}

TEST_F(PgSearchTest, AStoreFromBeforeIsRebuiltByTheNextIndexRun) {
  // Schema 2: vectors of distinct terms without counts, no lengths, no term counts.
  pg_.reset();
  test::PostgresServer::shared().psql(
      pg_name_,
      "UPDATE copilot_code_chunks SET \"searchVector\" = "
      "array_to_tsvector(tsvector_to_array(\"searchVector\")); "
      "ALTER TABLE copilot_code_chunks DROP COLUMN lexical_length; DROP TABLE lexical_terms; "
      "ALTER TABLE repositories DROP COLUMN indexed_commit; "
      "DELETE FROM pilotfish_meta WHERE key IN ('lexical_rows', 'lexical_tokens'); "
      "UPDATE pilotfish_meta SET value = '2' WHERE key = 'schema_version'; "
      "UPDATE pilotfish_meta SET value = '" + std::string(kTokenizerVersion) +
          "' WHERE key = 'tokenizer_version'");
  try {
    open_store(url_, OpenMode::kReadOnly);
    ADD_FAILURE() << "a store with old vectors was searched";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("pilotfish index"), std::string::npos) << e.what();
  }
  pg_ = open_store(url_, OpenMode::kReadWrite);
  reindex();
  expect_same_statistics();
  auto reader = open_store(url_, OpenMode::kReadOnly);
  EXPECT_FALSE(lexical_search(*reader, kQuestions[0]).empty());
}

TEST_F(PgSearchTest, TheFirstSearchesRankInTheDatabaseAndLaterOnesInMemoryTheSame) {
  auto store = open_store(url_, OpenMode::kReadOnly);
  test::expect_database_then_memory_the_same(*store, kQuestions);
}

TEST_F(PgSearchTest, VectorsCountEachColumnAndQueriesQuoteTheirTerms) {
  Chunk c = test::make_chunk("alpha/beta", 1, "gamma", "");
  c.symbol.clear();
  c.content = "gamma";
  for (int i = 0; i < 5000; ++i) c.content += " delta";
  PgChunkTerms t = pg_chunk_terms(c);
  EXPECT_EQ(t.length, 1u + 2u + 5001u);  // symbols; the path's two words; the body
  // gamma: once in the symbols (column 0) and once in the body (3); delta's count clamped.
  auto positions = [&](const std::string& term) {
    return conn_
        ->exec("SELECT array_to_string(positions, ',') FROM unnest($1::tsvector) WHERE lexeme = $2",
               {pg::Param::text(t.vector), pg::Param::text(term)})
        .text(0, 0);
  };
  EXPECT_EQ(positions("gamma"), "4,7");
  EXPECT_EQ(positions("delta"), "16383");
  // A term once in the body has none (the ranking reads that as position 7).
  c.content += " epsilon";
  t = pg_chunk_terms(c);
  EXPECT_EQ(positions("epsilon"), "");
  // Quotes and backslashes stay part of the term.
  auto matches = [&](const std::string& query) {
    return conn_
        ->exec("SELECT array_to_tsvector(ARRAY['it''s', 'a\\b']) @@ $1::tsquery",
               {pg::Param::text(query)})
        .text(0, 0);
  };
  EXPECT_EQ(pg_tsquery_any({"it's"}), "'it''s'");
  EXPECT_EQ(matches(pg_tsquery_any({"zz", "it's"})), "t");
  EXPECT_EQ(matches(pg_tsquery_any({"a\\b"})), "t");
  EXPECT_EQ(matches(pg_tsquery_any({"its", "ab"})), "f");
}

// The binary vectors the ranking reads: what the server sends for a chunk's vector reads back as
// the chunk's counts, and bytes cut or changed anywhere are an error, never a crash.
TEST_F(PgSearchTest, BinaryVectorsReadBackAsTheChunksCounts) {
  Chunk c = test::make_chunk("net/ipv4/tcp.c", 1, "tcp_v4_rcv", "");
  c.content = "int tcp_v4_rcv(struct sk_buff *skb) { return tcp_v4_rcv_slow(skb) + skb->len; }";
  PgChunkTerms t = pg_chunk_terms(c);
  auto r = conn_->exec("SELECT $1::tsvector", {pg::Param::text(t.vector)}, true);
  const std::string binary = r.text(0, 0);
  const std::vector<std::string> terms = {"skb", "tcp_v4_rcv", "missing", "tcp"};
  std::vector<BoundedTopK::Counts> got;
  pg_vector_counts(binary, terms, got);
  const std::string symbols = c.function_name + " " + c.class_name + " " + c.symbol;
  const std::string_view columns[4] = {symbols, c.path, c.heading_path, c.content};
  StemBuffer stem;
  RowTermCounts want;
  count_row_terms(columns, stem, want);
  ASSERT_EQ(got.size(), terms.size());
  for (size_t i = 0; i < terms.size(); ++i) {
    auto it = want.find(terms[i]);
    EXPECT_EQ(got[i], it == want.end() ? BoundedTopK::Counts{} : it->second) << terms[i];
  }
  EXPECT_EQ(got[2], BoundedTopK::Counts{});
  EXPECT_GT(got[0][3], 1u);  // skb: three times in the body
  // Every prefix, and every byte changed, of the server's bytes.
  int errors = 0;
  for (size_t n = 0; n < binary.size(); ++n) {
    try {
      pg_vector_counts(std::string_view(binary).substr(0, n), terms, got);
    } catch (const Error&) {
      ++errors;
    }
  }
  EXPECT_EQ(errors, static_cast<int>(binary.size()));  // every cut is told
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::string bad = binary;
    bad[rng() % bad.size()] = static_cast<char>(rng());
    try {
      pg_vector_counts(bad, terms, got);
    } catch (const Error&) {
    }
  }
}

}  // namespace
}  // namespace pf
