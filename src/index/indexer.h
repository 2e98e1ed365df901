// The incremental indexer: walk, decide what changed, chunk changed files on worker threads,
// write each file's chunks atomically through one writer, drop files that disappeared.
//
// Change detection: size+mtime equal to the last run means unchanged without reading the file;
// otherwise the content hash decides (a touched but identical file is not re-chunked). A new
// chunker version re-chunks everything, and a file whose chunker gave up last time (its record's
// fallback) is chunked again in any case. Writes are committed in batches; every batch is a
// transaction, so a kill at any moment leaves the previous state of each file intact, and the
// next run picks up where this one stopped.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include "index/chunker.h"
#include "index/walker.h"
#include "store/store.h"

namespace pf {

// Whether chunk content is stored compressed (store/content_codec.h), where the store can.
enum class ContentCompression {
  kAuto,    // once a repository's run has at least IndexOptions::compress_from_bytes to index
  kAlways,  // from the first run that has enough text to train a dictionary
  kNever,   // text, readable by tools that read the reference table
};

struct IndexOptions {
  std::string root;
  WalkOptions walk;
  ChunkLimits limits;
  int threads = 0;  // 0: one per core
  // A repository with a dictionary keeps compressing (unless kNever); one without gets one
  // trained, from a fixed sample of the run's files, when the mode asks for it.
  ContentCompression compress = ContentCompression::kAuto;
  int64_t compress_from_bytes = int64_t{64} << 20;
};

struct IndexProgress {
  int64_t files_total = 0;  // files that needed reading
  int64_t files_done = 0;
  int64_t chunks = 0;
  int64_t bytes = 0;
  double seconds = 0;
};

struct IndexReport {
  std::string root;
  int64_t files_seen = 0;  // candidate files after name rules
  int64_t indexed = 0;     // (re)chunked and written
  int64_t unchanged = 0;
  int64_t removed = 0;  // files whose chunks were dropped (deleted, now ignored or skipped)
  int64_t chunks_written = 0;
  int64_t fallbacks = 0;  // of the indexed files, chunked in line windows (FileRecord::fallback)
  int64_t bytes_indexed = 0;
  double seconds = 0;
  std::string commit;  // the git commit the root's work tree was at when the run began; or empty
  std::array<int64_t, static_cast<size_t>(SkipReason::kCount)> skipped{};
  int64_t total_skipped() const;
};

using ProgressCallback = std::function<void(const IndexProgress&)>;

// Throws pf::BusyError if another indexer holds the store, pf::UsageError for a bad root.
IndexReport index_repository(Store& store, const IndexOptions& options,
                             const ProgressCallback& on_progress = {});

}  // namespace pf
