// Internal to the index: where a C file's top-level function bodies are, found by a scan of its
// braces, so that tree-sitter can parse the file without them (issue 25: parsing every body was
// most of the index run's time on the Linux tree, while chunking needs only the top-level
// declarations, and the statements of the few functions too long for one chunk).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace pf {

struct BodyBraces {
  uint32_t open = 0, close = 0;  // byte offsets of the body's '{' and its matching '}'
};

// Appends the braces of each body at file level: a '{' outside any brace whose previous token
// ends with ')' (a function's parameter list or a macro after it), not one after '=' (an
// initializer) or a name (struct, union, enum). Comments, string and character literals and
// preprocessor lines are skipped. Returns false, leaving out unspecified, where the braces do
// not balance (a body opened in two #if branches, an unterminated comment or literal, more
// than 4 GiB): the caller parses such a file whole.
bool find_function_bodies(std::string_view text, std::vector<BodyBraces>* out);

}  // namespace pf
