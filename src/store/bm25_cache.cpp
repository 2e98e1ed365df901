// The process's shared in-memory rankings and their background rebuilds (see bm25_cache.h).
#include "store/bm25_cache.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>

#include "core/log.h"

namespace pf {
namespace {

using Clock = std::chrono::steady_clock;

struct Entry {
  Bm25Snapshot done;      // the newest complete index
  bool building = false;  // a build for this store runs (in the background, or a first one)
  bool searched = false;  // a search asked for this store's index before
  Clock::time_point failed{};
};

struct Registry {
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::string, Entry> entries;  // by store key; a std::map keeps references valid
  int background = 0;                    // background builds running
  std::function<void(const std::string&)> hook;
};

// Never destroyed: a background build may still be running while the process exits.
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

void log_built(const Bm25Snapshot& s, Clock::time_point t0) {
  if (!log::enabled(log::Level::kDebug)) return;
  double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  log::debug("store", s.index ? "ranking " + std::to_string(s.index->rows()) + " chunks (" +
                                    std::to_string(s.index->rows_reused()) +
                                    " carried over) in memory at generation " +
                                    std::to_string(s.generation) + " (" +
                                    std::to_string(s.index->memory_bytes() >> 10) +
                                    " KiB, built in " + std::to_string(static_cast<int>(ms)) +
                                    " ms)"
                              : std::string("store too large to rank in memory"));
}

// Keeps s unless a newer one was kept meanwhile; wakes whoever waits.
void settle(Registry& r, Entry& e, const Bm25Snapshot* s) {
  e.building = false;
  if (s && s->generation >= e.done.generation) e.done = *s;
  r.cv.notify_all();
}

void build_in_background(std::string key, Bm25Build build,
                         std::shared_ptr<const Bm25Index> previous) {
  Registry& r = registry();
  std::function<void(const std::string&)> hook;
  {
    std::lock_guard lock(r.mu);
    hook = r.hook;
  }
  if (hook) hook(key);
  auto t0 = Clock::now();
  Bm25Snapshot s;
  bool ok = true;
  try {
    s = build(previous);
    log_built(s, t0);
  } catch (const std::exception& e) {
    ok = false;
    log::warn("store", std::string("rebuilding the in-memory ranking: ") + e.what() +
                           "; searches keep the previous one");
  }
  previous.reset();  // the old index goes now, not when the next search comes
  std::lock_guard lock(r.mu);
  Entry& e = r.entries[key];
  if (!ok) e.failed = Clock::now();
  settle(r, e, ok ? &s : nullptr);
  --r.background;
  r.cv.notify_all();
}

// Starts a background build of e from previous, unless one runs or one failed under a second
// ago. r.mu is held.
void start_background_build(Registry& r, Entry& e, const std::string& store_key, Bm25Build build,
                            std::shared_ptr<const Bm25Index> previous) {
  if (e.building || Clock::now() - e.failed < std::chrono::seconds(1)) return;
  e.building = true;
  ++r.background;
  try {
    std::thread(build_in_background, store_key, std::move(build), std::move(previous)).detach();
  } catch (const std::system_error& err) {  // no thread to be had: try again later
    --r.background;
    e.failed = Clock::now();
    settle(r, e, nullptr);
    log::warn("store", std::string("cannot start a rebuild of the in-memory ranking: ") +
                           err.what());
  }
}

}  // namespace

Bm25Snapshot shared_bm25_index(const std::string& store_key, int64_t generation,
                               Bm25Build build, FirstBuild first) {
  Registry& r = registry();
  std::unique_lock lock(r.mu);
  Entry& e = r.entries[store_key];
  if (first == FirstBuild::kInBackgroundFromTheSecondSearch && e.done.generation < 0) {
    if (e.searched) start_background_build(r, e, store_key, std::move(build), nullptr);
    e.searched = true;
    return e.done;
  }
  r.cv.wait(lock, [&] { return e.done.generation >= 0 || !e.building; });
  if (e.done.generation < 0) {
    // None yet in this process: nothing older to serve, so this search makes it.
    e.building = true;
    lock.unlock();
    auto t0 = Clock::now();
    Bm25Snapshot s;
    try {
      s = build(nullptr);
      log_built(s, t0);
    } catch (...) {
      lock.lock();
      settle(r, e, nullptr);
      throw;
    }
    lock.lock();
    settle(r, e, &s);
    return s;
  }
  if (e.done.generation < generation)
    start_background_build(r, e, store_key, std::move(build), e.done.index);
  return e.done;
}

void set_bm25_build_hook(std::function<void(const std::string& store_key)> hook) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  r.hook = std::move(hook);
}

void wait_for_bm25_builds() {
  Registry& r = registry();
  std::unique_lock lock(r.mu);
  r.cv.wait(lock, [&] { return r.background == 0; });
}

}  // namespace pf
