// Markdown inline content to mrkdwn (see mrkdwn_inline.h): a tokenizer that turns code spans,
// links, URLs, Slack tokens and escapes into finished text and keeps runs of *, _ and ~ as
// delimiters, then CommonMark's delimiter-stack pass ("process emphasis") that pairs them.
#include "chat/slack/mrkdwn_inline.h"

#include <array>
#include <cstddef>
#include <vector>

namespace pf::slack_internal {
namespace {

constexpr size_t kNone = static_cast<size_t>(-1);
constexpr size_t kMaxScan = 2048;  // the longest URL, link target or Slack token looked for
constexpr int kMaxDepth = 4;       // link labels inside link labels

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool is_punct(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  return (u >= 33 && u <= 47) || (u >= 58 && u <= 64) || (u >= 91 && u <= 96) ||
         (u >= 123 && u <= 126);
}
bool is_alnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// A text piece, or a run of one delimiter character with what the pairing made of it.
struct Tok {
  std::string text;
  char c = 0;  // '*', '_' or '~'; 0 for text
  int count = 0, orig = 0;
  bool can_open = false, can_close = false;
  std::string open_marks, close_marks;
};

// After a run of backticks at i: the end of the code span it opens (written to out), or 0.
// failed holds run lengths with no closer left in the line.
size_t code_span(std::string_view s, size_t i, std::vector<bool>& failed, std::string& out) {
  size_t run = 0;
  while (i + run < s.size() && s[i + run] == '`') ++run;
  if (run < failed.size() && failed[run]) return 0;
  for (size_t j = i + run; j < s.size();) {
    if (s[j] != '`') {
      ++j;
      continue;
    }
    size_t r = 0;
    while (j + r < s.size() && s[j + r] == '`') ++r;
    if (r == run) {
      std::string_view body = s.substr(i + run, j - i - run);
      if (body.size() >= 2 && body.front() == ' ' && body.back() == ' ' &&
          body.find_first_not_of(' ') != std::string_view::npos)
        body = body.substr(1, body.size() - 2);
      out += '`';
      append_escaped(out, body);
      out += '`';
      return j + r;
    }
    j += r;
  }
  if (run >= failed.size()) failed.resize(run + 1, false);
  failed[run] = true;
  return 0;
}

// A Slack mention or link the model wrote in Slack's own form, starting at s[i] == '<': the
// index after its '>', or 0.
size_t slack_token(std::string_view s, size_t i) {
  size_t end = kNone;
  for (size_t j = i + 1; j < s.size() && j - i <= kMaxScan; ++j) {
    if (s[j] == '<' || s[j] == '\n') return 0;
    if (s[j] == '>') {
      end = j;
      break;
    }
  }
  if (end == kNone || end == i + 1) return 0;
  std::string_view body = s.substr(i + 1, end - i - 1);
  std::string_view head = body.substr(0, body.find('|'));
  if (head.empty()) return 0;
  auto ids = [](std::string_view id) {
    if (id.empty()) return false;
    for (char c : id)
      if (!is_alnum(c)) return false;
    return true;
  };
  bool ok = false;
  if (head[0] == '@' || head[0] == '#')
    ok = ids(head.substr(1));
  else if (head[0] == '!')
    ok = head == "!here" || head == "!channel" || head == "!everyone" ||
         (starts_with(head, "!subteam^") && ids(head.substr(9)));
  else if (starts_with(head, "http://") || starts_with(head, "https://") ||
           starts_with(head, "mailto:")) {
    ok = head.find(' ') == std::string_view::npos && head.find('\t') == std::string_view::npos;
  }
  return ok ? end + 1 : 0;
}

// A link target made safe inside <url|label>: no spaces, bars or angle brackets; & escaped.
std::string slack_url(std::string_view url) {
  std::string out;
  for (char c : url) {
    if (c == ' ')
      out += "%20";
    else if (c == '|')
      out += "%7C";
    else if (c == '<')
      out += "%3C";
    else if (c == '>')
      out += "%3E";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

// The "(dest "title")" after a link's ']' at s[p] == '(': the index after ')', or 0.
size_t link_target(std::string_view s, size_t p, std::string& url) {
  auto skip = [&](size_t q) {
    while (q < s.size() && (s[q] == ' ' || s[q] == '\t')) ++q;
    return q;
  };
  size_t q = skip(p + 1);
  if (q < s.size() && s[q] == '<') {
    size_t close = s.find_first_of("<>\n", q + 1);
    if (close == std::string_view::npos || s[close] != '>' || close - q > kMaxScan) return 0;
    url = std::string(s.substr(q + 1, close - q - 1));
    q = close + 1;
  } else {
    int parens = 0;
    size_t start = q;
    for (; q < s.size() && !is_space(s[q]) && q - start <= kMaxScan; ++q) {
      if (s[q] == '\\' && q + 1 < s.size() && is_punct(s[q + 1])) {
        url += s[++q];
        continue;
      }
      if (s[q] == '(' && ++parens > 32) return 0;
      if (s[q] == ')' && parens-- == 0) break;
      url += s[q];
    }
    if (q - start > kMaxScan) return 0;
  }
  q = skip(q);
  if (q < s.size() && (s[q] == '"' || s[q] == '\'' || s[q] == '(')) {
    char close = s[q] == '(' ? ')' : s[q];
    size_t end = s.find(close, q + 1);
    if (end == std::string_view::npos) return 0;
    q = skip(end + 1);
  }
  return q < s.size() && s[q] == ')' ? q + 1 : 0;
}

// Each '[' mapped to its matching ']' (escapes skipped), kNone when unmatched.
std::vector<size_t> bracket_pairs(std::string_view s) {
  std::vector<size_t> close_of(s.size(), kNone), open;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\')
      ++i;
    else if (s[i] == '[')
      open.push_back(i);
    else if (s[i] == ']' && !open.empty()) {
      close_of[open.back()] = i;
      open.pop_back();
    }
  }
  return close_of;
}

// A link or image whose '[' is at s[open]: written to out as <url|label>; the index after it,
// or 0 when it is no link.
size_t link(std::string_view s, size_t open, const std::vector<size_t>& close_of, int depth,
            std::string& out) {
  size_t close = close_of[open];
  if (close == kNone || close + 1 >= s.size() || s[close + 1] != '(') return 0;
  std::string url;
  size_t end = link_target(s, close + 1, url);
  if (end == 0) return 0;
  std::string_view raw = s.substr(open + 1, close - open - 1);
  std::string label;
  if (depth < kMaxDepth)
    label = inline_to_mrkdwn(raw, Marks::kNone, depth + 1);
  else
    append_escaped(label, raw);
  if (url.empty()) {
    out += label;
    return end;
  }
  std::string target = slack_url(url);
  out += '<';
  out += target;
  if (!label.empty() && label != target) {
    out += '|';
    out += label;
  }
  out += '>';
  return end;
}

// A bare URL at s[i]: copied (escaped) to out without trailing punctuation; the index after
// it, or 0.
size_t bare_url(std::string_view s, size_t i, std::string& out) {
  if (i > 0 && (is_alnum(s[i - 1]) || s[i - 1] == '/')) return 0;
  std::string_view rest = s.substr(i);
  if (!starts_with(rest, "http://") && !starts_with(rest, "https://")) return 0;
  size_t end = i;
  while (end < s.size() && !is_space(s[end]) && s[end] != '<' && s[end] != '>' && s[end] != '`')
    ++end;
  int open = 0;
  for (size_t j = i; j < end; ++j) open += s[j] == '(' ? 1 : s[j] == ')' ? -1 : 0;
  while (end > i) {
    char c = s[end - 1];
    if (c == ')' && open < 0)
      ++open;
    else if (std::string_view(".,:;!?\"'*_~").find(c) == std::string_view::npos)
      break;
    --end;
  }
  if (end - i <= 8) return 0;
  append_escaped(out, s.substr(i, end - i));
  return end;
}

// A run of c starting at i, with CommonMark's flanking rules (line ends count as spaces).
Tok delimiter_run(std::string_view s, size_t i) {
  Tok t;
  t.c = s[i];
  size_t n = 0;
  while (i + n < s.size() && s[i + n] == t.c) ++n;
  t.count = t.orig = static_cast<int>(n);
  t.text.assign(n, t.c);
  char before = i > 0 ? s[i - 1] : ' ', after = i + n < s.size() ? s[i + n] : ' ';
  bool left = !is_space(after) && (!is_punct(after) || is_space(before) || is_punct(before));
  bool right = !is_space(before) && (!is_punct(before) || is_space(after) || is_punct(after));
  if (t.c == '_') {
    t.can_open = left && (!right || is_punct(before));
    t.can_close = right && (!left || is_punct(after));
  } else {
    t.can_open = left;
    t.can_close = right;
  }
  if (t.c == '~' && n > 2) t.can_open = t.can_close = false;
  return t;
}

std::vector<Tok> tokenize(std::string_view s, int depth) {
  std::vector<Tok> toks;
  std::string text;
  std::vector<bool> failed_ticks;
  std::vector<size_t> close_of = bracket_pairs(s);
  auto flush = [&] {
    if (text.empty()) return;
    toks.emplace_back();
    toks.back().text = std::move(text);
    text.clear();
  };
  for (size_t i = 0; i < s.size();) {
    char c = s[i];
    size_t end = 0;
    if (c == '\\' && i + 1 == s.size()) break;  // a hard line break
    if (c == '\\' && i + 1 < s.size() && is_punct(s[i + 1])) {
      append_escaped(text, s.substr(i + 1, 1));
      i += 2;
      continue;
    }
    if (c == '`')
      end = code_span(s, i, failed_ticks, text);
    else if (c == '<' && (end = slack_token(s, i)) != 0)
      text.append(s.substr(i, end - i));
    else if (c == '!' && i + 1 < s.size() && s[i + 1] == '[')
      end = link(s, i + 1, close_of, depth, text);
    else if (c == '[')
      end = link(s, i, close_of, depth, text);
    else if (c == 'h')
      end = bare_url(s, i, text);
    else if (c == '*' || c == '_' || c == '~') {
      flush();
      toks.push_back(delimiter_run(s, i));
      i += toks.back().text.size();
      continue;
    }
    if (end != 0) {
      i = end;
      continue;
    }
    size_t n = 1;
    if (c == '`')
      while (i + n < s.size() && s[i + n] == '`') ++n;
    append_escaped(text, s.substr(i, n));
    i += n;
  }
  flush();
  return toks;
}

std::string marker(char c, int use, Marks marks) {
  if (marks == Marks::kNone) return "";
  if (c == '~') return "~";
  if (use == 2) return marks == Marks::kAll ? "*" : "";
  return "_";
}

// CommonMark's "process emphasis" over the whole line: each closer pairs with the nearest
// opener of its character below it on the stack (strong when both have two or more).
void pair_delimiters(std::vector<Tok>& toks, Marks marks) {
  std::vector<size_t> stack;        // delimiter tokens that may open, oldest first
  std::array<size_t, 18> bottom{};  // per class: stack entries below were no match
  for (size_t k = 0; k < toks.size(); ++k) {
    Tok& cl = toks[k];
    if (cl.c == 0) continue;
    size_t cls = (cl.c == '*' ? 0 : cl.c == '_' ? 6 : 12) + (cl.can_open ? 3 : 0) + cl.orig % 3;
    while (cl.can_close && cl.count > 0) {
      size_t found = kNone;
      for (size_t sp = stack.size(); sp > bottom[cls] && found == kNone; --sp) {
        Tok& op = toks[stack[sp - 1]];
        if (op.c != cl.c || op.count == 0) continue;
        if (cl.c == '~' ? op.orig != cl.orig
                        : (op.can_close || cl.can_open) && (op.orig + cl.orig) % 3 == 0 &&
                              !(op.orig % 3 == 0 && cl.orig % 3 == 0))
          continue;
        found = sp - 1;
      }
      if (found == kNone) {
        bottom[cls] = stack.size();
        break;
      }
      Tok& op = toks[stack[found]];
      int use = cl.c == '~' ? cl.count : (op.count >= 2 && cl.count >= 2 ? 2 : 1);
      std::string m = marker(cl.c, use, marks);
      op.open_marks = m + op.open_marks;
      cl.close_marks += m;
      op.count -= use;
      cl.count -= use;
      stack.resize(op.count > 0 ? found + 1 : found);
      for (size_t& b : bottom) b = std::min(b, stack.size());
    }
    if (cl.can_open && cl.count > 0) stack.push_back(k);
  }
}

}  // namespace

void append_escaped(std::string& out, std::string_view text) {
  for (char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else
      out += c;
  }
}

std::string inline_to_mrkdwn(std::string_view line, Marks marks, int depth) {
  std::vector<Tok> toks = tokenize(line, depth);
  pair_delimiters(toks, marks);
  std::string out;
  for (const Tok& t : toks) {
    if (t.c == 0) {
      out += t.text;
      continue;
    }
    out += t.close_marks;
    out.append(static_cast<size_t>(t.count), t.c);
    out += t.open_marks;
  }
  return out;
}

}  // namespace pf::slack_internal
