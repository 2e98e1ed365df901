// Markdown by heading tree. Each ATX (#..######) or setext heading starts a section that runs
// to the next heading; the text before the first heading (front matter, title, introduction)
// is a section too. Each chunk records its heading path ("Server › Factory › trustProxy").
// Headings inside fenced code blocks are not headings. A section over the line cap is split at
// blank lines between paragraphs, never inside a fence. A heading with no text of its own is
// kept with the section that follows it, so it is never a one-line chunk.
#include "index/markdown_chunker.h"

#include <string>
#include <vector>

namespace pf {
namespace {

struct Section {
  int start = 0;  // first row (the heading line, or the setext text line)
  int end = 0;
  std::string path;
  std::string title;
};

size_t indent_of(std::string_view l) {
  size_t i = 0;
  while (i < l.size() && l[i] == ' ') ++i;
  return i;
}

// Returns the fence run (```` or ~~~) opening at this line, or 0.
size_t fence_open(std::string_view l, char* ch) {
  size_t i = indent_of(l);
  if (i > 3 || i >= l.size() || (l[i] != '`' && l[i] != '~')) return 0;
  char c = l[i];
  size_t n = 0;
  while (i + n < l.size() && l[i + n] == c) ++n;
  if (n < 3) return 0;
  if (c == '`' && l.substr(i + n).find('`') != std::string_view::npos) return 0;
  *ch = c;
  return n;
}

bool fence_close(std::string_view l, char ch, size_t len) {
  size_t i = indent_of(l);
  if (i > 3) return false;
  size_t n = 0;
  while (i + n < l.size() && l[i + n] == ch) ++n;
  if (n < len) return false;
  for (size_t k = i + n; k < l.size(); ++k)
    if (l[k] != ' ' && l[k] != '\t') return false;
  return true;
}

// ATX heading level (1-6) and its text, or 0.
int atx_heading(std::string_view l, std::string* text) {
  size_t i = indent_of(l);
  if (i > 3) return 0;
  size_t n = 0;
  while (i + n < l.size() && l[i + n] == '#') ++n;
  if (n == 0 || n > 6) return 0;
  if (i + n < l.size() && l[i + n] != ' ' && l[i + n] != '\t') return 0;
  std::string_view t = l.substr(i + n);
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t' || t.back() == '\r'))
    t.remove_suffix(1);
  // Optional closing sequence of '#'.
  size_t k = t.size();
  while (k > 0 && t[k - 1] == '#') --k;
  if (k < t.size() && (k == 0 || t[k - 1] == ' ')) t = t.substr(0, k);
  while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
  *text = std::string(t);
  return static_cast<int>(n);
}

// Setext underline: 1 for '===', 2 for '---', else 0.
int setext_level(std::string_view l) {
  size_t i = indent_of(l);
  if (i > 3 || i >= l.size() || (l[i] != '=' && l[i] != '-')) return 0;
  char c = l[i];
  size_t k = i;
  while (k < l.size() && l[k] == c) ++k;
  for (size_t j = k; j < l.size(); ++j)
    if (l[j] != ' ' && l[j] != '\t' && l[j] != '\r') return 0;
  return c == '=' ? 1 : 2;
}

bool paragraph_text(std::string_view l) {
  size_t i = indent_of(l);
  if (i >= l.size() || i > 3) return false;
  char c = l[i];
  if (c == '>' || c == '|' || c == '<') return false;
  if ((c == '-' || c == '*' || c == '+') && (i + 1 >= l.size() || l[i + 1] == ' ')) return false;
  std::string ignored;
  return atx_heading(l, &ignored) == 0;
}

bool list_item(std::string_view l) {
  size_t i = indent_of(l);
  if (i > 3 || i >= l.size()) return false;
  if ((l[i] == '-' || l[i] == '*' || l[i] == '+') && i + 1 < l.size() && l[i + 1] == ' ')
    return true;
  size_t d = i;
  while (d < l.size() && l[d] >= '0' && l[d] <= '9') ++d;
  return d > i && d + 1 < l.size() && (l[d] == '.' || l[d] == ')') && l[d + 1] == ' ';
}

// Splits a section over the line or size cap into pieces, starting a piece only where a
// paragraph or a top-level list item begins, and never inside a fenced block. Option lists
// ("* **bodyTimeout** ...") are long runs of items without blank lines; cutting them at items
// keeps each piece about one topic.
void split_section(ChunkBuilder& out, const std::vector<bool>& fence_open_row,
                   const std::vector<bool>& in_fence, const Section& s, const ChunkLimits& limits) {
  auto inside_fence = [&](int r) {
    return in_fence[static_cast<size_t>(r)] && !fence_open_row[static_cast<size_t>(r)];
  };
  auto can_start = [&](int r) {
    if (inside_fence(r) || out.blank(r)) return false;
    if (out.blank(r - 1) && !inside_fence(r - 1)) return true;
    return !in_fence[static_cast<size_t>(r)] && list_item(out.line(r)) &&
           indent_of(out.line(r)) == 0;
  };
  int gs = s.start, cut = -1;
  size_t chars = 0;
  for (int r = s.start; r <= s.end; ++r) {
    // A piece keeps at least three rows, so a heading is never left on its own.
    if (r >= gs + 3 && can_start(r)) cut = r;
    chars += out.line(r).size() + 1;
    bool over = r - gs + 1 > limits.max_lines || static_cast<int>(chars) > limits.max_chars;
    if (!over || r == gs) continue;
    if (cut > gs) {
      out.add(gs, cut - 1, "section", "", "", s.title, s.path);
      gs = cut;
    } else if (r - gs + 1 > limits.max_lines && !inside_fence(r)) {
      // One paragraph longer than the line cap: cut it where it stands.
      out.add(gs, r - 1, "section", "", "", s.title, s.path);
      gs = r;
    } else {
      continue;  // inside a fence or one long paragraph under the line cap: keep going
    }
    cut = -1;
    chars = 0;
    for (int k = gs; k <= r; ++k) {
      chars += out.line(k).size() + 1;
      if (k >= gs + 3 && can_start(k)) cut = k;
    }
  }
  if (gs <= s.end) out.add(gs, s.end, "section", "", "", s.title, s.path);
}

}  // namespace

void chunk_markdown(ChunkBuilder& out, const ChunkLimits& limits) {
  const int n = out.line_count();
  std::vector<bool> in_fence(static_cast<size_t>(n), false);
  std::vector<bool> fence_open_row(static_cast<size_t>(n), false);
  std::vector<Section> sections;
  std::vector<std::pair<int, std::string>> stack;  // (level, title)
  auto path_of = [&] {
    std::string p;
    for (auto& [lvl, t] : stack) {
      if (!p.empty()) p += " \u203a ";
      p += t;
    }
    return p;
  };
  sections.push_back(Section{0, n - 1, "", ""});  // preamble
  auto open_section = [&](int start, int level, std::string title) {
    while (!stack.empty() && stack.back().first >= level) stack.pop_back();
    stack.emplace_back(level, title);
    sections.back().end = start - 1;
    sections.push_back(Section{start, n - 1, path_of(), std::move(title)});
  };

  int row = 0;
  // Front matter: "---" on the first line up to the next "---" or "...".
  if (n > 0 && out.line(0) == "---") {
    for (int r = 1; r < n; ++r) {
      if (out.line(r) == "---" || out.line(r) == "...") {
        for (int k = 0; k <= r; ++k) in_fence[static_cast<size_t>(k)] = true;
        row = r + 1;
        break;
      }
    }
  }
  char fence_ch = 0;
  size_t fence_len = 0;
  for (; row < n; ++row) {
    std::string_view l = out.line(row);
    if (fence_len) {
      in_fence[static_cast<size_t>(row)] = true;
      if (fence_close(l, fence_ch, fence_len)) fence_len = 0;
      continue;
    }
    if (size_t f = fence_open(l, &fence_ch)) {
      fence_len = f;
      in_fence[static_cast<size_t>(row)] = true;
      fence_open_row[static_cast<size_t>(row)] = true;
      continue;
    }
    std::string title;
    if (int level = atx_heading(l, &title)) {
      open_section(row, level, title);
      continue;
    }
    if (row > 0 && !in_fence[static_cast<size_t>(row - 1)] && !out.blank(row - 1) &&
        paragraph_text(out.line(row - 1)) && sections.back().start != row - 1) {
      if (int level = setext_level(l)) {
        // Only a one-line paragraph becomes the heading text here (multi-line setext headings
        // are rare; the earlier lines stay with the previous section).
        if (row < 2 || out.blank(row - 2)) {
          std::string_view t = out.line(row - 1);
          size_t b = t.find_first_not_of(" \t");
          open_section(row - 1, level, std::string(t.substr(b == std::string_view::npos ? 0 : b)));
        }
      }
    }
  }

  // A heading with no body of its own joins the section after it.
  int carry_start = -1;
  for (size_t i = 0; i < sections.size(); ++i) {
    Section s = sections[i];
    if (s.end < s.start) continue;
    if (carry_start >= 0) s.start = carry_start;
    bool only_heading = true;
    int body_from = (i == 0) ? s.start : sections[i].start + 1;
    for (int r = body_from; r <= s.end && only_heading; ++r) only_heading = out.blank(r);
    if (only_heading && i > 0 && i + 1 < sections.size()) {
      carry_start = s.start;
      continue;
    }
    carry_start = -1;
    split_section(out, fence_open_row, in_fence, s, limits);
  }
}

}  // namespace pf
