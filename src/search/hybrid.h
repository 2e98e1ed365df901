// Search with both legs: lexical (BM25 over the code-aware index) and vector (the query's
// embedding against the stored chunk embeddings), fused. If the vector leg fails (the embedding
// server is down, the store has no vectors for the model) hybrid search says so in the log and
// answers from the lexical leg alone; a vector-only search reports the failure.
#pragma once

#include <string>
#include <vector>

#include "core/trace.h"
#include "llm/embeddings.h"
#include "search/lexical.h"

namespace pf {

enum class SearchMode { kLexical, kVector, kHybrid };
enum class FusionMode { kRrf, kWeighted };

struct HybridOptions {
  SearchOptions base;
  SearchMode mode = SearchMode::kHybrid;
  FusionMode fusion = FusionMode::kRrf;
  double vector_weight = 0.7, text_weight = 0.3;  // kWeighted's (fusion.h)
  int leg_limit = 50;  // candidates taken from each leg before fusion
  // Where the legs' and the fusion's spans go (core/trace.h); empty: not traced.
  TraceContext trace;
};

// embedder may be null for kLexical (and makes kHybrid lexical-only).
std::vector<SearchResult> hybrid_search(Store& store, const std::string& query,
                                        const HybridOptions& options, Embedder* embedder);

}  // namespace pf
