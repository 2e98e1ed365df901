// Lexical search across several stores as one corpus: the shards of a company's repositories,
// each a store of its own (docs/ARCHITECTURE.md, "Past one machine"). Every shard's statistics
// are summed first (chunk and token counts, each term's chunk count), then each shard ranks its
// own rows with the whole corpus's statistics, so their scores compare and merge by value: the
// results are the ones a single store holding every shard's chunks would give.
#pragma once

#include <string>
#include <vector>

#include "search/lexical.h"
#include "store/store.h"

namespace pf {

// One shard's result: which shard (its index in the list given) and the result itself.
struct ShardedResult {
  size_t shard = 0;
  SearchResult result;
};

// query over every shard (borrowed for the call; each used from this thread only), ranked as
// one corpus; options as lexical_search takes them, but repo_id is ignored (a store's repository
// ids are its own): every repository of every shard. Throws what the stores throw.
std::vector<ShardedResult> sharded_lexical_search(const std::vector<Store*>& shards,
                                                  const std::string& query,
                                                  const SearchOptions& options = {});

}  // namespace pf
