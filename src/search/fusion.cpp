// Rank fusion (see fusion.h).
#include "search/fusion.h"

#include <algorithm>
#include <unordered_map>

namespace pf {
namespace {

// Accumulates scores per id, remembering first appearance for stable ordering of ties.
class Accumulator {
 public:
  void add(int64_t id, double score) {
    auto [it, inserted] = index_.emplace(id, out_.size());
    if (inserted) out_.push_back(FusedId{id, 0});
    out_[it->second].score += score;
  }
  std::vector<FusedId> sorted() {
    std::stable_sort(out_.begin(), out_.end(),
                     [](const FusedId& a, const FusedId& b) { return a.score > b.score; });
    return std::move(out_);
  }

 private:
  std::unordered_map<int64_t, size_t> index_;
  std::vector<FusedId> out_;
};

}  // namespace

std::vector<FusedId> fuse_rrf(const std::vector<RankedId>& vector_leg,
                              const std::vector<RankedId>& text_leg, int k) {
  Accumulator acc;
  for (size_t i = 0; i < vector_leg.size(); ++i)
    acc.add(vector_leg[i].id, 1.0 / (k + static_cast<double>(i + 1)));
  for (size_t i = 0; i < text_leg.size(); ++i)
    acc.add(text_leg[i].id, 1.0 / (k + static_cast<double>(i + 1)));
  return acc.sorted();
}

std::vector<FusedId> fuse_weighted(const std::vector<RankedId>& vector_leg,
                                   const std::vector<RankedId>& text_leg, double vector_weight,
                                   double text_weight) {
  Accumulator acc;
  for (const RankedId& v : vector_leg) acc.add(v.id, vector_weight * v.score);
  double max_text = 0;
  for (const RankedId& t : text_leg) max_text = std::max(max_text, t.score);
  for (const RankedId& t : text_leg)
    acc.add(t.id, max_text > 0 ? text_weight * t.score / max_text : 0);
  return acc.sorted();
}

}  // namespace pf
