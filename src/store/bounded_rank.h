// Internal to the store: the top rows of an OR of terms by bm25, with work bounded by a match
// budget instead of by the store's size. Both lexical rankings (bm25_index.h in memory,
// fts5_search.h from FTS5's index) enumerate only the rows of the rarest terms that fit the
// budget, and give each the other terms' shares too: the in-memory ranking looks them up for the
// best rows, in the order of their partial scores (MaxScore: Turtle and Flood, 1995); FTS5 reads
// them for every such row with one rare-AND-common query. A common term's share of any row is
// below idf * (k1 + 1), so a row holding none of the enumerated terms scores at most the sum of
// those bounds: when the k-th best full score beats that sum, the top k is exactly what ranking
// every matching row would give, score for score. When it does not, the top k holds the
// enumerated rows by their full scores, and rows holding only common terms are left out: bounded
// work at any store size, in place of scanning the postings of "the" or "how" on a million rows.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "store/store.h"

namespace pf {

// Throws pf::Error unless stats (when given) has a row count for each of the query's terms.
void check_stats(const LexicalStats* stats, size_t terms);
// tokens / rows, as FTS5 computes its average row length (0 for no rows).
double average_length(const LexicalStats& stats);

// bm25's constants, as SQLite's fts5_aux.c has them.
inline constexpr double kBm25K1 = 1.2, kBm25B = 0.75;

// FTS5's idf of a term that rows_with_term of rows hold (floored at 1e-6).
double bm25_idf(double rows, double rows_with_term);

// A term's share of a row's bm25, computed as fts5_aux.c's bm25() does (each instance's column
// weight added column by column), so sums of shares in query order equal FTS5's score bit for
// bit. tf: the term's count per column (symbols, path, headings, body); dl: the row's tokens.
double bm25_share(double idf, const std::array<uint32_t, 4>& tf, const double (&weights)[4],
                  double dl, double avgdl);

// Which terms (by position; df their row counts) a ranking enumerates: none that no row holds;
// all the others when budget <= 0 or their counts sum to at most budget; else the rarest first
// while the sum stays within budget, the rarest always (ties by position), and while the sum is
// under limit (too few rows to fill the result: an identifier found in 4 chunks) the next
// rarest too if it alone is within budget.
std::vector<bool> terms_to_enumerate(const std::vector<int64_t>& df, int64_t budget,
                                     int limit = 0);

// One ranking's top rows. Not thread-safe; one per search.
class BoundedTopK {
 public:
  using Counts = std::array<uint32_t, 4>;  // a term's count per column in one row

  // df: how many rows hold each term, in query order; rows, avgdl: the store's row count and
  // average row length (statistics of the whole table); column weights (>= 0); budget as
  // terms_to_enumerate takes it; how many rows to keep.
  BoundedTopK(const std::vector<int64_t>& df, double rows, double avgdl,
              const double (&weights)[4], int64_t budget, int limit);

  // Which terms the caller enumerates (by position in the query).
  const std::vector<bool>& enumerated() const { return enumerated_; }

  // A row holding an enumerated term: its length and tf[i] for every term i of the query
  // (those not enumerated are ignored and filled in by finish). Each row once.
  void add(int64_t rowid, uint32_t dl, const Counts* tf);

  // The limit-th best score over all terms among the rows added so far (taking their counts
  // as complete), or -infinity when fewer were added; and the most a row holding only
  // enumerated terms can score. A caller that has added every row holding an enumerated term
  // and another one may leave out the rest when the first is above the second.
  double kth_score() const;
  double enumerated_bound() const { return enumerated_bound_; }
  // The most term i (by position in the query) can add to any row's score (0 for a term no
  // row holds).
  double term_bound(size_t i) const { return idf_[i] * (kBm25K1 + 1.0); }

  struct Row {
    int64_t rowid;
    double score;  // bm25 over all terms, positive: higher ranks higher
  };
  // The top rows, best first. fill(rowid, tf) sets tf[i] for each term not enumerated (zero
  // where the row holds none); it is called only for rows that could still reach the top.
  // before(a, b) orders rows of equal score. *exact (when given) tells whether the result is
  // provably the top of every matching row (see the file comment).
  std::vector<Row> finish(const std::function<void(int64_t rowid, Counts* tf)>& fill,
                          const std::function<bool(int64_t, int64_t)>& before, bool* exact);

  // How many rows were added, and how many finish() completed with fill (0 when every term
  // was enumerated).
  size_t candidates() const { return candidates_.size(); }
  size_t lookups() const { return lookups_; }

 private:
  double score(size_t candidate, bool all_terms) const;

  std::vector<double> idf_;
  std::vector<bool> enumerated_;
  double weights_[4];
  double avgdl_;
  int limit_;
  double rest_bound_ = 0;  // the most the terms not enumerated can add to any row
  double enumerated_bound_ = 0;  // and the enumerated ones
  struct Candidate {
    int64_t rowid;
    uint32_t dl;
    double partial;  // shares of the enumerated terms
  };
  std::vector<Candidate> candidates_;
  std::vector<Counts> counts_;  // candidate i's at [i * terms, (i + 1) * terms)
  size_t lookups_ = 0;
};

// Reads the rows of top (rowids, best first -> those rows in that order, with content or not;
// missing ones left out) and gives each its score: what both stores' lexical_search return.
using RowReader =
    std::function<std::vector<StoredChunk>(const std::vector<int64_t>& rowids, bool with_content)>;
std::vector<StoredChunk> read_ranked(const std::vector<BoundedTopK::Row>& top, bool with_content,
                                     const RowReader& read_rows);

}  // namespace pf
