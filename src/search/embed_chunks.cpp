// The embedding pass over a store's chunks (see embed_chunks.h).
#include "search/embed_chunks.h"

#include "core/log.h"
#include "llm/embeddings.h"
#include "search/vector_index.h"

namespace pf {

EmbedOutcome embed_pending_chunks(Store& store, Embedder& embedder, int batch_size,
                                  const FitOptions& fit) {
  EmbedOutcome out;
  EmbeddingFitter fitter(embedder, fit);
  const std::string& model = embedder.model_id();
  int64_t after = 0;
  for (;;) {
    std::vector<ChunkToEmbed> batch = store.chunks_to_embed(model, batch_size, after);
    if (batch.empty()) break;
    after = batch.back().rowid;
    std::vector<std::string> texts;
    for (const auto& c : batch) texts.push_back(c.text);
    std::vector<FittedEmbedding> fitted;
    try {
      fitted = fitter.embed(texts);
    } catch (const Error& e) {
      out.error = e.what();
      log::error("index", "embedding stopped: " + out.error);
      break;
    }
    std::vector<std::pair<int64_t, std::vector<float>>> rows;
    std::vector<std::pair<int64_t, std::string>> refused;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (fitted[i].vector.empty()) {
        log::warn("index", "embedding model " + model + " refused chunk " +
                               std::to_string(batch[i].rowid) + ": " + fitted[i].error);
        refused.emplace_back(batch[i].rowid, fitted[i].error);
        continue;
      }
      if (fitted[i].pieces > 1) ++out.split;
      rows.emplace_back(batch[i].rowid, std::move(fitted[i].vector));
    }
    store.begin_batch();
    try {
      store.set_embeddings(model, rows);
      store.record_embedding_failures(model, refused);
      store.commit_batch();
    } catch (...) {
      store.rollback_batch();
      throw;
    }
    out.embedded += static_cast<int64_t>(rows.size());
    out.failed += static_cast<int64_t>(refused.size());
  }
  out.requests = fitter.requests();
  return out;
}

EmbedOutcome embed_new_chunks(Store& store, const Config& config) {
  if (config.defaults.embedding_model.empty()) return {};
  // A config that cannot make the embedder, or a store another indexer holds, is the caller's
  // error; only the model's own failures are kept as the outcome.
  auto embedder = make_embedder(config, config.defaults.embedding_model);
  auto lock = store.acquire_writer_lock();
  EmbedOutcome out = embed_pending_chunks(store, *embedder);
  refresh_vector_graph(store, embedder->model_id());
  return out;
}

void refresh_vector_graph(Store& store, const std::string& model) {
  // Without at least kAnnMinFloats / 4096 vectors no dimension reaches the threshold: not even
  // a load is needed.
  auto counts = store.stats().embeddings_by_model;
  auto it = counts.find(model);
  if (it == counts.end() || static_cast<size_t>(it->second) < kAnnMinFloats / 4096) return;
  try {
    VectorIndex index = VectorIndex::load(store, model, /*for_search=*/false);
    if (const AnnGraph* g = index.graph())
      log::info("index", "vector graph of " + model + ": " + std::to_string(g->size()) + " rows, " +
                             std::to_string(g->memory_bytes() >> 20) + " MiB" +
                             (g->how_opened() == 1 ? ", unchanged" : ", written"));
  } catch (const std::exception& e) {
    log::warn("index", std::string("the vector graph was not refreshed: ") + e.what());
  }
}

}  // namespace pf
