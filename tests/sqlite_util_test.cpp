// The SQLite helpers (src/store/sqlite_util.h) on a real database file: a cached statement is
// prepared once and reused, each lease ends reset (no read snapshot left open, bindings
// cleared), a statement lent twice at once is prepared afresh for the second borrower, and
// clear() finalizes everything so that the connection closes.
#include "store/sqlite_util.h"

#include <gtest/gtest.h>

#include <string>

#include "test_util.h"

namespace pf {
namespace {

class StatementCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_ / "t.db";
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db_), SQLITE_OK);
    sqlite::exec(db_, "PRAGMA journal_mode = WAL; CREATE TABLE t (k TEXT, v INTEGER);"
                      "INSERT INTO t VALUES ('a', 1), ('b', 2);");
  }
  void TearDown() override {
    cache_.clear();
    EXPECT_EQ(sqlite3_close(db_), SQLITE_OK);  // nothing left unfinalized
  }
  test::TempDir dir_;
  std::string path_;
  sqlite3* db_ = nullptr;
  sqlite::StatementCache cache_{&db_};
};

TEST_F(StatementCacheTest, AStatementIsPreparedOnceAndEndsEachLeaseReset) {
  sqlite3_stmt* first = nullptr;
  {
    auto st = cache_.use("SELECT v FROM t WHERE k = ?");
    st->bind(1, std::string_view("a"));
    ASSERT_TRUE(st->step());
    EXPECT_EQ(st->int64(0), 1);
    first = st->handle();
    EXPECT_TRUE(sqlite3_stmt_busy(first));  // mid-result: it holds a read snapshot
  }
  EXPECT_FALSE(sqlite3_stmt_busy(first));  // the lease ended: reset, snapshot let go
  {
    auto st = cache_.use("SELECT v FROM t WHERE k = ?");
    EXPECT_EQ(st->handle(), first);
    EXPECT_EQ(sqlite3_bind_parameter_count(st->handle()), 1);
    st->bind(1, std::string_view("b"));
    ASSERT_TRUE(st->step());
    EXPECT_EQ(st->int64(0), 2);
  }
  {
    auto st = cache_.use("SELECT v FROM t WHERE k = ?");
    ASSERT_FALSE(st->step());  // bindings were cleared: k = NULL matches nothing
  }
  EXPECT_EQ(cache_.size(), 1u);
  // Another connection can write and checkpoint the whole WAL: no reader is left behind.
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &other), SQLITE_OK);
  sqlite::exec(other, "INSERT INTO t VALUES ('c', 3)");
  int log = -1, done = -1;
  EXPECT_EQ(sqlite3_wal_checkpoint_v2(other, nullptr, SQLITE_CHECKPOINT_TRUNCATE, &log, &done),
            SQLITE_OK);
  sqlite3_close(other);
}

TEST_F(StatementCacheTest, AStatementLentTwiceAtOnceIsPreparedAfreshForTheSecond) {
  auto outer = cache_.use("SELECT k FROM t ORDER BY k");
  ASSERT_TRUE(outer->step());
  auto inner = cache_.use("SELECT k FROM t ORDER BY k");
  EXPECT_NE(inner->handle(), outer->handle());
  ASSERT_TRUE(inner->step());
  EXPECT_EQ(inner->text(0), "a");
  ASSERT_TRUE(outer->step());  // the outer one kept its place
  EXPECT_EQ(outer->text(0), "b");
  EXPECT_EQ(cache_.size(), 1u);
}

TEST_F(StatementCacheTest, SqlThatDoesNotPrepareThrowsAndIsNotCached) {
  EXPECT_THROW(cache_.use("SELEKT nothing"), Error);
  EXPECT_EQ(cache_.size(), 0u);
}

}  // namespace
}  // namespace pf
