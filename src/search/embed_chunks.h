// Giving a store's chunks their vectors: the embedding pass that follows an index run. Chunks go
// to the model through EmbeddingFitter (llm/embedding_fit.h), so one chunk the model will not
// take never stops the others: it is recorded as refused, with the server's reason, and tried
// again by the next run.
#pragma once

#include <cstdint>
#include <string>

#include "core/config.h"
#include "llm/embedding_fit.h"
#include "store/store.h"

namespace pf {

struct EmbedOutcome {
  int64_t embedded = 0;  // chunks that got a vector
  int64_t split = 0;     // of those, chunks sent in several pieces
  int64_t failed = 0;    // chunks the model refused (recorded in the store)
  int64_t requests = 0;  // requests made to the model
  std::string error;     // why embedding stopped early, or empty
};

// Embeds every chunk that has no vector from the embedder's model, `batch_size` chunks at a time
// in rowid order; each batch's vectors and refusals are committed together, so an interrupted run
// keeps what it finished. The caller holds the store's writer lock. When the model itself fails
// (unreachable, credentials, retries used up) the pass stops there: the outcome's error says why
// and what was committed stays. Throws pf::Error only for the store's own failures.
EmbedOutcome embed_pending_chunks(Store& store, Embedder& embedder, int batch_size = 50,
                                  const FitOptions& fit = {});

// What follows an index run: embeds the chunks with no vector from the configured embedding
// model, under the writer lock (nothing when no model is configured). A model that cannot be
// reached leaves the text index complete and searchable; the failure is logged and returned, and
// the next run embeds what is missing.
// Then brings the model's vector graph beside the store up to date (refresh_vector_graph).
EmbedOutcome embed_new_chunks(Store& store, const Config& config);

// Builds or updates the HNSW graph file of model's vectors (search/vector_index.h) when the store
// holds enough of them, so searches load it instead of building it. Failures are logged.
void refresh_vector_graph(Store& store, const std::string& model);

}  // namespace pf
