// Syntax-tree chunking. Top-level declarations (functions, classes, interfaces, types, enums,
// exported constants, CommonJS exports and prototype methods) become chunks of their own, with
// the comments directly above them; the code between them is packed into "block" chunks. A
// chunk over the line cap is split at syntax boundaries only: a class per member (methods keep
// their class header as context), a function per group of statements, anything else per group
// of child nodes, and a leaf with no children (a huge string) in line windows.
#include "index/code_chunker.h"

#include <tree_sitter/api.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

extern "C" {
const TSLanguage* tree_sitter_typescript(void);
const TSLanguage* tree_sitter_tsx(void);
const TSLanguage* tree_sitter_javascript(void);
}

namespace pf {
namespace {

constexpr int kMaxSplitDepth = 48;
constexpr auto kParseBudget = std::chrono::seconds(20);

struct ParserDeleter {
  void operator()(TSParser* p) const { ts_parser_delete(p); }
};
struct TreeDeleter {
  void operator()(TSTree* t) const { ts_tree_delete(t); }
};

// One parser per thread and language: parsers are not thread-safe, and creating one per file
// would cost more than parsing small files.
TSParser* parser_for(const std::string& language) {
  thread_local std::unique_ptr<TSParser, ParserDeleter> ts, tsx, js;
  auto get = [](std::unique_ptr<TSParser, ParserDeleter>& slot, const TSLanguage* lang) {
    if (!slot) {
      slot.reset(ts_parser_new());
      ts_parser_set_language(slot.get(), lang);
    }
    return slot.get();
  };
  if (language == "typescript") return get(ts, tree_sitter_typescript());
  if (language == "tsx") return get(tsx, tree_sitter_tsx());
  return get(js, tree_sitter_javascript());
}

bool is(TSNode n, const char* type) {
  return std::strcmp(ts_node_type(n), type) == 0;
}

int first_row(TSNode n) {
  return static_cast<int>(ts_node_start_point(n).row);
}
int last_row(TSNode n) {
  TSPoint e = ts_node_end_point(n);
  int row = static_cast<int>(e.row);
  if (e.column == 0 && row > first_row(n)) --row;
  return row;
}

struct Meta {
  std::string type, fn, cls, sym, context;
};

struct Unit {
  TSNode node;  // the whole top-level statement
  TSNode decl;  // the declaration inside it (what to split)
  int first, last;
  bool claimed = false;
  bool comment = false;
  Meta meta;
};

class CodeChunker {
 public:
  CodeChunker(ChunkBuilder& out, std::string_view text, const ChunkLimits& limits)
      : out_(out), text_(text), max_(limits.max_lines), window_(limits.window_lines) {}

  void run(TSNode root) {
    std::vector<Unit> units;
    uint32_t n = ts_node_named_child_count(root);
    for (uint32_t i = 0; i < n; ++i) {
      TSNode c = ts_node_named_child(root, i);
      Unit u{c, c, first_row(c), last_row(c), false, false, Meta{}};
      u.comment = is(c, "comment");
      if (!u.comment) u.claimed = classify(c, false, &u.decl, &u.meta);
      units.push_back(u);
    }
    // Attach runs of comments that sit directly above a declaration to it.
    for (size_t i = 0; i < units.size(); ++i) {
      if (!units[i].claimed) continue;
      size_t j = i;
      while (j > 0 && units[j - 1].comment && !units[j - 1].claimed &&
             units[j - 1].last >= units[j].first - 1 && units[j - 1].last < units[j].first)
        --j;
      if (j < i) {
        units[i].first = units[j].first;
        for (size_t k = j; k < i; ++k) units[k].comment = false, units[k].first = -1;
      }
    }
    std::vector<const Unit*> pending;
    int covered = -1;  // last row already in a chunk
    auto flush = [&] {
      if (pending.empty()) return;
      std::vector<Piece> pieces;
      for (const Unit* u : pending)
        pieces.push_back(Piece{u->node, std::max(u->first, covered + 1), u->last});
      pack(pieces, pieces.front().first, pieces.back().last, Meta{"block", "", "", "", ""}, 0);
      covered = std::max(covered, pieces.back().last);
      pending.clear();
    };
    for (const Unit& u : units) {
      if (u.first < 0) continue;  // comment attached to the next declaration
      if (!u.claimed) {
        pending.push_back(&u);
        continue;
      }
      flush();
      int first = std::max(u.first, covered + 1);
      emit(u.decl, first, u.last, u.meta, 0);
      covered = std::max(covered, u.last);
    }
    flush();
  }

 private:
  struct Piece {
    TSNode node;
    int first, last;
  };

  std::string text_of(TSNode n) const {
    uint32_t b = ts_node_start_byte(n), e = ts_node_end_byte(n);
    if (e > text_.size() || b > e) return {};
    return std::string(text_.substr(b, e - b));
  }
  std::string name_of(TSNode n) const {
    TSNode name = ts_node_child_by_field_name(n, "name", 4);
    return ts_node_is_null(name) ? std::string() : text_of(name);
  }

  // Decides whether a top-level statement is a declaration worth its own chunk.
  bool classify(TSNode n, bool exported, TSNode* decl, Meta* m) {
    const char* t = ts_node_type(n);
    *decl = n;
    if (!strcmp(t, "export_statement")) {
      TSNode d = ts_node_child_by_field_name(n, "declaration", 11);
      if (ts_node_is_null(d)) d = ts_node_child_by_field_name(n, "value", 5);
      if (ts_node_is_null(d)) return false;
      TSNode inner;
      if (!classify(d, true, &inner, m)) {
        // export default <expression>: the module's main value.
        m->type = "module";
        m->sym = "default";
        *decl = d;
        return true;
      }
      *decl = inner;
      return true;
    }
    if (!strcmp(t, "function_declaration") || !strcmp(t, "generator_function_declaration") ||
        !strcmp(t, "function_signature") || !strcmp(t, "function_expression") ||
        !strcmp(t, "generator_function")) {
      m->type = "function";
      m->fn = m->sym = name_of(n);
      return true;
    }
    if (!strcmp(t, "class_declaration") || !strcmp(t, "abstract_class_declaration") ||
        !strcmp(t, "class")) {
      m->type = "class";
      m->cls = m->sym = name_of(n);
      return true;
    }
    if (!strcmp(t, "interface_declaration") || !strcmp(t, "type_alias_declaration") ||
        !strcmp(t, "enum_declaration")) {
      m->type = "type";
      m->sym = name_of(n);
      return true;
    }
    if (!strcmp(t, "internal_module") || !strcmp(t, "module")) {
      m->type = "module";
      m->sym = name_of(n);
      return true;
    }
    if (!strcmp(t, "ambient_declaration")) {
      for (uint32_t i = 0; i < ts_node_named_child_count(n); ++i) {
        TSNode inner;
        if (classify(ts_node_named_child(n, i), true, &inner, m)) {
          *decl = n;
          return true;
        }
      }
      m->type = "module";
      return true;
    }
    if (!strcmp(t, "lexical_declaration") || !strcmp(t, "variable_declaration")) {
      TSNode d = ts_node_named_child(n, 0);
      for (uint32_t i = 0; i < ts_node_named_child_count(n); ++i) {
        if (is(ts_node_named_child(n, i), "variable_declarator")) {
          d = ts_node_named_child(n, i);
          break;
        }
      }
      if (ts_node_is_null(d) || !is(d, "variable_declarator")) return false;
      std::string name = name_of(d);
      TSNode v = ts_node_child_by_field_name(d, "value", 5);
      if (!ts_node_is_null(v)) {
        if (is(v, "arrow_function") || is(v, "function_expression") || is(v, "function") ||
            is(v, "generator_function")) {
          m->type = "function";
          m->fn = m->sym = name;
          return true;
        }
        if (is(v, "class")) {
          m->type = "class";
          m->cls = m->sym = name;
          return true;
        }
      }
      // Constants: claimed when exported, or when they hold a sizeable value (tables, maps).
      bool sizeable = !ts_node_is_null(v) && last_row(v) - first_row(v) >= 4;
      if (exported || sizeable) {
        m->type = "module";
        m->sym = name;
        return true;
      }
      return false;
    }
    if (!strcmp(t, "expression_statement")) {
      TSNode e = ts_node_named_child(n, 0);
      if (ts_node_is_null(e) || !is(e, "assignment_expression")) return false;
      TSNode left = ts_node_child_by_field_name(e, "left", 4);
      TSNode right = ts_node_child_by_field_name(e, "right", 5);
      if (ts_node_is_null(left) || ts_node_is_null(right) || !is(left, "member_expression"))
        return false;
      std::string lhs = text_of(left);
      TSNode prop = ts_node_child_by_field_name(left, "property", 8);
      std::string prop_name = ts_node_is_null(prop) ? std::string() : text_of(prop);
      bool fn =
          is(right, "function_expression") || is(right, "arrow_function") || is(right, "function");
      if (lhs == "module.exports") {
        m->type = fn ? "function" : is(right, "class") ? "class" : "module";
        m->sym = "module.exports";
        if (fn) m->fn = name_of(right);
        if (is(right, "class")) m->cls = name_of(right);
        *decl = right;
        return true;
      }
      if (fn) {
        size_t proto = lhs.find(".prototype.");
        m->type = proto != std::string::npos ? "method" : "function";
        if (proto != std::string::npos) m->cls = lhs.substr(0, proto);
        m->fn = m->sym = prop_name;
        *decl = right;
        return true;
      }
      return false;
    }
    return false;
  }

  // Emits [first, last] as one chunk, or splits it at syntax boundaries if over the cap.
  void emit(TSNode node, int first, int last, const Meta& m, int depth) {
    if (last - first + 1 <= max_) {
      out_.add(first, last, m.type, m.fn, m.cls, m.sym, m.context);
      return;
    }
    split(node, first, last, m, depth);
  }

  // The node whose children are the natural split points of n: a class or function body, an
  // object literal, or the first descendant with several named children.
  TSNode container(TSNode n, int depth) {
    for (int d = 0; d < 8 + depth && !ts_node_is_null(n); ++d) {
      TSNode body = ts_node_child_by_field_name(n, "body", 4);
      if (!ts_node_is_null(body) && ts_node_named_child_count(body) > 0) return body;
      uint32_t count = ts_node_named_child_count(n);
      if (count >= 2 && !is(n, "lexical_declaration") && !is(n, "variable_declarator") &&
          !is(n, "export_statement") && !is(n, "expression_statement") &&
          !is(n, "assignment_expression")) {
        return n;
      }
      // Descend to the largest named child.
      TSNode best = {};
      int best_rows = -1;
      for (uint32_t i = 0; i < count; ++i) {
        TSNode c = ts_node_named_child(n, i);
        int rows = last_row(c) - first_row(c);
        if (rows > best_rows) best_rows = rows, best = c;
      }
      if (best_rows < 1) return n;
      n = best;
    }
    return n;
  }

  static bool is_member_method(TSNode n) {
    return is(n, "method_definition") || is(n, "method_signature") ||
           is(n, "abstract_method_signature") || is(n, "class_static_block");
  }

  void split(TSNode node, int first, int last, const Meta& m, int depth) {
    if (depth >= kMaxSplitDepth) {
      out_.add_windows(first, last, window_, m.type, m.fn, m.cls, m.sym, m.context);
      return;
    }
    TSNode box = container(node, depth);
    uint32_t count = ts_node_named_child_count(box);
    std::vector<Piece> pieces;
    int prev_last = first - 1;
    for (uint32_t i = 0; i < count; ++i) {
      TSNode c = ts_node_named_child(box, i);
      int f = std::max(first_row(c), prev_last + 1), l = std::min(last_row(c), last);
      if (l < f) continue;
      pieces.push_back(Piece{c, f, l});
      prev_last = l;
    }
    if (pieces.empty()) {
      out_.add_windows(first, last, window_, m.type, m.fn, m.cls, m.sym, m.context);
      return;
    }
    if (m.type == "class") {
      split_class(pieces, first, first_row(node), last, m, depth);
      return;
    }
    pack(pieces, first, last, m, depth + 1);
  }

  // Packs consecutive pieces into chunks of at most max_ rows covering [first, last]; a piece
  // too large on its own is split recursively.
  void pack(const std::vector<Piece>& pieces, int first, int last, const Meta& m, int depth) {
    int gs = first, ge = first - 1;  // the open group: rows [gs, ge]
    for (size_t i = 0; i < pieces.size(); ++i) {
      const Piece& p = pieces[i];
      int end = (i + 1 == pieces.size()) ? last : p.last;
      if (end - gs + 1 <= max_) {
        ge = end;
        continue;
      }
      if (ge >= gs) {
        out_.add(gs, ge, m.type, m.fn, m.cls, m.sym, m.context);
        gs = ge + 1;
      }
      if (end - gs + 1 <= max_) {
        ge = end;
        continue;
      }
      split(p.node, gs, end, m, depth + 1);  // this piece alone is too large
      gs = end + 1;
      ge = end;
    }
    if (ge >= gs) out_.add(gs, ge, m.type, m.fn, m.cls, m.sym, m.context);
  }

  // A class over the cap: each method is a chunk of its own (with the comments directly above
  // it), fields and small members are packed together; all carry the class header as context.
  void split_class(const std::vector<Piece>& pieces, int first, int header_row, int last,
                   const Meta& m, int depth) {
    std::string header(out_.line(header_row));
    while (!header.empty() && (header.back() == '{' || header.back() == ' ')) header.pop_back();
    size_t lead = header.find_first_not_of(" \t");
    header = lead == std::string::npos ? std::string() : header.substr(lead);
    auto big_method = [](const Piece& p) {
      return is_member_method(p.node) && p.last - p.first >= 2;
    };
    int gs = first, ge = first - 1;
    auto flush_fields = [&](int end) {
      if (end >= gs) out_.add(gs, end, "class", "", m.cls, m.sym, header);
      gs = end + 1;
      ge = end;
    };
    int comment_start = -1;  // first row of comments directly above the next method
    for (size_t i = 0; i < pieces.size(); ++i) {
      const Piece& p = pieces[i];
      int end = (i + 1 == pieces.size()) ? last : p.last;
      if (is(p.node, "comment") && i + 1 < pieces.size() && big_method(pieces[i + 1]) &&
          pieces[i + 1].first <= p.last + 1) {
        if (comment_start < 0) comment_start = p.first;
        continue;
      }
      if (!big_method(p)) {
        comment_start = -1;
        if (end - gs + 1 > max_ && ge >= gs) flush_fields(ge);
        if (end - gs + 1 > max_) {
          split(p.node, gs, end, Meta{"class", "", m.cls, m.sym, header}, depth + 1);
          gs = end + 1;
        }
        ge = end;
        continue;
      }
      int start = comment_start >= 0 ? comment_start : p.first;
      comment_start = -1;
      flush_fields(start - 1);
      std::string name = name_of(p.node);
      emit(p.node, start, end, Meta{"method", name, m.cls, name, header}, depth + 1);
      gs = end + 1;
      ge = end;
    }
    flush_fields(ge);
  }

  ChunkBuilder& out_;
  std::string_view text_;
  int max_, window_;
};

const char* read_input(void* payload, uint32_t byte_index, TSPoint, uint32_t* bytes_read) {
  auto* text = static_cast<std::string_view*>(payload);
  if (byte_index >= text->size()) {
    *bytes_read = 0;
    return "";
  }
  *bytes_read = static_cast<uint32_t>(text->size() - byte_index);
  return text->data() + byte_index;
}

bool within_budget(TSParseState* state) {
  auto* deadline = static_cast<std::chrono::steady_clock::time_point*>(state->payload);
  return std::chrono::steady_clock::now() > *deadline;  // true cancels the parse
}

}  // namespace

bool chunk_code(ChunkBuilder& out, std::string_view text, const std::string& language,
                const ChunkLimits& limits) {
  if (text.size() >= UINT32_MAX) return false;
  TSParser* parser = parser_for(language);
  ts_parser_reset(parser);
  std::string_view input_text = text;
  TSInput input{&input_text, read_input, TSInputEncodingUTF8, nullptr};
  auto deadline = std::chrono::steady_clock::now() + kParseBudget;
  TSParseOptions options{&deadline, within_budget};
  std::unique_ptr<TSTree, TreeDeleter> tree(
      ts_parser_parse_with_options(parser, nullptr, input, options));
  if (!tree) return false;
  CodeChunker(out, text, limits).run(ts_tree_root_node(tree.get()));
  return true;
}

}  // namespace pf
