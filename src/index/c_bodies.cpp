// The brace scan behind c_bodies.h and the lexical steps it shares with the C chunker: one
// pass, a few states, no allocation but the result.
#include "index/c_bodies.h"

#include <cstring>

namespace pf {
namespace {

bool space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

}  // namespace

namespace c_scan {

size_t skip_literal(std::string_view t, size_t i) {
  char quote = t[i];
  for (size_t j = i + 1; j < t.size(); ++j) {
    if (t[j] == '\\') {
      ++j;
      continue;
    }
    if (t[j] == quote) return j + 1;
    if (t[j] == '\n') return std::string_view::npos;
  }
  return std::string_view::npos;
}

size_t skip_comment(std::string_view t, size_t i) {
  if (t[i + 1] == '*') {
    size_t e = t.find("*/", i + 2);
    return e == std::string_view::npos ? e : e + 2;
  }
  size_t j = i + 2;
  while (j < t.size() && t[j] != '\n') j += t[j] == '\\' && j + 1 < t.size() ? 2 : 1;
  return j;
}

bool comment_at(std::string_view t, size_t i) {
  return t[i] == '/' && i + 1 < t.size() && (t[i + 1] == '/' || t[i + 1] == '*');
}

size_t skip_directive(std::string_view t, size_t i) {
  while (i < t.size() && t[i] != '\n') {
    if (t[i] == '\\' && i + 1 < t.size() && (t[i + 1] == '\n' || t[i + 1] == '\r')) {
      i += t[i + 1] == '\r' && i + 2 < t.size() && t[i + 2] == '\n' ? 3 : 2;
    } else if (comment_at(t, i)) {
      i = skip_comment(t, i);
      if (i == std::string_view::npos) return i;
    } else if (t[i] == '"' || t[i] == '\'') {
      size_t e = skip_literal(t, i);
      i = e == std::string_view::npos ? i + 1 : e;  // #error don't: a lone quote is text here
    } else {
      ++i;
    }
  }
  return i;
}

}  // namespace c_scan

using c_scan::comment_at;
using c_scan::skip_comment;
using c_scan::skip_directive;
using c_scan::skip_literal;

bool find_function_bodies(std::string_view t, std::vector<BodyBraces>* out) {
  if (t.size() >= UINT32_MAX) return false;
  int64_t depth = 0;
  char last = 0;  // the last character of the previous token
  bool line_start = true, function = false;
  uint32_t open = 0;
  for (size_t i = 0; i < t.size();) {
    char c = t[i];
    if (c == '\n') {
      line_start = true;
      ++i;
    } else if (space(c)) {
      ++i;
    } else if (line_start && c == '#') {
      i = skip_directive(t, i);
      if (i == std::string_view::npos) return false;
    } else if (comment_at(t, i)) {
      i = skip_comment(t, i);
      if (i == std::string_view::npos) return false;
      line_start = false;
    } else if (c == '"' || c == '\'') {
      i = skip_literal(t, i);
      if (i == std::string_view::npos) return false;
      last = c;
      line_start = false;
    } else {
      if (c == '{') {
        if (depth == 0) function = last == ')', open = static_cast<uint32_t>(i);
        ++depth;
      } else if (c == '}') {
        if (--depth < 0) return false;
        if (depth == 0 && function) out->push_back(BodyBraces{open, static_cast<uint32_t>(i)});
      }
      last = c;
      line_start = false;
      ++i;
    }
  }
  return depth == 0;
}

}  // namespace pf
