// The incremental indexer against a real SQLite store: first run, no-change run, edits,
// deletions, touched-but-identical files, skips by reason, the writer lock, bad inputs.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "index/indexer.h"
#include "search/lexical.h"
#include "store/fts_tokenizer.h"
#include "store/schema.h"
#include "store/store.h"
#include "store/text_index_levels.h"
#include "test_util.h"

namespace pf {
namespace {

int64_t skipped(const IndexReport& r, SkipReason reason) {
  return r.skipped[static_cast<size_t>(reason)];
}

class IndexerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_file(repo_ / "src/pool.ts",
                     "export function pickClient(pool: Pool) {\n  return pool.clients[0]\n}\n");
    test::write_file(
        repo_ / "src/agent.js",
        "class Agent {\n  dispatch (opts) {\n    return opts\n  }\n}\nmodule.exports = Agent\n");
    test::write_file(repo_ / "docs/guide.md",
                     "# Guide\n\n## Retries\n\nUse the retry interceptor.\n");
    test::write_file(repo_ / "README.md", "# Demo\n\nA demo repository.\n");
    test::write_file(repo_ / ".env", "TOKEN=abc\n");
    test::write_file(repo_ / "certs/server.pem", "x\n");
    test::write_file(repo_ / "test/pool.test.js", "it('works')\n");
    test::write_file(repo_ / "src/pool.spec.ts", "describe('x')\n");
    test::write_file(repo_ / "node_modules/dep/index.js", "module.exports = 1\n");
    test::write_file(repo_ / "dist/bundle.min.js", "x\n");
    test::write_file(repo_ / ".gitignore", "dist/\n*.log\n");
    test::write_file(repo_ / "debug.log", "log\n");
    test::write_file(repo_ / "bin/blob.bin", std::string("\0\1\2\3", 4));
  }

  IndexReport index(IndexOptions opt = {}) {
    auto store = open_sqlite_store(db_, OpenMode::kReadWrite);
    opt.root = repo_.path();
    return index_repository(*store, opt);
  }

  std::vector<std::string> search_paths(const std::string& q) {
    auto store = open_sqlite_store(db_, OpenMode::kReadOnly);
    std::vector<std::string> out;
    for (auto& r : lexical_search(*store, q)) out.push_back(r.hit.chunk.path);
    return out;
  }

  test::TempDir repo_, dbdir_;
  std::string db_ = dbdir_ / "index.db";
};

TEST_F(IndexerTest, FirstRunIndexesAndCountsSkips) {
  IndexReport r = index();
  EXPECT_EQ(r.indexed, 5);  // pool.ts, agent.js, guide.md, README.md, .gitignore
  EXPECT_EQ(r.unchanged, 0);
  EXPECT_EQ(skipped(r, SkipReason::kSecretName), 2);
  EXPECT_EQ(skipped(r, SkipReason::kTest), 2);        // test/ and *.spec.*
  EXPECT_EQ(skipped(r, SkipReason::kDefaultDir), 1);  // node_modules
  EXPECT_EQ(skipped(r, SkipReason::kIgnored), 2);     // dist/, debug.log
  EXPECT_EQ(skipped(r, SkipReason::kBinary), 1);
  EXPECT_GT(r.chunks_written, 5);
  EXPECT_EQ(search_paths("pickClient").at(0), "src/pool.ts");
  EXPECT_TRUE(search_paths("TOKEN").empty());
}

TEST_F(IndexerTest, AWriteThatFailsMidRunStopsTheWorkersAndLosesOnlyItsBatch) {
  index();
  // The store refuses one file's chunks, as a full disk or a broken database would.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "CREATE TRIGGER poison BEFORE INSERT ON copilot_code_chunks WHEN "
                         "new.path = 'gen/f1500.js' BEGIN SELECT RAISE(ABORT, 'disk on fire'); END",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  char name[32];
  for (int i = 0; i < 2000; ++i) {
    std::snprintf(name, sizeof name, "gen/f%04d.js", i);
    test::write_file(repo_ / name, "function f" + std::to_string(i) + " () { return 1 }\n");
  }
  IndexOptions opt;
  opt.threads = 2;  // workers ahead of the writer when it fails: they must be stopped and joined
  EXPECT_THROW(index(opt), Error);
  auto committed = [&] {
    return test::sqlite_int(db_, "SELECT count(*) FROM files WHERE path LIKE 'gen/%'");
  };
  const int64_t kept = committed();
  EXPECT_GT(kept, 0);     // the batches committed before the failure stay
  EXPECT_LT(kept, 2000);  // the failed batch does not, nor what was not written yet
  EXPECT_EQ(test::sqlite_int(db_, "SELECT count(*) FROM files WHERE path = 'gen/f1500.js'"), 0);
  ASSERT_EQ(sqlite3_exec(db, "DROP TRIGGER poison", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  IndexReport r = index(opt);  // the lock was released; the run finishes the job
  EXPECT_EQ(r.indexed, 2000 - kept);
  EXPECT_EQ(committed(), 2000);
  EXPECT_EQ(search_paths("f1999").at(0), "gen/f1999.js");
}

TEST_F(IndexerTest, IncludeTestsSwitch) {
  IndexOptions opt;
  opt.walk.include_tests = true;
  IndexReport r = index(opt);
  EXPECT_EQ(r.indexed, 7);
  EXPECT_EQ(skipped(r, SkipReason::kTest), 0);
}

TEST_F(IndexerTest, SecondRunWithoutChangesReadsNothing) {
  index();
  IndexReport r = index();
  EXPECT_EQ(r.indexed, 0);
  EXPECT_EQ(r.unchanged, 5);
  EXPECT_EQ(r.removed, 0);
}

TEST_F(IndexerTest, EditsDeletionsAndTouches) {
  index();
  test::write_file(repo_ / "src/pool.ts",
                   "export function selectWorker(p: Pool) {\n  return p.workers[1]\n}\n");
  std::filesystem::remove(repo_ / "docs/guide.md");
  // Same content, new mtime: hashed, not re-chunked.
  auto readme = repo_ / "README.md";
  struct timespec times[2] = {{0, UTIME_NOW}, {1000, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, readme.c_str(), times, 0), 0);
  IndexReport r = index();
  EXPECT_EQ(r.indexed, 1);
  EXPECT_EQ(r.removed, 1);
  EXPECT_EQ(r.unchanged, 3);
  EXPECT_TRUE(search_paths("pickClient").empty());
  EXPECT_EQ(search_paths("selectWorker").at(0), "src/pool.ts");
  EXPECT_TRUE(search_paths("retry interceptor").empty() ||
              search_paths("retry interceptor").at(0) != "docs/guide.md");
}

// A file over the parse's work budget (an input found by the fuzzer) is chunked in line
// windows, recorded with the reason, and chunked again by every later run even though its size
// and mtime stay the same: rewritten in place (same size, mtime put back), it gets its syntax
// chunks, and then it is left alone like any other file.
TEST_F(IndexerTest, AFileOverTheParseBudgetIsRecordedAndTriedAgain) {
  // Error recovery in the TSX grammar explodes on it (code_chunker_test.cpp).
  const std::string patho =
      "async (a = (b = (c (= 1)) => 2) => 3\n"
      "async (a = (b = (c = 1)) => 2) => 3\n"
      "async (a = (b} = (c = 1)) => 2) => 3\n";
  std::string path = repo_ / "src/patho.tsx";
  test::write_file(path, patho);
  struct stat before {};
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  IndexReport r = index();
  EXPECT_EQ(r.indexed, 6);
  EXPECT_EQ(r.fallbacks, 1);
  auto record = [&] {
    auto store = open_sqlite_store(db_, OpenMode::kReadOnly);
    return test::file_named(store->list_files(store->stats().repositories.at(0).id), "src/patho.tsx");
  };
  EXPECT_EQ(record().fallback, kFallbackParseBudget);
  EXPECT_EQ(record().content_hash.empty(), false);
  StoreStats s = open_sqlite_store(db_, OpenMode::kReadOnly)->stats();
  EXPECT_EQ(s.fallbacks_by_reason, (std::map<std::string, int64_t>{{kFallbackParseBudget, 1}}));

  r = index();  // unchanged on disk, still tried again (and still over the budget)
  EXPECT_EQ(r.indexed, 1);
  EXPECT_EQ(r.unchanged, 5);
  EXPECT_EQ(r.fallbacks, 1);

  std::string fixed = "export function repairedInPlace() { return 1 }\n//";
  fixed += std::string(patho.size() - fixed.size() - 1, '-') + "\n";
  ASSERT_EQ(fixed.size(), patho.size());
  test::write_file(path, fixed);
  struct timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  r = index();
  EXPECT_EQ(r.indexed, 1);
  EXPECT_EQ(r.fallbacks, 0);
  EXPECT_EQ(record().fallback, "");
  EXPECT_EQ(search_paths("repairedInPlace").at(0), "src/patho.tsx");
  EXPECT_TRUE(open_sqlite_store(db_, OpenMode::kReadOnly)->stats().fallbacks_by_reason.empty());
  r = index();
  EXPECT_EQ(r.indexed, 0);
  EXPECT_EQ(r.unchanged, 6);
}

TEST_F(IndexerTest, NewlyIgnoredFilesAreRemoved) {
  index();
  test::write_file(repo_ / ".gitignore", "dist/\n*.log\ndocs/\n");
  IndexReport r = index();
  EXPECT_EQ(r.removed, 1);
  for (auto& p : search_paths("Retries interceptor")) EXPECT_NE(p, "docs/guide.md");
}

TEST_F(IndexerTest, SecondIndexerIsRefused) {
  auto store = open_sqlite_store(db_, OpenMode::kReadWrite);
  auto lock = store->acquire_writer_lock();
  try {
    index();
    FAIL() << "second indexer was not refused";
  } catch (const BusyError& e) {
    EXPECT_NE(
        std::string(e.what()).find("another pilotfish indexer (pid " + std::to_string(getpid())),
        std::string::npos)
        << e.what();
  }
}

TEST_F(IndexerTest, SearchKeepsWorkingWhileAnIndexerHoldsTheStore) {
  index();
  auto writer = open_sqlite_store(db_, OpenMode::kReadWrite);
  auto lock = writer->acquire_writer_lock();
  writer->begin_batch();
  writer->remove_file(writer->ensure_repository(std::filesystem::canonical(repo_.path())),
                      "src/pool.ts");
  // Uncommitted: a reader still sees the last committed index.
  EXPECT_EQ(search_paths("pickClient").at(0), "src/pool.ts");
  writer->commit_batch();
  EXPECT_TRUE(search_paths("pickClient").empty());
}

TEST_F(IndexerTest, SizeCapSymlinksAndLoops) {
  std::string big(50 * 1024 * 1024, 'a');
  test::write_file(repo_ / "huge.txt", big);
  ASSERT_EQ(symlink("/etc", (repo_ / "etc-link").c_str()), 0);
  ASSERT_EQ(symlink(".", (repo_ / "loop").c_str()), 0);
  ASSERT_EQ(symlink("src/pool.ts", (repo_ / "alias.ts").c_str()), 0);
  IndexReport r = index();
  EXPECT_EQ(skipped(r, SkipReason::kTooLarge), 1);
  EXPECT_EQ(skipped(r, SkipReason::kSymlink), 3);
  EXPECT_EQ(r.indexed, 5);
}

TEST_F(IndexerTest, UnreadableFilesAreSkippedNotFatal) {
  test::write_file(repo_ / "src/locked.ts", "export const x = 1\n");
  ASSERT_EQ(chmod((repo_ / "src/locked.ts").c_str(), 0), 0);
  ASSERT_EQ(chmod((repo_ / "docs").c_str(), 0), 0);
  if (geteuid() != 0) {
    IndexReport r = index();
    EXPECT_EQ(skipped(r, SkipReason::kUnreadable), 2);
    return;
  }
  // root reads everything: run the walk as an unprivileged user in a child process.
  chmod(repo_.path().c_str(), 0755);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(90);
    WalkResult w = walk_repository(repo_.path(), WalkOptions{});
    _exit(static_cast<int>(w.skipped[static_cast<size_t>(SkipReason::kUnreadable)]));
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 90) GTEST_SKIP() << "cannot drop privileges here";
  EXPECT_EQ(WEXITSTATUS(status), 2);  // the file and the directory
}

TEST_F(IndexerTest, TextIndexFromAnotherTokenizerVersionIsRebuilt) {
  index();
  ASSERT_EQ(test::shell("sqlite3 '" + db_ +
                        "' \"UPDATE meta SET value = 'old' WHERE key = 'tokenizer_version'\""),
            0);
  // Searching a store whose text index the current tokenizer did not build would give wrong
  // results: refused with the way out.
  try {
    open_sqlite_store(db_, OpenMode::kReadOnly);
    FAIL() << "stale text index was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("run `pilotfish index`"), std::string::npos);
  }
  IndexReport r = index();  // rebuilds, then finds nothing changed
  EXPECT_EQ(r.indexed, 0);
  EXPECT_EQ(search_paths("pickClient").at(0), "src/pool.ts");
  // Edits after the rebuild delete the rebuilt entries cleanly.
  test::write_file(repo_ / "src/pool.ts",
                   "export function selectWorker(p: Pool) {\n  return p.workers[1]\n}\n");
  index();
  EXPECT_TRUE(search_paths("pickClient").empty());
  // No stale postings: the index no longer holds the old word at all.
  auto store = open_sqlite_store(db_, OpenMode::kReadOnly);
  EXPECT_EQ(store->lexical_stats({"pickclient"}).df.at(0), 0);
  EXPECT_EQ(store->lexical_stats({"selectwork"}).df.at(0), 1);
}

TEST_F(IndexerTest, MissingRootIsAUsageError) {
  auto store = open_sqlite_store(db_, OpenMode::kReadWrite);
  IndexOptions opt;
  opt.root = repo_ / "nope";
  EXPECT_THROW(index_repository(*store, opt), UsageError);
  opt.root = repo_ / "README.md";
  EXPECT_THROW(index_repository(*store, opt), UsageError);
}

TEST_F(IndexerTest, TwoRepositoriesShareOneStore) {
  test::TempDir other;
  test::write_file(other / "lib/x.js", "function otherRepoOnly () {}\n");
  index();
  auto store = open_sqlite_store(db_, OpenMode::kReadWrite);
  IndexOptions opt;
  opt.root = other.path();
  index_repository(*store, opt);
  auto hits = lexical_search(*store, "otherRepoOnly");
  ASSERT_EQ(hits.size(), 1u);
  SearchOptions only_first;
  only_first.repo_id = store->find_repository(std::filesystem::canonical(repo_.path()))->id;
  EXPECT_TRUE(lexical_search(*store, "otherRepoOnly", only_first).empty());
  EXPECT_FALSE(lexical_search(*store, "pickClient", only_first).empty());
  EXPECT_EQ(hits[0].repo_root, std::filesystem::canonical(other.path()).string());
  EXPECT_EQ(store->stats().repositories.size(), 2u);
  // Re-indexing the first repository leaves the second alone.
  IndexReport r = index();
  EXPECT_EQ(r.removed, 0);
  EXPECT_EQ(lexical_search(*store, "otherRepoOnly").size(), 1u);
}

Chunk one_chunk(const std::string& path, const std::string& content) {
  Chunk c;
  c.path = path;
  c.language = "javascript";
  c.start_line = c.end_line = 1;
  c.chunk_type = "block";
  c.content = content;
  c.content_hash = content;
  return c;
}

// A batch's new rows get their FTS entries only at commit; a row deleted before that (its file
// replaced or removed again in the same batch) must not leave an entry behind or lose one.
TEST_F(IndexerTest, FileRewrittenTwiceInOneBatchKeepsOneSetOfEntries) {
  auto store = open_sqlite_store(db_, OpenMode::kReadWrite);
  auto lock = store->acquire_writer_lock();
  store->begin_batch();
  int64_t repo = store->ensure_repository(repo_.path());
  FileRecord a{"a.js", 1, 1, "h1", "javascript"}, b{"b.js", 1, 1, "h2", "javascript"};
  store->replace_file(repo, a, {one_chunk("a.js", "firstversionword")});
  store->replace_file(repo, b, {one_chunk("b.js", "removedfileword")});
  store->replace_file(repo, a, {one_chunk("a.js", "secondversionword")});
  store->remove_file(repo, "b.js");
  store->commit_batch();
  EXPECT_EQ(
      store->lexical_stats({"firstversionword", "secondversionword", "removedfileword"}).df,
      (std::vector<int64_t>{0, 1, 0}));
  // A rolled-back batch leaves nothing pending for the next one.
  store->begin_batch();
  store->replace_file(repo, b, {one_chunk("b.js", "rolledbackword")});
  store->rollback_batch();
  store->begin_batch();
  store->replace_file(repo, a, {one_chunk("a.js", "thirdversionword")});
  store->commit_batch();
  EXPECT_EQ(
      store->lexical_stats({"secondversionword", "rolledbackword", "thirdversionword"}).df,
      (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(lexical_search(*store, "thirdversionword").size(), 1u);
  store.reset();
  // FTS5's own check: a delete of a row that was never indexed would leave a stray tombstone.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_.c_str(), &db), SQLITE_OK);
  register_store_functions(db);
  EXPECT_EQ(sqlite3_exec(db,
                         "INSERT INTO copilot_code_chunks_fts(copilot_code_chunks_fts) "
                         "VALUES('integrity-check')",
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
}

TEST_F(IndexerTest, ChunkIdsAreUniqueAndSortByCreation) {
  index();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  test::write_file(repo_ / "src/later.js", "function addedLater () {}\n");
  index();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT id, path FROM copilot_code_chunks ORDER BY chunk_id", -1,
                               &st, nullptr),
            SQLITE_OK);
  std::vector<std::string> ids;
  std::string last_path;
  while (sqlite3_step(st) == SQLITE_ROW) {
    ids.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    last_path = reinterpret_cast<const char*>(sqlite3_column_text(st, 1));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  ASSERT_GE(ids.size(), 5u);
  EXPECT_EQ(last_path, "src/later.js");
  for (const std::string& id : ids) {
    EXPECT_EQ(id.size(), 21u);
    EXPECT_EQ(
        id.find_first_not_of("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"),
        std::string::npos);
  }
  // The second run's chunk was made later: its id sorts after every id of the first run.
  EXPECT_EQ(std::max_element(ids.begin(), ids.end()) - ids.begin(),
            static_cast<std::ptrdiff_t>(ids.size() - 1));
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), ids.size());
}

// One of the FTS5 table's settings as stored in its config table (0: FTS5's default).
int64_t fts5_setting(const std::string& db_path, const std::string& key) {
  return test::sqlite_int(db_path,
                          "SELECT v FROM copilot_code_chunks_fts_config WHERE k = '" + key + "'");
}

// How many segments the text index has (each has at least one entry in FTS5's %_idx table).
int64_t fts5_segments(const std::string& db_path) {
  return test::sqlite_int(db_path, "SELECT count(DISTINCT segid) FROM copilot_code_chunks_fts_idx");
}

// Schema 1 indexed rows with an insert trigger; migrating drops it, or every new row would be
// indexed twice.
TEST_F(IndexerTest, SchemaOneStoreIsMigratedWithoutDoubleEntries) {
  index();
  // Through a connection with the tokenizer: dropping a column re-reads the whole schema.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_.c_str(), &db), SQLITE_OK);
  register_store_functions(db);
  EXPECT_EQ(sqlite3_exec(db,
                         "CREATE TRIGGER copilot_code_chunks_ai AFTER INSERT ON "
                         "copilot_code_chunks BEGIN INSERT INTO copilot_code_chunks_fts(rowid, "
                         "symbols, path, headings, body) VALUES (new.chunk_id, '', '', '', "
                         "new.content); END; DROP TABLE embedding_failures; DROP TRIGGER "
                         "copilot_code_chunks_ad_failures; ALTER TABLE files DROP COLUMN "
                         "fallback; ALTER TABLE repositories DROP COLUMN indexed_commit; DROP "
                         "TABLE content_dictionaries; PRAGMA user_version = 1",
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
  test::write_file(repo_ / "src/fresh.js", "function freshlyAddedHelper () {}\n");
  index();
  auto store = open_sqlite_store(db_, OpenMode::kReadOnly);
  EXPECT_EQ(store->lexical_stats({"freshlyaddedhelp"}).df.at(0), 1);
  EXPECT_EQ(store->stats().schema_version, kSchemaVersion);
  EXPECT_TRUE(store->stats().fallbacks_by_reason.empty());
  EXPECT_EQ(fts5_setting(db_, "automerge"), 64);
  EXPECT_EQ(fts5_setting(db_, "crisismerge"), 64);
}

// Each index run below replaces one file: one commit, one new segment of the text index. FTS5
// merges a level at 64 (schema 8), and each run ends by merging a first level of 16 or more
// (store/text_index_levels.h): a store re-indexed day after day seeks at most 16 segments.
TEST_F(IndexerTest, RunAfterRunTheTextIndexKeepsAtMostSixteenSegments) {
  index();
  int64_t most = 0;
  for (int run = 1; run <= 40; ++run) {
    test::write_file(repo_ / "src/pool.ts",
                     "export function pickClient" + std::to_string(run) + "() { return 1 }\n");
    ASSERT_EQ(index().indexed, 1);
    most = std::max(most, fts5_segments(db_));
  }
  EXPECT_LE(most, kFirstLevelMergeAt);
  EXPECT_GE(most, kFirstLevelMergeAt - 2);  // not merged at every run's end
  EXPECT_EQ(search_paths("pickclient40"), std::vector<std::string>{"src/pool.ts"});
  EXPECT_TRUE(search_paths("pickclient39").empty());
}

// A new store gives back the pages of what a run deleted (or merged) when the run ends.
TEST_F(IndexerTest, ARunsEndGivesBackTheStoresFreePages) {
  for (int f = 0; f < 20; ++f) {
    std::string text;
    for (int i = 0; i < 1000; ++i)
      text += "export function handler" + std::to_string(f * 1000 + i) + "(req) { return req.id * " +
              std::to_string(i * 7919 % 10007) + " }\n";
    test::write_file(repo_ / ("gen/part" + std::to_string(f) + ".js"), text);
  }
  index();
  EXPECT_EQ(test::sqlite_int(db_, "PRAGMA auto_vacuum"), 2);  // incremental
  int64_t with_gen = test::sqlite_int(db_, "PRAGMA page_count");
  std::filesystem::remove_all(repo_ / "gen");
  EXPECT_EQ(index().removed, 20);
  EXPECT_EQ(test::sqlite_int(db_, "PRAGMA freelist_count"), 0);
  EXPECT_LT(test::sqlite_int(db_, "PRAGMA page_count"), with_gen / 2);
  EXPECT_EQ(search_paths("handler123"), std::vector<std::string>{});
  EXPECT_EQ(search_paths("pickclient"), std::vector<std::string>{"src/pool.ts"});
}

// Each thread of this process by its nice value, read from /proc (a Linux thread's own).
std::map<int, int> threads_by_nice() {
  std::map<int, int> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream in(e.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 2));
    std::string field;
    for (int i = 0; i <= 16 && fields >> field; ++i) {
      if (i == 16) ++out[std::stoi(field)];  // state is field 0, nice field 16
    }
  }
  return out;
}

TEST_F(IndexerTest, TheWorkersRunBelowTheWritersPriority) {
  for (int f = 0; f < 1000; ++f)
    test::write_file(repo_ / ("gen/m" + std::to_string(f) + ".js"),
                     "export function handler" + std::to_string(f) + "(req) { return req.id }\n");
  std::map<int, int> seen;
  int writer_nice = -100;
  auto store = open_sqlite_store(db_, OpenMode::kReadWrite);
  IndexOptions opt;
  opt.root = repo_.path();
  opt.threads = 2;
  index_repository(*store, opt, [&](const IndexProgress&) {
    // The writer's thread, while the workers chunk.
    for (auto [nice, n] : threads_by_nice()) seen[nice] = std::max(seen[nice], n);
    writer_nice = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
  });
  EXPECT_EQ(writer_nice, 0);
  EXPECT_GE(seen[10], 1);
  // And the process's own threads keep theirs once the run is over.
  EXPECT_EQ(threads_by_nice().count(10), 0u);
}

}  // namespace
}  // namespace pf
