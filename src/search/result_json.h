// The one JSON shape of search results, shared by `pilotfish search --json` and GET /v1/search:
// {"results": [{path, startLine, endLine, chunkType, functionName, className, symbol,
// headingPath, language, score, repo, content}]}, paths relative to the indexed root, absent
// names as null.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "search/lexical.h"

namespace pf {

nlohmann::json search_results_json(const std::vector<SearchResult>& results);

// An empty string as null: how every JSON output of pilotfish writes an absent value.
nlohmann::json string_or_null(const std::string& s);

}  // namespace pf
