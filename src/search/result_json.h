// The one JSON shape of search results, shared by `pilotfish search --json` and GET /v1/search:
// {"results": [{path, startLine, endLine, chunkType, functionName, className, symbol,
// headingPath, language, score, repo, content}]}, paths relative to the indexed root, absent
// names as null.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "search/lexical.h"

namespace pf {

nlohmann::json search_results_json(const std::vector<SearchResult>& results);

}  // namespace pf
