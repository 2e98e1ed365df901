// Word stemming shared by the FTS5 tokenizer (documents) and query analysis (questions).
#pragma once

#include <string>
#include <string_view>

namespace pf {

// English suffix stemming (the Porter algorithm, M.F. Porter 1980) for lower-case ASCII words of
// four letters or more: "redirects", "redirected" and "redirecting" all become "redirect",
// "caching" and "cache" become "cach". The index stores stems and
// query terms are stemmed, so an inflected question word meets every form in the code and docs.
// Returns the word unchanged when it has digits, '_', '-', non-ASCII bytes or is short.
std::string stem_word(std::string_view word);

}  // namespace pf
