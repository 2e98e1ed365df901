// Lexical search across shards, ranked as one corpus (see sharded.h).
#include "search/sharded.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "search/query.h"

namespace pf {

std::vector<ShardedResult> sharded_lexical_search(const std::vector<Store*>& shards,
                                                  const std::string& text,
                                                  const SearchOptions& opt) {
  AnalyzedQuery q = analyze_query(text);
  if (opt.limit <= 0 || shards.empty() || q.stems.empty()) return {};
  // Round one: the corpus's statistics, each shard's summed.
  LexicalStats corpus;
  corpus.df.assign(q.stems.size(), 0);
  for (Store* shard : shards) {
    LexicalStats s = shard->lexical_stats(q.stems);
    corpus.rows += s.rows;
    corpus.tokens += s.tokens;
    for (size_t i = 0; i < s.df.size() && i < corpus.df.size(); ++i) corpus.df[i] += s.df[i];
  }
  // Round two: each shard's best under them, merged by score (ties as lexical_candidates).
  LexicalQuery lq = opt.weights;
  lq.terms = q.stems;
  lq.match_budget = opt.match_budget;
  lq.limit = candidates_to_fetch(opt);
  lq.with_content = false;
  lq.stats = corpus;
  std::vector<std::pair<size_t, StoredChunk>> ranked;
  for (size_t i = 0; i < shards.size(); ++i)
    for (StoredChunk& c : shards[i]->lexical_search(lq)) ranked.emplace_back(i, std::move(c));
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (a.second.score != b.second.score) return a.second.score > b.second.score;
    if (a.second.chunk.path != b.second.chunk.path) return a.second.chunk.path < b.second.chunk.path;
    return a.second.chunk.start_line < b.second.chunk.start_line;
  });
  // The per-file cap and the limit over the merged list.
  std::map<std::tuple<size_t, int64_t, std::string>, int> per_file;
  std::vector<std::pair<size_t, StoredChunk>> kept;
  for (auto& [shard, c] : ranked) {
    if (static_cast<int>(kept.size()) >= opt.limit) break;
    int& n = per_file[{shard, c.repo_id, c.chunk.path}];
    if (opt.per_file_cap > 0 && n >= opt.per_file_cap) continue;
    ++n;
    kept.emplace_back(shard, std::move(c));
  }
  // Content and repository roots from each shard, for what was kept only.
  SearchOptions all = opt;
  all.per_file_cap = 0;
  all.limit = static_cast<int>(kept.size());
  std::vector<std::unordered_map<int64_t, SearchResult>> filled(shards.size());
  for (size_t i = 0; i < shards.size(); ++i) {
    std::vector<StoredChunk> mine;
    for (const auto& [shard, c] : kept)
      if (shard == i) mine.push_back(c);
    if (mine.empty()) continue;
    for (SearchResult& r : select_results(*shards[i], std::move(mine), all))
      filled[i].emplace(r.hit.rowid, std::move(r));
  }
  std::vector<ShardedResult> out;
  for (const auto& [shard, c] : kept) {
    auto it = filled[shard].find(c.rowid);
    if (it != filled[shard].end()) out.push_back(ShardedResult{shard, std::move(it->second)});
  }
  return out;
}

}  // namespace pf
