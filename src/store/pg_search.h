// Internal to the store: the PostgreSQL store's lexical ranking in the database, for what the
// in-memory ranking (bm25_index.h) does not take: stores too large for it, and a process's
// first search (the command line, a replica just started), so none of them reads the whole
// store to answer one question. The same bm25 as FTS5 and the in-memory index, score for score,
// from postings of its own (pg_segments.h: each term's chunks with their counts per column, in
// compressed blocks, and each chunk's token count) and pilotfish_meta's lexical_rows and
// lexical_tokens, all kept by each write batch in its own transaction, so they always describe
// the chunks committed with them. A search reads its terms' blocks from every segment in one
// query, enumerates the rows of its rarest terms as bounded_rank.h describes, gives each the
// other terms' counts from their postings, and reads the token counts of those rows in a
// second query.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/bounded_rank.h"
#include "store/store.h"

namespace pf {

namespace pg {
class Connection;
}

// What the store's tokenizer_version says its postings were made by: the tokenizer's version
// (fts_tokenizer.h) and this layout's. A store whose postings another made has them rebuilt by
// the next index run.
std::string pg_postings_version();

// The ranking on one connection. One thread at a time, as the connection.
class PgSearch {
 public:
  explicit PgSearch(pg::Connection& c) : c_(c) {}

  // The top q.limit rows by bm25 with q's column weights, best first (ties by rowid), bounded by
  // q.match_budget (bounded_rank.h; *exact as BoundedTopK::finish), in one read-only snapshot
  // unless the connection is inside a transaction. With q.stats, bm25 reads those.
  std::vector<BoundedTopK::Row> rank(const LexicalQuery& q, bool* exact = nullptr);
  // The store's rows, tokens and each term's row count. Throws pf::Error.
  LexicalStats stats(const std::vector<std::string>& terms);

 private:
  pg::Connection& c_;
};

}  // namespace pf
