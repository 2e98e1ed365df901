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

// The lexical steps of the scan, for other scans of C text (index/c_chunker.h).
namespace c_scan {

// Whether a comment ("//" or "/*") starts at t[i].
bool comment_at(std::string_view t, size_t i);
// The offset just past the comment opened at i, or npos if a block comment does not end. A line
// comment ends before its newline (a backslash-newline continues it).
size_t skip_comment(std::string_view t, size_t i);
// The offset just past the literal opened by the quote at i, or npos if it does not close on
// its line (a C string cannot span lines but by a backslash-newline, taken here too).
size_t skip_literal(std::string_view t, size_t i);
// The offset of the newline that ends the preprocessor line starting at i (or the end), past
// continuations, comments and literals; npos if a comment or literal in it does not end.
size_t skip_directive(std::string_view t, size_t i);

}  // namespace c_scan

}  // namespace pf
