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
  std::vector<std::string> stems;  // distinct stems of terms, as the index holds them
  std::string fts_match;           // "s1" OR "s2" ...; empty when nothing is searchable
};

AnalyzedQuery analyze_query(std::string_view text);

// "t1" OR "t2" ... over index terms (which hold no '"': the tokenizer drops punctuation).
std::string fts_or_query(const std::vector<std::string>& index_terms);

bool is_stop_word(std::string_view folded_word);

}  // namespace pf
