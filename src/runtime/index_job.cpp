// Background index runs (see index_job.h).
#include "runtime/index_job.h"

#include <chrono>
#include <ctime>

#include "core/error.h"
#include "core/log.h"
#include "index/indexer.h"
#include "search/embed_chunks.h"
#include "search/hybrid.h"

namespace pf {
namespace {

std::string utc_time(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

IndexJob::IndexJob(std::string db_path, std::string root, Config config, RunObserver on_run)
    : db_path_(std::move(db_path)),
      root_(std::move(root)),
      config_(std::move(config)),
      on_run_(std::move(on_run)) {}

IndexJob::~IndexJob() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (scheduler_.joinable()) scheduler_.join();
  if (worker_.joinable()) worker_.join();
}

bool IndexJob::start(const std::string& why) {
  std::lock_guard lock(mu_);
  if (running_ || stopping_) return false;
  running_ = true;
  trigger_ = why;
  started_at_ = utc_time(std::time(nullptr));
  files_done_ = files_total_ = 0;
  if (worker_.joinable()) worker_.join();  // the last run's thread has finished its work
  worker_ = std::thread([this, why] { run(why); });
  return true;
}

bool IndexJob::running() const {
  std::lock_guard lock(mu_);
  return running_;
}

void IndexJob::run(std::string why) {
  log::info("index", "indexing " + root_ + " (" + why + ")");
  auto t0 = std::chrono::steady_clock::now();
  nlohmann::json result = {{"trigger", why}, {"startedAt", started_at_}};
  bool ok = false;
  int64_t chunks = 0;
  // Another indexer (another replica on a shared PostgreSQL store, or a `pilotfish index`) holds
  // the store: wait for it, and run once it is gone. The run is incremental, so after a finished
  // run it costs a walk; after one that died half-way, it does the rest.
  for (bool told = false;; told = true) {
    try {
      run_once(result, chunks);
      ok = true;
      break;
    } catch (const BusyError& e) {
      if (!told) log::info("index", std::string(e.what()) + "; this run starts when it is done");
      result["waitedForAnotherIndexer"] = true;
      std::unique_lock lock(mu_);
      waiting_ = true;
      if (wake_.wait_for(lock, std::chrono::seconds(2), [&] { return stopping_; })) {
        result["error"] = "stopped while another indexer held the store";
        break;
      }
    } catch (const std::exception& e) {
      result["error"] = e.what();
      log::error("index", std::string("indexing failed: ") + e.what());
      break;
    }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  result["ok"] = ok;
  result["seconds"] = seconds;
  if (on_run_) on_run_(ok, seconds, chunks);
  if (ok) log::info("index", "indexed " + root_ + " in " + std::to_string(seconds) + " s");
  std::lock_guard lock(mu_);
  last_ = result;
  running_ = false;
  waiting_ = false;
}

void IndexJob::run_once(nlohmann::json& result, int64_t& chunks) {
  {
    {
      std::lock_guard lock(mu_);
      waiting_ = false;
    }
    if (git_) {
      GitSync sync = sync_checkout(*git_, root_, git_config(config_));
      result["git"] = {{"url", git_->url}, {"before", sync.before}, {"commit", sync.commit}};
      if (!sync.warning.empty()) {
        result["git"]["warning"] = sync.warning;
        log::warn("index", root_ + " was not brought up to date: " + sync.warning);
      }
    }
    auto store = open_store(db_path_, OpenMode::kReadWrite);
    IndexOptions options;
    options.root = root_;
    IndexReport r = index_repository(*store, options, [this](const IndexProgress& p) {
      std::lock_guard lock(mu_);
      files_done_ = p.files_done;
      files_total_ = p.files_total;
    });
    chunks = r.chunks_written;
    result.update({{"filesSeen", r.files_seen},
                   {"indexed", r.indexed},
                   {"unchanged", r.unchanged},
                   {"removed", r.removed},
                   {"chunks", r.chunks_written},
                   {"commit", r.commit.empty() ? nlohmann::json() : nlohmann::json(r.commit)}});
    if (!config_.defaults.embedding_model.empty()) {
      EmbedOutcome embedding = embed_new_chunks(*store, config_);
      result["embedded"] = embedding.embedded;
      result["embeddingFailed"] = embedding.failed;
      if (!embedding.error.empty()) result["embeddingError"] = embedding.error;
    }
  }
}

nlohmann::json IndexJob::status() const {
  std::lock_guard lock(mu_);
  nlohmann::json j = {{"running", running_}, {"root", root_}};
  if (running_)
    j["current"] = {{"trigger", trigger_},
                    {"startedAt", started_at_},
                    {"filesDone", files_done_},
                    {"filesTotal", files_total_},
                    {"waitingForAnotherIndexer", waiting_}};
  j["last"] = last_.is_null() ? nlohmann::json(nullptr) : last_;
  j["nextScheduledRun"] = next_scheduled_ ? nlohmann::json(utc_time(*next_scheduled_)) : nullptr;
  return j;
}

void IndexJob::schedule(const CronSchedule& schedule) {
  if (scheduler_.joinable()) return;  // one schedule per job (serve and the bridge may share it)
  scheduler_ = std::thread([this, schedule] { scheduler_loop(schedule); });
}

void IndexJob::fetch_before_each_run(GitSource source) {
  std::lock_guard lock(mu_);
  git_ = std::move(source);
}

void IndexJob::scheduler_loop(CronSchedule schedule) {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    std::time_t next = schedule.next_after(std::time(nullptr));
    next_scheduled_ = next;
    auto when = std::chrono::system_clock::from_time_t(next);
    // Woken early only to stop; a clock change just means a fresh look at the time.
    wake_.wait_until(lock, when, [&] { return stopping_; });
    if (stopping_) break;
    if (std::chrono::system_clock::now() < when) continue;
    lock.unlock();
    if (!start("schedule")) log::warn("index", "scheduled run skipped: a run is in progress");
    lock.lock();
  }
}

}  // namespace pf
