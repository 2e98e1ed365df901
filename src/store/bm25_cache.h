// Internal to the store: the in-memory rankings (bm25_index.h) of this process's stores, one per
// store, shared by all its connections, and how they follow the store's generation. A search
// takes the last complete index and never waits for a rebuild: the next one is made on a
// background thread, one at a time per store, from the previous one and the rows that changed
// since, and swapped in whole when it is ready.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "store/bm25_index.h"

namespace pf {

// Stores whose text is at most this many bytes are ranked in memory (store/bm25_index.h), by
// both stores; the index takes about 1.4 times the text (measured on fastify: 1.2 MB of text,
// 1.6 MiB of index, built in 25 ms), so the largest take about 45 MiB and a second to build.
inline constexpr int64_t kMaxRankedInMemory = 32ll << 20;

struct Bm25Snapshot {
  std::shared_ptr<const Bm25Index> index;  // null: the store is not ranked in memory
  int64_t generation = -1;                 // the store's generation it matches; -1: none yet
};

// Makes a store's index at its current generation on a connection of its own, in one read
// snapshot, on any thread (never the caller's connection): from previous (the last complete one,
// or null) and the changed rows where it can, from all rows otherwise. Throws pf::Error.
using Bm25Build = std::function<Bm25Snapshot(const std::shared_ptr<const Bm25Index>& previous)>;

// How a process gets its first index of a store.
enum class FirstBuild {
  // The caller builds it (or waits for that build): a store with no other ranking (PostgreSQL).
  kInCaller,
  // Never on a search: the first search gets none (the caller ranks another way), the second
  // starts a background build. A process that searches once (the command line) never pays
  // for an index it would not reuse.
  kInBackgroundFromTheSecondSearch,
};

// The newest complete index of the store identified by store_key (its location and instance id).
// When it is older than generation, a background thread starts making the current one with
// build (unless one runs for this store already, or one failed under a second ago) and the
// caller gets the older one at once. When this process has none for the store yet, `first`
// says who builds it. Thread-safe; throws pf::Error only from a build in the caller.
Bm25Snapshot shared_bm25_index(const std::string& store_key, int64_t generation, Bm25Build build,
                               FirstBuild first = FirstBuild::kInCaller);

// For tests and benchmarks: hook runs on the background thread before each build (it may block,
// holding the build back); wait_for_bm25_builds returns when no background build is running.
void set_bm25_build_hook(std::function<void(const std::string& store_key)> hook);
void wait_for_bm25_builds();

}  // namespace pf
