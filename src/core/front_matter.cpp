// YAML front matter, the subset Markdown metadata uses (see front_matter.h): a line-by-line
// reader, each top-level key's value read by its first character.
#include "core/front_matter.h"

#include <cstdint>

#include "core/error.h"
#include "core/text.h"

namespace pf {

namespace {

struct Line {
  std::string_view text;  // without its line end
  size_t number = 0;      // from 1, counting the opening ---
};

[[noreturn]] void fail(size_t line, const std::string& why) {
  throw Error("front matter, line " + std::to_string(line) + ": " + why);
}

size_t indent_of(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return i;
}

bool blank_or_comment(std::string_view s) {
  size_t i = indent_of(s);
  return i == s.size() || s[i] == '#';
}

std::string_view rtrim(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool is_fence(std::string_view s, std::string_view fence) { return rtrim(s) == fence; }

void append_utf8(std::string& out, uint32_t cp) {
  if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;  // a lone surrogate
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// A quoted scalar starting at s[*at] (a ' or "); *at ends past the closing quote.
std::string quoted(std::string_view s, size_t* at, size_t line) {
  char q = s[*at];
  std::string out;
  size_t i = *at + 1;
  while (i < s.size()) {
    char c = s[i];
    if (q == '\'' && c == '\'') {
      if (i + 1 < s.size() && s[i + 1] == '\'') {
        out += '\'';
        i += 2;
        continue;
      }
      *at = i + 1;
      return out;
    }
    if (q == '"' && c == '"') {
      *at = i + 1;
      return out;
    }
    if (q == '"' && c == '\\') {
      if (i + 1 >= s.size()) break;
      char e = s[i + 1];
      i += 2;
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case '0': out += '\0'; break;
        case '"': case '\\': case '/': case ' ': out += e; break;
        case 'u': {
          if (i + 4 > s.size()) fail(line, "a \\u escape needs four hex digits");
          uint32_t cp = 0;
          for (size_t k = 0; k < 4; ++k) {
            char h = s[i + k];
            int v = h >= '0' && h <= '9' ? h - '0'
                    : h >= 'a' && h <= 'f' ? h - 'a' + 10
                    : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
            if (v < 0) fail(line, "a \\u escape needs four hex digits");
            cp = cp * 16 + static_cast<uint32_t>(v);
          }
          append_utf8(out, cp);
          i += 4;
          break;
        }
        default: fail(line, std::string("unknown escape \\") + e);
      }
      continue;
    }
    out += c;
    ++i;
  }
  fail(line, std::string("the quote ") + q + " is never closed");
}

// Nothing but spaces or a comment may follow a value.
void expect_end(std::string_view s, size_t at, size_t line) {
  std::string_view rest = s.substr(at);
  size_t i = indent_of(rest);
  if (i < rest.size() && rest[i] != '#')
    fail(line, "unexpected text after the value: " + std::string(rest.substr(i, 40)));
}

// A plain scalar: up to a comment (" #"), trimmed.
std::string plain(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] == '#' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) {
      s = s.substr(0, i);
      break;
    }
  return trim_space(s);
}

// One scalar written in line text (quoted or plain), with nothing after it.
std::string scalar(std::string_view s, size_t line) {
  size_t i = indent_of(s);
  if (i < s.size() && (s[i] == '"' || s[i] == '\'')) {
    size_t at = i;
    std::string v = quoted(s, &at, line);
    expect_end(s, at, line);
    return v;
  }
  return plain(s);
}

// A flow list's items: "[a, 'b, c', "d"]" (s starts at '[' and runs to its ']').
std::vector<std::string> flow_list(std::string_view s, size_t line) {
  std::vector<std::string> out;
  size_t i = 1;
  while (true) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) ++i;
    if (i >= s.size()) fail(line, "the list is never closed with ]");
    if (s[i] == ']') {
      expect_end(s, i + 1, line);
      return out;
    }
    std::string item;
    if (s[i] == '"' || s[i] == '\'') {
      item = quoted(s, &i, line);
    } else if (s[i] == '[' || s[i] == '{') {
      fail(line, "a list inside a list is not read");
    } else {
      size_t end = i;
      while (end < s.size() && s[end] != ',' && s[end] != ']') ++end;
      item = trim_space(s.substr(i, end - i));
      i = end;
    }
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) ++i;
    if (i < s.size() && s[i] == ',') {
      ++i;
    } else if (i >= s.size() || s[i] != ']') {
      fail(line, "expected , or ] in the list");
    }
    if (!item.empty()) out.push_back(std::move(item));
  }
}

class Reader {
 public:
  explicit Reader(std::vector<Line> lines) : lines_(std::move(lines)) {}

  void read(FrontMatter& out) {
    while (i_ < lines_.size()) {
      const Line& l = lines_[i_];
      if (blank_or_comment(l.text)) {
        ++i_;
        continue;
      }
      if (indent_of(l.text) > 0) fail(l.number, "an indented line where a key was expected");
      size_t colon = key_end(l.text);
      if (colon == std::string_view::npos)
        fail(l.number, "expected \"key: value\", found: " + std::string(l.text.substr(0, 40)));
      std::string key = trim_space(l.text.substr(0, colon));
      if (key.size() >= 2 && (key.front() == '"' || key.front() == '\'') && key.back() == key.front())
        key = key.substr(1, key.size() - 2);
      if (key.empty()) fail(l.number, "a key is empty");
      if (out.has(key)) fail(l.number, "the key \"" + key + "\" is given twice");
      std::string_view rest = l.text.substr(colon + 1);
      ++i_;
      value(out, key, rest, l.number);
    }
  }

 private:
  // Where "key:" ends: the first ':' followed by a space or the line's end.
  static size_t key_end(std::string_view s) {
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '#' && i > 0 && s[i - 1] == ' ') return std::string_view::npos;
      if (s[i] == ':' && (i + 1 == s.size() || s[i + 1] == ' ' || s[i + 1] == '\t')) return i;
    }
    return std::string_view::npos;
  }

  // The indented lines that follow (blank ones inside kept), as [first, end).
  std::pair<size_t, size_t> indented_run() {
    size_t first = i_, end = i_;
    for (size_t k = i_; k < lines_.size(); ++k) {
      if (indent_of(lines_[k].text) == lines_[k].text.size()) continue;  // blank
      if (indent_of(lines_[k].text) == 0) break;
      end = k + 1;
    }
    return {first, end};
  }

  // The "- item" lines (blank ones inside kept) at the left margin that follow: the end.
  size_t dash_run() {
    size_t end = i_;
    for (size_t k = i_; k < lines_.size(); ++k) {
      std::string_view t = lines_[k].text;
      if (indent_of(t) == t.size()) continue;
      if (t[0] != '-' || (t.size() > 1 && t[1] != ' ' && t[1] != '\t')) break;
      end = k + 1;
    }
    return end;
  }

  void value(FrontMatter& out, const std::string& key, std::string_view rest, size_t line) {
    size_t at = indent_of(rest);
    std::string_view v = rest.substr(at);
    if (v.empty() || v[0] == '#') {
      auto [first, end] = indented_run();
      if (first == end) end = dash_run();  // "- item" lines at the key's own indentation
      i_ = end;
      size_t k = first;
      while (k < end && blank_or_comment(lines_[k].text)) ++k;
      if (k == end) {
        out.scalars[key] = "";
      } else if (lines_[k].text.substr(indent_of(lines_[k].text)).substr(0, 2) == "- " ||
                 rtrim(lines_[k].text.substr(indent_of(lines_[k].text))) == "-") {
        out.lists[key] = block_list(first, end);
      } else {
        out.nested.insert(key);
      }
      return;
    }
    if (v[0] == '|' || v[0] == '>') {
      std::string_view mods = rtrim(v.substr(1));
      for (char c : mods)
        if (c != '-' && c != '+' && !(c >= '1' && c <= '9'))
          fail(line, "a block scalar's header is | or > with - or +");
      auto [first, end] = indented_run();
      i_ = end;
      out.scalars[key] = block_scalar(first, end, v[0] == '>', mods.find('-') != std::string_view::npos);
      return;
    }
    if (v[0] == '[') {
      std::string joined(v);
      // A flow list may run over several indented lines.
      while (joined.find(']') == std::string::npos && i_ < lines_.size() &&
             indent_of(lines_[i_].text) > 0)
      {
        joined += '\n';
        joined += lines_[i_++].text;
      }
      size_t close = joined.rfind(']');
      if (close == std::string::npos) fail(line, "the list is never closed with ]");
      out.lists[key] = flow_list(joined, line);
      return;
    }
    if (v[0] == '{') {
      while (i_ < lines_.size() && indent_of(lines_[i_].text) > 0) ++i_;
      out.nested.insert(key);
      return;
    }
    std::string s = scalar(v, line);
    // A plain scalar continues on indented lines, folded with spaces.
    if (v[0] != '"' && v[0] != '\'') {
      while (i_ < lines_.size() && indent_of(lines_[i_].text) > 0 &&
             !blank_or_comment(lines_[i_].text)) {
        std::string more = plain(lines_[i_].text);
        if (more.empty()) {
        } else if (s.empty()) {
          s = std::move(more);
        } else {
          s += ' ';
          s += more;
        }
        ++i_;
      }
    }
    out.scalars[key] = s;
  }

  std::vector<std::string> block_list(size_t first, size_t end) {
    std::vector<std::string> items;
    for (size_t k = first; k < end; ++k) {
      std::string_view t = lines_[k].text.substr(indent_of(lines_[k].text));
      if (t.empty() || t[0] == '#') continue;
      if (t[0] != '-' || (t.size() > 1 && t[1] != ' ' && t[1] != '\t'))
        fail(lines_[k].number, "expected \"- item\" in the list");
      std::string_view item = t.substr(1);
      size_t i = indent_of(item);
      if (i < item.size() && (item[i] == '[' || item[i] == '{'))
        fail(lines_[k].number, "a list or mapping inside a list is not read");
      std::string s = scalar(item, lines_[k].number);
      if (!s.empty()) items.push_back(std::move(s));
    }
    return items;
  }

  std::string block_scalar(size_t first, size_t end, bool folded, bool strip) {
    size_t common = std::string_view::npos;
    for (size_t k = first; k < end; ++k) {
      std::string_view t = lines_[k].text;
      if (indent_of(t) == t.size()) continue;
      common = std::min(common, indent_of(t));
    }
    std::string out;
    bool fresh_paragraph = true;
    for (size_t k = first; k < end; ++k) {
      std::string_view t = rtrim(lines_[k].text);
      bool blank = indent_of(t) == t.size();
      std::string_view content = blank ? std::string_view() : t.substr(common);
      if (!folded) {
        out += std::string(content) + "\n";
      } else if (blank) {
        out += "\n";
        fresh_paragraph = true;
      } else {
        if (!fresh_paragraph) out += ' ';
        out += content;
        fresh_paragraph = false;
      }
    }
    if (folded && !out.empty() && out.back() != '\n') out += '\n';
    if (strip)
      while (!out.empty() && out.back() == '\n') out.pop_back();
    else
      while (out.size() >= 2 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n')
        out.pop_back();
    return out;
  }

  std::vector<Line> lines_;
  size_t i_ = 0;
};

}  // namespace

std::string FrontMatter::get(const std::string& key, const std::string& fallback) const {
  auto it = scalars.find(key);
  return it == scalars.end() ? fallback : it->second;
}

FrontMatter parse_front_matter(std::string_view text) {
  FrontMatter out;
  std::string_view t = text;
  if (t.substr(0, 3) == "\xEF\xBB\xBF") t.remove_prefix(3);  // a byte order mark
  size_t eol = t.find('\n');
  if (!is_fence(t.substr(0, eol), "---")) {
    out.body = std::string(text);
    return out;
  }
  out.present = true;
  std::vector<Line> lines;
  size_t at = eol == std::string_view::npos ? t.size() : eol + 1;
  size_t number = 1;
  bool closed = false;
  while (at < t.size()) {
    size_t end = t.find('\n', at);
    std::string_view l = t.substr(at, end == std::string_view::npos ? t.size() - at : end - at);
    ++number;
    at = end == std::string_view::npos ? t.size() : end + 1;
    if (is_fence(l, "---") || is_fence(l, "...")) {
      closed = true;
      break;
    }
    if (at > kMaxFrontMatterBytes)
      fail(number, "the front matter is over " + std::to_string(kMaxFrontMatterBytes / 1024) +
                       " KiB (is its closing --- line missing?)");
    lines.push_back({rtrim(l), number});
  }
  if (!closed) fail(number, "the front matter is never closed with a --- line");
  Reader(std::move(lines)).read(out);
  out.body = std::string(t.substr(at));
  return out;
}

}  // namespace pf
