// Re-indexing inside a running server: at start-up when the store is empty, on a cron schedule
// (by default Sundays at 03:00), and when an admin asks. One run at a time, on a thread of its
// own, through its own store connection; searches keep answering from the last committed state
// meanwhile (SQLite WAL; PostgreSQL transactions). While another indexer holds the store
// (another replica of a shared PostgreSQL store), a run waits for it and then runs, so when that
// replica dies half-way this one finishes the job. Each run is incremental, so the weekly one costs what changed, and
// embeds new chunks when an embedding model is configured. Its status says what it is doing and
// how the last run went — the reference answers "indexing_started" and says nothing more. A
// repository given by git URL is fetched before each run.
#pragma once

#include <functional>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "core/config.h"
#include "index/git_source.h"
#include "index/schedule.h"

namespace pf {

class IndexJob {
 public:
  // Told after each run, on the run's thread: whether it succeeded, how long it took and how
  // many chunks it wrote (the server's metrics count runs through it).
  using RunObserver = std::function<void(bool ok, double seconds, int64_t chunks)>;

  IndexJob(std::string db_path, std::string root, Config config, RunObserver on_run = {});
  ~IndexJob();  // waits for a run in progress (a kill is safe too: every batch is a transaction)

  // Starts a run unless one is going (then false). why: "startup", "schedule", "api".
  bool start(const std::string& why);
  bool running() const;
  // {running, root, current: {trigger, startedAt, filesDone, filesTotal,
  //  waitingForAnotherIndexer}, last: {ok, error, seconds, indexed, ...}, nextScheduledRun}
  nlohmann::json status() const;
  // Starts runs at the schedule's times until destroyed; a second call does nothing.
  void schedule(const CronSchedule& schedule);
  // Makes each later run first bring the root, a clone of source, up to date (git fetch; see
  // index/git_source.h); a failed fetch is reported in the run's status and the run goes on.
  // Call before the first start().
  void fetch_before_each_run(GitSource source);
  const std::string& root() const { return root_; }

 private:
  void run(std::string why);
  // One attempt: index and embed, filling result and chunks. Throws BusyError while another
  // indexer holds the store, pf::Error (or std::exception) when the run fails.
  void run_once(nlohmann::json& result, int64_t& chunks);
  void scheduler_loop(CronSchedule schedule);

  std::string db_path_, root_;
  Config config_;
  RunObserver on_run_;
  std::optional<GitSource> git_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool running_ = false;
  bool waiting_ = false;  // the run waits for another indexer's lock
  std::string trigger_;
  std::string started_at_;
  int64_t files_done_ = 0, files_total_ = 0;
  nlohmann::json last_;  // the last finished run
  std::optional<std::time_t> next_scheduled_;
  std::thread worker_, scheduler_;
};

}  // namespace pf
