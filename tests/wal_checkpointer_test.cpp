// The SQLite store's checkpoint thread (store/wal_checkpointer.h) on real WAL-mode files: the
// checkpoints run on its thread, not in the committing one; the log stays bounded because a
// writer past the limit waits for a copy and the log then restarts; a reader holding an old
// snapshot never blocks the writer; every committed row is in the file after it stops.
#include "store/wal_checkpointer.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>

#include "store/sqlite_util.h"
#include "test_util.h"

namespace pf {
namespace {

constexpr int kPage = 4096;
constexpr int kLimit = 2000;  // frames

class WalCheckpointerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db_), SQLITE_OK);
    sqlite::exec(db_,
                 "PRAGMA page_size = 4096; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                 "CREATE TABLE t(id INTEGER PRIMARY KEY, data BLOB)");
  }
  void TearDown() override { sqlite3_close(db_); }

  // One transaction of about 50 new pages, as a store's batch is written.
  void write_batch(WalCheckpointer* c) {
    if (c) c->before_write();
    sqlite::exec(db_, "BEGIN IMMEDIATE; INSERT INTO t(data) VALUES (randomblob(200000)); COMMIT");
    ++rows_;
  }
  // The log file's size in frames: its high-water mark, as SQLite reuses it from its start.
  int64_t wal_frames() {
    std::error_code ec;
    auto bytes = std::filesystem::file_size(path_ + "-wal", ec);
    return ec ? 0 : static_cast<int64_t>(bytes) / (kPage + 24);
  }

  test::TempDir dir_;
  std::string path_ = dir_ / "w.db";
  sqlite3* db_ = nullptr;
  int rows_ = 0;
};

TEST_F(WalCheckpointerTest, CheckpointsOnItsThreadAndTheLogStaysBounded) {
  {
    WalCheckpointer c(db_, path_, kLimit);
    for (int i = 0; i < 400; ++i) write_batch(&c);  // about 20,000 frames in all
    EXPECT_GT(c.checkpoints(), 5);
    EXPECT_LT(c.log_frames(), kLimit + 2 * 60);
  }
  // At most the limit, a batch begun past it, and the batch that crossed it.
  EXPECT_LE(wal_frames(), kLimit + 2 * 60);
  EXPECT_GT(wal_frames(), 0);
  EXPECT_EQ(test::sqlite_int(path_, "SELECT count(*) FROM t"), rows_);
}

TEST_F(WalCheckpointerTest, WithoutItTheHookedLogWouldGrow) {
  // The same writes with the hook but no thread to copy: what the bound above rests on.
  sqlite3_wal_hook(db_, [](void*, sqlite3*, const char*, int) { return SQLITE_OK; }, nullptr);
  for (int i = 0; i < 100; ++i) write_batch(nullptr);
  EXPECT_GT(wal_frames(), 4000);
}

TEST_F(WalCheckpointerTest, AReaderOnAnOldSnapshotNeverBlocksTheWriter) {
  write_batch(nullptr);
  sqlite3* reader = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &reader), SQLITE_OK);
  sqlite::exec(reader, "BEGIN");
  {
    sqlite::Statement st(reader, "SELECT count(*) FROM t");  // the read opens the snapshot
    ASSERT_TRUE(st.step());
    EXPECT_EQ(st.int64(0), 1);
  }
  WalCheckpointer c(db_, path_, kLimit);
  for (int i = 0; i < 100; ++i) write_batch(&c);
  // The reader pins the log: nothing past its snapshot is copied and the log grows past the
  // limit, yet every batch went in: each wait ended with a checkpoint, not with the reader.
  EXPECT_GT(c.log_frames(), 4000);
  EXPECT_EQ(test::sqlite_int(path_, "SELECT count(*) FROM t"), rows_);
  {
    sqlite::Statement st(reader, "SELECT count(*) FROM t");
    ASSERT_TRUE(st.step());
    EXPECT_EQ(st.int64(0), 1);
  }
  sqlite::exec(reader, "COMMIT");
  sqlite3_close(reader);
  // With the reader gone the log is copied and restarts.
  for (int i = 0; i < 5; ++i) write_batch(&c);
  EXPECT_LT(c.log_frames(), kLimit);
}

TEST_F(WalCheckpointerTest, StoppedItGivesTheWriterSqlitesCheckpointsBack) {
  {
    WalCheckpointer c(db_, path_, kLimit);
    for (int i = 0; i < 10; ++i) write_batch(&c);
  }
  // SQLite's own checkpoint every 1,000 frames keeps the log near that.
  for (int i = 0; i < 200; ++i) write_batch(nullptr);
  EXPECT_LE(wal_frames(), 1000 + 2 * 60);
  sqlite3_close(db_);
  db_ = nullptr;
  EXPECT_EQ(test::sqlite_int(path_, "SELECT count(*) FROM t"), rows_);
  EXPECT_EQ(test::sqlite_int(path_, "SELECT count(*) FROM pragma_integrity_check WHERE "
                                    "integrity_check = 'ok'"),
            1);
}

}  // namespace
}  // namespace pf
