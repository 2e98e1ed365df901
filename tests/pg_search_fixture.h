// The fixture the PostgreSQL ranking's and postings' tests share (pg_search_test,
// pg_segments_test): this repository's sources indexed into a PostgreSQL store on the test
// server (tests/pg_server.h) and into a SQLite store, FTS5's ranking of which is the reference;
// and the store's postings read back whole, to compare with those a rebuild makes.
#pragma once

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

namespace pf::test {

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

class PgStoreFixture : public ::testing::Test {
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

}  // namespace pf::test
