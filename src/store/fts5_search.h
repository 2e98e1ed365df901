// Internal to the store: what the SQLite store's searches share. The chunk columns every chunk
// query selects and how a row becomes a StoredChunk; a read transaction around one search; and
// the lexical ranking from FTS5's index, for what the in-memory ranking (bm25_index.h) does not
// take: stores too large for it, and the second after a store changed.
#pragma once

#include <sqlite3.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "store/bounded_rank.h"
#include "store/sqlite_util.h"
#include "store/store.h"

namespace pf {

// "SELECT" and the chunk columns, in the order read_chunk reads them (without content: '' in its
// place); the query goes on with its 15th column (the score) and FROM copilot_code_chunks c.
std::string chunk_columns(bool with_content = true);
StoredChunk read_chunk(const sqlite::Statement& st, bool with_content = true);

// One read transaction around a search, so the generation read, the ranking and the rows read
// belong to one snapshot; nothing when the connection is already inside a transaction.
class ReadSnapshot {
 public:
  explicit ReadSnapshot(sqlite3* db);
  ~ReadSnapshot();
  ReadSnapshot(const ReadSnapshot&) = delete;
  ReadSnapshot& operator=(const ReadSnapshot&) = delete;

 private:
  sqlite3* db_;
};

// terms as an FTS5 MATCH expression: each a quoted string ('"' doubled), joined by OR.
std::string fts5_match(const std::vector<std::string>& terms);

// The rows matching ?1 (of repository ?2 with the filter) as "rowid, pf_counts(...)": what
// Fts5Search enumerates (pf_counts is registered on the connection by Fts5Search).
std::string fts5_rows_sql(bool repo_filter);

// Prepared statements of one connection, kept for its lifetime; destroy before the connection.
// One thread at a time, as the connection.
class Fts5Search {
 public:
  explicit Fts5Search(sqlite3* db) : db_(db) {}

  // The top q.limit rows by the bm25 that FTS5's bm25() computes with q's column weights, bit
  // for bit, best first (ties by rowid), bounded by q.match_budget as bounded_rank.h describes:
  // the rarest terms' rows are read from FTS5 with their counts (an auxiliary function), then
  // the other terms' counts in those rows by a second query (rare AND common), so every row
  // returned has its full score. *exact as BoundedTopK::finish.
  // generation: the store's, which the counts of terms are kept for (see below). With
  // q.stats, bm25 reads those instead of the index's own.
  std::vector<BoundedTopK::Row> rank(const LexicalQuery& q, int64_t generation,
                                     bool* exact = nullptr);
  // How many rows hold each term: fts5vocab, which walks the term's whole doclist (19 ms for
  // the six terms of one identifier on the Linux tree), so the counts are kept until the store's
  // generation changes; common words recur from question to question.
  std::vector<int64_t> document_frequencies(const std::vector<std::string>& terms,
                                            int64_t generation);
  // The index's row and token counts (FTS5's averages record; zeros when empty).
  std::pair<int64_t, int64_t> totals();

 private:
  // fts5_rows_sql's statement, prepared once, reset.
  sqlite::Statement& rows_statement(bool repo_filter);
  void register_functions();  // pf_counts, once per connection

  sqlite3* db_;
  bool registered_ = false;  // the auxiliary function, on this connection
  std::unordered_map<std::string, int64_t> df_;  // counts of terms at df_generation_
  int64_t df_generation_ = -1;
  std::unique_ptr<sqlite::Statement> rows_[2], vocab_;  // rows_: [repo filter]
};

}  // namespace pf
