// Internal to the SQLite store: checkpoints a writing connection's write-ahead log on a thread
// of its own, so that the one writer of an index run does not wait for the disk. SQLite's own
// checkpoint runs in the committing thread every 1,000 frames and syncs the log and the file
// there: on the Linux tree the writer spent about 12% of its time in fdatasync. Here a commit
// that leaves the log past 1,000 frames only wakes the thread, which checkpoints (PASSIVE: never
// blocking the writer or readers) until the log is copied. The log restarts from its start only
// when a write transaction begins with every frame copied, so a writer that begins a
// transaction while the log is past its limit waits for a copy made after its last commit.
#pragma once

#include <sqlite3.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace pf {

class WalCheckpointer {
 public:
  // The log's frames after which a commit wakes the checkpoint (SQLite's own default), and past
  // which a write transaction waits before it begins (512 MiB of 32 KiB pages). Each wait is for
  // a checkpoint of the last batch, syncs included: on the Linux tree 10 waits took 1.7-1.9 s
  // of the writer's time at 8,192 frames, 5 took 1.0-1.1 s at 16,384.
  static constexpr int kWakeFrames = 1000;
  static constexpr int kLimitFrames = 16384;

  // Checkpoints the WAL-mode database file at path for writer, a connection to it (borrowed:
  // it must outlive this, and be used by one thread at a time) whose commits stop checkpointing
  // in the committing thread. Opens a connection and a thread of its own; throws pf::Error when
  // the file cannot be opened. limit_frames: kLimitFrames but in tests.
  WalCheckpointer(sqlite3* writer, const std::string& path, int limit_frames = kLimitFrames);
  // Stops the thread and gives writer SQLite's own checkpoints back; the frames not yet copied
  // stay in the log (SQLite copies them when the last connection closes).
  ~WalCheckpointer();
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  // Called by the writer's thread before it begins a write transaction: while the log holds
  // more than the limit, waits for a checkpoint begun after the last commit, so that the log
  // restarts. Returns at once when the checkpoint cannot run (an error is logged, not thrown).
  void before_write();

  // Checkpoints run to the end so far, the writer's waits in before_write, and the log's frames
  // after the last commit (for tests and the debug log). Any thread.
  int64_t checkpoints() const;
  int64_t waits() const;
  int log_frames() const;

 private:
  static int on_commit(void* self, sqlite3* db, const char* name, int frames);
  void run();

  sqlite3* writer_;
  sqlite3* db_ = nullptr;  // the thread's own connection
  const int limit_frames_;
  mutable std::mutex mu_;
  std::condition_variable wake_, done_;
  int64_t commits_ = 0;      // commits that woke the checkpoint
  int64_t copied_ = 0;       // the value of commits_ when the last finished checkpoint began
  int log_frames_ = 0;       // the log's frames after the last commit
  int64_t checkpoints_ = 0;
  int64_t waits_ = 0;
  bool failed_ = false;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace pf
