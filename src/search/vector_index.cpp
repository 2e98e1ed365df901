// Exact cosine scan with a bounded heap for the top k.
#include "search/vector_index.h"

#include <algorithm>
#include <cmath>
#include <queue>

#include "core/error.h"

namespace pf {
namespace {

void normalise(float* v, int dim) {
  double norm = 0;
  for (int i = 0; i < dim; ++i) norm += double(v[i]) * v[i];
  if (norm <= 0) return;
  float inv = static_cast<float>(1.0 / std::sqrt(norm));
  for (int i = 0; i < dim; ++i) v[i] *= inv;
}

// Eight independent partial sums: a float reduction in one accumulator must be added in order,
// which keeps the compiler from vectorising it (short of -ffast-math); eight lanes it can put
// in SIMD registers as they are. The sum order is fixed, so results are deterministic.
float dot(const float* a, const float* b, int dim) {
  float lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int i = 0;
  for (; i + 8 <= dim; i += 8)
    for (int j = 0; j < 8; ++j) lanes[j] += a[i + j] * b[i + j];
  float s = ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) +
            ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
  for (; i < dim; ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

VectorIndex::VectorIndex(EmbeddingMatrix m)
    : dim_(m.dim), rowids_(std::move(m.rowids)), unit_(std::move(m.values)) {
  for (size_t r = 0; r < rowids_.size(); ++r)
    normalise(&unit_[r * static_cast<size_t>(dim_)], dim_);
}

std::vector<VectorHit> VectorIndex::search(const std::vector<float>& query, size_t k) const {
  if (rowids_.empty() || k == 0) return {};
  if (static_cast<int>(query.size()) != dim_)
    throw Error("the query vector has " + std::to_string(query.size()) +
                " dimensions but the index has " + std::to_string(dim_) +
                "; re-embed the store with the configured embedding model");
  std::vector<float> q = query;
  normalise(q.data(), dim_);
  // Worst of the current best k on top: (cosine, rowid) ordered so that lower cosine, then
  // higher rowid, is "worse".
  auto worse = [](const VectorHit& a, const VectorHit& b) {
    return a.cosine != b.cosine ? a.cosine > b.cosine : a.rowid < b.rowid;
  };
  std::priority_queue<VectorHit, std::vector<VectorHit>, decltype(worse)> best(worse);
  for (size_t r = 0; r < rowids_.size(); ++r) {
    VectorHit h{rowids_[r], dot(&unit_[r * static_cast<size_t>(dim_)], q.data(), dim_)};
    if (best.size() < k) {
      best.push(h);
    } else if (worse(h, best.top())) {
      best.pop();
      best.push(h);
    }
  }
  std::vector<VectorHit> out;
  while (!best.empty()) {
    out.push_back(best.top());
    best.pop();
  }
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace pf
