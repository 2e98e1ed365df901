// Hybrid retrieval: run the legs, fuse, select (see hybrid.h).
#include "search/hybrid.h"

#include <unordered_map>

#include "core/log.h"
#include "search/fusion.h"
#include "search/vector_cache.h"

namespace pf {
namespace {

std::vector<StoredChunk> vector_candidates(Store& store, const std::string& query,
                                           const HybridOptions& opt, Embedder& embedder) {
  std::shared_ptr<const VectorIndex> shared = shared_vector_index(store, embedder.model_id());
  const VectorIndex& index = *shared;
  if (index.size() == 0)
    throw Error("the store has no embeddings from " + embedder.model_id() +
                "; run `pilotfish index` with that embedding model configured");
  std::vector<float> q = embedder.embed({query}).at(0);
  // With a repository filter, over-fetch: some of the nearest chunks may be elsewhere.
  size_t want = static_cast<size_t>(opt.leg_limit) * (opt.base.repo_id ? 4 : 1);
  std::vector<VectorHit> hits = index.search(q, want);
  std::vector<int64_t> ids;
  for (const auto& h : hits) ids.push_back(h.rowid);
  std::vector<StoredChunk> chunks = store.chunks_by_rowid(ids);
  std::unordered_map<int64_t, float> cosine;
  for (const auto& h : hits) cosine[h.rowid] = h.cosine;
  std::vector<StoredChunk> out;
  for (auto& c : chunks) {
    if (opt.base.repo_id && c.repo_id != *opt.base.repo_id) continue;
    c.score = cosine[c.rowid];
    out.push_back(std::move(c));
    if (static_cast<int>(out.size()) >= opt.leg_limit) break;
  }
  return out;
}

}  // namespace

std::vector<SearchResult> hybrid_search(Store& store, const std::string& query,
                                        const HybridOptions& opt, Embedder* embedder) {
  if (opt.base.limit <= 0) return {};
  SearchMode mode = opt.mode;
  if (mode != SearchMode::kLexical && !embedder) {
    if (mode == SearchMode::kVector)
      throw UsageError("vector search needs an embedding model; configure defaults.embeddingModel");
    mode = SearchMode::kLexical;
  }
  // Spans only under a traced retrieval (a search from the command line is not traced).
  auto span = [&](const char* name) {
    return opt.trace.valid() ? Span(name, &opt.trace) : Span();
  };
  if (mode == SearchMode::kLexical) {
    Span lexical = span("retrieval.lexical");
    std::vector<SearchResult> out = lexical_search(store, query, opt.base);
    lexical.set("pilotfish.results", static_cast<int64_t>(out.size()));
    return out;
  }

  std::vector<StoredChunk> vector_leg;
  Span vector = span("retrieval.vector");
  try {
    vector_leg = vector_candidates(store, query, opt, *embedder);
    vector.set("pilotfish.candidates", static_cast<int64_t>(vector_leg.size()));
    vector.end();
  } catch (const Error& e) {
    vector.fail(e.what());
    vector.end();
    if (mode == SearchMode::kVector) throw;
    log::warn("search",
              std::string("vector search failed, answering from text search only: ") + e.what());
    return lexical_search(store, query, opt.base);
  }
  if (mode == SearchMode::kVector) return select_results(store, std::move(vector_leg), opt.base);

  Span lexical = span("retrieval.lexical");
  std::vector<StoredChunk> text_leg = lexical_candidates(
      store, query, opt.base, std::max(opt.leg_limit, candidates_to_fetch(opt.base)));
  lexical.set("pilotfish.candidates", static_cast<int64_t>(text_leg.size()));
  lexical.end();
  Span fusion = span("retrieval.fusion");
  fusion.set("pilotfish.fusion", opt.fusion == FusionMode::kRrf ? "rrf" : "weighted");
  std::vector<RankedId> v, t;
  for (const auto& c : vector_leg) v.push_back(RankedId{c.rowid, c.score});
  for (const auto& c : text_leg) t.push_back(RankedId{c.rowid, c.score});
  std::vector<FusedId> fused =
      opt.fusion == FusionMode::kRrf ? fuse_rrf(v, t)
                                     : fuse_weighted(v, t, opt.vector_weight, opt.text_weight);
  // A chunk found by both legs keeps the vector leg's row (as the reference does).
  std::unordered_map<int64_t, StoredChunk*> rows;
  for (auto& c : text_leg) rows[c.rowid] = &c;
  for (auto& c : vector_leg) rows[c.rowid] = &c;
  std::vector<StoredChunk> ranked;
  for (const FusedId& f : fused) {
    StoredChunk c = *rows.at(f.id);
    c.score = f.score;
    ranked.push_back(std::move(c));
  }
  return select_results(store, std::move(ranked), opt.base);
}

}  // namespace pf
