// The pilotfish command end to end, as a user runs it: output shapes, exit codes and one-line
// errors for bad input, a corrupt or truncated store, a busy store, and crash consistency (an
// indexer killed with SIGKILL mid-run leaves a searchable, consistent store; the next run
// finishes the job and matches a clean index).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <tuple>

#include "store/schema.h"
#include "test_util.h"

namespace pf {
namespace {

using test::run;

test::CommandResult pf(std::vector<std::string> args) {
  return test::run_pilotfish(std::move(args));
}

int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}


TEST(Cli, HelpEverywhere) {
  for (auto args : std::vector<std::vector<std::string>>{
           {"--help"}, {"index", "--help"}, {"search", "--help"}, {"stats", "--help"}}) {
    auto r = pf(args);
    EXPECT_EQ(r.exit_code, 0) << args[0];
    EXPECT_NE(r.out.find("Usage"), std::string::npos);
  }
}

TEST(Cli, WrongArgumentsGiveOneLineAndExit2) {
  for (auto args : std::vector<std::vector<std::string>>{{},
                                                         {"frobnicate"},
                                                         {"search"},
                                                         {"search", "x", "--limit", "0"},
                                                         {"search", "x", "--weights", "1,2"},
                                                         {"index", "--threads", "abc"},
                                                         {"index", "--compress-content", "zip"},
                                                         {"--log-level", "loud", "stats"}}) {
    auto r = pf(args);
    EXPECT_EQ(r.exit_code, 2) << (args.empty() ? "" : args[0]) << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_EQ(r.err.rfind("pilotfish: ", 0), 0u) << r.err;
  }
}

TEST(Cli, MissingDirectoryAndMissingStore) {
  test::TempDir tmp;
  auto r = pf({"index", tmp / "does-not-exist", "--db", tmp / "x.db"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("does-not-exist"), std::string::npos);
  r = pf({"search", "foo", "--db", tmp / "none.db"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("run `pilotfish index"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(tmp / "none.db"));  // searching creates nothing
  r = pf({"stats", "--db", tmp.path()});
  EXPECT_EQ(r.exit_code, 2);
}

TEST(Cli, IndexSearchStatsJson) {
  test::TempDir repo, tmp;
  test::write_ts_repo(repo.path(), 3);
  std::string db = tmp / "i.db";
  auto r = pf({"index", repo.path(), "--db", db, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto report = nlohmann::json::parse(r.out);
  EXPECT_EQ(report["indexed"], 4);
  EXPECT_GT(report["chunks"].get<int>(), 10);

  r = pf({"search", "handler1_2", "--db", db, "--json", "--limit", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["results"].size(), 3u);
  auto first = j["results"][0];
  EXPECT_EQ(first["path"], "src/m0/file1.ts");  // relative to the indexed root
  EXPECT_EQ(first["functionName"], "handler1_2");
  EXPECT_TRUE(first["className"].is_null());
  EXPECT_EQ(first["chunkType"], "function");
  for (const char* key : {"path", "startLine", "endLine", "chunkType", "functionName", "className",
                          "score", "content"})
    EXPECT_TRUE(first.contains(key)) << key;
  EXPECT_LT(first["startLine"].get<int>(), first["endLine"].get<int>());

  EXPECT_EQ(first["repo"], std::filesystem::canonical(repo.path()).string());
  r = pf({"search", "handler1_2", "--db", db, "--json", "--repo", repo.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(nlohmann::json::parse(r.out)["results"].empty());
  r = pf({"search", "handler1_2", "--db", db, "--repo", tmp.path()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no repository indexed at"), std::string::npos) << r.err;

  r = pf({"search", "how", "are", "requests", "dispatched", "--db", db});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("docs/guide.md"), std::string::npos);

  r = pf({"stats", "--db", db, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto s = nlohmann::json::parse(r.out);
  EXPECT_EQ(s["files"], 4);
  EXPECT_EQ(s["schemaVersion"], kSchemaVersion);
  EXPECT_EQ(s["repositories"].size(), 1u);

  r = pf({"index", repo.path(), "--db", db});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("0 indexed, 4 unchanged"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");  // no progress bar when stderr is not a terminal
}

// --compress-content: always on pilotfish's own src/ keeps the chunks as frames, which search
// and stats read through; never keeps text.
TEST(Cli, ChunkContentCompressedOnRequest) {
  test::TempDir tmp;
  std::string src = test::source_dir() + "/src", packed = tmp / "p.db", plain = tmp / "t.db";
  ASSERT_EQ(pf({"index", src, "--db", packed, "--compress-content", "always", "-q"}).exit_code, 0);
  ASSERT_EQ(pf({"index", src, "--db", plain, "--compress-content", "never", "-q"}).exit_code, 0);
  auto stats = [&](const std::string& db) {
    auto r = pf({"stats", "--db", db, "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  nlohmann::json p = stats(packed), t = stats(plain);
  EXPECT_GT(p["compressedChunks"].get<int64_t>() * 10, p["chunks"].get<int64_t>() * 9);
  EXPECT_EQ(t["compressedChunks"], 0);
  EXPECT_NE(pf({"stats", "--db", packed}).out.find("chunks kept compressed"), std::string::npos);
  auto search = [&](const std::string& db) {
    auto r = pf({"search", "register_content_functions", "--db", db, "--json", "--limit", "3"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)["results"];
  };
  auto a = search(packed), b = search(plain);
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_NE(a[0]["content"].get<std::string>().find("register_content_functions"),
            std::string::npos);
}

TEST(Cli, CorruptTruncatedAndForeignStores) {
  test::TempDir repo, tmp;
  test::write_ts_repo(repo.path(), 30);
  std::string db = tmp / "i.db";
  ASSERT_EQ(pf({"index", repo.path(), "--db", db, "-q"}).exit_code, 0);

  // Truncated to half.
  std::string truncated = tmp / "truncated.db";
  std::filesystem::copy_file(db, truncated);
  std::filesystem::resize_file(truncated, std::filesystem::file_size(db) / 2);
  auto r = pf({"search", "handler", "--db", truncated});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.exit_code, 128) << "crashed";
  EXPECT_EQ(count_lines(r.err), 1) << r.err;

  // Garbage bytes.
  std::string garbage = tmp / "garbage.db";
  test::write_file(garbage, std::string(8192, '\x5a'));
  r = pf({"search", "handler", "--db", garbage});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("garbage.db"), std::string::npos) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  r = pf({"index", repo.path(), "--db", garbage});
  EXPECT_EQ(r.exit_code, 1);

  // Another application's SQLite database is refused, not modified.
  std::string foreign = tmp / "foreign.db";
  ASSERT_EQ(test::shell("sqlite3 '" + foreign + "' 'CREATE TABLE t(x); INSERT INTO t VALUES (1);'"),
            0);
  r = pf({"index", repo.path(), "--db", foreign});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not a pilotfish store"), std::string::npos) << r.err;
}

TEST(Cli, ProgressBarOnATerminalOnly) {
  if (test::shell("command -v script >/dev/null") != 0) GTEST_SKIP() << "script(1) not installed";
  test::TempDir repo, tmp;
  test::write_ts_repo(repo.path(), 400);
  // script(1) gives the indexer a pseudo-terminal as stderr.
  std::string log = tmp / "tty.log";
  std::string cmd = "script -qec \"" + test::pilotfish_bin() + " index '" + repo.path() +
                    "' --db '" + (tmp / "t.db") + "' --threads 1\" '" + log + "' >/dev/null 2>&1";
  ASSERT_EQ(test::shell(cmd), 0);
  std::string out = test::run({"cat", log}).out;
  EXPECT_NE(out.find("files/s"), std::string::npos) << out;
  EXPECT_NE(out.find("ETA"), std::string::npos);
  EXPECT_NE(out.find("chunks"), std::string::npos);
  EXPECT_NE(out.find("401/401 files"), std::string::npos) << out;
}

TEST(Cli, StoreFromANewerPilotfishIsRefused) {
  test::TempDir repo, tmp;
  test::write_ts_repo(repo.path(), 2);
  std::string db = tmp / "i.db";
  ASSERT_EQ(pf({"index", repo.path(), "--db", db, "-q"}).exit_code, 0);
  ASSERT_EQ(test::shell("sqlite3 '" + db + "' 'PRAGMA user_version = 99'"), 0);
  auto r = pf({"search", "handler", "--db", db});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("newer than this pilotfish"), std::string::npos) << r.err;
}

TEST(Cli, ConfigIsCheckedAndShown) {
  test::TempDir tmp;
  test::write_file(tmp / "good.json", R"({"providers": {"local": {"type": "openai",
      "baseUrl": "http://127.0.0.1:11434/v1", "models": [{"id": "llama3"}]}},
      "defaults": {"chatModel": "local:llama3"}})");
  auto r = pf({"config", "--config", tmp / "good.json", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["chatModel"], "local:llama3");
  EXPECT_EQ(j["providers"][0]["models"][0], "local:llama3");
  test::write_file(tmp / "bad.json",
                   R"({"providers": {"local": {"type": "openai", "baseUrl": "x"}}})");
  r = pf({"config", "--config", tmp / "bad.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("providers.local.baseUrl"), std::string::npos) << r.err;
  r = pf({"config", "--config", tmp / "missing.json"});
  EXPECT_EQ(r.exit_code, 2);
}

TEST(Cli, ModelsListsAndResolvesNames) {
  test::TempDir tmp;
  test::write_file(tmp / "c.json", R"({"providers": {
      "openai": {"type": "openai", "baseUrl": "http://127.0.0.1:1/v1",
                 "models": [{"id": "gpt-4o"}, {"id": "gpt-4o-mini"}]},
      "claude": {"type": "anthropic", "baseUrl": "http://127.0.0.1:1",
                 "models": [{"id": "claude-sonnet-4-5"}]}}})");
  auto r = pf({"models", "--config", tmp / "c.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("openai (openai)\n  openai:gpt-4o\n  openai:gpt-4o-mini"), std::string::npos)
      << r.out;
  r = pf({"models", "--config", tmp / "c.json", "--resolve", "sonnet", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"], "claude:claude-sonnet-4-5");
  r = pf({"models", "--config", tmp / "c.json", "--resolve", "4o"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("4o -> openai:gpt-4o\n  also matched openai:gpt-4o-mini"), std::string::npos)
      << r.out;
  r = pf({"models", "--config", tmp / "c.json", "--resolve", "llama"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  // An empty name is an error, not a listing.
  r = pf({"models", "--config", tmp / "c.json", "--resolve", ""});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no model named"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

// --shard: two stores searched as one corpus print what one store holding both prints.
TEST(Cli, ShardsSearchAsOneStore) {
  test::TempDir a, b, tmp;
  test::write_ts_repo(a.path(), 2);
  test::write_ts_repo(b.path(), 3);
  for (auto [root, db] : {std::pair{a.path(), "a.db"}, {b.path(), "b.db"}, {a.path(), "all.db"},
                          {b.path(), "all.db"}})
    ASSERT_EQ(pf({"index", root, "--db", tmp / db, "-q"}).exit_code, 0);
  for (const char* q : {"handler1_2", "how are requests dispatched"}) {
    SCOPED_TRACE(q);
    auto one = pf({"search", q, "--db", tmp / "all.db", "--json", "--mode", "lexical"});
    auto two = pf({"search", q, "--db", tmp / "a.db", "--shard", tmp / "b.db", "--json"});
    ASSERT_EQ(one.exit_code, 0) << one.err;
    ASSERT_EQ(two.exit_code, 0) << two.err;
    EXPECT_EQ(two.out, one.out);
    std::set<std::string> repos;
    auto results = nlohmann::json::parse(two.out)["results"];
    for (auto& r : results) repos.insert(r["repo"].get<std::string>());
    EXPECT_EQ(repos.size(), 2u) << two.out;
  }
  auto r = pf({"search", "x", "--db", tmp / "a.db", "--shard", tmp / "b.db", "--repo", a.path()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--repo cannot be used with --shard"), std::string::npos) << r.err;
  r = pf({"search", "x", "--db", tmp / "a.db", "--shard", tmp / "missing.db"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("missing.db"), std::string::npos) << r.err;
}

TEST(Cli, EmbeddingsAndHybridSearchAgainstTheScriptedModelServer) {
  test::TempDir repo, tmp;
  test::write_ts_repo(repo.path(), 3);
  test::write_file(repo / "docs/retry.md",
                   "# Retries\n\nFailed requests are retried with backoff.\n");
  std::string db = tmp / "h.db", cfg = tmp / "pilotfish.json";
  auto write_config = [&](const std::string& base_url) {
    test::write_file(cfg, "{\"providers\": {\"local\": {\"type\": \"openai\", \"baseUrl\": \"" +
                              base_url +
                              "\", \"models\": [{\"id\": \"embed-small\"}]}}, \"defaults\": "
                              "{\"embeddingModel\": \"local:embed-small\"}}");
  };
  int chunks = 0;
  {
    test::ScriptedModelServer server;
    write_config(server.base_url());
    auto r = pf({"index", repo.path(), "--db", db, "--config", cfg, "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto report = nlohmann::json::parse(r.out);
    chunks = report["chunks"].get<int>();
    EXPECT_EQ(report["embedded"], chunks);
    EXPECT_TRUE(report["embeddingError"].is_null());
    // Batches of at most 50 chunks per request (besides the questions about the model's limit).
    size_t embedding_requests = 0;
    for (const auto& req : server.requests())
      embedding_requests += req["path"].get<std::string>().ends_with("/embeddings");
    EXPECT_EQ(embedding_requests, static_cast<size_t>((chunks + 49) / 50));

    for (std::string mode : {"vector", "hybrid"}) {
      r = pf({"search", "retried with backoff", "--db", db, "--config", cfg, "--mode", mode,
              "--json"});
      ASSERT_EQ(r.exit_code, 0) << mode << ": " << r.err;
      auto res = nlohmann::json::parse(r.out)["results"];
      ASSERT_FALSE(res.empty()) << mode;
      EXPECT_EQ(res[0]["path"], "docs/retry.md") << mode;
    }
    r = pf({"search", "retried", "--db", db, "--config", cfg, "--fusion", "weighted", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto stats = nlohmann::json::parse(pf({"stats", "--db", db, "--json"}).out);
    EXPECT_EQ(stats["embeddingsByModel"]["local:embed-small"], chunks);
  }
  // The model server is gone: hybrid search degrades to text search and says so; vector-only
  // search fails with one line; indexing keeps the text index and reports the embedding error.
  auto r = pf({"search", "retried with backoff", "--db", db, "--config", cfg, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(nlohmann::json::parse(r.out)["results"].empty());
  EXPECT_NE(r.err.find("vector search failed, answering from text search only"), std::string::npos)
      << r.err;
  r = pf({"search", "retried", "--db", db, "--config", cfg, "--mode", "vector"});
  EXPECT_EQ(r.exit_code, 1);
  // Retry warnings from the log, then the error itself on the last line.
  EXPECT_NE(r.err.find("\npilotfish: embedding model local:embed-small: POST http://127.0.0.1:"),
            std::string::npos)
      << r.err;
  test::write_file(repo / "docs/new.md", "# New\n\nA new page about timeouts.\n");
  r = pf({"index", repo.path(), "--db", db, "--config", cfg, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto report = nlohmann::json::parse(r.out);
  EXPECT_EQ(report["indexed"], 1);
  EXPECT_EQ(report["embedded"], 0);
  EXPECT_FALSE(report["embeddingError"].is_null());
  // Back up: the next run embeds only what is missing.
  test::ScriptedModelServer server;
  write_config(server.base_url());
  r = pf({"index", repo.path(), "--db", db, "--config", cfg, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["embedded"], 1);
  r = pf({"search", "timeouts", "--db", db, "--config", cfg, "--mode", "lexical", "--json"});
  EXPECT_EQ(nlohmann::json::parse(r.out)["results"][0]["path"], "docs/new.md");
  // --no-embed leaves new chunks for a later run and calls no model.
  size_t calls = server.requests().size();
  test::write_file(repo / "docs/later.md", "# Later\n\nEmbedded another day.\n");
  r = pf({"index", repo.path(), "--db", db, "--config", cfg, "--no-embed", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["embedded"], 0);
  EXPECT_EQ(server.requests().size(), calls);
}

TEST(Cli, ConfigCheckAsksProvidersForTheirModels) {
  test::TempDir tmp;
  test::ScriptedModelServer server;  // offers "embed-small"
  auto write = [&](const std::string& models, const std::string& base) {
    test::write_file(tmp / "c.json",
                     "{\"providers\": {\"local\": {\"type\": \"openai\", \"baseUrl\": \"" + base +
                         "\", \"models\": [" + models + "]}}}");
  };
  write("{\"id\": \"embed-small\"}", server.base_url());
  auto r = pf({"config", "--config", tmp / "c.json", "--check"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("provider local: ok, offers 1 models"), std::string::npos) << r.out;
  write("{\"id\": \"embed-small\"}, {\"id\": \"ghost\"}", server.base_url());
  r = pf({"config", "--config", tmp / "c.json", "--check"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("configured but not offered: ghost"), std::string::npos) << r.out;
  write("{\"id\": \"m\"}", "http://127.0.0.1:1/v1");
  r = pf({"config", "--config", tmp / "c.json", "--check"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("provider local: cannot list models"), std::string::npos) << r.out;
}

TEST(Cli, BusyStoreIsRefusedWithExit3) {
  test::TempDir repo, tmp;
  test::write_ts_repo(repo.path(), 2);
  std::string db = tmp / "i.db";
  int fd = open((db + ".lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "4242\n", 5), 5);
  ASSERT_EQ(flock(fd, LOCK_EX), 0);
  auto r = pf({"index", repo.path(), "--db", db});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("pid 4242"), std::string::npos) << r.err;
  close(fd);
  EXPECT_EQ(pf({"index", repo.path(), "--db", db, "-q"}).exit_code, 0);
}

using Row = std::tuple<std::string, int, int, std::string>;

std::set<Row> chunk_rows(const std::string& db) {
  sqlite3* h = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(h, "SELECT path, startLine, endLine, content_hash FROM copilot_code_chunks",
                     -1, &st, nullptr);
  std::set<Row> rows;
  while (sqlite3_step(st) == SQLITE_ROW)
    rows.emplace(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)),
                 sqlite3_column_int(st, 1), sqlite3_column_int(st, 2),
                 reinterpret_cast<const char*>(sqlite3_column_text(st, 3)));
  sqlite3_finalize(st);
  sqlite3_close(h);
  return rows;
}

// How many files the store at db records; 0 when it has no files table yet.
int64_t stored_files(const std::string& db) {
  return test::sqlite_int(db, "SELECT count(*) FROM files");
}

std::string integrity(const std::string& db) {
  sqlite3* h = nullptr;
  sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &st, nullptr);
  std::string out = sqlite3_step(st) == SQLITE_ROW
                        ? reinterpret_cast<const char*>(sqlite3_column_text(st, 0))
                        : "?";
  sqlite3_finalize(st);
  // The count a query returns, or 0 when it cannot run: a store killed before its schema
  // existed has none of the tables, and nothing to compare.
  auto count = [h](const char* sql) {
    sqlite3_stmt* q = nullptr;
    sqlite3_prepare_v2(h, sql, -1, &q, nullptr);
    int n = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int(q, 0) : 0;
    sqlite3_finalize(q);
    return n;
  };
  // Every file row has chunks and every chunk has a file row.
  if (count("SELECT (SELECT count(*) FROM files f WHERE NOT EXISTS (SELECT 1 FROM "
            "copilot_code_chunks c WHERE c.repo_id = f.repo_id AND c.path = f.path)) + (SELECT "
            "count(*) FROM copilot_code_chunks c WHERE NOT EXISTS (SELECT 1 FROM files f WHERE "
            "f.repo_id = c.repo_id AND f.path = c.path))") != 0)
    out += " orphans";
  // Every chunk row has its full-text entry and every entry a row: FTS5 keeps one docsize row
  // per indexed rowid, even in a contentless table.
  if (count("SELECT (SELECT count(*) FROM copilot_code_chunks c WHERE NOT EXISTS (SELECT 1 FROM "
            "copilot_code_chunks_fts_docsize d WHERE d.id = c.chunk_id)) + (SELECT count(*) FROM "
            "copilot_code_chunks_fts_docsize d WHERE NOT EXISTS (SELECT 1 FROM "
            "copilot_code_chunks c WHERE c.chunk_id = d.id))") != 0)
    out += " unindexed";
  sqlite3_close(h);
  return out;
}

pid_t spawn_indexer(const std::string& repo, const std::string& db) {
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    execl(test::pilotfish_bin().c_str(), "pilotfish", "index", repo.c_str(), "--db", db.c_str(),
          "-q", "--threads", "1", static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

TEST(Cli, KilledIndexerLeavesAConsistentSearchableStore) {
  test::TempDir repo, tmp;
  test::write_ts_repo(repo.path(), 1500);
  std::string reference_db = tmp / "ref.db";
  ASSERT_EQ(pf({"index", repo.path(), "--db", reference_db, "-q"}).exit_code, 0);
  auto reference = chunk_rows(reference_db);

  std::string db = tmp / "crash.db";
  int kills = 0;
  for (int delay_ms : {150, 400, 700, 1000}) {
    pid_t pid = spawn_indexer(repo.path(), db);
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    kills += kill(pid, SIGKILL) == 0;
    int status = 0;
    waitpid(pid, &status, 0);
    if (!std::filesystem::exists(db)) continue;
    EXPECT_EQ(integrity(db), "ok") << "after kill at " << delay_ms << " ms";
    auto r = pf({"search", "dispatch", "--db", db, "--json"});
    if (r.exit_code == 2) continue;  // killed before the schema existed
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_GT(kills, 0);
  // The next run finishes the job: the result equals a clean index.
  ASSERT_EQ(pf({"index", repo.path(), "--db", db, "-q"}).exit_code, 0);
  EXPECT_EQ(integrity(db), "ok");
  EXPECT_EQ(chunk_rows(db), reference);
}

// A first run killed once some files are committed: the next run keeps those files and
// indexes only the rest. It once re-chunked every file, since a first run killed before its end
// left the chunker's version unknown.
TEST(Cli, AKilledFirstRunIsResumedNotRedone) {
  test::TempDir repo, tmp;
  test::write_ts_repo(repo.path(), 3000);
  std::string db = tmp / "first.db";
  pid_t pid = spawn_indexer(repo.path(), db);
  ASSERT_GT(pid, 0);
  int64_t stored = 0;
  for (int i = 0; i < 3000 && stored == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (std::filesystem::exists(db)) stored = stored_files(db);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  stored = stored_files(db);
  ASSERT_GT(stored, 0);
  ASSERT_LT(stored, 3001) << "the run ended before the kill";
  auto r = pf({"index", repo.path(), "--db", db, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto report = nlohmann::json::parse(r.out);
  EXPECT_EQ(report["unchanged"].get<int64_t>(), stored) << r.out;
  EXPECT_EQ(report["indexed"].get<int64_t>(), 3001 - stored) << r.out;
  EXPECT_EQ(integrity(db), "ok");
}

TEST(Cli, SearchesWorkDuringIndexing) {
  test::TempDir repo, tmp;
  test::write_ts_repo(repo.path(), 1500);
  std::string db = tmp / "live.db";
  ASSERT_EQ(pf({"index", repo.path(), "--db", db, "-q"}).exit_code, 0);
  // Change every file so the next run rewrites everything, and search while it runs.
  for (int i = 0; i < 1500; ++i)
    test::write_file(
        repo / ("src/m" + std::to_string(i / 100) + "/file" + std::to_string(i) + ".ts"),
        "export function renamed" + std::to_string(i) + "() { return dispatch() }\n");
  pid_t pid = spawn_indexer(repo.path(), db);
  int searches = 0, failures = 0;
  for (int status = 0; waitpid(pid, &status, WNOHANG) == 0; ++searches) {
    auto r = pf({"search", "dispatch", "--db", db, "--json", "-n", "5"});
    if (r.exit_code != 0 || nlohmann::json::parse(r.out)["results"].empty()) ++failures;
  }
  EXPECT_GT(searches, 0);
  EXPECT_EQ(failures, 0);
}

}  // namespace
}  // namespace pf
