// Word stemming shared by the FTS5 tokenizer (documents) and query analysis (questions).
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace pf {

// English suffix stemming (Snowball's "english" algorithm, Porter2, from Debian's libstemmer) for
// lower-case ASCII words of four letters or more: "redirects", "redirected" and "redirecting" all
// become "redirect", "caching" and "cache" become "cach". The index stores stems and query terms
// are stemmed, so an inflected question word meets every form in the code and docs. (It replaced
// a hand-written Porter 1980 stemmer: the same eval figures, MRR@10 +0.002; docs/RETRIEVAL.md.)
// Returns the word unchanged when it has digits, '_', '-', non-ASCII bytes or is short.
// Words longer than kMaxStemmedBytes (no English word; a long identifier) are left as they are.
std::string stem_word(std::string_view word);

// The same without an allocation, for the FTS5 tokenizer's inner loop: the result views either
// word or buffer.
inline constexpr size_t kMaxStemmedBytes = 64;
using StemBuffer = std::array<char, kMaxStemmedBytes>;
std::string_view stem_word(std::string_view word, StemBuffer& buffer);

}  // namespace pf
