// Internal to the store: the PostgreSQL store's lexical ranking in the database, for what the
// in-memory ranking (bm25_index.h) does not take: stores too large for it, and a process's
// first search (the command line, a replica just started), so none of them reads the whole
// store to answer one question. The same bm25 as FTS5 and the in-memory index, score for score,
// from what the store keeps for it:
// - each chunk's "searchVector" holds its terms (GIN-indexed), and each term's positions encode
//   its count per column: position 4 * count + column (symbols 0, path 1, headings 2, body 3),
//   the count clamped to 4095 because tsvector positions stop at 16383 (no chunk comes near);
//   a term once in the body only (half the terms of the Linux tree's chunks) has no positions;
// - lexical_length: the chunk's tokens, as FTS5 counts them;
// - lexical_terms(term, chunks): how many chunks hold each term, and pilotfish_meta's
//   lexical_rows and lexical_tokens: kept by each write batch in its own transaction, so they
//   always describe the chunks committed with them.
// A search reads the terms' counts (an index lookup each), then, bounded as bounded_rank.h
// describes, the rows holding a rare term and two common ones, then, unless the best of those
// already beat them, those holding a rare term and one common one (GIN's fast scan walks the
// common terms' posting trees only where they meet the rare ones), then, unless the best
// already beat them, the rows holding rare terms only; each row's vector comes in binary and
// every term's counts are read out of it here (pg_vector_counts).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/bounded_rank.h"
#include "store/chunk.h"
#include "store/store.h"

namespace pf {

namespace pg {
class Connection;
}

// What the store's tokenizer_version says its search vectors were made by: the tokenizer's
// version (fts_tokenizer.h) and this layout's. A store whose vectors another made has them
// rebuilt by the next index run.
std::string pg_vector_version();

// A chunk's terms as the store keeps them.
struct PgChunkTerms {
  std::string vector;              // tsvector input: 'term':positions ..., as described above
  std::vector<std::string> terms;  // distinct
  uint32_t length = 0;             // tokens in all four columns, as FTS5 counts them
};
PgChunkTerms pg_chunk_terms(const Chunk& c);

// Each term's count per column in a search vector in PostgreSQL's binary form (tsvectorsend: the
// lexeme count, then per lexeme its bytes, a NUL, its position count and positions, big-endian):
// counts[i] for terms[i], zeros for a term the vector lacks. Throws pf::Error on a malformed one.
void pg_vector_counts(std::string_view binary, const std::vector<std::string>& terms,
                      std::vector<BoundedTopK::Counts>& counts);

// terms as tsquery input: each quoted (quote and backslash escaped), joined by " | ".
std::string pg_tsquery_any(const std::vector<std::string>& terms);
// A tsquery that rows holding two or more of the distinct terms match: "(a & b) | (a & c) |
// ..."; "" for fewer than two terms or more than kMaxPairedTerms (too many pairs to be cheaper).
inline constexpr size_t kMaxPairedTerms = 8;
std::string pg_tsquery_pairs(const std::vector<std::string>& terms);

// The lexical statistics one write batch changes: chunks added and removed. Not thread-safe;
// one per store connection.
class PgLexicalDeltas {
 public:
  // A chunk added (sign 1) or removed (-1), with its distinct terms and length.
  void add(const std::vector<std::string>& terms, uint32_t length, int sign);
  // Chunks removed by a statement returning (lexical_length, the vector's terms joined by
  // spaces) per row: `DELETE ... RETURNING` + deleted_columns().
  static const char* deleted_columns();
  void add_deleted(const std::vector<std::pair<int64_t, std::string>>& rows);
  // Writes the changes on c, inside the batch's open transaction; then clear().
  void flush(pg::Connection& c);
  void clear();

 private:
  std::unordered_map<std::string, int64_t> rows_with_term_;
  int64_t rows_ = 0, tokens_ = 0;
};

// Recounts lexical_terms, lexical_rows and lexical_tokens from the chunks (after their vectors
// were rebuilt), inside the caller's transaction.
void pg_recount_lexical_terms(pg::Connection& c);

// The ranking on one connection. One thread at a time, as the connection.
class PgSearch {
 public:
  // Rows of the rare terms from which a search reads those holding two common terms first:
  // below it the extra query costs more than it can save (the Linux tree: 600 rows, 28 -> 55 ms).
  static constexpr int64_t kTieredFromRows = 3000;

  explicit PgSearch(pg::Connection& c, int64_t tiered_from_rows = kTieredFromRows)
      : c_(c), tiered_from_rows_(tiered_from_rows) {}

  // The top q.limit rows by bm25 with q's column weights, best first (ties by rowid), bounded by
  // q.match_budget (bounded_rank.h; *exact as BoundedTopK::finish), in one read-only snapshot
  // unless the connection is inside a transaction. With q.stats, bm25 reads those.
  std::vector<BoundedTopK::Row> rank(const LexicalQuery& q, bool* exact = nullptr);
  // The store's rows, tokens and each term's row count. Throws pf::Error.
  LexicalStats stats(const std::vector<std::string>& terms);
  // How many rows the last rank() read.
  size_t last_candidates() const { return last_candidates_; }

 private:
  pg::Connection& c_;
  int64_t tiered_from_rows_;
  size_t last_candidates_ = 0;
};

}  // namespace pf
