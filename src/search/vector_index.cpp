// Exact cosine scan with a bounded heap for the top k; the HNSW graph above the threshold.
#include "search/vector_index.h"

#include <algorithm>
#include <cctype>
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

VectorIndex::VectorIndex(EmbeddingMatrix m, size_t ann_min_floats, const std::string& graph_file,
                         const AnnOptions& ann)
    : dim_(m.dim), rowids_(std::move(m.rowids)), unit_(std::move(m.values)) {
  for (size_t r = 0; r < rowids_.size(); ++r)
    normalise(&unit_[r * static_cast<size_t>(dim_)], dim_);
  if (dim_ > 0 && unit_.size() >= ann_min_floats) {
    ann_ = AnnGraph::open(graph_file, dim_, rowids_, unit_, ann);
    if (ann_) {
      std::vector<int64_t>().swap(rowids_);
      std::vector<float>().swap(unit_);
    }
  }
}

std::string VectorIndex::graph_file(const Store& store, const std::string& model) {
  std::string name;
  for (char c : model) name += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-') ? c : '_';
  return store.path() + ".vectors/" + name + ".hnsw";
}

VectorIndex VectorIndex::load(Store& store, const std::string& model, bool for_search,
                              size_t ann_min_floats) {
  AnnOptions ann;
  ann.may_build = !for_search;
  return VectorIndex(store.load_embeddings(model), ann_min_floats, graph_file(store, model), ann);
}

std::vector<VectorHit> VectorIndex::search(const std::vector<float>& query, size_t k) const {
  if (size() == 0 || k == 0) return {};
  if (static_cast<int>(query.size()) != dim_)
    throw Error("the query vector has " + std::to_string(query.size()) +
                " dimensions but the index has " + std::to_string(dim_) +
                "; re-embed the store with the configured embedding model");
  std::vector<float> q = query;
  normalise(q.data(), dim_);
  if (ann_) {
    std::vector<VectorHit> out;
    for (const auto& h : ann_->search(q.data(), k)) out.push_back(VectorHit{h.rowid, h.cosine});
    return out;
  }
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
