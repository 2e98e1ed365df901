// Syntax-tree chunking. Top-level declarations (functions, classes, interfaces, types, enums,
// exported constants, CommonJS exports and prototype methods) become chunks of their own, with
// the comments directly above them; the code between them is packed into "block" chunks. A
// chunk over the line cap is split at syntax boundaries only: a class per member (methods keep
// their class header as context), a function per group of statements, anything else per group
// of child nodes, and a leaf with no children (a huge string) in line windows. C files are parsed
// without their top-level function bodies (index/c_bodies.h); a function split for its length
// is parsed again on its own, and a file where that parse differs is parsed whole.
#include "index/code_chunker.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "index/c_bodies.h"
#include "index/chunk_layout.h"
#include "index/code_languages.h"
#include "index/syntax.h"

namespace pf {
namespace {

constexpr int kMaxSplitDepth = 48;
constexpr int kMaxScopeDepth = 16;  // nested namespaces and #if groups flattened
// tree-sitter's error recovery can go exponential on some malformed input (110 bytes of nested
// arrow functions with stray brackets kept the TSX grammar busy for over 10 s), so a parse that
// exceeds its budget is given up and the file chunked in line windows. The budget is work, not
// time, so that a file's chunks depend only on its content and the pinned grammars (a
// wall-clock budget gave other chunks under a CPU quota). Two counts, both fixed by the input:
// parser operations (tree-sitter calls the progress callback every 100) and bytes handed to the
// lexer, in pieces of kReadPiece so that text lexed again is counted again. Real source needs
// at most about 2.5 operations and 2.3 bytes read per byte (14,000 files in ten languages
// measured); the budgets allow 4 times that and more. An exploding parse costs up to ~10 us per
// operation, so giving up takes ~0.2 s for a small file and ~1 s per 10 KB.
constexpr uint32_t kReadPiece = 4096;
constexpr uint64_t kOpsPerCheck = 100;
uint64_t max_operations(size_t bytes) { return 20000 + 10 * static_cast<uint64_t>(bytes); }
uint64_t max_bytes_read(size_t bytes) {
  return (uint64_t{1} << 20) + 16 * static_cast<uint64_t>(bytes);
}

struct ParseWork {
  std::string_view text;
  uint64_t operations = 0, max_operations = 0;
  uint64_t bytes_read = 0, max_bytes_read = 0;
};

struct ParserDeleter {
  void operator()(TSParser* p) const { ts_parser_delete(p); }
};
struct TreeDeleter {
  void operator()(TSTree* t) const { ts_tree_delete(t); }
};

// One parser per thread and language: parsers are not thread-safe, and creating one per file
// would cost more than parsing small files.
TSParser* parser_for(const TSLanguage* language) {
  thread_local std::map<const TSLanguage*, std::unique_ptr<TSParser, ParserDeleter>> parsers;
  auto& slot = parsers[language];
  if (!slot) {
    slot.reset(ts_parser_new());
    ts_parser_set_language(slot.get(), language);
  }
  return slot.get();
}

const char* read_input(void* payload, uint32_t byte_index, TSPoint, uint32_t* bytes_read) {
  auto* work = static_cast<ParseWork*>(payload);
  if (byte_index >= work->text.size()) {
    *bytes_read = 0;
    return "";
  }
  *bytes_read =
      std::min<uint32_t>(kReadPiece, static_cast<uint32_t>(work->text.size() - byte_index));
  work->bytes_read += *bytes_read;
  return work->text.data() + byte_index;
}

bool over_budget(TSParseState* state) {
  auto* work = static_cast<ParseWork*>(state->payload);
  work->operations += kOpsPerCheck;
  return work->operations > work->max_operations || work->bytes_read > work->max_bytes_read;
}

using TreePtr = std::unique_ptr<TSTree, TreeDeleter>;

// Parses text (only the given ranges of it, if any) within a work budget for its size; null if
// the budget ran out (*spent then true) or the parser failed.
TreePtr parse_ranges(TSParser* parser, std::string_view text, const std::vector<TSRange>& ranges,
                     bool* spent) {
  ts_parser_reset(parser);
  if (!ts_parser_set_included_ranges(parser, ranges.empty() ? nullptr : ranges.data(),
                                     static_cast<uint32_t>(ranges.size()))) {
    *spent = false;
    return nullptr;
  }
  ParseWork work{text, 0, max_operations(text.size()), 0, max_bytes_read(text.size())};
  TSInput input{&work, read_input, TSInputEncodingUTF8, nullptr};
  TSParseOptions options{&work, over_budget};
  TreePtr tree(ts_parser_parse_with_options(parser, nullptr, input, options));
  ts_parser_set_included_ranges(parser, nullptr, 0);
  *spent = work.operations > work.max_operations || work.bytes_read > work.max_bytes_read;
  return tree;
}

// The point (row, byte column) of a byte offset.
TSPoint point_at(const ChunkBuilder& lines, std::string_view text, uint32_t offset) {
  int row = lines.row_of(offset);
  auto start = static_cast<uint32_t>(lines.line(row).data() - text.data());
  return TSPoint{static_cast<uint32_t>(row), offset - start};
}

// The text [from, end) around bodies (sorted, inside it): up to each '{' included, from each
// '}' on.
std::vector<TSRange> outside_bodies(const std::vector<BodyBraces>& bodies,
                                    const ChunkBuilder& lines, std::string_view text,
                                    uint32_t from, uint32_t end) {
  std::vector<TSRange> ranges;
  for (const BodyBraces& b : bodies) {
    ranges.push_back(TSRange{point_at(lines, text, from), point_at(lines, text, b.open + 1),
                             from, b.open + 1});
    from = b.close;
  }
  ranges.push_back(TSRange{point_at(lines, text, from), point_at(lines, text, end), from, end});
  return ranges;
}

// Thrown by a run that must split a function parsed without its body when the function's own
// parse does not give it back whole: the file is then chunked from a parse of all of it.
struct NeedsWholeParse {};

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
  // skipped: the bodies the tree was parsed without (sorted), or null; parser re-parses one.
  CodeChunker(ChunkBuilder& out, std::string_view text, const CodeLanguage& language,
              const ChunkLimits& limits, const std::vector<BodyBraces>* skipped,
              TSParser* parser)
      : out_(out),
        text_(text),
        lang_(language),
        max_(limits.max_lines),
        window_(limits.window_lines),
        parser_(parser) {
    if (skipped)
      for (const BodyBraces& b : *skipped) skips_.push_back(Skip{b, 0, 0, false});
  }

  void run(TSNode root) {
    std::vector<Unit> units;
    collect_units(root, 0, &units);
    lay_out_units(
        units,
        [&](const Unit& u, int free) {
          emit(u.decl, std::max(u.first, free), u.last, u.meta, 0);
        },
        [&](const std::vector<const Unit*>& pending, int free) {
          std::vector<Piece> pieces;
          for (const Unit* u : pending)
            pieces.push_back(Piece{u->node, std::max(u->first, free), u->last});
          pack(pieces, pieces.front().first, pieces.back().last, Meta{"block", "", "", "", ""},
               0);
        });
  }

 private:
  struct Piece {
    TSNode node;
    int first, last;
  };

  // The statements of a scope (the file, or a namespace, extern "C" block or #if group that the
  // language flattens) as units. A flattened scope's opening and closing lines go with its first
  // and last member, so no line is left out and a namespace's members are chunked as if they
  // stood at the top level.
  void collect_units(TSNode scope, int depth, std::vector<Unit>* units) {
    uint32_t n = ts_node_named_child_count(scope);
    for (uint32_t i = 0; i < n; ++i) {
      if (depth > 0) {
        const char* f = ts_node_field_name_for_named_child(scope, i);
        if (f && (!strcmp(f, "name") || !strcmp(f, "condition"))) continue;  // #ifdef NAME
      }
      TSNode c = ts_node_named_child(scope, i);
      TSNode inner = lang_.members_of && depth < kMaxScopeDepth ? lang_.members_of(c) : TSNode{};
      size_t before = units->size();
      if (!ts_node_is_null(inner)) collect_units(inner, depth + 1, units);
      if (units->size() > before) {
        Unit& head = (*units)[before];
        head.first = std::min(head.first, first_row(c));
        units->back().last = std::max(units->back().last, last_row(c));
        continue;
      }
      Unit u{c, c, first_row(c), last_row(c), false, false, Meta{}};
      u.comment = is_comment(c);
      if (!u.comment) u.claimed = lang_.classify(c, text_, &u.decl, &u.meta);
      units->push_back(u);
    }
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

  // n itself, or where n holds a body the tree was parsed without, n from a parse of its own
  // text (kept for the run). Throws NeedsWholeParse if that parse is not n whole.
  //
  // Two levels: a top-level function is parsed again without the blocks of its own statements
  // (an if's, a loop's), which its split needs only as rows; a statement over the cap that holds
  // one of those is then found in a parse of the whole function.
  TSNode whole(TSNode n) {
    if (skips_.empty()) return n;
    uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
    Skip* skip = nullptr;
    for (Skip& k : skips_)
      if (!k.done && k.braces.open < e && k.braces.close >= s) {
        skip = &k;
        break;
      }
    if (!skip) return n;
    if (skip->owner_end == 0) {  // a top-level body: n parsed on its own, its blocks left out
      std::vector<BodyBraces> blocks;
      for (Skip& k : skips_)
        if (!k.done && k.owner_end == 0 && k.braces.open >= s && k.braces.close < e) {
          k.done = true;
          size_t from = blocks.size();
          std::string_view inside = text_.substr(k.braces.open + 1, k.braces.close - k.braces.open - 1);
          if (!find_function_bodies(inside, &blocks)) blocks.resize(from);
          for (size_t i = from; i < blocks.size(); ++i)
            blocks[i].open += k.braces.open + 1, blocks[i].close += k.braces.open + 1;
        }
      TSNode again = parse_alone(n, outside_bodies(blocks, out_, text_, s, e));
      for (const BodyBraces& b : blocks) skips_.push_back(Skip{b, s, e, false});
      return again;
    }
    // A block of a statement: the function it is in, parsed whole (once), holds n.
    uint32_t fs = skip->owner_start, fe = skip->owner_end;
    auto [at, parsed] = whole_functions_.try_emplace(uint64_t{fs} << 32 | fe, TSNode{});
    if (parsed) at->second = parse_alone(TSNode{}, outside_bodies({}, out_, text_, fs, fe));
    TSNode function = at->second;
    TSNode again = ts_node_descendant_for_byte_range(function, s, e);
    while (!ts_node_is_null(again) && ts_node_start_byte(again) == s &&
           ts_node_end_byte(again) == e && strcmp(ts_node_type(again), ts_node_type(n)) != 0)
      again = ts_node_parent(again);
    if (ts_node_is_null(again) || ts_node_start_byte(again) != s || ts_node_end_byte(again) != e)
      throw NeedsWholeParse{};
    return again;
  }

  // The one node a parse of ranges gives (kept for the run); it must match like (same bytes and
  // type) unless like is null. Throws NeedsWholeParse otherwise.
  TSNode parse_alone(TSNode like, const std::vector<TSRange>& ranges) {
    bool spent = false;
    TreePtr tree = parse_ranges(parser_, text_, ranges, &spent);
    if (!tree) throw NeedsWholeParse{};
    TSNode root = ts_tree_root_node(tree.get());
    if (ts_node_named_child_count(root) != 1) throw NeedsWholeParse{};
    TSNode again = ts_node_named_child(root, 0);
    if (!ts_node_is_null(like) &&
        (ts_node_start_byte(again) != ts_node_start_byte(like) ||
         ts_node_end_byte(again) != ts_node_end_byte(like) ||
         strcmp(ts_node_type(again), ts_node_type(like)) != 0))
      throw NeedsWholeParse{};
    trees_.push_back(std::move(tree));
    return again;
  }

  void split(TSNode node, int first, int last, const Meta& m, int depth) {
    node = whole(node);
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
    pack_pieces(out_, max_, pieces, first, last, m, [&](const Piece& p, int from, int to) {
      split(p.node, from, to, m, depth + 1);
    });
  }

  // A class over the cap: each method is a chunk of its own (with the comments directly above
  // it), fields and small members are packed together; all carry the class header as context.
  void split_class(const std::vector<Piece>& pieces, int first, int header_row, int last,
                   const Meta& m, int depth) {
    std::string header(out_.line(header_row));
    while (!header.empty() &&
           (header.back() == '{' || header.back() == ' ' || header.back() == ':'))
      header.pop_back();
    size_t lead = header.find_first_not_of(" \t");
    header = lead == std::string::npos ? std::string() : header.substr(lead);
    auto big_method = [this](const Piece& p) {
      return lang_.is_method(p.node) && p.last - p.first >= 2;
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
      if (is_comment(p.node) && i + 1 < pieces.size() && big_method(pieces[i + 1]) &&
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
      std::string name = name_of(p.node, text_);
      emit(p.node, start, end, Meta{"method", name, m.cls, name, header}, depth + 1);
      gs = end + 1;
      ge = end;
    }
    flush_fields(ge);
  }

  ChunkBuilder& out_;
  std::string_view text_;
  const CodeLanguage& lang_;
  int max_, window_;
  // A body or block the tree in use was parsed without: a top-level body (owner_end 0), or a
  // block of a statement in the function [owner_start, owner_end). Done once parsed.
  struct Skip {
    BodyBraces braces;
    uint32_t owner_start, owner_end;
    bool done;
  };
  TSParser* parser_;
  std::vector<Skip> skips_;
  std::map<uint64_t, TSNode> whole_functions_;  // by (start << 32 | end): parsed with blocks
  std::vector<TreePtr> trees_;  // parses of functions split out of a bodiless tree
};

}  // namespace

const char* chunk_code(ChunkBuilder& out, std::string_view text, const std::string& language,
                       const ChunkLimits& limits) {
  const CodeLanguage* lang = code_language(language);
  if (!lang) return kFallbackNoGrammar;
  if (text.size() >= UINT32_MAX) return kFallbackParseBudget;
  TSParser* parser = parser_for(lang->grammar());
  std::vector<BodyBraces> bodies;
  if (lang->skips_bodies && !limits.parse_all_bodies && find_function_bodies(text, &bodies) &&
      !bodies.empty()) {
    bool spent = false;
    TreePtr tree = parse_ranges(
        parser, text, outside_bodies(bodies, out, text, 0, static_cast<uint32_t>(text.size())),
        &spent);
    if (tree) {
      try {
        CodeChunker(out, text, *lang, limits, &bodies, parser).run(ts_tree_root_node(tree.get()));
        return nullptr;
      } catch (const NeedsWholeParse&) {
        out.take();  // what the run added; the whole parse below chunks the file again
      }
    }
  }
  bool spent = false;
  TreePtr tree = parse_ranges(parser, text, {}, &spent);
  if (!tree) return spent ? kFallbackParseBudget : kFallbackParseFailed;
  CodeChunker(out, text, *lang, limits, nullptr, parser).run(ts_tree_root_node(tree.get()));
  return nullptr;
}

}  // namespace pf
