// gitignore parsing and wildmatch. Follows gitignore(5): blank lines and '#' comments skipped,
// trailing unescaped spaces trimmed, '!' negates, a trailing '/' matches directories only, a
// '/' elsewhere anchors the pattern to the ignore file's directory.
#include "index/ignore.h"

#include <cctype>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace pf {
namespace {

bool match_class(std::string_view& p, unsigned char c, bool* ok) {
  // p starts just after '['. Returns whether c is in the class; advances p past ']'.
  size_t i = 0;
  bool negate = false;
  if (i < p.size() && (p[i] == '!' || p[i] == '^')) {
    negate = true;
    ++i;
  }
  bool matched = false;
  bool first = true;
  while (i < p.size() && (p[i] != ']' || first)) {
    first = false;
    if (p[i] == '[' && i + 1 < p.size() && p[i + 1] == ':') {
      size_t end = p.find(":]", i + 2);
      if (end != std::string_view::npos) {
        std::string_view name = p.substr(i + 2, end - i - 2);
        bool in = (name == "alpha" && std::isalpha(c)) || (name == "digit" && std::isdigit(c)) ||
                  (name == "alnum" && std::isalnum(c)) || (name == "space" && std::isspace(c)) ||
                  (name == "upper" && std::isupper(c)) || (name == "lower" && std::islower(c)) ||
                  (name == "punct" && std::ispunct(c)) || (name == "xdigit" && std::isxdigit(c));
        matched |= in;
        i = end + 2;
        continue;
      }
    }
    unsigned char lo = static_cast<unsigned char>(p[i]);
    if (lo == '\\' && i + 1 < p.size()) lo = static_cast<unsigned char>(p[++i]);
    ++i;
    if (i + 1 < p.size() && p[i] == '-' && p[i + 1] != ']') {
      unsigned char hi = static_cast<unsigned char>(p[i + 1]);
      if (hi == '\\' && i + 2 < p.size()) hi = static_cast<unsigned char>(p[++i + 1]);
      i += 2;
      matched |= (c >= lo && c <= hi);
    } else {
      matched |= (c == lo);
    }
  }
  if (i >= p.size()) {
    *ok = false;  // unterminated class: git treats the pattern as not matching
    return false;
  }
  p.remove_prefix(i + 1);
  *ok = true;
  return matched != negate;
}

// As in git's wildmatch, a failed match also says how far the failure reaches, so that a '*'
// stops trying longer texts once trying cannot help: without this, patterns like "*?*?*?*x"
// backtrack exponentially (a 200-byte .gitignore line kept the fuzzer busy for 29 s).
enum class Wild : uint8_t {
  kMatch,
  kNoMatch,
  kAbortAll,         // the text ran out: a shorter remainder cannot match either
  kAbortToStarStar,  // a '*' met a '/': only an enclosing "**" can skip past it
};

// One match of a pattern against a text. Each "**/" tries the rest of the pattern after every
// '/' of the text, so k of them alone would try O(n^k) splits ("**/**/**/.../p" took the fuzzer
// 44 s on a 433-byte line). The outcome of the rest of the pattern at a text position does not
// depend on how the match got there, so it is computed once per (pattern, text) offset pair.
class WildMatcher {
 public:
  WildMatcher(std::string_view pattern, std::string_view text) : pattern_(pattern), text_(text) {}

  bool run() { return wild(pattern_, text_, true) == Wild::kMatch; }

 private:
  Wild wild(std::string_view p, std::string_view t, bool at_segment_start) {
    while (!p.empty()) {
      char pc = p[0];
      if (pc == '*') {
        bool dbl = p.size() >= 2 && p[1] == '*';
        if (dbl && at_segment_start && (p.size() == 2 || p[2] == '/')) {
          // "**" as a whole segment: any number of directories.
          if (p.size() == 2) return Wild::kMatch;  // trailing "**": everything below
          std::string_view rest = p.substr(3);
          // "**/**/" is "**/": a run of them collapses (git does the same).
          while (rest.size() >= 3 && rest.substr(0, 3) == "**/") rest.remove_prefix(3);
          // "**/" matches zero or more leading directories.
          return any_segment(rest, t);
        }
        // Plain '*' (or "**" not forming a segment): anything but '/'.
        while (!p.empty() && p[0] == '*') p.remove_prefix(1);
        if (p.empty())
          return t.find('/') == std::string_view::npos ? Wild::kMatch : Wild::kAbortToStarStar;
        for (size_t i = 0; i < t.size(); ++i) {
          Wild r = wild(p, t.substr(i), false);
          if (r != Wild::kNoMatch) return r;
          if (t[i] == '/') return Wild::kAbortToStarStar;
        }
        return Wild::kAbortAll;
      }
      if (t.empty()) return Wild::kAbortAll;
      unsigned char tc = static_cast<unsigned char>(t[0]);
      if (pc == '?') {
        if (tc == '/') return Wild::kNoMatch;
        p.remove_prefix(1);
      } else if (pc == '[') {
        if (tc == '/') return Wild::kNoMatch;
        std::string_view rest = p.substr(1);
        bool ok = false;
        bool in = match_class(rest, tc, &ok);
        if (!ok) return Wild::kAbortAll;  // an unterminated class matches nothing anywhere
        if (!in) return Wild::kNoMatch;
        p = rest;
      } else {
        if (pc == '\\' && p.size() >= 2) {
          p.remove_prefix(1);
          pc = p[0];
        }
        if (static_cast<unsigned char>(pc) != tc) return Wild::kNoMatch;
        p.remove_prefix(1);
      }
      at_segment_start = (tc == '/');
      t.remove_prefix(1);
    }
    return t.empty() ? Wild::kMatch : Wild::kNoMatch;
  }

  // The pattern after a "**/" against t and then each later suffix of t that starts a segment,
  // until one matches or aborts the whole match: memoized per (pattern, text) offsets, so each
  // pair is worked out once, and the chain of later suffixes is followed without recursion
  // ("**/" 730 times against 750 directories took 29 s when every pair tried every suffix).
  Wild any_segment(std::string_view p, std::string_view t) {
    uint64_t base = static_cast<uint64_t>(p.data() - pattern_.data()) << 32;
    std::vector<uint64_t> chain;  // suffixes tried, waiting for the chain's outcome
    Wild r = Wild::kNoMatch;
    while (true) {
      uint64_t key = base | static_cast<uint64_t>(t.data() - text_.data());
      if (auto found = any_memo_.find(key); found != any_memo_.end()) {
        r = found->second;
        break;
      }
      chain.push_back(key);
      r = after_star_star(p, t);
      if (r != Wild::kNoMatch && r != Wild::kAbortToStarStar) break;
      size_t slash = t.find('/');
      if (slash == std::string_view::npos) {
        r = Wild::kNoMatch;
        break;
      }
      t.remove_prefix(slash + 1);
    }
    for (uint64_t key : chain) any_memo_.emplace(key, r);
    return r;
  }
  // The pattern after a "**/" against a text suffix that starts a path segment, memoized.
  Wild after_star_star(std::string_view p, std::string_view t) {
    uint64_t key = (static_cast<uint64_t>(p.data() - pattern_.data()) << 32) |
                   static_cast<uint64_t>(t.data() - text_.data());
    auto found = memo_.find(key);
    if (found != memo_.end()) return found->second;
    Wild r = wild(p, t, true);
    memo_.emplace(key, r);
    return r;
  }

  std::string_view pattern_, text_;
  std::unordered_map<uint64_t, Wild> memo_, any_memo_;
};

// The longest run of glob's literal bytes before its first class or escape: a match holds it.
// A '/' at either end of a run is left out, because "**/" and "/**" may match nothing ("**/foo"
// matches "foo").
std::string longest_literal_run(std::string_view glob) {
  std::string_view best;
  size_t start = 0;
  for (size_t i = 0; i <= glob.size(); ++i) {
    const bool end = i == glob.size() || glob[i] == '*' || glob[i] == '?' || glob[i] == '[' ||
                     glob[i] == '\\';
    if (!end) continue;
    std::string_view run = glob.substr(start, i - start);
    while (!run.empty() && run.front() == '/') run.remove_prefix(1);
    while (!run.empty() && run.back() == '/') run.remove_suffix(1);
    if (run.size() > best.size()) best = run;
    if (i < glob.size() && (glob[i] == '[' || glob[i] == '\\')) break;
    start = i + 1;
  }
  return std::string(best);
}

// The byte every match of glob ends with: its last, unless that is '*', '?', ']', '/' or
// escaped (then -1: any).
int last_byte(std::string_view glob) {
  if (glob.empty()) return -1;
  const char c = glob.back();
  if (c == '*' || c == '?' || c == ']' || c == '/' || c == '\\') return -1;
  if (glob.size() > 1 && glob[glob.size() - 2] == '\\') return -1;
  return static_cast<unsigned char>(c);
}

}  // namespace

bool wildmatch(std::string_view pattern, std::string_view text) {
  // Offsets are packed into 32 bits each; no ignore line or path comes near 4 GiB.
  if (pattern.size() >= UINT32_MAX || text.size() >= UINT32_MAX) return false;
  return WildMatcher(pattern, text).run();
}

IgnoreFile::IgnoreFile(std::string base, std::string_view content) : base_(std::move(base)) {
  size_t pos = 0;
  while (pos <= content.size()) {
    size_t nl = content.find('\n', pos);
    std::string_view line =
        content.substr(pos, nl == std::string_view::npos ? content.npos : nl - pos);
    pos = (nl == std::string_view::npos) ? content.size() + 1 : nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // Trailing spaces are trimmed unless escaped with a backslash.
    while (!line.empty() && line.back() == ' ') {
      size_t bs = 0;
      for (size_t i = line.size() - 1; i > 0 && line[i - 1] == '\\'; --i) ++bs;
      if (bs % 2 == 1) break;
      line.remove_suffix(1);
    }
    if (line.empty() || line[0] == '#') continue;
    Pattern pat;
    if (line[0] == '!') {
      pat.negate = true;
      line.remove_prefix(1);
    } else if (line[0] == '\\' && line.size() > 1 && (line[1] == '!' || line[1] == '#')) {
      line.remove_prefix(1);
    }
    if (!line.empty() && line.back() == '/') {
      pat.dir_only = true;
      line.remove_suffix(1);
    }
    if (line.empty()) continue;
    if (line.find('/') != std::string_view::npos) {
      pat.anchored = true;
      if (line[0] == '/') line.remove_prefix(1);
    }
    if (line.empty()) continue;
    pat.glob = std::string(line);
    pat.head = pat.glob.find_first_of("*?[\\");
    if (pat.head == std::string::npos) {
      pat.kind = Pattern::kLiteral;
    } else if (pat.glob[0] == '*' && !pat.anchored && pat.glob.size() > 1 &&
               pat.glob.find_first_of("*?[\\/", 1) == std::string::npos) {
      pat.kind = Pattern::kSuffix;  // "*.o" against a name, which holds no '/'
    } else {
      pat.need = longest_literal_run(pat.glob);
    }
    pat.last = last_byte(pat.glob);
    patterns_.push_back(std::move(pat));
  }
}

bool IgnoreFile::Pattern::matches(std::string_view text) const {
  switch (kind) {
    case kLiteral:
      return text == glob;
    case kSuffix:
      return text.size() >= glob.size() - 1 &&
             text.substr(text.size() - (glob.size() - 1)) == std::string_view(glob).substr(1);
    case kGlob:
      break;
  }
  if (text.substr(0, head) != std::string_view(glob).substr(0, head)) return false;
  if (!need.empty() && text.find(need) == std::string_view::npos) return false;
  return wildmatch(glob, text);
}

IgnoreVerdict IgnoreFile::match(std::string_view rel, bool is_dir) const {
  // Make rel relative to this file's directory.
  if (!base_.empty()) {
    if (rel.size() <= base_.size() || rel.compare(0, base_.size(), base_) != 0 ||
        rel[base_.size()] != '/')
      return IgnoreVerdict::kNone;
    rel.remove_prefix(base_.size() + 1);
  }
  size_t slash = rel.rfind('/');
  std::string_view name = slash == std::string_view::npos ? rel : rel.substr(slash + 1);
  const int last = rel.empty() ? -2 : static_cast<unsigned char>(rel.back());
  for (auto it = patterns_.rbegin(); it != patterns_.rend(); ++it) {
    if ((it->dir_only && !is_dir) || (it->last >= 0 && it->last != last)) continue;
    bool hit = it->matches(it->anchored ? rel : name);
    if (hit) return it->negate ? IgnoreVerdict::kInclude : IgnoreVerdict::kIgnore;
  }
  return IgnoreVerdict::kNone;
}

}  // namespace pf
