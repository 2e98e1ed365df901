// The PostgreSQL store's lexical ranking in the database (store/pg_search.h) and the postings it
// reads (store/pg_segments.h), on a real server (tests/pg_server.h) against FTS5's ranking of the
// same files (this repository's sources) in a SQLite store: the same scores under any match
// budget, the same statistics after files change, go and batches roll back, segments merged
// into postings equal to a rebuild's, a store from before rebuilt by the next index run, and the
// store's searches the same in the database and in memory.
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
#include "store/pg_segments.h"
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
  // Every term's live postings (those without a tombstone) and every kept chunk length, as
  // the store's segments hold them.
  struct LiveIndex {
    std::map<std::string, std::map<int64_t, BoundedTopK::Counts>> terms;
    std::map<int64_t, uint32_t> lengths;
    int64_t tombstones = 0;
    bool operator==(const LiveIndex& o) const { return terms == o.terms && lengths == o.lengths; }
  };
  LiveIndex live_index() {
    LiveIndex out;
    std::map<std::string, std::set<int64_t>> dead;
    auto r = conn_->exec("SELECT data FROM lexical_blocks", {}, true);
    for (int i = 0; i < r.rows(); ++i)
      pg_for_each_term(r.view(i, 0), [&](std::string_view term, PgTermPostings& p) {
        for (const PgPosting& posting : p.postings) {
          if (posting.tombstone()) {
            dead[std::string(term)].insert(posting.chunk);
            ++out.tombstones;
          } else {
            EXPECT_TRUE(out.terms[std::string(term)].emplace(posting.chunk, posting.counts).second);
          }
        }
      });
    for (const auto& [term, chunks] : dead)
      for (int64_t chunk : chunks) EXPECT_EQ(out.terms[term].erase(chunk), 1u) << term;
    for (auto it = out.terms.begin(); it != out.terms.end();)
      it = it->second.empty() ? out.terms.erase(it) : std::next(it);
    std::vector<std::pair<int64_t, uint32_t>> lengths;
    auto l = conn_->exec("SELECT data FROM lexical_lengths", {}, true);
    for (int i = 0; i < l.rows(); ++i) pg_decode_lengths(l.view(i, 0), &lengths);
    std::set<int64_t> posted;
    for (const auto& [term, chunks] : out.terms)
      for (const auto& [chunk, counts] : chunks) posted.insert(chunk);
    for (const auto& [chunk, tokens] : lengths) {
      if (posted.count(chunk)) {
        EXPECT_TRUE(out.lengths.emplace(chunk, tokens).second);
      }
    }
    return out;
  }
  // The store's postings equal those a rebuild from its chunks makes (rolled back after).
  void expect_postings_as_rebuilt() {
    const LiveIndex now = live_index();
    pg::Transaction t(*conn_);
    pg_rebuild_postings(*conn_);
    const LiveIndex rebuilt = live_index();
    EXPECT_GT(rebuilt.terms.size(), 100u);
    EXPECT_TRUE(now == rebuilt);
    EXPECT_EQ(now.terms.size(), rebuilt.terms.size());
    EXPECT_EQ(now.lengths.size(), rebuilt.lengths.size());
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
    expect_postings_as_rebuilt();
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

TEST_F(PgSearchTest, MergedSegmentsHoldWhatTheBatchesHeldAndTombstonesMeetTheirPostings) {
  // Many small batches (a file each), changed and removed files among them, merged two by two:
  // the postings equal a rebuild's after each step, and searches score as FTS5 does.
  const fs::path dir = fs::path(repo_.path()) / "src" / "store";
  for (int round = 0; round < 3; ++round) {
    std::ofstream(dir / "pg_util.cpp", std::ios::app) << "\nint retry_jitter_" << round << "() { return 1; }\n";
    std::ofstream(dir / ("round" + std::to_string(round) + ".cpp")) << "// websocket replay " << round << "\n";
    if (round == 1) fs::remove(dir / "round0.cpp");
    reindex();
  }
  const int64_t segments_before = conn_->exec("SELECT count(*) FROM lexical_segments").int64(0, 0);
  ASSERT_GE(segments_before, 4);
  const int64_t tombstones_before = live_index().tombstones;
  EXPECT_GT(tombstones_before, 0);
  int merges = 0;
  {
    pg::Transaction t(*conn_);
    merges = pg_merge_levels(*conn_, 1, 2);
    t.commit();
  }
  EXPECT_GE(merges, 1);
  const int64_t segments_after = conn_->exec("SELECT count(*) FROM lexical_segments").int64(0, 0);
  EXPECT_LT(segments_after, segments_before);
  expect_same_statistics();
  // Merged into one, the repository keeps no tombstone: each met its posting or had none left.
  {
    pg::Transaction t(*conn_);
    pg_merge_repository(*conn_, 1);
    t.commit();
  }
  EXPECT_EQ(conn_->exec("SELECT count(*) FROM lexical_segments").int64(0, 0), 1);
  EXPECT_EQ(live_index().tombstones, 0);
  expect_same_statistics();
  Fts5Search fts(db_);
  PgSearch pg(*conn_);
  for (const char* question : kQuestions) {
    LexicalQuery q;
    q.terms = analyze_query(question).stems;
    q.limit = 20;
    auto want = fts.rank(q, 0), got = pg.rank(q);
    ASSERT_EQ(got.size(), want.size()) << question;
    for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(got[k].score, want[k].score) << question;
  }
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

TEST_F(PgSearchTest, ChunkTermsCountEachColumn) {
  Chunk c = test::make_chunk("alpha/beta", 1, "gamma", "");
  c.symbol.clear();
  c.content = "gamma";
  for (int i = 0; i < 5000; ++i) c.content += " delta";
  PgChunkTerms t = pg_chunk_terms(c);
  EXPECT_EQ(t.length, 1u + 2u + 5001u);  // symbols; the path's two words; the body
  std::map<std::string, BoundedTopK::Counts> got(t.terms.begin(), t.terms.end());
  EXPECT_EQ(got.size(), t.terms.size());
  EXPECT_TRUE(std::is_sorted(t.terms.begin(), t.terms.end()));
  EXPECT_EQ(got["gamma"], (BoundedTopK::Counts{1, 0, 0, 1}));
  EXPECT_EQ(got["delta"], (BoundedTopK::Counts{0, 0, 0, 5000}));  // not clamped
  EXPECT_EQ(got["alpha"], (BoundedTopK::Counts{0, 1, 0, 0}));
}

}  // namespace
}  // namespace pf
