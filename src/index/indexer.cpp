// Indexer pipeline: the walker's list is split into unchanged files and work; worker threads
// read, classify, hash and chunk at a lower priority; the calling thread is the only writer and
// commits in batches.
#include "index/indexer.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/log.h"
#include "index/content_compression.h"
#include "index/git_source.h"

namespace pf {
namespace {

using Clock = std::chrono::steady_clock;

// The workers run at nice 10, below the writer: on a busy machine the writer, the run's critical
// path, then has a core whenever it can run. On the Linux tree with two cores it waited 6.3-7.4 s
// of a 42-48 s run for one while the workers chunked ahead; 1.8 s with them at nice 10 (nice 5:
// 2.4 s). The nice value of a Linux thread is its own; an error (no such thread) changes nothing.
void lower_this_threads_priority() {
  constexpr int kWorkerNice = 10;
  errno = 0;
  int now = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
  if (errno == 0 && now < kWorkerNice)
    setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kWorkerNice);
}

struct Job {
  const WalkEntry* entry;
  const FileRecord* known;  // null if new
};

struct Result {
  const Job* job;
  enum Kind { kReplace, kTouch, kSkip } kind;
  SkipReason reason = SkipReason::kNone;
  FileRecord record;
  std::vector<Chunk> chunks;
};

// Bounded by the bytes it holds, not by a count, so that fast workers cannot pile up chunks faster
// than SQLite writes them, yet keep chunking while the writer is busy committing a batch (a
// 128-file cap stalled them there: 11.4 s against 10.1 s for a full index of the benchmark corpus).
class ResultQueue {
 public:
  explicit ResultQueue(size_t capacity_bytes) : capacity_bytes_(capacity_bytes) {}
  void push(Result r) {
    size_t bytes = result_bytes(r);
    std::unique_lock<std::mutex> lock(mu_);
    // An item larger than the whole capacity still goes through once the queue is empty.
    not_full_.wait(lock, [&] { return items_.empty() || held_bytes_ + bytes <= capacity_bytes_; });
    held_bytes_ += bytes;
    items_.push_back(std::move(r));
    not_empty_.notify_one();
  }
  // Waits up to timeout; returns nullopt on timeout.
  std::optional<Result> pop(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!not_empty_.wait_for(lock, timeout, [&] { return !items_.empty(); })) return std::nullopt;
    Result r = std::move(items_.front());
    items_.pop_front();
    held_bytes_ -= result_bytes(r);
    not_full_.notify_all();
    return r;
  }

 private:
  static size_t result_bytes(const Result& r) {
    size_t n = sizeof(Result);
    for (const Chunk& c : r.chunks) n += sizeof(Chunk) + c.content.size() + c.text_tokens.size();
    return n;
  }
  std::mutex mu_;
  std::condition_variable not_full_, not_empty_;
  std::deque<Result> items_;
  size_t held_bytes_ = 0;
  size_t capacity_bytes_;
};

// Reads and chunks one file, and gives each chunk the text tokens the store takes
// (Store::text_tokens) and its compressed content where the store has a dictionary.
Result process(const Job& job, const std::string& root, const ChunkLimits& limits, bool force,
               const Store& store, const ContentCompressor* compressor) {
  Result r{&job, Result::kSkip, SkipReason::kNone, {}, {}};
  const WalkEntry& e = *job.entry;
  std::string content;
  try {
    content = read_file(root + "/" + e.rel);
  } catch (const Error& err) {
    log::warn("index", err.what());
    r.reason = SkipReason::kUnreadable;
    return r;
  }
  std::string hash = hash_hex(content);
  r.record = FileRecord{e.rel, e.size, e.mtime_ns, hash, detect_language(e.rel)};
  // A file whose chunker gave up last time is chunked again even when its content is the same.
  bool retry = job.known && !job.known->fallback.empty();
  if (!force && !retry && job.known && job.known->content_hash == hash) {
    r.kind = Result::kTouch;
    return r;
  }
  r.reason = classify_content(&content);
  if (r.reason != SkipReason::kNone) return r;
  r.chunks = chunk_file(e.rel, r.record.language, content, limits, &r.record.fallback);
  for (Chunk& c : r.chunks) c.text_tokens = store.text_tokens(c, c.content);
  if (compressor)
    for (Chunk& c : r.chunks) c.compressed = compressor->compress(&c.content);
  r.kind = Result::kReplace;
  return r;
}

// Opens the run on root's repository in one batch and returns its id; *force: every file is
// chunked again (the chunker's version changed).
int64_t open_repository(Store& store, const std::string& root, bool* force) {
  store.begin_batch();
  int64_t repo = store.ensure_repository(root);
  std::string version = store.chunker_version(repo);
  *force = version != kChunkerVersion;
  if (version.empty() && !store.has_chunks(repo)) {
    // A first run: every chunk will be this chunker's, so say so now; a kill midway then
    // leaves files the next run keeps, where an unknown version would re-chunk them all.
    store.set_chunker_version(repo, kChunkerVersion);
    *force = false;
  }
  store.commit_batch();
  return repo;
}

// One index run after the walk: the files to read, the workers reading them, the one writer.
// Not thread-safe but for the queue the workers share with the writer.
class IndexRun {
 public:
  IndexRun(Store& store, int64_t repo, const IndexOptions& opt, bool force, WalkResult walk,
           std::vector<FileRecord> known)
      : store_(store), repo_(repo), opt_(opt), force_(force), walk_(std::move(walk)),
        known_(std::move(known)), keep_(known_.size(), 0) {
    report_.root = walk_.root;
    report_.skipped = walk_.skipped;
    report_.files_seen = static_cast<int64_t>(walk_.files.size());
  }

  // Pairs each walked file with its record (both lists are sorted by path: one merge): the
  // unchanged are kept, the others become jobs.
  void plan() {
    size_t ki = 0;
    for (const WalkEntry& e : walk_.files) {
      while (ki < known_.size() && known_[ki].path < e.rel) ++ki;
      const FileRecord* k = ki < known_.size() && known_[ki].path == e.rel ? &known_[ki] : nullptr;
      if (!force_ && k && k->size == e.size && k->mtime_ns == e.mtime_ns && k->fallback.empty()) {
        ++report_.unchanged;
        keep_[ki] = 1;
        continue;
      }
      jobs_.push_back(Job{&e, k});
    }
    progress_.files_total = static_cast<int64_t>(jobs_.size());
  }

  // Chunks the jobs on worker threads and writes their results; on an error, stops the
  // workers, joins them and rethrows (the batch in progress rolled back).
  void chunk_and_write(Clock::time_point started, const ProgressCallback& on_progress) {
    std::vector<const WalkEntry*> to_index;
    to_index.reserve(jobs_.size());
    for (const Job& j : jobs_) to_index.push_back(j.entry);
    compressor_ = content_compressor(store_, repo_, walk_.root, to_index, opt_);
    try {
      start_workers();
      write(started, on_progress);
    } catch (...) {
      // Stop handing out work, then drain until every worker has pushed its last result, so
      // that none stays blocked on a full queue and the joins return.
      next_.store(jobs_.size());
      while (running_ > 0) queue_.pop(std::chrono::milliseconds(1));
      for (auto& w : workers_) w.join();
      throw;
    }
    for (auto& w : workers_) w.join();
  }

  // Drops the files that are gone, newly ignored or now skipped, and records the run.
  void finish(const std::string& commit) {
    store_.begin_batch();
    for (size_t i = 0; i < known_.size(); ++i) {
      if (keep_[i]) continue;
      store_.remove_file(repo_, known_[i].path);
      ++report_.removed;
    }
    store_.mark_indexed(repo_, kChunkerVersion, commit);
    report_.commit = commit;
    store_.commit_batch();
  }

  IndexReport& report() { return report_; }
  IndexProgress& progress() { return progress_; }

 private:
  void start_workers() {
    if (jobs_.empty()) return;
    int threads = opt_.threads > 0
                      ? opt_.threads
                      : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    threads = static_cast<int>(std::min<size_t>(static_cast<size_t>(threads), jobs_.size()));
    for (int t = 0; t < threads; ++t) {
      ++running_;  // counted before it runs, so a drain never misses it
      try {
        workers_.emplace_back([this] {
          lower_this_threads_priority();
          for (size_t i; (i = next_.fetch_add(1)) < jobs_.size();)
            queue_.push(process(jobs_[i], walk_.root, opt_.limits, force_, store_, compressor_.get()));
          --running_;
        });
      } catch (...) {
        --running_;
        throw;
      }
    }
  }

  // The writer: batches of files per transaction, committed by count or by time so that
  // searches see progress and a kill loses at most one batch.
  void write(Clock::time_point started, const ProgressCallback& on_progress) {
    constexpr int kBatchFiles = 500;
    constexpr auto kBatchTime = std::chrono::milliseconds(500);
    auto batch_started = Clock::now();
    auto last_progress = Clock::now() - std::chrono::seconds(1);
    int in_batch = 0;
    try {
      for (size_t done = 0; done < jobs_.size();) {
        if (auto item = queue_.pop(std::chrono::milliseconds(100))) {
          if (in_batch == 0) {
            store_.begin_batch();
            batch_started = Clock::now();
          }
          ++in_batch;
          apply(*item);
          progress_.files_done = static_cast<int64_t>(++done);
        }
        if (in_batch > 0 &&
            (in_batch >= kBatchFiles || Clock::now() - batch_started >= kBatchTime ||
             progress_.files_done == progress_.files_total)) {
          store_.commit_batch();
          in_batch = 0;
        }
        if (on_progress && Clock::now() - last_progress >= std::chrono::milliseconds(100)) {
          progress_.seconds = std::chrono::duration<double>(Clock::now() - started).count();
          on_progress(progress_);
          last_progress = Clock::now();
        }
      }
      if (in_batch > 0) store_.commit_batch();
    } catch (...) {
      if (in_batch > 0) store_.rollback_batch();
      throw;
    }
  }

  // One file's result, inside the open batch.
  void apply(Result& r) {
    const FileRecord* was = r.job->known;
    switch (r.kind) {
      case Result::kReplace: {
        const auto chunks = static_cast<int64_t>(r.chunks.size());
        store_.replace_file(repo_, r.record, std::move(r.chunks));
        if (was) keep_[static_cast<size_t>(was - known_.data())] = 1;
        ++report_.indexed;
        report_.chunks_written += chunks;
        report_.bytes_indexed += r.record.size;
        if (!r.record.fallback.empty()) ++report_.fallbacks;
        progress_.chunks += chunks;
        break;
      }
      case Result::kTouch:
        store_.touch_file(repo_, r.record);
        if (was) keep_[static_cast<size_t>(was - known_.data())] = 1;
        ++report_.unchanged;
        break;
      case Result::kSkip:
        ++report_.skipped[static_cast<size_t>(r.reason)];
        break;
    }
    progress_.bytes += r.job->entry->size;
  }

  Store& store_;
  const int64_t repo_;
  const IndexOptions& opt_;
  const bool force_;
  const WalkResult walk_;
  const std::vector<FileRecord> known_;  // sorted by path
  std::vector<char> keep_;               // known_[i]'s stored state stays valid
  std::vector<Job> jobs_;                // point into walk_ and known_
  std::unique_ptr<ContentCompressor> compressor_;
  ResultQueue queue_{size_t{64} << 20};
  std::atomic<size_t> next_{0};
  std::atomic<int> running_{0};
  std::vector<std::thread> workers_;
  IndexReport report_;
  IndexProgress progress_;
};

}  // namespace

int64_t IndexReport::total_skipped() const {
  int64_t t = 0;
  for (auto n : skipped) t += n;
  return t;
}

IndexReport index_repository(Store& store, const IndexOptions& opt,
                             const ProgressCallback& on_progress) {
  auto started = Clock::now();
  auto lock = store.acquire_writer_lock();
  store.refresh_text_index();
  // The walk (system calls, mostly) runs beside the store's reads of what it holds.
  std::string root = resolve_walk_root(opt.root);
  auto walking = std::async(std::launch::async, [&] { return walk_repository(root, opt.walk); });
  std::string commit = git_head(root);  // before the walk reads the files it names
  bool force = false;
  int64_t repo = open_repository(store, root, &force);
  std::vector<FileRecord> known = store.list_files(repo);
  auto by_path = [](const FileRecord& a, const FileRecord& b) { return a.path < b.path; };
  if (!std::is_sorted(known.begin(), known.end(), by_path))  // the store's contract; O(n) to check
    std::sort(known.begin(), known.end(), by_path);
  if (force && !known.empty()) log::info("index", "chunker changed: re-chunking every file");
  IndexRun run(store, repo, opt, force, walking.get(), std::move(known));
  run.plan();
  run.chunk_and_write(started, on_progress);
  run.finish(commit);
  IndexReport report = std::move(run.report());
  report.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  if (on_progress) {
    run.progress().seconds = report.seconds;
    on_progress(run.progress());
  }
  return report;
}

}  // namespace pf
