// Internal to search: an approximate nearest-neighbour graph (HNSW, Debian's header-only hnswlib)
// over unit vectors labelled by chunk rowid, for vector search above the size where the exact
// scan gets slow (vector_index.h). Kept in a file beside the store, so a restart loads it instead
// of building it, and brought up to date incrementally: new rows are added, rows that are gone are
// marked deleted, and the graph is rebuilt when a fifth of it is deleted.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pf {

// Measured on 341k GloVe vectors (docs/BENCHMARKS.md): m 24 and ef_search 256 give recall@10
// 0.96 at 0.55 ms a query, against 4.7 ms for the exact scan.
struct AnnOptions {
  int m = 24;                 // links per node (memory: the vector plus about 2 * m * 4 bytes)
  int ef_construction = 100;  // candidates while building
  int ef_search = 256;        // candidates while searching (recall against latency)
  // false (searches): never build a graph or rebuild one, which takes minutes on a large store;
  // only load one and add or delete up to max_search_changes rows. The index run builds.
  bool may_build = true;
  size_t max_search_changes = 5000;
};

class AnnGraph {
 public:
  ~AnnGraph();
  AnnGraph(const AnnGraph&) = delete;
  AnnGraph& operator=(const AnnGraph&) = delete;

  // A graph holding exactly these rows (vectors: rowids.size() x dim, each of norm 1): the one
  // in `file` brought up to date when it is there and readable, else a new one; written back to
  // `file` when it changed (unless file is empty). A file that cannot be read or written is
  // logged and rebuilt or left alone; only running out of memory throws. Null when
  // options.may_build is false and only building would do.
  static std::unique_ptr<AnnGraph> open(const std::string& file, int dim,
                                        const std::vector<int64_t>& rowids,
                                        const std::vector<float>& vectors,
                                        const AnnOptions& options);

  struct Hit {
    int64_t rowid;
    float cosine;
  };
  // About the k nearest rows to the unit vector query, best first. Thread-safe.
  std::vector<Hit> search(const float* query, size_t k) const;

  // Candidates per search from now on; not while another thread searches (benchmarks sweep it).
  void set_ef(int ef);

  size_t size() const;
  size_t memory_bytes() const;
  // What open() did: 0 built anew, 1 loaded as it was, 2 loaded and updated.
  int how_opened() const { return how_opened_; }

 private:
  AnnGraph() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int how_opened_ = 0;
};

}  // namespace pf
