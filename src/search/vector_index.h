// Exact nearest-neighbour search over the stored embeddings of one model, in process: vectors
// are normalised once at load, so cosine similarity is a dot product, and a scan over a
// contiguous matrix is what the compiler vectorises best. (At 100k chunks and 768 dimensions a
// scan reads 300 MB; an ANN index pays off above that and is measured against this one.)
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "store/store.h"

namespace pf {

struct VectorHit {
  int64_t rowid = 0;
  float cosine = 0;
};

class VectorIndex {
 public:
  VectorIndex() = default;
  explicit VectorIndex(EmbeddingMatrix matrix);

  static VectorIndex load(Store& store, const std::string& model) {
    return VectorIndex(store.load_embeddings(model));
  }

  int dim() const { return dim_; }
  size_t size() const { return rowids_.size(); }

  // The k most similar chunks, best first; ties by rowid. Throws pf::Error if the query's
  // dimension differs from the index's.
  std::vector<VectorHit> search(const std::vector<float>& query, size_t k) const;

 private:
  int dim_ = 0;
  std::vector<int64_t> rowids_;
  std::vector<float> unit_;  // row-major, each row of norm 1 (or all zeros)
};

}  // namespace pf
