// Markdown's blocks to mrkdwn (see mrkdwn.h), line by line: fenced code and tables become ```
// blocks, headings bold lines, lists "• " lines, rules a line of box-drawing dashes; the
// inline content of every other line goes through mrkdwn_inline.cpp.
#include "chat/slack/mrkdwn.h"

#include <cstddef>

#include "chat/slack/mrkdwn_inline.h"

namespace pf {
namespace {

using slack_internal::append_escaped;
using slack_internal::inline_to_mrkdwn;
using slack_internal::Marks;

constexpr std::string_view kRule = "──────────";

std::vector<std::string_view> split_lines(std::string_view s) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i < s.size() && s[i] != '\n') continue;
    std::string_view line = s.substr(start, i - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = i + 1;
  }
  return lines;
}

std::string_view trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

size_t leading_spaces(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && s[n] == ' ') ++n;
  return n;
}

struct Fence {
  char c = 0;
  size_t len = 0, indent = 0;
};

bool fence_open(std::string_view line, Fence* f) {
  size_t i = leading_spaces(line);
  if (i >= line.size() || (line[i] != '`' && line[i] != '~')) return false;
  size_t n = 0;
  while (i + n < line.size() && line[i + n] == line[i]) ++n;
  if (n < 3) return false;
  if (line[i] == '`' && line.find('`', i + n) != std::string_view::npos) return false;
  *f = Fence{line[i], n, i};
  return true;
}

bool fence_close(std::string_view line, const Fence& f) {
  std::string_view t = trim(line);
  size_t n = 0;
  while (n < t.size() && t[n] == f.c) ++n;
  return n >= f.len && n == t.size();
}

bool is_rule(std::string_view line) {
  std::string_view t = trim(line);
  if (leading_spaces(line) > 3 || t.empty() || (t[0] != '-' && t[0] != '*' && t[0] != '_'))
    return false;
  size_t marks = 0;
  for (char c : t) {
    if (c == t[0])
      ++marks;
    else if (c != ' ' && c != '\t')
      return false;
  }
  return marks >= 3;
}

// "# Title ##" → 1 and "Title"; 0 when the line is no ATX heading.
int heading(std::string_view line, std::string_view* text) {
  size_t i = leading_spaces(line);
  if (i > 3) return 0;
  size_t n = 0;
  while (i + n < line.size() && line[i + n] == '#') ++n;
  if (n == 0 || n > 6 || (i + n < line.size() && line[i + n] != ' ' && line[i + n] != '\t'))
    return 0;
  std::string_view t = trim(line.substr(i + n));
  size_t end = t.find_last_not_of('#');
  if (end == std::string_view::npos)
    t = {};
  else if (end + 1 < t.size() && (t[end] == ' ' || t[end] == '\t'))
    t = trim(t.substr(0, end));
  *text = t;
  return static_cast<int>(n);
}

bool is_setext_underline(std::string_view line) {
  std::string_view t = trim(line);
  if (leading_spaces(line) > 3 || t.empty() || (t[0] != '=' && t[0] != '-')) return false;
  return t.find_first_not_of(t[0]) == std::string_view::npos;
}

// A table's delimiter row: cells of :?-+:? between pipes, at least one pipe.
bool is_table_delimiter(std::string_view line) {
  std::string_view t = trim(line);
  if (t.find('|') == std::string_view::npos || t.find('-') == std::string_view::npos) return false;
  return t.find_first_not_of("|:- \t") == std::string_view::npos;
}

struct ListItem {
  size_t indent = 0;
  std::string marker;  // "• " or "12. "
  std::string_view rest;
};

bool list_item(std::string_view line, ListItem* item) {
  size_t col = 0, i = 0;
  for (; i < line.size() && (line[i] == ' ' || line[i] == '\t'); ++i)
    col = line[i] == '\t' ? col + 4 - col % 4 : col + 1;
  size_t m = i;
  if (m < line.size() && (line[m] == '-' || line[m] == '*' || line[m] == '+')) {
    item->marker = "• ";
    ++m;
  } else {
    while (m < line.size() && m - i < 9 && line[m] >= '0' && line[m] <= '9') ++m;
    if (m == i || m >= line.size() || (line[m] != '.' && line[m] != ')')) return false;
    item->marker = std::string(line.substr(i, m - i)) + ". ";
    ++m;
  }
  if (m >= line.size() || (line[m] != ' ' && line[m] != '\t')) return false;
  item->indent = col;
  item->rest = trim(line.substr(m));
  return true;
}

class Converter {
 public:
  std::string run(std::string_view markdown);

 private:
  // One line outside code blocks and tables (also the inside of a quote, with quoted set).
  std::string block_line(std::string_view line, std::vector<size_t>& lists, bool quoted);
  std::string list_line(const ListItem& item, std::vector<size_t>& lists);
  size_t table(const std::vector<std::string_view>& lines, size_t i);
  size_t fenced(const std::vector<std::string_view>& lines, size_t i, const Fence& f);

  std::vector<std::string> out_;
  std::vector<size_t> lists_, quote_lists_;  // indents of the open list items
  bool paragraph_ = false;                   // out_.back() is a paragraph line, from para_
  std::string_view para_;
};

std::string bold_line(std::string_view text) {
  std::string body = inline_to_mrkdwn(text, Marks::kNoStrong);
  return body.empty() ? body : "*" + body + "*";
}

std::string Converter::list_line(const ListItem& item, std::vector<size_t>& lists) {
  // Nested under every open item indented less than this one (lenient: any deeper indent).
  while (!lists.empty() && item.indent <= lists.back()) lists.pop_back();
  std::string out(4 * lists.size(), ' ');
  lists.push_back(item.indent);
  out += item.marker;
  std::string_view rest = item.rest;
  if (rest.substr(0, 4) == "[ ] ") {
    out += "☐ ";
    rest.remove_prefix(4);
  } else if (rest.substr(0, 4) == "[x] " || rest.substr(0, 4) == "[X] ") {
    out += "☑ ";
    rest.remove_prefix(4);
  }
  return out + inline_to_mrkdwn(rest, Marks::kAll);
}

std::string Converter::block_line(std::string_view line, std::vector<size_t>& lists, bool quoted) {
  std::string_view text;
  size_t lead = leading_spaces(line);
  if (!quoted && lead <= 3 && lead < line.size() && line[lead] == '>') {
    // Slack quotes one level deep: every level of ">" becomes one (a loop, not recursion:
    // a line can hold thousands).
    std::string_view inner = line;
    for (size_t l = lead; l <= 3 && l < inner.size() && inner[l] == '>';
         l = leading_spaces(inner)) {
      inner.remove_prefix(l + 1);
      if (!inner.empty() && inner[0] == ' ') inner.remove_prefix(1);
    }
    std::string body = block_line(inner, quote_lists_, true);
    return body.empty() ? ">" : "> " + body;
  }
  if (!quoted) quote_lists_.clear();
  if (trim(line).empty()) return "";
  if (heading(line, &text) > 0) {
    lists.clear();
    return bold_line(text);
  }
  if (is_rule(line)) {
    lists.clear();
    return std::string(kRule);
  }
  ListItem item;
  if (list_item(line, &item)) return list_line(item, lists);
  if (lead == 0) lists.clear();
  std::string_view body = line.substr(line[0] == '\t' ? 0 : lead);
  size_t end = body.find_last_not_of(" \t");
  std::string out(line.substr(0, line[0] == '\t' ? 0 : lead));
  return out + inline_to_mrkdwn(body.substr(0, end + 1), Marks::kAll);
}

size_t Converter::table(const std::vector<std::string_view>& lines, size_t i) {
  out_.push_back("```");
  for (;
       i < lines.size() && !trim(lines[i]).empty() && lines[i].find('|') != std::string_view::npos;
       ++i) {
    std::string row;
    append_escaped(row, lines[i]);
    out_.push_back(std::move(row));
  }
  out_.push_back("```");
  return i;
}

size_t Converter::fenced(const std::vector<std::string_view>& lines, size_t i, const Fence& f) {
  out_.push_back("```");
  for (++i; i < lines.size() && !fence_close(lines[i], f); ++i) {
    std::string_view l = lines[i];
    l.remove_prefix(std::min(f.indent, leading_spaces(l)));
    std::string row;
    append_escaped(row, l);
    out_.push_back(std::move(row));
  }
  out_.push_back("```");
  return i < lines.size() ? i + 1 : i;
}

std::string Converter::run(std::string_view markdown) {
  std::vector<std::string_view> lines = split_lines(markdown);
  for (size_t i = 0; i < lines.size();) {
    std::string_view line = lines[i];
    Fence f;
    bool was_paragraph = paragraph_;
    paragraph_ = false;
    if (fence_open(line, &f)) {
      i = fenced(lines, i, f);
      continue;
    }
    if (line.find('|') != std::string_view::npos && i + 1 < lines.size() &&
        is_table_delimiter(lines[i + 1])) {
      lists_.clear();
      i = table(lines, i);
      continue;
    }
    if (was_paragraph && is_setext_underline(line)) {
      out_.back() = bold_line(trim(para_));
      ++i;
      continue;
    }
    std::string_view text;
    ListItem item;
    out_.push_back(block_line(line, lists_, false));
    paragraph_ = !trim(line).empty() && leading_spaces(line) <= 3 &&
                 line[leading_spaces(line)] != '>' && heading(line, &text) == 0 && !is_rule(line) &&
                 !list_item(line, &item);
    para_ = line;
    ++i;
  }
  std::string out;
  for (size_t i = 0; i < out_.size(); ++i) {
    if (i > 0) out += '\n';
    out += out_[i];
  }
  return out;
}

}  // namespace

std::string markdown_to_mrkdwn(std::string_view markdown) {
  return Converter().run(markdown);
}

}  // namespace pf
