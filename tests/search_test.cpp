// Ranking sanity on a small corpus: identifiers find their definition, questions find the
// section that answers them, any word may match (OR semantics), the per-file cap, determinism.
#include <gtest/gtest.h>

#include <map>

#include "index/indexer.h"
#include "search/lexical.h"
#include "test_util.h"

namespace pf {
namespace {

class SearchTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    repo_ = new test::TempDir;
    dbdir_ = new test::TempDir;
    test::write_file(*repo_ / "lib/retry-handler.js",
                     R"(const { RequestRetryError } = require('./errors')

function calculateRetryAfterHeader (retryAfter) {
  const current = Date.now()
  return new Date(retryAfter).getTime() - current
}

class RetryHandler {
  constructor (opts, handler) {
    this.retryOpts = opts
  }

  onResponseError (controller, err) {
    return this.handler.onResponseError(controller, err)
  }
}

module.exports = RetryHandler
)");
    test::write_file(*repo_ / "lib/pool.js", R"(class Pool {
  constructor (origin, { connections } = {}) {
    this.connections = connections
  }

  getDispatcher () {
    for (const client of this.clients) {
      if (!client.busy) return client
    }
  }
}
module.exports = Pool
)");
    test::write_file(*repo_ / "docs/Pool.md", R"(# Pool

A pool of clients to the same origin.

## Options

* **connections** - the maximum number of clients. Default: `null` (unlimited).

## Choosing a client

The pool hands each request to the first client that is not busy.
)");
    test::write_file(*repo_ / "docs/Retry.md", R"(# Retry

## Retry-After

When the server answers 429 or 503 with a Retry-After header, the handler waits that long.
)");
    std::string many;
    for (int i = 0; i < 20; ++i)
      many += "function timeoutHelper" + std::to_string(i) + " () { return timeout }\n\n";
    test::write_file(*repo_ / "lib/timeouts.js", many);
    auto store = open_sqlite_store(db(), OpenMode::kReadWrite);
    IndexOptions opt;
    opt.root = repo_->path();
    index_repository(*store, opt);
  }
  static void TearDownTestSuite() {
    delete repo_;
    delete dbdir_;
  }
  static std::string db() { return *dbdir_ / "s.db"; }

  std::vector<SearchResult> search(const std::string& q, int limit = 10, int cap = 2) {
    auto store = open_sqlite_store(db(), OpenMode::kReadOnly);
    SearchOptions opt;
    opt.limit = limit;
    opt.per_file_cap = cap;
    return lexical_search(*store, q, opt);
  }

  static test::TempDir* repo_;
  static test::TempDir* dbdir_;
};
test::TempDir* SearchTest::repo_ = nullptr;
test::TempDir* SearchTest::dbdir_ = nullptr;

TEST_F(SearchTest, IdentifierFindsItsDefinitionFirst) {
  auto r = search("calculateRetryAfterHeader");
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r[0].hit.chunk.path, "lib/retry-handler.js");
  EXPECT_EQ(r[0].hit.chunk.function_name, "calculateRetryAfterHeader");
  EXPECT_EQ(r[0].hit.chunk.start_line, 3);
}

TEST_F(SearchTest, CamelCasePartsMatchPlainWords) {
  auto r = search("retry after header");
  ASSERT_FALSE(r.empty());
  bool found = false;
  for (auto& h : r) found |= h.hit.chunk.function_name == "calculateRetryAfterHeader";
  EXPECT_TRUE(found);
}

TEST_F(SearchTest, QuestionFindsTheAnsweringSection) {
  auto r = search("how does the pool choose which client gets a request?");
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r[0].hit.chunk.path, "docs/Pool.md");
  EXPECT_EQ(r[0].hit.chunk.symbol, "Choosing a client");
}

TEST_F(SearchTest, OrSemanticsToleratesWordsThatAreNowhere) {
  auto r = search("Pool connections xyzzyunknownword");
  ASSERT_FALSE(r.empty());
}

TEST_F(SearchTest, PerFileCapKeepsResultsDiverse) {
  auto capped = search("timeout helper", 10, 2);
  int from_timeouts = 0;
  for (auto& h : capped) from_timeouts += h.hit.chunk.path == "lib/timeouts.js";
  EXPECT_EQ(from_timeouts, 2);
  auto uncapped = search("timeout helper", 10, 0);
  from_timeouts = 0;
  for (auto& h : uncapped) from_timeouts += h.hit.chunk.path == "lib/timeouts.js";
  EXPECT_EQ(from_timeouts, 10);
}

TEST_F(SearchTest, ResultsAreDeterministicAndOrdered) {
  auto a = search("timeout helper", 10, 0);
  auto b = search("timeout helper", 10, 0);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].hit.chunk.start_line, b[i].hit.chunk.start_line);
    if (i > 0) {
      EXPECT_GE(a[i - 1].hit.score, a[i].hit.score);
      if (a[i - 1].hit.score == a[i].hit.score && a[i - 1].hit.chunk.path == a[i].hit.chunk.path) {
        EXPECT_LT(a[i - 1].hit.chunk.start_line, a[i].hit.chunk.start_line);
      }
    }
  }
}

TEST(LexicalSearch, OverTheMatchBudgetOnlyRareTermsAreEnumeratedAndCommonOnesStillScore) {
  // "timeout" is in 21 chunks, "retry" in 2: with a budget of 5 matches only the chunks with the
  // rare term come back, each with its full score: the common term's share included.
  test::TempDir repo, dir;
  std::string many;
  for (int i = 0; i < 20; ++i)
    many += "function timeoutHelper" + std::to_string(i) + " () { return timeout }\n\n";
  test::write_file(repo / "lib/timeouts.js", many);
  test::write_file(repo / "lib/both.js", "function retryOnTimeout () { retry(timeout) }\n");
  test::write_file(repo / "lib/retry.js", "function again () { retry() }\n");
  auto store = open_sqlite_store(dir / "s.db", OpenMode::kReadWrite);
  IndexOptions io;
  io.root = repo.path();
  index_repository(*store, io);
  SearchOptions opt;
  opt.per_file_cap = 0;
  opt.limit = 50;
  opt.match_budget = 0;
  auto all = lexical_search(*store, "retry timeout", opt);
  opt.match_budget = 5;
  auto bounded = lexical_search(*store, "retry timeout", opt);
  ASSERT_EQ(bounded.size(), 2u);
  EXPECT_GT(all.size(), 20u);
  std::map<int64_t, double> full;
  for (auto& r : all) full[r.hit.rowid] = r.hit.score;
  EXPECT_EQ(bounded[0].hit.chunk.path, "lib/both.js");
  EXPECT_EQ(bounded[1].hit.chunk.path, "lib/retry.js");
  for (auto& r : bounded) EXPECT_EQ(r.hit.score, full.at(r.hit.rowid)) << r.hit.chunk.path;
  // The rarest term is always kept, even when it alone is over the budget.
  opt.match_budget = 1;
  EXPECT_FALSE(lexical_search(*store, "timeout helper", opt).empty());
}

TEST_F(SearchTest, DocumentFrequenciesCountChunks) {
  auto store = open_sqlite_store(db(), OpenMode::kReadOnly);
  auto df = store->lexical_stats({"timeouthelper0", "timeout", "nosuchterm"}).df;
  ASSERT_EQ(df.size(), 3u);
  EXPECT_EQ(df[0], 1);
  EXPECT_GE(df[1], 20);
  EXPECT_EQ(df[2], 0);
}

TEST_F(SearchTest, EmptyAndPunctuationOnlyQueries) {
  EXPECT_TRUE(search("").empty());
  EXPECT_TRUE(search("the a of").empty());
  EXPECT_TRUE(search("\"*()^:-").empty());
  EXPECT_TRUE(search("NEAR(a b) OR AND NOT").size() <= 10);  // FTS5 syntax is quoted, not parsed
}

}  // namespace
}  // namespace pf
