// Search with both legs: lexical (BM25 over the code-aware index) and vector (the query's
// embedding against the stored chunk embeddings), fused. If the vector leg fails (the embedding
// server is down, the store has no vectors for the model) hybrid search says so in the log and
// answers from the lexical leg alone; a vector-only search reports the failure.
#pragma once

#include <string>
#include <vector>

#include "llm/embeddings.h"
#include "search/lexical.h"

namespace pf {

enum class SearchMode { kLexical, kVector, kHybrid };
enum class FusionMode { kRrf, kWeighted };

struct HybridOptions {
  SearchOptions base;
  SearchMode mode = SearchMode::kHybrid;
  FusionMode fusion = FusionMode::kRrf;
  int leg_limit = 50;  // candidates taken from each leg before fusion
};

// embedder may be null for kLexical (and makes kHybrid lexical-only).
std::vector<SearchResult> hybrid_search(Store& store, const std::string& query,
                                        const HybridOptions& options, Embedder* embedder);

// Embeds every chunk that has no vector from the embedder's model, in batches; commits each
// batch, so an interrupted run keeps what it finished. Returns how many chunks were embedded.
// Throws pf::Error (naming the model) if the model cannot be reached.
int64_t embed_pending_chunks(Store& store, Embedder& embedder, int batch_size = 50);

struct EmbedOutcome {
  int64_t embedded = 0;
  std::string error;  // why embedding stopped early, or empty
};

// What follows an index run: embeds the chunks with no vector from the configured embedding
// model, under the writer lock (nothing when no model is configured). A model that cannot be
// reached leaves the text index complete and searchable; the failure is logged and returned, and
// the next run embeds what is missing.
EmbedOutcome embed_new_chunks(Store& store, const Config& config);

}  // namespace pf
