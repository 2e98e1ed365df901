// Internal to the index: small helpers over tree-sitter nodes shared by the code chunker and
// the per-language declaration rules.
#pragma once

#include <tree_sitter/api.h>

#include "index/chunk_layout.h"

#include <cstring>
#include <string>
#include <string_view>

namespace pf {

inline bool is(TSNode n, const char* type) {
  return std::strcmp(ts_node_type(n), type) == 0;
}

// comment, line_comment, block_comment, ... in every grammar.
inline bool is_comment(TSNode n) {
  std::string_view t = ts_node_type(n);
  return t.size() >= 7 && t.substr(t.size() - 7) == "comment";
}

inline int first_row(TSNode n) {
  return static_cast<int>(ts_node_start_point(n).row);
}

// The last row holding text of n (a node that ends at column 0 ends on the row before).
inline int last_row(TSNode n) {
  TSPoint e = ts_node_end_point(n);
  int row = static_cast<int>(e.row);
  if (e.column == 0 && row > first_row(n)) --row;
  return row;
}

inline TSNode field(TSNode n, const char* name) {
  return ts_node_child_by_field_name(n, name, static_cast<uint32_t>(std::strlen(name)));
}

inline std::string text_of(TSNode n, std::string_view text) {
  if (ts_node_is_null(n)) return {};
  uint32_t b = ts_node_start_byte(n), e = ts_node_end_byte(n);
  if (e > text.size() || b > e) return {};
  return std::string(text.substr(b, e - b));
}

// The identifier a C/C++ declarator declares: "*parse(...)" -> parse, "Pool::acquire(...)" ->
// acquire (and *scope = "Pool"), "operator==" as written.
inline std::string declarator_name(TSNode d, std::string_view text, std::string* scope = nullptr) {
  for (int guard = 0; guard < 32 && !ts_node_is_null(d); ++guard) {
    TSNode inner = field(d, "declarator");
    if (!ts_node_is_null(inner)) {
      d = inner;
      continue;
    }
    if (std::strcmp(ts_node_type(d), "qualified_identifier") == 0) {
      if (scope) *scope = text_of(field(d, "scope"), text);
      d = field(d, "name");
      continue;
    }
    TSNode name = field(d, "name");  // a Java variable_declarator, say
    if (!ts_node_is_null(name)) return text_of(name, text);
    // "Statements& statements()": a reference_declarator holds its declarator without a field.
    std::string_view type = ts_node_type(d);
    uint32_t count = ts_node_named_child_count(d);
    if (type.size() > 11 && type.substr(type.size() - 11) == "_declarator" && count > 0) {
      d = ts_node_named_child(d, count - 1);
      continue;
    }
    return text_of(d, text);
  }
  return {};
}

// The declared name: the "name" field, that of a wrapped "definition" (Python decorators), or
// what a C/C++ declarator names.
inline std::string name_of(TSNode n, std::string_view text) {
  TSNode name = field(n, "name");
  if (ts_node_is_null(name)) {
    TSNode def = field(n, "definition");
    if (!ts_node_is_null(def)) name = field(def, "name");
  }
  if (ts_node_is_null(name) && !ts_node_is_null(field(n, "declarator")))
    return declarator_name(field(n, "declarator"), text);
  return text_of(name, text);
}

}  // namespace pf
