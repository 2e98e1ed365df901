// Internal to the index: C chunked from a scan of its tokens instead of a syntax tree (issue 25:
// tree-sitter read C at about 4.5 MB/s a core and was most of an index run's CPU on the Linux
// tree). The scan finds the top-level declarations by their braces, parentheses and semicolons
// and classifies them by the C rules of code_languages.cpp: functions (and function-like
// macros), struct, union and enum definitions and typedefs as types, declarations of five rows
// or more as modules; the rest is packed into blocks and a declaration over the cap is split at
// the statements, members or elements of its braces (index/chunk_layout.h, as the syntax-tree
// chunker does). Macros need no expansion: a body is found by its braces whatever surrounds it.
#pragma once

#include <string_view>

#include "index/chunk_builder.h"
#include "index/chunker.h"

namespace pf {

// Why chunk_c gave a file back (the caller then chunks it by its syntax tree).
inline constexpr const char* kCScanUnbalanced = "braces or parentheses do not balance";
inline constexpr const char* kCScanUnterminated = "a comment or literal does not end";
inline constexpr const char* kCScanCpp = "C++";

// Chunks C text into out and returns null, or returns why not, out untouched: brackets that do
// not pair up (a body opened in two #if branches), an unterminated comment or literal, or, with
// reject_cpp (for .h headers, which may be either), text that holds C++ (namespace, template,
// class definitions, "::", __cplusplus, extern "C"). Thread-safe; the chunks depend only on
// the text and limits.
const char* chunk_c(ChunkBuilder& out, std::string_view text, const ChunkLimits& limits,
                    bool reject_cpp);

}  // namespace pf
