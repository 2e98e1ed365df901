// The Store contract (src/store/store.h), one suite over both backends: the SQLite file and a
// real PostgreSQL 15 server started by the test (tests/pg_server.h). Files replaced in atomic
// batches, the generation, lexical ranking (the same scores on both), embeddings and refusals,
// stats, the writer lock; then what only a URL can get wrong: which --db is which store, an
// unreachable server, a password in the URL.
#include "store/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <map>

#include "core/clock.h"
#include "core/error.h"
#include "pg_server.h"
#include "store/bm25_cache.h"
#include "search/query.h"
#include "store/fts_tokenizer.h"
#include "store/schema.h"
#include "store/sqlite_util.h"
#include "test_util.h"

namespace pf {
namespace {

FileRecord file(const std::string& path, int64_t size = 10) { return {path, size, 1, "fh", "javascript"}; }

class StoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    db_ = GetParam() == "sqlite" ? std::string(dir_ / "s.db")
                                 : test::PostgresServer::shared().new_database(&pg_name_);
    store_ = open_store(db_, OpenMode::kReadWrite);
    repo_ = store_->ensure_repository("/srv/app");
  }
  void replace(const std::string& path, const std::vector<Chunk>& chunks) {
    store_->begin_batch();
    store_->replace_file(repo_, file(path), chunks);
    store_->commit_batch();
  }
  std::vector<StoredChunk> search(const std::string& question, int limit = 10) {
    LexicalQuery q;
    q.terms = analyze_query(question).stems;
    q.limit = limit;
    return store_->lexical_search(q);
  }
  test::TempDir dir_;
  std::string db_, pg_name_;
  std::unique_ptr<Store> store_;
  int64_t repo_ = 0;
};

TEST_P(StoreTest, FilesAreListedInBytewiseOrder) {
  // The indexer merges this list with a walk sorted by std::string's order; a database's
  // locale order ("a.js" before "A.js", "-" and "/" ignored) would re-index and drop files.
  const std::vector<std::string> paths = {"b.js", "a/b.js", "a-b.js", "A.js", "\xc3\xa9.js",
                                          "a.js", "a/B.js", "_.js", "a.jsx"};
  if (GetParam() == "postgres")  // as on a server whose default collation is a language's
    test::PostgresServer::shared().psql(
        pg_name_, "ALTER TABLE files ALTER COLUMN path TYPE TEXT COLLATE \"und-x-icu\"");
  store_->begin_batch();
  for (const std::string& p : paths) store_->replace_file(repo_, file(p), {test::make_chunk(p, 1, "f", "x")});
  store_->commit_batch();
  std::vector<std::string> listed, sorted = paths;
  for (const FileRecord& f : store_->list_files(repo_)) listed.push_back(f.path);
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(listed, sorted);
}

TEST_P(StoreTest, FilesAreReplacedWholeAndBatchesAreAtomic) {
  EXPECT_EQ(store_->ensure_repository("/srv/app"), repo_);  // idempotent
  replace("lib/pool.js", {test::make_chunk("lib/pool.js", 1, "pickClient", "function pickClient () { return pool.next() }"),
                          test::make_chunk("lib/pool.js", 10, "drain", "function drain () {}")});
  auto files = store_->list_files(repo_);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(test::file_named(files, "lib/pool.js").content_hash, "fh");
  EXPECT_EQ(store_->stats().chunks, 2);
  // A batch rolled back leaves the file as it was.
  store_->begin_batch();
  store_->replace_file(repo_, file("lib/pool.js"), {test::make_chunk("lib/pool.js", 1, "other", "other text")});
  store_->remove_file(repo_, "lib/pool.js");
  store_->rollback_batch();
  EXPECT_EQ(store_->stats().chunks, 2);
  EXPECT_EQ(search("pickClient").size(), 1u);
  replace("lib/pool.js", {test::make_chunk("lib/pool.js", 1, "choose", "function choose () {}")});
  EXPECT_EQ(store_->stats().chunks, 1);
  EXPECT_TRUE(search("pickClient").empty());
  store_->begin_batch();
  store_->remove_file(repo_, "lib/pool.js");
  store_->commit_batch();
  EXPECT_TRUE(store_->list_files(repo_).empty());
  EXPECT_EQ(store_->stats().chunks, 0);
}

TEST_P(StoreTest, RepositoriesAndWhetherTheyHoldChunksWithoutCounting) {
  int64_t other = store_->ensure_repository("/srv/other");
  EXPECT_FALSE(store_->has_chunks());
  replace("lib/pool.js", {test::make_chunk("lib/pool.js", 1, "pickClient", "function pickClient () {}")});
  EXPECT_TRUE(store_->has_chunks());
  EXPECT_TRUE(store_->has_chunks(repo_));
  EXPECT_FALSE(store_->has_chunks(other));
  std::vector<RepositoryInfo> repos = store_->list_repositories();
  ASSERT_EQ(repos.size(), 2u);
  EXPECT_EQ(repos[0].id, repo_);
  EXPECT_EQ(repos[0].root, "/srv/app");
  EXPECT_EQ(repos[1].id, other);
  EXPECT_EQ(repos[1].root, "/srv/other");
  EXPECT_EQ(repos[0].last_indexed_at, "");
  store_->begin_batch();
  store_->mark_indexed(repo_, "v");
  store_->commit_batch();
  EXPECT_EQ(store_->list_repositories()[0].last_indexed_at, store_->stats().repositories[0].last_indexed_at);
  EXPECT_NE(store_->list_repositories()[0].last_indexed_at, "");
  // With counts: what stats() reports per repository, without stats()'s full scans (MCP's
  // index_status reads these).
  EXPECT_EQ(repos[0].chunks, 0);
  std::vector<RepositoryInfo> counted = store_->list_repositories(true);
  std::vector<RepositoryInfo> full = store_->stats().repositories;
  ASSERT_EQ(counted.size(), 2u);
  ASSERT_EQ(full.size(), 2u);
  EXPECT_EQ(counted[0].chunks, 1);
  EXPECT_EQ(counted[0].files, 1);
  EXPECT_GT(counted[0].bytes, 0);
  EXPECT_EQ(counted[1].chunks, 0);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(counted[i].chunks, full[i].chunks);
    EXPECT_EQ(counted[i].files, full[i].files);
    EXPECT_EQ(counted[i].bytes, full[i].bytes);
    EXPECT_EQ(counted[i].root, full[i].root);
  }
}

// A new SQLite store has 32 KiB pages; one made with 4 KiB pages keeps them.
TEST(SqliteStoreTest, ANewStoreHas32KiBPagesAndAnOldOneKeepsItsOwn) {
  test::TempDir dir;
  auto page_size = [](const std::string& path) { return test::sqlite_int(path, "PRAGMA page_size"); };
  open_store(dir / "new.db", OpenMode::kReadWrite)->ensure_repository("/srv/a");
  EXPECT_EQ(page_size(dir / "new.db"), 32768);
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir / "old.db").c_str(), &db), SQLITE_OK);
    sqlite3_exec(db, "PRAGMA page_size = 4096; VACUUM", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  open_store(dir / "old.db", OpenMode::kReadWrite)->ensure_repository("/srv/a");
  EXPECT_EQ(page_size(dir / "old.db"), 4096);
  EXPECT_EQ(open_store(dir / "old.db", OpenMode::kReadOnly)->list_repositories().size(), 1u);
}

// Rows are stamped with the time as SQLite's strftime('%Y-%m-%dT%H:%M:%fZ', 'now') writes it, the
// store formatting it once per file instead of SQLite once per column of every row.
TEST(SqliteStoreTest, RowsAreStampedAsSqlitesStrftimeStampsThem) {
  sqlite3* mem = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &mem), SQLITE_OK);
  auto sqlite_stamp = [&](const std::string& when) {
    sqlite::Statement st(mem, "SELECT strftime('%Y-%m-%dT%H:%M:%fZ', " + when + ")");
    return st.step() ? st.text(0) : std::string();
  };
  for (int64_t ms : {int64_t{0}, int64_t{1733425141007}, int64_t{1733425141500},
                     int64_t{1764957599999}, int64_t{4102444800123}})
    EXPECT_EQ(format_utc_ms(ms), sqlite_stamp(std::to_string(ms) + " / 1000.0, 'unixepoch'")) << ms;
  test::TempDir dir;
  std::string db = dir / "s.db";
  std::string before = sqlite_stamp("'now'");
  {
    auto store = open_store(db, OpenMode::kReadWrite);
    int64_t repo = store->ensure_repository("/srv/a");
    store->begin_batch();
    store->replace_file(repo, {"a.c", 10, 1, "h1", "c"},
                        {test::make_chunk("a.c", 1, "f", "int f(void);"),
                         test::make_chunk("a.c", 2, "g", "int g(void);")});
    store->touch_file(repo, {"b.c", 10, 1, "h2", "c"});
    store->commit_batch();
  }
  std::string after = sqlite_stamp("'now'");
  sqlite3_close(mem);
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
  {
    sqlite::Statement st(raw,
                         "SELECT created, updated FROM copilot_code_chunks UNION ALL "
                         "SELECT indexed_at, indexed_at FROM files");
    int rows = 0;
    while (st.step()) {
      ++rows;
      EXPECT_EQ(st.text(0).size(), before.size()) << st.text(0);
      EXPECT_EQ(st.text(0), st.text(1));
      EXPECT_GE(st.text(0), before);  // ISO stamps sort as the times do
      EXPECT_LE(st.text(0), after);
    }
    EXPECT_EQ(rows, 4);
  }
  sqlite3_close(raw);
}

// The embedding model's index holds only rows with a model, and the one query that looks a model
// up still uses it.
TEST(SqliteStoreTest, TheEmbeddingModelIndexHoldsOnlyEmbeddedRows) {
  test::TempDir dir;
  std::string db = dir / "s.db";
  {
    auto store = open_store(db, OpenMode::kReadWrite);
    int64_t repo = store->ensure_repository("/srv/a");
    std::vector<Chunk> chunks(3);
    for (size_t i = 0; i < chunks.size(); ++i) {
      chunks[i].path = "a.js";
      chunks[i].content = "function f" + std::to_string(i) + "() {}";
      chunks[i].chunk_type = "function";
      chunks[i].start_line = chunks[i].end_line = static_cast<int>(i) + 1;
    }
    store->begin_batch();
    store->replace_file(repo, file("a.js"), chunks);
    store->commit_batch();
    auto pending = store->chunks_to_embed("m", 10, 0);
    ASSERT_EQ(pending.size(), 3u);
    store->set_embeddings("m", {{pending[0].rowid, {1.0f, 0.0f}}});
    EXPECT_EQ(store->load_embeddings("m").rowids.size(), 1u);
  }
  EXPECT_EQ(test::sqlite_int(db,
                             "SELECT count(*) FROM copilot_code_chunks INDEXED BY "
                             "idx_copilot_code_chunks_model WHERE embeddingModel IS NOT NULL"),
            1);
  EXPECT_EQ(test::sqlite_int(db,
                             "SELECT count(*) FROM pragma_index_info('idx_copilot_code_chunks_model')"),
            1);
  EXPECT_EQ(test::sqlite_int(db,
                             "SELECT count(*) FROM sqlite_master WHERE name = "
                             "'idx_copilot_code_chunks_model' AND sql LIKE '%WHERE embeddingModel IS "
                             "NOT NULL%'"),
            1);
  EXPECT_EQ(test::sqlite_int(db,
                             "SELECT count(*) FROM (SELECT 1 FROM copilot_code_chunks INDEXED BY "
                             "idx_copilot_code_chunks_model WHERE embeddingModel = 'm')"),
            1);  // INDEXED BY fails the statement if the index cannot serve the lookup
}

TEST_P(StoreTest, TheGenerationMovesWithEveryChangeOfChunks) {
  int64_t g0 = store_->generation();
  replace("a.js", {test::make_chunk("a.js", 1, "a", "alpha")});
  int64_t g1 = store_->generation();
  EXPECT_GT(g1, g0);
  store_->begin_batch();
  store_->touch_file(repo_, file("a.js", 11));  // bookkeeping only
  store_->mark_indexed(repo_, "v1");
  store_->commit_batch();
  EXPECT_EQ(store_->generation(), g1);
  EXPECT_EQ(store_->chunker_version(repo_), "v1");
  EXPECT_FALSE(store_->find_repository("/srv/app")->last_indexed_at.empty());
  // Another connection (another replica) sees the change.
  auto other = open_store(db_, OpenMode::kReadOnly);
  EXPECT_EQ(other->generation(), g1);
  EXPECT_EQ(test::file_named(other->list_files(repo_), "a.js").size, 11);
}

TEST_P(StoreTest, LexicalSearchRanksByBm25AndFiltersByRepository) {
  replace("lib/pool.js", {test::make_chunk("lib/pool.js", 1, "pickClient", "function pickClient () { pool pool pool }"),
                          test::make_chunk("lib/pool.js", 20, "other", "the pool is mentioned once")});
  replace("docs/readme.md", {test::make_chunk("docs/readme.md", 1, "", "nothing relevant here")});
  int64_t repo2 = store_->ensure_repository("/srv/other");
  store_->begin_batch();
  store_->replace_file(repo2, file("x.js"), {test::make_chunk("x.js", 1, "pool", "pool pool")});
  store_->commit_batch();
  auto hits = search("how does the pool pick a client?");
  ASSERT_EQ(hits.size(), 3u);
  EXPECT_EQ(hits[0].chunk.function_name, "pickClient");
  for (size_t i = 1; i < hits.size(); ++i) EXPECT_GE(hits[i - 1].score, hits[i].score);
  EXPECT_FALSE(hits[0].partial);
  EXPECT_NE(hits[0].chunk.content.find("pool pool"), std::string::npos);
  LexicalQuery q;
  q.terms = analyze_query("pool").stems;
  q.repo_id = repo2;
  q.with_content = false;
  auto only = store_->lexical_search(q);
  ASSERT_EQ(only.size(), 1u);
  EXPECT_EQ(only[0].repo_id, repo2);
  EXPECT_TRUE(only[0].partial);
  EXPECT_TRUE(only[0].chunk.content.empty());
  auto full = store_->chunks_by_rowid({only[0].rowid, hits[0].rowid, 999999});
  ASSERT_EQ(full.size(), 2u);  // the missing one left out, the order kept
  EXPECT_EQ(full[0].rowid, only[0].rowid);
  EXPECT_EQ(full[1].chunk.function_name, "pickClient");
  EXPECT_EQ(store_->lexical_stats(analyze_query("pool relevant").stems).df, (std::vector<int64_t>{3, 1}));
  EXPECT_TRUE(search("zzzunknown").empty());
}

TEST_P(StoreTest, EmbeddingsAndRefusalsAreKeptPerModel) {
  replace("a.js", {test::make_chunk("a.js", 1, "a", "alpha"), test::make_chunk("a.js", 5, "b", "beta"), test::make_chunk("a.js", 9, "c", "gamma")});
  auto todo = store_->chunks_to_embed("m1", 10);
  ASSERT_EQ(todo.size(), 3u);
  EXPECT_EQ(todo[0].text, "alpha");
  store_->begin_batch();
  store_->set_embeddings("m1", {{todo[0].rowid, {1.0f, -2.5f}}, {todo[1].rowid, {0.25f, 3.0f}}});
  store_->record_embedding_failures("m1", {{todo[2].rowid, "too long"}});
  store_->commit_batch();
  auto again = store_->chunks_to_embed("m1", 10);
  ASSERT_EQ(again.size(), 1u);  // the refused one is still to embed, next run
  EXPECT_EQ(store_->chunks_to_embed("m1", 10, todo[2].rowid).size(), 0u);
  EXPECT_EQ(store_->chunks_to_embed("m2", 10).size(), 3u);
  EmbeddingMatrix m = store_->load_embeddings("m1");
  EXPECT_EQ(m.dim, 2);
  EXPECT_EQ(m.rowids, (std::vector<int64_t>{todo[0].rowid, todo[1].rowid}));
  EXPECT_EQ(m.values, (std::vector<float>{1.0f, -2.5f, 0.25f, 3.0f}));
  StoreStats s = store_->stats();
  EXPECT_EQ(s.embeddings_by_model["m1"], 2);
  EXPECT_EQ(s.embedding_failures_by_model["m1"], 1);
  EXPECT_EQ(s.files, 1);
  EXPECT_EQ(s.chunks_by_type["function"], 3);
  ASSERT_EQ(s.repositories.size(), 1u);
  EXPECT_EQ(s.repositories[0].chunks, 3);
  EXPECT_GT(s.db_bytes, 0);
  EXPECT_EQ(s.schema_version > 0, true);
  // Embedding it later forgets the refusal; replacing the file forgets both.
  store_->begin_batch();
  store_->set_embeddings("m1", {{todo[2].rowid, {0.0f, 1.0f}}});
  store_->commit_batch();
  EXPECT_EQ(store_->stats().embedding_failures_by_model.count("m1"), 0u);
  replace("a.js", {test::make_chunk("a.js", 1, "a", "alpha")});
  EXPECT_EQ(store_->load_embeddings("m1").rowids.size(), 0u);
  EXPECT_THROW(store_->set_embeddings("m1", {{1, {1.0f}}, {2, {1.0f, 2.0f}}}), Error);
}

// A file chunked in line windows because its chunker gave up keeps the reason until it is
// chunked again; stats count them by reason. A store made before the column existed gets it.
TEST_P(StoreTest, FallbacksAreRecordedCountedAndMigrated) {
  FileRecord patho = file("patho.ts");
  patho.fallback = "parse over its work budget";
  store_->begin_batch();
  store_->replace_file(repo_, patho, {test::make_chunk("patho.ts", 1, "", "{ x: [")});
  store_->replace_file(repo_, file("ok.js"), {test::make_chunk("ok.js", 1, "ok", "function ok () {}")});
  store_->commit_batch();
  EXPECT_EQ(test::file_named(store_->list_files(repo_), "patho.ts").fallback, "parse over its work budget");
  EXPECT_EQ(test::file_named(store_->list_files(repo_), "ok.js").fallback, "");
  EXPECT_EQ(store_->stats().fallbacks_by_reason,
            (std::map<std::string, int64_t>{{"parse over its work budget", 1}}));
  store_->begin_batch();
  store_->touch_file(repo_, file("patho.ts"));  // chunked by syntax this time
  store_->commit_batch();
  EXPECT_EQ(test::file_named(store_->list_files(repo_), "patho.ts").fallback, "");
  EXPECT_TRUE(store_->stats().fallbacks_by_reason.empty());

  // The schema before fallbacks were recorded: the migration adds the column, old rows have none.
  store_.reset();
  if (GetParam() == "sqlite") {
    sqlite3* db = nullptr;  // with the tokenizer: dropping a column re-reads the whole schema
    ASSERT_EQ(sqlite3_open(db_.c_str(), &db), SQLITE_OK);
    register_store_functions(db);
    EXPECT_EQ(sqlite3_exec(db, "ALTER TABLE files DROP COLUMN fallback; ALTER TABLE repositories DROP "
                           "COLUMN indexed_commit; DROP TABLE content_dictionaries; "
                           "PRAGMA user_version = 3",
                           nullptr, nullptr, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
  } else {
    test::PostgresServer::shared().psql(
        pg_name_, "ALTER TABLE files DROP COLUMN fallback; ALTER TABLE repositories DROP COLUMN "
                  "indexed_commit; DROP TABLE lexical_segments, lexical_blocks, "
                  "lexical_lengths; UPDATE pilotfish_meta SET "
                  "value = '1' WHERE key = 'schema_version'");
  }
  store_ = open_store(db_, OpenMode::kReadWrite);
  EXPECT_EQ(store_->stats().schema_version, GetParam() == "sqlite" ? 8 : 5);
  EXPECT_EQ(store_->list_files(repo_).size(), 2u);
  EXPECT_EQ(test::file_named(store_->list_files(repo_), "patho.ts").fallback, "");
  store_->begin_batch();
  store_->replace_file(repo_, patho, {});
  store_->commit_batch();
  EXPECT_EQ(store_->stats().fallbacks_by_reason["parse over its work budget"], 1);
}

TEST_P(StoreTest, OneIndexerAtATime) {
  auto lock = store_->acquire_writer_lock();
  auto other = open_store(db_, OpenMode::kReadWrite);
  try {
    other->acquire_writer_lock();
    FAIL() << "a second writer got the lock";
  } catch (const BusyError& e) {
    EXPECT_NE(std::string(e.what()).find("another pilotfish indexer"), std::string::npos) << e.what();
  }
  lock.reset();
  EXPECT_NO_THROW(other->acquire_writer_lock());
}

TEST_P(StoreTest, AnEmptyStoreIsNotSearched) {
  std::string empty = GetParam() == "sqlite" ? std::string(dir_ / "none.db")
                                             : test::PostgresServer::shared().new_database();
  EXPECT_THROW(open_store(empty, OpenMode::kReadOnly), UsageError);
}

// A replica outlives a restart of its PostgreSQL server: the next statement connects again,
// LISTENs again and sees what was committed meanwhile.
TEST(PgStore, AReplicaOutlivesARestartOfTheServer) {
  auto& server = test::PostgresServer::shared();
  std::string db = server.new_database();
  auto writer = open_store(db, OpenMode::kReadWrite);
  auto reader = open_store(db, OpenMode::kReadOnly);
  int64_t repo = writer->ensure_repository("/srv/app");
  writer->begin_batch();
  writer->replace_file(repo, file("a.js"), {test::make_chunk("a.js", 1, "alpha", "alpha handler")});
  writer->commit_batch();
  LexicalQuery q;
  q.terms = analyze_query("alpha").stems;
  EXPECT_EQ(reader->lexical_search(q).size(), 1u);
  server.stop();
  server.start();
  writer->begin_batch();  // BEGIN on a broken connection: made again
  writer->replace_file(repo, file("b.js"), {test::make_chunk("b.js", 1, "beta", "beta handler")});
  writer->commit_batch();
  q.terms = analyze_query("beta").stems;
  // A new generation, though its NOTIFY was lost: this search asks for its index (and gets the
  // previous one meanwhile, store/bm25_cache.h), the next one finds the new row.
  reader->lexical_search(q);
  wait_for_bm25_builds();
  EXPECT_EQ(reader->lexical_search(q).size(), 1u);
  // While it holds the writer lock, a store does not make its connection again: the lock would
  // be gone without it knowing.
  auto lock = writer->acquire_writer_lock();
  server.stop();
  server.start();
  EXPECT_THROW(writer->generation(), Error);
  lock.reset();
  EXPECT_GT(writer->generation(), 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, ::testing::Values("sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

TEST(OpenStore, AUrlIsNeverAPath) {
  test::TempDir dir;
  for (const std::string& db : {std::string("mysql://db.example/x"), std::string("http://h/x"),
                                std::string("sqlite://x.db")}) {
    try {
      open_store(db, OpenMode::kReadWrite);
      FAIL() << db;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("postgres://"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(is_postgres_url("postgres://h/db"));
  EXPECT_TRUE(is_postgres_url("postgresql:///db?host=/run/postgresql"));
  EXPECT_FALSE(is_postgres_url("./postgresql/db"));
}

TEST(OpenStore, AnUnreachableServerIsOneLineWithoutItsPassword) {
  try {
    open_store("postgresql://pilotfish:s3cret@/nodb?host=/nonexistent-socket-dir&connect_timeout=2",
               OpenMode::kReadOnly);
    FAIL();
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("cannot connect to PostgreSQL at postgresql://pilotfish:***@/nodb"), std::string::npos) << m;
    EXPECT_EQ(m.find("s3cret"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace pf
