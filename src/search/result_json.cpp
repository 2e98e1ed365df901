// Search results as JSON (see result_json.h).
#include "search/result_json.h"

namespace pf {

nlohmann::json string_or_null(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

nlohmann::json search_results_json(const std::vector<SearchResult>& results) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& r : results) {
    const Chunk& c = r.hit.chunk;
    arr.push_back({{"path", c.path},
                   {"startLine", c.start_line},
                   {"endLine", c.end_line},
                   {"chunkType", c.chunk_type},
                   {"functionName", string_or_null(c.function_name)},
                   {"className", string_or_null(c.class_name)},
                   {"symbol", string_or_null(c.symbol)},
                   {"headingPath", string_or_null(c.heading_path)},
                   {"language", c.language},
                   {"score", r.hit.score},
                   {"repo", r.repo_root},
                   {"content", c.content}});
  }
  return nlohmann::json{{"results", arr}};
}

}  // namespace pf
