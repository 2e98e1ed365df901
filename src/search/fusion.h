// Combining the ranked lists of the lexical and the vector leg into one.
//
// Reciprocal rank fusion: score(d) = sum over lists of 1 / (k + rank(d)), rank from 1, k = 60.
// Weighted (the reference copilot's mode): 0.7 x cosine for vector hits, plus 0.3 x the text
// score divided by the best text score for text hits; a chunk found by both gets both terms.
// Either way the result is ordered by fused score, ties by first appearance (vector list first).
#pragma once

#include <cstdint>
#include <vector>

namespace pf {

struct RankedId {
  int64_t id = 0;
  double score = 0;  // the leg's own score: cosine, or a text score (higher is better)
};

struct FusedId {
  int64_t id = 0;
  double score = 0;
};

std::vector<FusedId> fuse_rrf(const std::vector<RankedId>& vector_leg,
                              const std::vector<RankedId>& text_leg, int k = 60);

std::vector<FusedId> fuse_weighted(const std::vector<RankedId>& vector_leg,
                                   const std::vector<RankedId>& text_leg,
                                   double vector_weight = 0.7, double text_weight = 0.3);

}  // namespace pf
