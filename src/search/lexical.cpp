// Lexical search over the store: analyse, over-fetch, cap per file, order deterministically.
#include "search/lexical.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "core/log.h"
#include "search/query.h"

namespace pf {

std::vector<StoredChunk> lexical_candidates(Store& store, const std::string& text,
                                            const SearchOptions& opt, int fetch) {
  AnalyzedQuery q = analyze_query(text);
  if (q.stems.empty() || fetch <= 0) return {};
  LexicalQuery lq = opt.weights;
  lq.repo_id = opt.repo_id;
  lq.terms = q.stems;
  lq.match_budget = opt.match_budget;
  lq.limit = fetch;
  lq.with_content = false;  // select_results reads the content of the few it keeps
  std::vector<StoredChunk> hits = store.lexical_search(lq);
  std::stable_sort(hits.begin(), hits.end(), [](const StoredChunk& a, const StoredChunk& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.chunk.path != b.chunk.path) return a.chunk.path < b.chunk.path;
    return a.chunk.start_line < b.chunk.start_line;
  });
  if (log::enabled(log::Level::kDebug))
    log::debug("search", "query \"" + text + "\" -> " + std::to_string(lq.terms.size()) + " terms: " +
                             std::to_string(hits.size()) + " candidates");
  return hits;
}

int candidates_to_fetch(const SearchOptions& opt) {
  // Over-fetch so that the per-file cap still leaves `limit` results.
  return std::max(opt.limit * (opt.per_file_cap > 0 ? 6 : 1), 50);
}

std::vector<SearchResult> select_results(Store& store, std::vector<StoredChunk> ranked,
                                         const SearchOptions& opt) {
  std::vector<SearchResult> out;
  std::map<std::pair<int64_t, std::string>, int> per_file;
  std::unordered_map<int64_t, std::string> roots;
  for (StoredChunk& h : ranked) {
    if (static_cast<int>(out.size()) >= opt.limit) break;
    int& n = per_file[{h.repo_id, h.chunk.path}];
    if (opt.per_file_cap > 0 && n >= opt.per_file_cap) continue;
    ++n;
    auto it = roots.find(h.repo_id);
    if (it == roots.end()) it = roots.emplace(h.repo_id, store.repository_root(h.repo_id)).first;
    out.push_back(SearchResult{it->second, std::move(h)});
  }
  // The content of what is kept, and of nothing else.
  std::vector<int64_t> partial;
  for (const SearchResult& r : out)
    if (r.hit.partial) partial.push_back(r.hit.rowid);
  if (!partial.empty()) {
    std::vector<StoredChunk> full = store.chunks_by_rowid(partial);
    size_t f = 0;
    for (SearchResult& r : out) {
      if (!r.hit.partial || f >= full.size() || full[f].rowid != r.hit.rowid) continue;
      r.hit.chunk.content = std::move(full[f++].chunk.content);
      r.hit.partial = false;
    }
    // A chunk deleted since it was ranked (a re-index committed in between) is left out.
    std::erase_if(out, [](const SearchResult& r) { return r.hit.partial; });
  }
  return out;
}

std::vector<SearchResult> lexical_search(Store& store, const std::string& text,
                                         const SearchOptions& opt) {
  if (opt.limit <= 0) return {};
  return select_results(store, lexical_candidates(store, text, opt, candidates_to_fetch(opt)), opt);
}

}  // namespace pf
