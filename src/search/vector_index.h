// Nearest-neighbour search over the stored embeddings of one model, in process: vectors are
// normalised once at load, so cosine similarity is a dot product. Up to kAnnMinVectors rows the
// search is an exact scan over a contiguous matrix (what the compiler vectorises best); above, an
// HNSW graph (ann_graph.h), kept beside the store, answers it approximately (recall@10 and the
// threshold measured in docs/BENCHMARKS.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "search/ann_graph.h"
#include "store/store.h"

namespace pf {

// Stores with at least this many floats of one model's vectors (128 MB: 42k chunks of 768
// dimensions, 336k of 100) search a graph: there the exact scan takes about 4-5 ms on the
// development machine and the graph 0.5 ms at recall@10 0.96 (bench/ann_search.cpp).
inline constexpr size_t kAnnMinFloats = 32u << 20;

struct VectorHit {
  int64_t rowid = 0;
  float cosine = 0;
};

class VectorIndex {
 public:
  VectorIndex() = default;
  // With at least ann_min_floats values (rows x dim), opens the graph (loaded from graph_file and
  // updated, or built when ann.may_build; graph_file empty: not kept) and lets the matrix go:
  // the graph holds the vectors. Without a graph (too small, or nothing to load on a search),
  // the exact scan.
  explicit VectorIndex(EmbeddingMatrix matrix, size_t ann_min_floats = kAnnMinFloats,
                       const std::string& graph_file = "", const AnnOptions& ann = {});

  // The model's vectors in store; the graph file is beside the store
  // (<store>.vectors/<model>.hnsw). for_search: never builds a graph (see AnnOptions).
  static VectorIndex load(Store& store, const std::string& model, bool for_search = true,
                          size_t ann_min_floats = kAnnMinFloats);
  static std::string graph_file(const Store& store, const std::string& model);

  int dim() const { return dim_; }
  size_t size() const { return ann_ ? ann_->size() : rowids_.size(); }
  const AnnGraph* graph() const { return ann_.get(); }

  // The k most similar chunks, best first; ties by rowid (approximate above the threshold).
  // Throws pf::Error if the query's dimension differs from the index's. Thread-safe.
  std::vector<VectorHit> search(const std::vector<float>& query, size_t k) const;

 private:
  int dim_ = 0;
  std::vector<int64_t> rowids_;
  std::vector<float> unit_;  // row-major, each row of norm 1 (or all zeros)
  std::shared_ptr<const AnnGraph> ann_;
};

}  // namespace pf
