// Lexical search over the store: analyse, over-fetch, cap per file, order deterministically.
#include "search/lexical.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "core/log.h"
#include "search/query.h"

namespace pf {

std::vector<SearchResult> lexical_search(Store& store, const std::string& text,
                                         const SearchOptions& opt) {
  std::vector<SearchResult> out;
  AnalyzedQuery q = analyze_query(text);
  if (q.fts_match.empty() || opt.limit <= 0) return out;
  LexicalQuery lq = opt.weights;
  lq.match = q.fts_match;
  // Over-fetch so that the per-file cap still leaves `limit` results.
  lq.limit = std::max(opt.limit * (opt.per_file_cap > 0 ? 6 : 1), 50);
  std::vector<StoredChunk> hits = store.lexical_search(lq);
  std::stable_sort(hits.begin(), hits.end(), [](const StoredChunk& a, const StoredChunk& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.chunk.path != b.chunk.path) return a.chunk.path < b.chunk.path;
    return a.chunk.start_line < b.chunk.start_line;
  });
  std::map<std::pair<int64_t, std::string>, int> per_file;
  std::unordered_map<int64_t, std::string> roots;
  for (StoredChunk& h : hits) {
    if (static_cast<int>(out.size()) >= opt.limit) break;
    int& n = per_file[{h.repo_id, h.chunk.path}];
    if (opt.per_file_cap > 0 && n >= opt.per_file_cap) continue;
    ++n;
    auto it = roots.find(h.repo_id);
    if (it == roots.end()) it = roots.emplace(h.repo_id, store.repository_root(h.repo_id)).first;
    out.push_back(SearchResult{it->second, std::move(h)});
  }
  log::debug("search", "query \"" + text + "\" -> " + q.fts_match + ": " +
                           std::to_string(out.size()) + " results");
  return out;
}

}  // namespace pf
