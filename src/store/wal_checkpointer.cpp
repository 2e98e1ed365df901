// The SQLite store's checkpoint thread (see wal_checkpointer.h).
#include "store/wal_checkpointer.h"

#include <system_error>

#include "core/error.h"
#include "core/log.h"

namespace pf {

WalCheckpointer::WalCheckpointer(sqlite3* writer, const std::string& path, int limit_frames)
    : writer_(writer), limit_frames_(limit_frames) {
  int rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  // A read opens the log, which a checkpoint on a connection that never read does not.
  if (rc == SQLITE_OK) {
    sqlite3_busy_timeout(db_, 10000);
    rc = sqlite3_exec(db_, "SELECT 1 FROM sqlite_master LIMIT 1", nullptr, nullptr, nullptr);
  }
  if (rc != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close_v2(db_);
    throw Error("cannot open " + path + " to checkpoint it: " + msg);
  }
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error& e) {
    sqlite3_close_v2(db_);
    throw Error(std::string("cannot start the checkpoint thread: ") + e.what());
  }
  sqlite3_wal_hook(writer_, &WalCheckpointer::on_commit, this);
}

WalCheckpointer::~WalCheckpointer() {
  sqlite3_wal_autocheckpoint(writer_, kWakeFrames);  // SQLite's own hook again
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    if (log::enabled(log::Level::kDebug))
      log::debug("store", std::to_string(checkpoints_) + " checkpoints, " +
                              std::to_string(waits_) + " waited for");
  }
  wake_.notify_one();
  thread_.join();
  sqlite3_close_v2(db_);
}

// In the writer's thread, after each commit; frames: the log's frames now.
int WalCheckpointer::on_commit(void* arg, sqlite3* db, const char* name, int frames) {
  auto* self = static_cast<WalCheckpointer*>(arg);
  bool failed;
  {
    std::lock_guard<std::mutex> lock(self->mu_);
    self->log_frames_ = frames;
    failed = self->failed_;
    if (!failed && frames >= kWakeFrames) ++self->commits_;
  }
  if (failed) {
    // What SQLite's own hook does, in this thread.
    if (frames >= kWakeFrames) sqlite3_wal_checkpoint(db, name);
  } else if (frames >= kWakeFrames) {
    self->wake_.notify_one();
  }
  return SQLITE_OK;
}

void WalCheckpointer::before_write() {
  std::unique_lock<std::mutex> lock(mu_);
  if (failed_ || log_frames_ <= limit_frames_ || copied_ >= commits_) return;
  ++waits_;
  done_.wait(lock, [&] { return failed_ || copied_ >= commits_; });
}

void WalCheckpointer::run() {
  for (;;) {
    int64_t target;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stop_ || commits_ > copied_; });
      if (stop_) return;
      target = commits_;
    }
    // PASSIVE copies what no reader still needs and returns; SQLITE_BUSY: another connection
    // (a closing one's, another process's) is checkpointing, which serves as well.
    int rc = sqlite3_wal_checkpoint_v2(db_, "main", SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    std::lock_guard<std::mutex> lock(mu_);
    if (rc != SQLITE_OK && rc != SQLITE_BUSY) {
      log::warn("store", std::string("checkpointing in the writer's thread from now on: ") +
                             sqlite3_errmsg(db_));
      failed_ = true;
      done_.notify_all();
      return;
    }
    copied_ = target;
    ++checkpoints_;
    done_.notify_all();
  }
}

int64_t WalCheckpointer::checkpoints() const {
  std::lock_guard<std::mutex> lock(mu_);
  return checkpoints_;
}

int64_t WalCheckpointer::waits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return waits_;
}

int WalCheckpointer::log_frames() const {
  std::lock_guard<std::mutex> lock(mu_);
  return log_frames_;
}

}  // namespace pf
