// Indexer pipeline: the walker's list is split into unchanged files and work; worker threads
// read, classify, hash and chunk; the calling thread is the only writer and commits in batches.
#include "index/indexer.h"

#include <algorithm>
#include <atomic>
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
    for (const Chunk& c : r.chunks) n += sizeof(Chunk) + c.content.size();
    return n;
  }
  std::mutex mu_;
  std::condition_variable not_full_, not_empty_;
  std::deque<Result> items_;
  size_t held_bytes_ = 0;
  size_t capacity_bytes_;
};

Result process(const Job& job, const std::string& root, const ChunkLimits& limits, bool force,
               const ContentCompressor* compressor) {
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
  if (compressor)
    for (Chunk& c : r.chunks) c.compressed = compressor->compress(&c.content);
  r.kind = Result::kReplace;
  return r;
}

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
  store.begin_batch();
  int64_t repo = store.ensure_repository(root);
  std::string version = store.chunker_version(repo);
  bool force = version != kChunkerVersion;
  if (version.empty() && !store.has_chunks(repo)) {
    // A first run: every chunk will be this chunker's, so say so now; a kill midway then
    // leaves files the next run keeps, where an unknown version would re-chunk them all.
    store.set_chunker_version(repo, kChunkerVersion);
    force = false;
  }
  store.commit_batch();
  std::vector<FileRecord> known = store.list_files(repo);
  auto by_path = [](const FileRecord& a, const FileRecord& b) { return a.path < b.path; };
  if (!std::is_sorted(known.begin(), known.end(), by_path))  // the store's contract; O(n) to check
    std::sort(known.begin(), known.end(), by_path);
  WalkResult walk = walking.get();
  IndexReport report;
  report.root = walk.root;
  report.skipped = walk.skipped;
  report.files_seen = static_cast<int64_t>(walk.files.size());
  if (force && !known.empty()) log::info("index", "chunker changed: re-chunking every file");

  // Both lists are sorted by path: one merge pairs each walked file with its record.
  std::vector<Job> jobs;
  std::vector<char> keep(known.size(), 0);  // known[i]'s stored state stays valid
  size_t ki = 0;
  for (const WalkEntry& e : walk.files) {
    while (ki < known.size() && known[ki].path < e.rel) ++ki;
    const FileRecord* k = ki < known.size() && known[ki].path == e.rel ? &known[ki] : nullptr;
    if (!force && k && k->size == e.size && k->mtime_ns == e.mtime_ns && k->fallback.empty()) {
      ++report.unchanged;
      keep[ki] = 1;
      continue;
    }
    jobs.push_back(Job{&e, k});
  }

  std::vector<const WalkEntry*> to_index;
  to_index.reserve(jobs.size());
  for (const Job& j : jobs) to_index.push_back(j.entry);
  std::unique_ptr<ContentCompressor> compressor =
      content_compressor(store, repo, walk.root, to_index, opt);
  IndexProgress progress;
  progress.files_total = static_cast<int64_t>(jobs.size());
  ResultQueue queue(size_t{64} << 20);
  std::atomic<size_t> next{0};
  int threads = opt.threads > 0
                    ? opt.threads
                    : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  threads = std::min<int>(threads, std::max<size_t>(1, jobs.size()));
  std::vector<std::thread> workers;
  std::atomic<int> running{0};
  if (!jobs.empty()) {
    running = threads;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&] {
        for (size_t i; (i = next.fetch_add(1)) < jobs.size();)
          queue.push(process(jobs[i], walk.root, opt.limits, force, compressor.get()));
        --running;
      });
    }
  }

  // The writer: batches of files per transaction, committed by count or by time so that
  // searches see progress and a kill loses at most one batch.
  constexpr int kBatchFiles = 500;
  constexpr auto kBatchTime = std::chrono::milliseconds(500);
  int in_batch = 0;
  auto batch_started = Clock::now();
  auto last_progress = Clock::now() - std::chrono::seconds(1);
  try {
    for (size_t done = 0; done < jobs.size();) {
      auto item = queue.pop(std::chrono::milliseconds(100));
      if (item) {
        Result& r = *item;
        if (in_batch == 0) {
          store.begin_batch();
          batch_started = Clock::now();
        }
        ++in_batch;
        const FileRecord* was = r.job->known;
        switch (r.kind) {
          case Result::kReplace:
            store.replace_file(repo, r.record, r.chunks);
            if (was) keep[static_cast<size_t>(was - known.data())] = 1;
            ++report.indexed;
            report.chunks_written += static_cast<int64_t>(r.chunks.size());
            report.bytes_indexed += r.record.size;
            if (!r.record.fallback.empty()) ++report.fallbacks;
            progress.chunks += static_cast<int64_t>(r.chunks.size());
            break;
          case Result::kTouch:
            store.touch_file(repo, r.record);
            if (was) keep[static_cast<size_t>(was - known.data())] = 1;
            ++report.unchanged;
            break;
          case Result::kSkip:
            ++report.skipped[static_cast<size_t>(r.reason)];
            break;
        }
        progress.bytes += r.job->entry->size;
        ++done;
        progress.files_done = static_cast<int64_t>(done);
      }
      if (in_batch > 0 && (in_batch >= kBatchFiles || Clock::now() - batch_started >= kBatchTime ||
                           progress.files_done == progress.files_total)) {
        store.commit_batch();
        in_batch = 0;
      }
      if (on_progress && Clock::now() - last_progress >= std::chrono::milliseconds(100)) {
        progress.seconds = std::chrono::duration<double>(Clock::now() - started).count();
        on_progress(progress);
        last_progress = Clock::now();
      }
    }
    if (in_batch > 0) store.commit_batch();
  } catch (...) {
    if (in_batch > 0) store.rollback_batch();
    // Stop handing out work, then drain until every worker has pushed its last result, so
    // that none stays blocked on a full queue and the joins return.
    next.store(jobs.size());
    while (running > 0) queue.pop(std::chrono::milliseconds(1));
    for (auto& w : workers) w.join();
    throw;
  }
  for (auto& w : workers) w.join();

  // Files that are gone, newly ignored or now skipped: drop their chunks.
  store.begin_batch();
  for (size_t i = 0; i < known.size(); ++i) {
    if (keep[i]) continue;
    store.remove_file(repo, known[i].path);
    ++report.removed;
  }
  store.mark_indexed(repo, kChunkerVersion, commit);
  report.commit = commit;
  store.commit_batch();

  report.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  if (on_progress) {
    progress.seconds = report.seconds;
    on_progress(progress);
  }
  return report;
}

}  // namespace pf
