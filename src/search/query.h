// Query analysis for lexical search: turns a developer's question ("how does the pool pick a
// client?") or an identifier ("getHTTPServer") into a ranked OR query over the code-aware
// tokens, without the English stop words and question words that would match everything.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pf {

struct AnalyzedQuery {
  std::vector<std::string> terms;  // distinct, in first-seen order
  std::vector<std::string> stems;  // distinct stems of terms, as the index holds them; empty
                                   // when nothing is searchable
};

AnalyzedQuery analyze_query(std::string_view text);

bool is_stop_word(std::string_view folded_word);

}  // namespace pf
