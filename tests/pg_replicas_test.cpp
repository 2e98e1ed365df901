// Several `pilotfish serve` replicas on one PostgreSQL store (src/store/pg_store.cpp,
// src/runtime/index_job.cpp): a re-index asked of one is searched on the other; the replica
// that indexes is killed half-way (SIGKILL), the store is left consistent (every chunk's file
// recorded, no file half-written), and the other replica, which was waiting on the indexer lock,
// finishes the job.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <thread>

#include "net/http_client.h"
#include "pg_server.h"
#include "store/pg_postings.h"
#include "store/pg_util.h"
#include "test_util.h"

namespace pf {
namespace {

using nlohmann::json;

json get(const test::ServeProcess& s, const std::string& path, const std::string& method = "GET") {
  HttpRequest req;
  req.method = method;
  req.url = s.url() + path;
  req.timeout = std::chrono::milliseconds(20000);
  HttpResponse r = http_request(req);
  EXPECT_EQ(r.status, 200) << path << ": " << r.body;
  return json::parse(r.body);
}

// Waits until the replica's last index run has finished (ok or not); returns its status.
json wait_for_run(const test::ServeProcess& s, int seconds = 60) {
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  json st;
  while (std::chrono::steady_clock::now() < end) {
    st = get(s, "/v1/platform-copilot/index");
    if (!st["running"] && !st["last"].is_null()) return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ADD_FAILURE() << "the run did not finish: " << st;
  return st;
}

size_t hits(const test::ServeProcess& s, const std::string& q) {
  return get(s, "/v1/search?q=" + q + "&mode=lexical")["results"].size();
}

class PgReplicasTest : public ::testing::Test {
 protected:
  test::ServeProcess* replica(const std::string& root) {
    replicas_.push_back(std::make_unique<test::ServeProcess>(
        std::vector<std::string>{"--db", db_, "--repo", root, "--no-auth"}));
    return replicas_.back().get();
  }
  std::string name_;
  std::string db_ = test::PostgresServer::shared().new_database(&name_);
  std::vector<std::unique_ptr<test::ServeProcess>> replicas_;
};

TEST_F(PgReplicasTest, AReindexOnOneReplicaIsSearchedOnTheOther) {
  test::TempDir repo;
  test::write_file(repo / "lib/alpha.js", "function alphaHandler () { return 1 }\n");
  test::ServeProcess* a = replica(repo.path());
  wait_for_run(*a);
  test::ServeProcess* b = replica(repo.path());
  EXPECT_EQ(hits(*b, "alphaHandler"), 1u);
  test::write_file(repo / "lib/beta.js", "function betaRouter () { return 2 }\n");
  EXPECT_EQ(hits(*b, "betaRouter"), 0u);
  get(*a, "/v1/platform-copilot/index", "POST");
  json st = wait_for_run(*a);
  EXPECT_EQ(st["last"]["ok"], true) << st;
  EXPECT_EQ(st["last"]["indexed"], 1) << st;  // incremental: only the new file
  // B hears of the new generation at its next search, which ranks with the previous one while
  // the new one is made in the background (store/bm25_cache.h); then the new file is found.
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (hits(*b, "betaRouter") == 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(hits(*b, "betaRouter"), 1u);
}

TEST_F(PgReplicasTest, AnIndexerKilledHalfWayLeavesTheStoreConsistentAndTheOtherFinishes) {
  test::TempDir repo;
  const int kFiles = 3000;
  for (int i = 0; i < kFiles; ++i)
    test::write_file(repo / ("src/m" + std::to_string(i) + ".js"),
                     "export function handler" + std::to_string(i) +
                         " (req) {\n  return req.id + " + std::to_string(i) +
                         "\n}\n\nexport const table" + std::to_string(i) +
                         " = { id: " + std::to_string(i) + " }\n");
  // Both start on the empty store: one indexes, the other waits for its lock.
  test::ServeProcess* a = replica(repo.path());
  test::ServeProcess* b = replica(repo.path());
  // b can come up after a has committed its first files (slow under sanitizers): a store that is
  // not empty is not indexed at start-up, so b is asked to, and waits for a's lock.
  if (!get(*b, "/v1/platform-copilot/index")["running"].get<bool>())
    get(*b, "/v1/platform-copilot/index", "POST");
  test::ServeProcess* indexer = nullptr;
  test::ServeProcess* waiter = nullptr;
  json last_a, last_b;  // what each said last, for the failure message
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  // Killed once one writes and the other is seen waiting for its lock.
  while (!indexer && std::chrono::steady_clock::now() < end) {
    for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}}) {
      json sx = get(*x, "/v1/platform-copilot/index"), sy = get(*y, "/v1/platform-copilot/index");
      (x == a ? last_a : last_b) = sx;
      (y == a ? last_a : last_b) = sy;
      if (sx["running"] && sx["current"]["filesDone"].get<int64_t>() > 0 && sy["running"] &&
          sy["current"]["waitingForAnotherIndexer"] == true) {
        indexer = x;
        waiter = y;
        break;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(indexer) << "no replica was seen indexing while the other waited: " << last_a << "\n"
                       << last_b << "\n"
                       << a->log() << "\n"
                       << b->log();
  indexer->kill_now();
  auto& pg = test::PostgresServer::shared();
  const std::string& name = name_;
  // What the killed replica committed is whole: every chunk's file is recorded, every recorded
  // file that has content has its chunks.
  std::string orphans = pg.psql(
      name,
      "SELECT count(*) FROM copilot_code_chunks c LEFT JOIN files f ON f.repo_id = c.repo_id "
      "AND f.path = c.path WHERE f.path IS NULL");
  EXPECT_EQ(orphans, "0\n");
  std::string empty_files = pg.psql(
      name,
      "SELECT count(*) FROM files f WHERE NOT EXISTS (SELECT 1 FROM copilot_code_chunks c WHERE "
      "c.repo_id = f.repo_id AND c.path = f.path)");
  EXPECT_EQ(empty_files, "0\n");
  // The postings and the totals were committed with the chunks they describe: each chunk has
  // its length in a segment, and no segment names a chunk that is not there (or tombstoned).
  const std::string unposted =
      "SELECT count(*) FROM copilot_code_chunks c WHERE NOT EXISTS (SELECT 1 FROM lexical_lengths "
      "l WHERE l.bucket = c.chunk_id >> " + std::to_string(kPgLengthBucketBits) + ")";
  const std::string totals =
      "SELECT (SELECT count(*) FROM copilot_code_chunks)::text = (SELECT value FROM "
      "pilotfish_meta WHERE key = 'lexical_rows')";
  auto postings_match_chunks = [&](bool finished) {
    pg::Connection c(db_);
    std::vector<std::pair<int64_t, uint32_t>> lengths;
    auto r = c.exec("SELECT data FROM lexical_lengths", {}, true);
    for (int i = 0; i < r.rows(); ++i) pg_decode_lengths(r.view(i, 0), &lengths);
    std::set<int64_t> chunks;
    auto ids = c.exec("SELECT chunk_id FROM copilot_code_chunks");
    for (int i = 0; i < ids.rows(); ++i) chunks.insert(ids.int64(i, 0));
    size_t found = 0;
    for (const auto& [chunk, tokens] : lengths) found += chunks.count(chunk);
    EXPECT_TRUE(!finished || !chunks.empty());
    EXPECT_EQ(found, chunks.size());  // every chunk, once
  };
  EXPECT_EQ(pg.psql(name, unposted), "0\n");
  EXPECT_EQ(pg.psql(name, totals), "t\n");
  postings_match_chunks(false);
  int64_t committed = std::stoll(pg.psql(name, "SELECT count(*) FROM files"));
  EXPECT_LT(committed, kFiles)
      << "the indexer finished before it was killed: the test proves nothing";
  json st = wait_for_run(*waiter, 120);
  EXPECT_EQ(st["last"]["ok"], true) << st;
  EXPECT_EQ(st["last"]["waitedForAnotherIndexer"], true) << st;
  EXPECT_EQ(std::stoll(pg.psql(name, "SELECT count(*) FROM files")), kFiles);
  EXPECT_EQ(pg.psql(name, unposted), "0\n");
  EXPECT_EQ(pg.psql(name, totals), "t\n");
  postings_match_chunks(true);
  for (const char* q : {"handler2999", "handler0"}) {
    json results = get(*waiter, std::string("/v1/search?mode=lexical&q=") + q)["results"];
    ASSERT_FALSE(results.empty()) << q;
    EXPECT_EQ(results[0]["path"], std::string("src/m") + (q + 7) + ".js") << results[0];
  }
}

}  // namespace
}  // namespace pf
