// Query analysis. Terms come from the same tokenizer the index uses, so "keepAliveTimeout"
// matches the stored whole word and its parts, and "keep alive timeout" matches the parts.
#include "search/query.h"

#include <algorithm>
#include <array>
#include <unordered_set>

#include "store/code_tokenizer.h"
#include "store/stemmer.h"

namespace pf {
namespace {

// English function words plus the words developers wrap questions in ("how", "where", "does").
// Kept small on purpose: words like "default", "error", "request" carry meaning in code.
const std::unordered_set<std::string_view>& stop_words() {
  static const std::unordered_set<std::string_view> words = {
      "a",       "about",   "after",     "all",       "also",     "am",      "an",       "and",
      "any",     "are",     "as",        "at",        "be",       "been",    "before",   "being",
      "but",     "by",      "can",       "could",     "did",      "do",      "does",     "doing",
      "done",    "each",    "else",      "for",       "from",     "get",     "gets",     "had",
      "has",     "have",    "having",    "he",        "her",      "here",    "him",      "his",
      "how",     "i",       "if",        "in",        "into",     "is",      "it",       "its",
      "just",    "me",      "might",     "more",      "most",     "my",      "no",       "not",
      "of",      "on",      "once",      "only",      "or",       "other",   "our",      "out",
      "own",     "same",    "she",       "should",    "so",       "some",    "such",     "than",
      "that",    "the",     "their",     "them",      "then",     "there",   "these",    "they",
      "this",    "those",   "through",   "to",        "too",      "under",   "until",    "up",
      "us",      "very",    "was",       "we",        "were",     "what",    "when",     "where",
      "which",   "while",   "who",       "whom",      "why",      "will",    "with",     "would",
      "you",     "your",    "yours",     "happens",   "happen",   "work",    "works",    "way",
      "want",    "need",    "needs",     "use",       "using",    "used",    "make",     "makes",
      "there's", "i'm",     "let",       "lets",      "tell",     "explain", "show",     "find",
      "code",    "which",   "whats",     "something", "thing",    "things",  "actually", "s",
      "t",       "exactly", "happening", "instead",   "anything", "doesn't", "don't"};
  return words;
}

}  // namespace

bool is_stop_word(std::string_view w) {
  return stop_words().count(w) > 0;
}

AnalyzedQuery analyze_query(std::string_view text) {
  AnalyzedQuery q;
  std::unordered_set<std::string> seen;
  auto add = [&](std::string_view tok) {
    if (is_stop_word(tok)) return;
    if (tok.size() == 1 && !(tok[0] >= '0' && tok[0] <= '9')) return;
    std::string t(tok);
    if (seen.insert(t).second) q.terms.push_back(std::move(t));
  };
  for_each_code_token(text, true, [&](std::string_view tok, bool, size_t, size_t) { add(tok); });
  // Each term is searched as its stem: the index holds the stem of every word, so "redirects"
  // matches "redirect", "redirected" and "redirecting".
  std::unordered_set<std::string> emitted;
  for (const std::string& t : q.terms) {
    std::string st = stem_word(t);
    if (emitted.insert(st).second) q.stems.push_back(std::move(st));
  }
  return q;
}

}  // namespace pf
