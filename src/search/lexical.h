// Lexical search: ranked OR-semantics BM25 over the code-aware index, with separately weighted
// fields (symbol names, path, headings, body), a per-file cap so one file cannot fill the
// results, and deterministic ordering of ties.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store/store.h"

namespace pf {

struct SearchOptions {
  int limit = 10;
  int per_file_cap = 2;            // at most this many chunks from one file
  LexicalQuery weights;            // only the w_* fields are used
  std::optional<int64_t> repo_id;  // only this repository; none: every repository
  // Ranking cost grows with the number of chunks that match any term. When the terms together
  // match more than this many chunks, only the rarest terms' chunks are enumerated and the common
  // terms scored on the best of them (LexicalQuery::match_budget); 0: every matching chunk.
  int64_t match_budget = 3000;
};

struct SearchResult {
  std::string repo_root;
  StoredChunk hit;
};

std::vector<SearchResult> lexical_search(Store& store, const std::string& query,
                                         const SearchOptions& options = {});

// The parts of lexical_search, for hybrid search: up to `fetch` ranked candidates (score
// descending, then path and line), how many to fetch for the options, and the final selection
// (per-file cap, limit, repository roots) from any ranked list.
std::vector<StoredChunk> lexical_candidates(Store& store, const std::string& query,
                                            const SearchOptions& options, int fetch);
int candidates_to_fetch(const SearchOptions& options);
std::vector<SearchResult> select_results(Store& store, std::vector<StoredChunk> ranked,
                                         const SearchOptions& options);

}  // namespace pf
