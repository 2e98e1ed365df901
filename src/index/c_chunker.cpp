// The token scan behind c_chunker.h: the text as a flat list of tokens (words, punctuation,
// literals, comments, directives) with their rows and paired brackets; the top-level items cut
// at a semicolon or a function body's closing brace; each classified as the syntax-tree rules
// for C would; then the layout of chunk_layout.h, splitting at the statements of braces.
#include "index/c_chunker.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "index/c_bodies.h"
#include "index/chunk_layout.h"

namespace pf {
namespace {

constexpr int kMaxSplitDepth = 48;
constexpr size_t kNone = SIZE_MAX;

enum class Kind : uint8_t { kWord, kPunct, kLiteral, kComment, kDirective };

struct Tok {
  uint32_t b, e;      // bytes [b, e)
  int row, last_row;  // rows of its first and last byte
  uint32_t mate;      // a bracket's partner (index), else 0
  Kind kind;
  char c;  // a kPunct's character
};

const std::array<bool, 256> kWordByte = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c)
    t[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '$' || c >= 0x80;
  return t;
}();

int newlines(std::string_view t, size_t b, size_t e) {
  return static_cast<int>(std::count(t.begin() + static_cast<std::ptrdiff_t>(b),
                                     t.begin() + static_cast<std::ptrdiff_t>(e), '\n'));
}

// The text's tokens; null, or why it cannot be scanned.
const char* tokenize(std::string_view t, std::vector<Tok>* toks) {
  int row = 0;
  bool line_start = true;
  for (size_t i = 0, n = t.size(); i < n;) {
    auto c = static_cast<unsigned char>(t[i]);
    if (c == '\n') {
      ++row, ++i;
      line_start = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
      continue;
    }
    Kind kind = Kind::kPunct;
    size_t e = i + 1;
    if (line_start && c == '#') {
      kind = Kind::kDirective, e = c_scan::skip_directive(t, i);
    } else if (c_scan::comment_at(t, i)) {
      kind = Kind::kComment, e = c_scan::skip_comment(t, i);
    } else if (c == '"' || c == '\'') {
      kind = Kind::kLiteral, e = c_scan::skip_literal(t, i);
    } else if (kWordByte[c]) {
      kind = Kind::kWord;
      while (e < n && kWordByte[static_cast<unsigned char>(t[e])]) ++e;
    }
    if (e == std::string_view::npos) return kCScanUnterminated;
    int first = row;
    if (kind == Kind::kDirective || kind == Kind::kComment || kind == Kind::kLiteral)
      row += newlines(t, i, e);
    toks->push_back(Tok{static_cast<uint32_t>(i), static_cast<uint32_t>(e), first, row, 0, kind,
                        kind == Kind::kPunct ? static_cast<char>(c) : '\0'});
    line_start = line_start && kind == Kind::kDirective;
    i = e;
  }
  return nullptr;
}

// Pairs (), [] and {}; false where they do not pair up.
bool pair_brackets(std::vector<Tok>& toks) {
  std::vector<uint32_t> open;
  for (uint32_t i = 0; i < toks.size(); ++i) {
    Tok& t = toks[i];
    if (t.kind != Kind::kPunct) continue;
    if (t.c == '(' || t.c == '[' || t.c == '{') {
      open.push_back(i);
    } else if (t.c == ')' || t.c == ']' || t.c == '}') {
      if (open.empty()) return false;
      Tok& o = toks[open.back()];
      if ((o.c == '(') != (t.c == ')') || (o.c == '[') != (t.c == ']')) return false;
      o.mate = i, t.mate = open.back();
      open.pop_back();
    }
  }
  return open.empty();
}

bool keyword(std::string_view w) {
  static const char* const kKeywords[] = {
      "auto",     "break",  "case",     "char",   "const",    "continue", "default",  "do",
      "double",   "else",   "enum",     "extern", "float",    "for",      "goto",     "if",
      "inline",   "int",    "long",     "register", "restrict", "return", "short",    "signed",
      "sizeof",   "static", "struct",   "switch", "typedef",  "union",    "unsigned", "void",
      "volatile", "while",  "_Bool",    "bool",   "_Atomic",  "_Noreturn", "_Thread_local"};
  for (const char* k : kKeywords)
    if (w == k) return true;
  return false;
}

// An attribute or annotation macro (__init, __attribute__, __printf(1, 2), __acquires(x)):
// never the name a declaration declares.
bool attribute(std::string_view w) { return w.size() > 2 && w[0] == '_' && w[1] == '_'; }

struct Unit {
  int first, last;
  bool claimed = false, comment = false;
  Meta meta;
  size_t tb = 0, te = 0;  // its tokens [tb, te)

  Unit(int f, int l) : first(f), last(l) {}
};

struct Piece {
  int first, last;
  size_t tb, te;
  bool data;           // members or elements (split at ';' and ','), not statements
  bool group = false;  // an #if group inside braces: split at what it holds
};

class CScan {
 public:
  CScan(ChunkBuilder& out, std::string_view text, const std::vector<Tok>& toks,
        const ChunkLimits& limits)
      : out_(out), text_(text), toks_(toks), max_(limits.max_lines), window_(limits.window_lines) {}

  // The top-level units; null, or why the file cannot be chunked so.
  const char* collect(std::vector<Unit>* units) {
    int head = -1;  // the row of an #if, #else, ... line, kept for the next unit
    auto add = [&](Unit u) {
      if (head >= 0) u.first = std::min(u.first, head), head = -1;
      units->push_back(std::move(u));
    };
    for (size_t i = 0; i < toks_.size();) {
      const Tok& t = toks_[i];
      if (t.kind == Kind::kComment || t.kind == Kind::kDirective) {
        Unit u{t.row, t.last_row};
        u.tb = i, u.te = ++i;
        if (t.kind == Kind::kComment) {
          u.comment = true;
          add(std::move(u));
          continue;
        }
        std::string_view name = directive_name(t);
        if (name == "if" || name == "ifdef" || name == "ifndef" || name == "elif" ||
            name == "else" || name == "elifdef" || name == "elifndef") {
          if (head < 0) head = t.row;
        } else if (name == "endif" && head < 0 && !units->empty()) {
          units->back().last = std::max(units->back().last, t.last_row);
        } else {
          if (name == "define") classify_define(t, &u);
          add(std::move(u));
        }
        continue;
      }
      size_t end = 0, body = kNone;
      if (!item_end(i, &end, &body)) return kCScanUnbalanced;
      Unit u{t.row, toks_[end - 1].last_row};
      u.tb = i, u.te = end;
      classify(body, &u);
      add(std::move(u));
      i = end;
    }
    if (head >= 0) add(Unit{head, head});
    return nullptr;
  }

  void run(std::vector<Unit>& units) {
    lay_out_units(
        units, [&](const Unit& u, int free) { emit(u, std::max(u.first, free)); },
        [&](const std::vector<const Unit*>& pending, int free) {
          std::vector<Piece> pieces;
          for (const Unit* u : pending)
            pieces.push_back(Piece{std::max(u->first, free), u->last, u->tb, u->te, true});
          pack(pieces, pieces.front().first, pieces.back().last, Meta{"block", "", "", "", ""},
               0);
        });
  }

 private:
  std::string_view text(const Tok& t) const { return text_.substr(t.b, t.e - t.b); }
  bool punct(size_t i, char c) const {
    return i < toks_.size() && toks_[i].kind == Kind::kPunct && toks_[i].c == c;
  }
  bool word(size_t i, std::string_view w) const {
    return i < toks_.size() && toks_[i].kind == Kind::kWord && text(toks_[i]) == w;
  }
  // The next token at or after i, before end, that is neither comment nor directive; or end.
  size_t next_code(size_t i, size_t end) const {
    while (i < end && (toks_[i].kind == Kind::kComment || toks_[i].kind == Kind::kDirective)) ++i;
    return i;
  }

  static std::string_view directive_name(std::string_view line) {
    size_t i = 1;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t e = i;
    while (e < line.size() && kWordByte[static_cast<unsigned char>(line[e])]) ++e;
    return line.substr(i, e - i);
  }
  std::string_view directive_name(const Tok& t) const { return directive_name(text(t)); }

  // "#define NAME(" with no space before the parenthesis: a function-like macro, a function.
  void classify_define(const Tok& t, Unit* u) const {
    std::string_view line = text(t);
    size_t i = line.find("define") + 6;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t e = i;
    while (e < line.size() && kWordByte[static_cast<unsigned char>(line[e])]) ++e;
    if (e == i || e >= line.size() || line[e] != '(') return;
    u->claimed = true;
    u->meta.type = "function";
    u->meta.fn = u->meta.sym = std::string(line.substr(i, e - i));
  }

  // Where the item starting at token i ends (*end: one past its last token): after a ';' outside
  // brackets, or after the '}' of a function body: a '{' outside brackets after ')' with no '='
  // before it (*body: that '{'). False where a closing bracket comes first.
  bool item_end(size_t i, size_t* end, size_t* body) const {
    bool assigned = false;
    size_t prev = kNone;
    for (size_t j = i; j < toks_.size(); ++j) {
      const Tok& t = toks_[j];
      if (t.kind == Kind::kComment || t.kind == Kind::kDirective) continue;
      if (t.kind == Kind::kPunct) {
        if (t.c == ')' || t.c == ']' || t.c == '}') return false;  // closes what it did not open
        if (t.c == ';') {
          *end = j + 1;
          return true;
        }
        assigned = assigned || t.c == '=';
        if (t.c == '{' && *body == kNone && prev != kNone && punct(prev, ')') && !assigned) {
          *body = j;
          *end = t.mate + 1;
          return true;
        }
        if (t.c == '(' || t.c == '[' || t.c == '{') {
          j = t.mate;  // the group, whole
          if (t.c == '(' && prev == i && toks_[i].kind == Kind::kWord && ends_call(j)) {
            *end = j + 1;
            return true;
          }
          prev = j;
          continue;
        }
      }
      prev = j;
    }
    *end = toks_.size();
    return true;
  }

  // Whether a macro call at the top level ends with the ')' at j though no ';' follows
  // (DEFINE_OP(add, "fadd")): the next token, past comments, is a directive, or a word on a
  // later row.
  bool ends_call(size_t j) const {
    size_t k = j + 1;
    while (k < toks_.size() && toks_[k].kind == Kind::kComment) ++k;
    if (k == toks_.size()) return false;
    return toks_[k].kind == Kind::kDirective ||
           (toks_[k].kind == Kind::kWord && toks_[k].row > toks_[j].last_row);
  }

  // Sets what the item [u->tb, u->te) declares (body: its function body's '{', or kNone).
  void classify(size_t body, Unit* u) const {
    size_t first = next_code(u->tb, u->te);
    Meta& m = u->meta;
    if (body != kNone) {
      u->claimed = true;
      m.type = "function";
      m.fn = m.sym = function_name(u->tb, body);
      return;
    }
    if (word(first, "typedef")) {
      u->claimed = true;
      m.type = "type";
      m.sym = declarator_name(first + 1, u->te);
      return;
    }
    if (type_definition(u->tb, u->te, &m.sym)) {
      u->claimed = true;
      m.type = "type";
      return;
    }
    size_t second = next_code(first + 1, u->te);
    bool call = first < u->te && toks_[first].kind == Kind::kWord && punct(second, '(');
    if (!call && u->last - u->first >= 4 && !punct(first, ';')) {
      u->claimed = true;  // a large table or initialised object
      m.type = "module";
      m.sym = declarator_name(u->tb, u->te);
    }
  }

  // The name a function definition declares: the last word before a parenthesis outside
  // brackets that is not an attribute (int f(void) __acquires(x) -> f), else the first.
  std::string function_name(size_t tb, size_t body) const {
    std::string_view first, last;
    for (size_t j = tb; j < body; ++j) {
      const Tok& t = toks_[j];
      if (t.kind == Kind::kPunct && t.mate > j) {
        size_t w = j;
        while (w > tb && (toks_[w - 1].kind == Kind::kComment)) --w;
        if (t.c == '(' && w > tb && toks_[w - 1].kind == Kind::kWord) {
          std::string_view name = text(toks_[w - 1]);
          if (!keyword(name)) {
            if (first.empty()) first = name;
            if (!attribute(name)) last = name;
          }
        }
        j = t.mate;
      }
    }
    return std::string(last.empty() ? first : last);
  }

  // The first declarator's name in [tb, te): int a = 1 -> a; int (*fp)(void) -> fp;
  // int f(int) -> f; struct s {...} x[4] __aligned(8) -> x; DEFINE_MUTEX(m) -> DEFINE_MUTEX.
  std::string declarator_name(size_t tb, size_t te) const {
    std::string_view best;
    size_t prev = kNone;  // the previous word, if the previous token was one
    for (size_t j = tb; j < te; ++j) {
      const Tok& t = toks_[j];
      if (t.kind == Kind::kComment || t.kind == Kind::kDirective) continue;
      if (t.kind == Kind::kWord) {
        std::string_view w = text(t);
        if (!keyword(w) && !attribute(w)) best = w;
        prev = j;
        continue;
      }
      if (t.kind == Kind::kPunct) {
        if (t.c == '=' || t.c == ',' || t.c == ';' || t.c == '[' || t.c == ':') break;
        if (t.c == '(') {
          size_t in = next_code(j + 1, t.mate);
          while (punct(in, '*')) in = next_code(in + 1, t.mate);
          if (punct(next_code(j + 1, t.mate), '*') && in < t.mate && toks_[in].kind == Kind::kWord)
            return std::string(text(toks_[in]));  // (*name)
          size_t after = next_code(t.mate + 1, te);
          bool type_macro = after < te && toks_[after].kind == Kind::kWord &&
                            !attribute(text(toks_[after]));  // Array(int) name
          if (prev != kNone && !type_macro) {
            std::string_view w = text(toks_[prev]);
            if (!keyword(w) && !attribute(w)) return std::string(w);  // name(...)
          }
        }
        if (t.mate > j) j = t.mate;
      }
      prev = kNone;
    }
    return std::string(best);
  }

  // Whether [tb, te) is a struct, union or enum definition alone (struct s { ... };, attributes
  // allowed around it); *name: its tag, if any.
  bool type_definition(size_t tb, size_t te, std::string* name) const {
    size_t j = next_code(tb, te);
    while (j < te && toks_[j].kind == Kind::kWord &&
           (word(j, "static") || word(j, "const") || word(j, "volatile") ||
            attribute(text(toks_[j]))))
      j = skip_attribute(j, te);
    if (!(word(j, "struct") || word(j, "union") || word(j, "enum"))) return false;
    std::string_view tag;
    for (j = next_code(j + 1, te); j < te && toks_[j].kind == Kind::kWord;) {
      if (!attribute(text(toks_[j]))) tag = text(toks_[j]);
      j = skip_attribute(j, te);
    }
    if (!punct(j, '{')) return false;
    j = next_code(toks_[j].mate + 1, te);
    while (j < te && toks_[j].kind == Kind::kWord && attribute(text(toks_[j])))
      j = skip_attribute(j, te);
    if (!punct(j, ';')) return false;
    *name = std::string(tag);
    return true;
  }

  // Past the word at j and the parenthesized arguments that follow it (__aligned(8)).
  size_t skip_attribute(size_t j, size_t te) const {
    size_t k = next_code(j + 1, te);
    return punct(k, '(') ? next_code(toks_[k].mate + 1, te) : k;
  }

  void emit(const Unit& u, int first) {
    if (first > u.last) return;
    if (u.last - first + 1 <= max_) {
      out_.add(first, u.last, u.meta.type, u.meta.fn, u.meta.cls, u.meta.sym, u.meta.context);
      return;
    }
    split(Piece{first, u.last, u.tb, u.te, u.meta.type != "function"}, u.meta, 0);
  }

  void pack(const std::vector<Piece>& pieces, int first, int last, const Meta& m, int depth) {
    pack_pieces(out_, max_, pieces, first, last, m, [&](const Piece& p, int from, int to) {
      split(Piece{from, to, p.tb, p.te, p.data, p.group}, m, depth + 1);
    });
  }

  // Rows [p.first, p.last] of tokens [p.tb, p.te), over the cap: split at the statements (or
  // members, elements) of each brace group directly inside it; line windows if it has none.
  void split(const Piece& p, const Meta& m, int depth) {
    std::vector<Piece> pieces;
    if (depth < kMaxSplitDepth && p.group) {
      statements(p.tb + 1, p.te - 1, p.data, &pieces);
    } else if (depth < kMaxSplitDepth) {
      size_t prev = kNone;
      for (size_t j = p.tb; j < p.te; ++j) {
        const Tok& t = toks_[j];
        if (t.kind == Kind::kComment || t.kind == Kind::kDirective) continue;
        if (t.kind == Kind::kPunct && t.mate > j) {
          if (t.c == '{') {
            // An initializer's or a type's braces hold elements or members; a body's statements.
            bool data = p.data || punct(prev, '=') ||
                        (prev != kNone && toks_[prev].kind == Kind::kWord && !word(prev, "else") &&
                         !word(prev, "do"));
            statements(j + 1, t.mate, data, &pieces);
          }
          j = t.mate;
        }
        prev = j;
      }
    }
    std::vector<Piece> kept;
    int prev_last = p.first - 1;
    for (Piece q : pieces) {
      q.first = std::max(q.first, prev_last + 1), q.last = std::min(q.last, p.last);
      if (q.last < q.first) continue;
      kept.push_back(q);
      prev_last = q.last;
    }
    if (kept.empty()) {
      out_.add_windows(p.first, p.last, window_, m.type, m.fn, m.cls, m.sym, m.context);
      return;
    }
    pack(kept, p.first, p.last, m, depth);
  }

  // Appends the statements (data: the members or elements) of tokens [b, e): each ends at a ';'
  // (data: or ',') outside brackets, or a statement at the '}' of its block unless else, a do's
  // while, ';' or ',' follows. An #if group between them (to its #endif) is one piece, as
  // tree-sitter reads it; other comments and directives between them are pieces of their own.
  void statements(size_t b, size_t e, bool data, std::vector<Piece>* out) const {
    size_t s = kNone;
    auto piece = [&](size_t from, size_t to, bool group = false) {
      out->push_back(Piece{toks_[from].row, toks_[to - 1].last_row, from, to, data, group});
    };
    for (size_t k = b; k < e; ++k) {
      const Tok& t = toks_[k];
      if (s == kNone) {
        if (t.kind == Kind::kDirective) {
          size_t endif = matching_endif(k, e);
          if (endif != kNone) {
            piece(k, endif + 1, true);
            k = endif;
          } else {
            piece(k, k + 1);
          }
          continue;
        }
        if (t.kind == Kind::kComment) {
          piece(k, k + 1);
          continue;
        }
        s = k;
      }
      if (t.kind != Kind::kPunct) continue;
      if (t.mate > k) {
        k = t.mate;
        if (t.c != '{' || data) continue;
        size_t next = next_code(k + 1, e);
        if (word(next, "else") || (word(next, "while") && word(s, "do")) || punct(next, ';') ||
            punct(next, ','))
          continue;
        piece(s, k + 1);
        s = kNone;
      } else if (t.c == ';' || (data && t.c == ',')) {
        piece(s, k + 1);
        s = kNone;
      }
    }
    if (s != kNone) piece(s, e);
  }

  // The #endif that closes the #if, #ifdef or #ifndef at k, before e; kNone if there is none.
  size_t matching_endif(size_t k, size_t e) const {
    std::string_view name = directive_name(toks_[k]);
    if (name != "if" && name != "ifdef" && name != "ifndef") return kNone;
    int open = 0;
    for (size_t j = k; j < e; ++j) {
      if (toks_[j].kind != Kind::kDirective) continue;
      name = directive_name(toks_[j]);
      if (name == "if" || name == "ifdef" || name == "ifndef") ++open;
      if (name == "endif" && --open == 0) return j;
    }
    return kNone;
  }

  ChunkBuilder& out_;
  std::string_view text_;
  const std::vector<Tok>& toks_;
  int max_, window_;
};

// C++ a header may hold: "::", __cplusplus, extern "C", namespace, template <, class X {/:/;
// (not struct class), public: / private: / protected:, virtual.
bool holds_cpp(std::string_view text, const std::vector<Tok>& toks) {
  if (text.find("__cplusplus") != std::string_view::npos) return true;
  auto w = [&](size_t i, std::string_view s) {
    return i < toks.size() && toks[i].kind == Kind::kWord &&
           text.substr(toks[i].b, toks[i].e - toks[i].b) == s;
  };
  auto p = [&](size_t i, char c) {
    return i < toks.size() && toks[i].kind == Kind::kPunct && toks[i].c == c;
  };
  for (size_t i = 0; i < toks.size(); ++i) {
    const Tok& t = toks[i];
    if (t.kind == Kind::kPunct) {
      if (t.c == ':' && p(i + 1, ':') && toks[i + 1].b == t.e) return true;
      continue;
    }
    if (t.kind != Kind::kWord) continue;
    bool next_word = i + 1 < toks.size() && toks[i + 1].kind == Kind::kWord;
    if ((w(i, "namespace") && (next_word || p(i + 1, '{'))) || (w(i, "template") && p(i + 1, '<')) ||
        (w(i, "extern") && i + 1 < toks.size() && toks[i + 1].kind == Kind::kLiteral) ||
        ((w(i, "public") || w(i, "private") || w(i, "protected")) && p(i + 1, ':') &&
         !p(i + 2, ':')) ||
        (w(i, "virtual") && next_word))
      return true;
    if (w(i, "class") && next_word && !(i > 0 && (w(i - 1, "struct") || w(i - 1, "union") ||
                                                   w(i - 1, "enum"))) &&
        (p(i + 2, '{') || p(i + 2, ':') || p(i + 2, ';')))
      return true;
  }
  return false;
}

}  // namespace

const char* chunk_c(ChunkBuilder& out, std::string_view text, const ChunkLimits& limits,
                    bool reject_cpp) {
  if (text.size() >= UINT32_MAX) return kCScanUnterminated;
  std::vector<Tok> toks;
  toks.reserve(text.size() / 4);
  if (const char* why = tokenize(text, &toks)) return why;
  if (!pair_brackets(toks)) return kCScanUnbalanced;
  if (reject_cpp && holds_cpp(text, toks)) return kCScanCpp;
  CScan scan(out, text, toks, limits);
  std::vector<Unit> units;
  if (const char* why = scan.collect(&units)) return why;
  scan.run(units);
  return nullptr;
}

}  // namespace pf
