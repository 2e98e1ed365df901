// mrkdwn to plain text, and long mrkdwn cut into labelled parts (see mrkdwn.h).
#include <cstddef>

#include "chat/slack/mrkdwn.h"
#include "core/text.h"

namespace pf {
namespace {

// Appends text with &lt; &gt; &amp; decoded in one pass ("&amp;lt;" stays "&lt;").
void append_decoded(std::string& out, std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    std::string_view rest = text.substr(i);
    size_t used = 1;
    if (rest.substr(0, 4) == "&lt;")
      out += '<', used = 4;
    else if (rest.substr(0, 4) == "&gt;")
      out += '>', used = 4;
    else if (rest.substr(0, 5) == "&amp;")
      out += '&', used = 5;
    else
      out += text[i];
    i += used;
  }
}

std::string decoded(std::string_view text) {
  std::string out;
  append_decoded(out, text);
  return out;
}

// sigil followed by text (built by appending: GCC 12 misreads "@" + std::string&& as overlapping).
std::string prefixed(char sigil, std::string_view text) {
  std::string out(1, sigil);
  out += text;
  return out;
}

// The text a Slack token (what is between < and >) stands for.
std::string token_text(std::string_view body, const SlackUserResolver& resolve) {
  size_t bar = body.find('|');
  std::string_view head = body.substr(0, bar);
  std::string label = bar == std::string_view::npos ? std::string() : decoded(body.substr(bar + 1));
  if (head.empty()) return label;
  if (head[0] == '@') {
    std::string id(head.substr(1));
    std::string name = resolve ? resolve(id) : std::string();
    if (!name.empty()) return prefixed('@', name);
    if (!label.empty()) return label[0] == '@' ? label : prefixed('@', label);
    return prefixed('@', decoded(id));
  }
  if (head[0] == '#') return prefixed('#', label.empty() ? decoded(head.substr(1)) : label);
  if (head[0] == '!') {
    if (!label.empty()) return label;
    return prefixed('@', decoded(head.substr(1, head.find('^') - 1)));
  }
  std::string url = decoded(head);
  if (url.rfind("mailto:", 0) == 0) return label.empty() ? url.substr(7) : label;
  std::string_view bare = url;
  for (std::string_view scheme : {"http://", "https://"})
    if (bare.substr(0, scheme.size()) == scheme) bare.remove_prefix(scheme.size());
  if (label.empty() || label == url || label == bare) return label.empty() ? url : label;
  std::string out = label;
  out += " (";
  out += url;
  out += ')';
  return out;
}

size_t byte_offset_of(std::string_view text, size_t code_points) {
  size_t n = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (n == code_points) return i;
    ++n;
  }
  return text.size();
}

bool is_fence_line(std::string_view line) {
  size_t i = line.find_first_not_of(" \t");
  return i != std::string_view::npos && line.substr(i, 3) == "```";
}

// Whether text, read from a state inside (in_code) or outside a code block, ends inside one.
bool ends_in_code(std::string_view text, bool in_code) {
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    if (is_fence_line(text.substr(start, end - start))) in_code = !in_code;
    start = end + 1;
  }
  return in_code;
}

// Where to cut span (the most a part may hold), read from in_code: the last blank line, newline
// or space outside a code block, then a newline or space inside one, past the first fifth; else
// span's end. Returns a byte offset into span.
size_t cut_point(std::string_view span, bool in_code) {
  size_t blank = 0, line_out = 0, space_out = 0, line_in = 0, space_in = 0;
  bool code = in_code;
  for (size_t start = 0; start < span.size();) {
    size_t nl = span.find('\n', start);
    size_t end = nl == std::string_view::npos ? span.size() : nl;
    std::string_view line = span.substr(start, end - start);
    bool fence = is_fence_line(line);
    for (size_t p = 0; p < line.size() && !fence; ++p)
      if (line[p] == ' ') (code ? space_in : space_out) = start + p + 1;
    if (fence) code = !code;
    if (nl == std::string_view::npos) break;
    (code ? line_in : line_out) = nl + 1;
    if (!code && line.find_first_not_of(" \t") == std::string_view::npos) blank = nl + 1;
    start = nl + 1;
  }
  for (size_t b : {blank, line_out, line_in, space_out, space_in})
    if (b > span.size() / 5) return b;
  return span.size();
}

std::string trim_newlines(std::string_view s) {
  size_t b = s.find_first_not_of('\n');
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of('\n') - b + 1));
}

// The parts of text with room for labels of `digits` digits (no labels added).
std::vector<std::string> cut_parts(std::string_view text, size_t max_chars, size_t digits) {
  const size_t label = 12 + 2 * digits, fences = 8;  // "\n(Part i of n)", "```\n" + "\n```"
  std::vector<std::string> parts;
  bool in_code = false;
  while (!text.empty()) {
    std::string prefix = in_code ? "```\n" : "";
    size_t budget = max_chars - label - fences;
    size_t limit = byte_offset_of(text, budget);
    size_t cut = limit >= text.size() ? text.size() : cut_point(text.substr(0, limit), in_code);
    std::string_view head = text.substr(0, cut);
    bool open_after = ends_in_code(head, in_code);
    std::string part = prefix + std::string(head);
    text.remove_prefix(cut);
    if (!open_after) {
      part = trim_newlines(part);
      size_t b = text.find_first_not_of('\n');
      text.remove_prefix(b == std::string_view::npos ? text.size() : b);
    } else {
      if (!part.empty() && part.back() != '\n') part += '\n';
      part += "```";
      // The block closes right where the next part would reopen it: drop that fence instead.
      size_t nl = text.find('\n');
      if (is_fence_line(text.substr(0, nl))) {
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        open_after = false;
      }
    }
    in_code = open_after;
    if (!trim_newlines(part).empty()) parts.push_back(std::move(part));
  }
  return parts;
}

}  // namespace

std::string mrkdwn_to_text(std::string_view s, const SlackUserResolver& resolve) {
  std::string out;
  size_t done = 0;
  for (size_t i = s.find('<'); i != std::string_view::npos; i = s.find('<', i + 1)) {
    size_t end = s.find_first_of("<>\n", i + 1);
    if (end == std::string_view::npos) break;
    if (s[end] != '>') continue;
    append_decoded(out, s.substr(done, i - done));
    out += token_text(s.substr(i + 1, end - i - 1), resolve);
    done = end + 1;
    i = end;
  }
  append_decoded(out, s.substr(done));
  return out;
}

std::vector<std::string> split_mrkdwn(std::string_view text, size_t max_chars) {
  if (max_chars < 64) max_chars = 64;
  if (code_points(text) <= max_chars) {
    if (text.empty()) return {};
    return {std::string(text)};
  }
  std::vector<std::string> parts;
  for (size_t digits = 1;; ++digits) {
    parts = cut_parts(text, max_chars, digits);
    if (std::to_string(parts.size()).size() <= digits) break;
  }
  if (parts.size() == 1) return parts;
  for (size_t i = 0; i < parts.size(); ++i)
    parts[i] += "\n(Part " + std::to_string(i + 1) + " of " + std::to_string(parts.size()) + ")";
  return parts;
}

}  // namespace pf
