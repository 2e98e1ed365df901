// Internal to the index: the languages the code chunker parses with tree-sitter, and for each
// the rules that say which top-level nodes are declarations worth a chunk of their own and which
// class members are methods.
#pragma once

#include <string>
#include <string_view>

#include "index/syntax.h"

namespace pf {

struct CodeLanguage {
  const TSLanguage* (*grammar)();
  // Decides whether a top-level node is a declaration; on true fills *meta and sets *decl to
  // the node to split if it is over the cap (the node itself, or what it wraps).
  bool (*classify)(TSNode node, std::string_view text, TSNode* decl, Meta* meta);
  // A member of a class body that becomes its own chunk when the class is split.
  bool (*is_method)(TSNode member);
  // For a node that only groups declarations (a C++ namespace, an extern "C" block, an #ifdef
  // include guard), the node whose named children are those declarations: they are chunked as
  // if they stood at the top level. A null node otherwise; the function may itself be null.
  TSNode (*members_of)(TSNode node);
  // Whether files are parsed without their top-level function bodies (index/c_bodies.h), which
  // are parsed only for a function too long for one chunk: C, whose bodies are found by braces.
  bool skips_bodies = false;
};

// typescript, tsx, javascript, python, go, rust, java, c, cpp, csharp, ruby, php; null for
// anything else.
const CodeLanguage* code_language(const std::string& language);

}  // namespace pf
