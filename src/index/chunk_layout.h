// Internal to the index: how a code chunker lays out a file's top-level units as chunks, shared
// by the syntax-tree chunker (code_chunker.cpp) and C's token scan (c_chunker.cpp), so that both
// attach comments, pack the code between declarations and split what is over the cap alike.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "index/chunk_builder.h"

namespace pf {

// What a chunk says about the declaration it holds.
struct Meta {
  std::string type, fn, cls, sym, context;
};

// Lays out units (each with int first, last: rows; bool claimed: a declaration; bool comment)
// in file order. A run of comments directly above a declaration joins it (their first set to -1);
// a declaration goes to emit(unit, free), the units between two declarations to
// block(units, free), where free is the first row not yet in a chunk.
template <class Unit, class Emit, class Block>
void lay_out_units(std::vector<Unit>& units, Emit&& emit, Block&& block) {
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
    block(pending, covered + 1);
    covered = std::max(covered, pending.back()->last);
    pending.clear();
  };
  for (const Unit& u : units) {
    if (u.first < 0) continue;  // a comment attached to the next declaration
    if (!u.claimed) {
      pending.push_back(&u);
      continue;
    }
    flush();
    emit(u, covered + 1);
    covered = std::max(covered, u.last);
  }
  flush();
}

// Packs consecutive pieces (each with int first, last: rows, in order, not overlapping) into
// chunks of at most max rows covering [first, last]; a piece too large on its own goes to
// split(piece, first_row, last_row) with the rows it must cover.
template <class Piece, class Split>
void pack_pieces(ChunkBuilder& out, int max, const std::vector<Piece>& pieces, int first,
                 int last, const Meta& m, Split&& split) {
  int gs = first, ge = first - 1;  // the open group: rows [gs, ge]
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Piece& p = pieces[i];
    int end = (i + 1 == pieces.size()) ? last : p.last;
    if (end - gs + 1 <= max) {
      ge = end;
      continue;
    }
    if (ge >= gs) {
      out.add(gs, ge, m.type, m.fn, m.cls, m.sym, m.context);
      gs = ge + 1;
    }
    if (end - gs + 1 <= max) {
      ge = end;
      continue;
    }
    split(p, gs, end);  // this piece alone is too large
    gs = end + 1;
    ge = end;
  }
  if (ge >= gs) out.add(gs, ge, m.type, m.fn, m.cls, m.sym, m.context);
}

}  // namespace pf
