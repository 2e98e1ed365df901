// The process's shared in-memory rankings (src/store/bm25_cache.h): a search issued while the
// next generation's index is being made returns at once (held back by a test hook, not timed),
// from the previous generation on PostgreSQL and from FTS5 on SQLite; the new generation's
// results come once it is ready; one build at a time per store, fed the previous index.
#include "store/bm25_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "core/error.h"
#include "pg_server.h"
#include "search/query.h"
#include "store/store.h"
#include "test_util.h"

namespace pf {
namespace {

using namespace std::chrono_literals;

// Holds every background build at the hook until released (also when the test fails).
class Gate {
 public:
  Gate() {
    set_bm25_build_hook([this](const std::string&) {
      std::unique_lock lock(mu_);
      ++entered_;
      cv_.notify_all();
      cv_.wait(lock, [&] { return open_; });
    });
  }
  ~Gate() {
    release();
    wait_for_bm25_builds();
    set_bm25_build_hook(nullptr);
  }
  void release() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  // Whether n builds have reached the hook within 10 s.
  bool entered(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 10s, [&] { return entered_ >= n; });
  }
  int count() {
    std::lock_guard lock(mu_);
    return entered_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  int entered_ = 0;
};

// An index of one row whose only term is `term`, at generation.
Bm25Snapshot one_row(const std::string& term, int64_t generation) {
  Bm25Index::Builder b;
  const std::string_view cols[4] = {term, "a.js", "", ""};
  b.add(1, 1, 1, cols, 1);
  return Bm25Snapshot{b.finish(), generation};
}

TEST(Bm25Cache, AStaleIndexIsServedWhileTheNextIsMadeOneAtATime) {
  int builds = 0;
  auto first = shared_bm25_index("unit", 1, [&](const std::shared_ptr<const Bm25Index>& prev) {
    ++builds;
    EXPECT_EQ(prev, nullptr);
    return one_row("alpha", 1);
  });
  ASSERT_EQ(first.generation, 1);  // none before: the caller made it
  ASSERT_EQ(builds, 1);
  Gate gate;
  std::shared_ptr<const Bm25Index> given;
  auto next = [&](const std::shared_ptr<const Bm25Index>& prev) {
    given = prev;
    return one_row("beta", 2);
  };
  // Each call would hang on the gate if it waited for the build: run it apart and bound it.
  auto call = [&] {
    auto f = std::async(std::launch::async, [&] { return shared_bm25_index("unit", 2, next); });
    EXPECT_EQ(f.wait_for(10s), std::future_status::ready) << "the search waited for the build";
    return f.get();
  };
  Bm25Snapshot during = call();
  ASSERT_TRUE(gate.entered(1));
  EXPECT_EQ(during.generation, 1);
  EXPECT_EQ(during.index, first.index);
  EXPECT_EQ(call().generation, 1);
  EXPECT_EQ(gate.count(), 1) << "a second build started while one runs";
  gate.release();
  wait_for_bm25_builds();
  EXPECT_EQ(given, first.index);  // fed the previous index, to update it
  Bm25Snapshot after = shared_bm25_index("unit", 2, next);
  EXPECT_EQ(after.generation, 2);
  EXPECT_EQ(after.index->doc_frequency("beta"), 1);
}

TEST(Bm25Cache, AFailedRebuildKeepsThePreviousIndex) {
  shared_bm25_index("failing", 1, [](const auto&) { return one_row("alpha", 1); });
  auto fail = [](const std::shared_ptr<const Bm25Index>&) -> Bm25Snapshot {
    throw Error("the store went away");
  };
  EXPECT_EQ(shared_bm25_index("failing", 2, fail).generation, 1);
  wait_for_bm25_builds();
  EXPECT_EQ(shared_bm25_index("failing", 2, fail).generation, 1);  // not retried at once
}

TEST(Bm25Cache, InTheBackgroundFromTheSecondSearchNeverBuildsOnASearch) {
  std::atomic<int> builds{0};
  auto build = [&](const std::shared_ptr<const Bm25Index>& prev) {
    EXPECT_EQ(prev, nullptr);
    ++builds;
    return one_row("alpha", 1);
  };
  const auto mode = FirstBuild::kInBackgroundFromTheSecondSearch;
  // The first search gets none and starts nothing: a one-search process never builds.
  Bm25Snapshot s = shared_bm25_index("second", 1, build, mode);
  EXPECT_EQ(s.index, nullptr);
  EXPECT_EQ(s.generation, -1);
  wait_for_bm25_builds();
  EXPECT_EQ(builds.load(), 0);
  // The second starts it in the background and gets none either.
  Gate gate;
  s = shared_bm25_index("second", 1, build, mode);
  EXPECT_EQ(s.index, nullptr);
  ASSERT_TRUE(gate.entered(1));
  EXPECT_EQ(shared_bm25_index("second", 1, build, mode).index, nullptr);  // no second build
  gate.release();
  wait_for_bm25_builds();
  EXPECT_EQ(builds.load(), 1);
  s = shared_bm25_index("second", 1, build, mode);
  ASSERT_NE(s.index, nullptr);
  EXPECT_EQ(s.generation, 1);
}

FileRecord file(const std::string& path) { return {path, 10, 1, "fh", "javascript"}; }

class Bm25CacheStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    db_ = GetParam() == "sqlite" ? std::string(dir_ / "s.db")
                                 : test::PostgresServer::shared().new_database();
    writer_ = open_store(db_, OpenMode::kReadWrite);
    repo_ = writer_->ensure_repository("/srv/app");
    replace("a.js", "alphaHandler", "function alphaHandler () { return 1 }");
    replica_ = open_store(db_, OpenMode::kReadOnly);
  }
  void replace(const std::string& path, const std::string& symbol, const std::string& text) {
    writer_->begin_batch();
    writer_->replace_file(repo_, file(path), {test::make_chunk(path, 1, symbol, text)});
    writer_->commit_batch();
  }
  // The replica's hits for word; fails the test if the search had to wait for a build.
  size_t hits(const std::string& word) {
    LexicalQuery q;
    q.terms = analyze_query(word).stems;
    auto f = std::async(std::launch::async, [&] { return replica_->lexical_search(q).size(); });
    EXPECT_EQ(f.wait_for(10s), std::future_status::ready) << "the search waited for a rebuild";
    return f.get();
  }
  test::TempDir dir_;
  std::string db_;
  std::unique_ptr<Store> writer_, replica_;
  int64_t repo_ = 0;
};

TEST_P(Bm25CacheStoreTest, ASearchDuringARebuildReturnsAtOnceAndTheNewGenerationFollows) {
  // The first search of the process starts nothing (the database ranks meanwhile); the second
  // starts the index in the background.
  EXPECT_EQ(hits("alphaHandler"), 1u);
  EXPECT_EQ(hits("alphaHandler"), 1u);
  wait_for_bm25_builds();
  Gate gate;
  replace("b.js", "betaRouter", "function betaRouter () { return 2 }");
  // The replica hears of the new generation (a NOTIFY on PostgreSQL: it may take a moment to
  // arrive), and its next search asks for that generation's index, held back at the gate.
  int64_t g = writer_->generation();
  for (int i = 0; i < 1000 && replica_->generation() < g; ++i) std::this_thread::sleep_for(10ms);
  size_t during = hits("betaRouter");
  ASSERT_TRUE(gate.entered(1));
  // Meanwhile the database ranks (FTS5, or PostgreSQL's pg_search.h: the same scores, this
  // snapshot's rows), so the new row is found before its index is made.
  EXPECT_EQ(during, 1u);
  EXPECT_EQ(hits("alphaHandler"), 1u);
  gate.release();
  wait_for_bm25_builds();
  EXPECT_EQ(hits("betaRouter"), 1u);
  EXPECT_EQ(hits("alphaHandler"), 1u);
}

INSTANTIATE_TEST_SUITE_P(Backends, Bm25CacheStoreTest, ::testing::Values("sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace pf
