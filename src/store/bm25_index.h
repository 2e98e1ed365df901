// Internal to the store: the lexical ranking in memory. FTS5 spends about 1 µs per matching row
// on bm25() (a docsize lookup and the row's phrase instances), which on a 1,600-chunk index is
// two thirds of a chat's retrieval. This index holds what bm25() reads (per term, the rows it is
// in with its count per column; per row, its token count) and computes the same score as FTS5's
// bm25() (SQLite 3.40's fts5_aux.c: k1 = 1.2, b = 0.75, IDF = ln((N - n + 0.5) / (n + 0.5)),
// floored at 1e-6, over the whole table, then -1 times the sum over the query's phrases in their
// order), so the ranking is the same; the tests compare it with FTS5 score for score. The
// documents are tokenized by the same code as the FTS5 tokenizer (code_tokenizer.h, stemmer.h).
// After a change, the next index is made from the previous one and the changed rows only
// (Builder's incremental constructor); bm25_cache.h shares one per store and remakes it.
#pragma once

#include <sqlite3.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/bounded_rank.h"
#include "store/code_tokenizer.h"
#include "store/stemmer.h"
#include "store/store.h"

namespace pf {

struct TermHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// A row's terms, each with its count per column (symbols, path, headings, body).
using RowTermCounts =
    std::unordered_map<std::string, std::array<uint32_t, 4>, TermHash, std::equal_to<>>;

// Tokenizes a row's four FTS columns as the FTS5 tokenizer does (code_tokenizer.h, stemmer.h),
// calling add(term, column) for each token's stem (a view valid during the call); returns the
// row's length as FTS5 counts it (a token colocated with the one before adds a match, not
// length). The in-memory ranking and the PostgreSQL store's postings both count rows by it, so
// they count as FTS5 does.
template <typename Add>
uint32_t for_each_row_term(const std::string_view (&columns)[4], StemBuffer& stem, Add&& add) {
  uint32_t length = 0;
  for (size_t col = 0; col < 4; ++col) {
    uint32_t column_size = 0;
    for_each_code_token(columns[col], true, [&](std::string_view tok, bool is_part, size_t, size_t) {
      // FTS5 counts a token unless it is colocated with the one before (fts5_storage.c).
      if (!is_part || column_size == 0) ++column_size;
      add(stem_word(tok, stem), col);
    });
    length += column_size;
  }
  return length;
}

// for_each_row_term into counts (cleared first).
uint32_t count_row_terms(const std::string_view (&columns)[4], StemBuffer& stem,
                         RowTermCounts& counts);

class Bm25Index {
  using Hash = TermHash;

 public:
  struct Hit {
    int64_t rowid;
    double score;  // as FTS5's bm25() returns it: negative, lower ranks higher
  };

  // A row as the store lists it: its rowid and the hash (id_hash) of the chunk's public id, which
  // is new for every row written, so a rowid used again for another chunk is told apart.
  struct RowKey {
    int64_t rowid;
    uint64_t id;
  };
  static uint64_t id_hash(std::string_view chunk_id);

  // Builds an index from rows added one at a time: each row's four FTS columns (symbols, path,
  // headings, body: what schema.h's PF_FTS_VALUES makes of a chunk). One thread.
  class Builder {
   public:
    Builder();
    // Incremental: starts from previous's rows that are still in `now` (same rowid and id), so
    // only the rows *missing gets (rowids of `now` that previous lacks, ascending) need reading
    // and adding. The finished index ranks exactly as one built from all of `now`'s rows.
    Builder(const Bm25Index& previous, std::vector<RowKey> now, std::vector<int64_t>* missing);
    ~Builder();
    void add(int64_t rowid, uint64_t id, int64_t repo_id, const std::string_view (&columns)[4],
             int64_t start_line);
    // The index; null when a count did not fit the compact layout.
    std::shared_ptr<const Bm25Index> finish();

   private:
    std::unique_ptr<Bm25Index> index_;
    RowTermCounts row_;
    std::vector<std::string> paths_;
    StemBuffer stem_;
    int64_t total_tokens_ = 0;
  };

  // Reads the chunks of the store behind db (inside the caller's read transaction, so the index
  // matches one snapshot) and tokenizes their four FTS columns: all of them, or with previous
  // only those previous lacks (when they are under half the table). Returns null when the
  // indexed files' text is over max_bytes (the index would take about that much memory; told
  // from the files table, without reading a chunk), or when a count does not fit the compact
  // layout (then FTS5 ranks). Throws pf::Error on SQLite errors.
  static std::shared_ptr<const Bm25Index> build(sqlite3* db, int64_t max_bytes,
                                                const Bm25Index* previous = nullptr);

  // The rows holding any of terms (each one index token, as analyze_query makes them), ranked by
  // bm25 with these column weights (symbols, path, headings, body) best first, ties by path, then
  // start line, then rowid; at most limit; only repo's rows when given (statistics stay those of
  // the whole table, as in FTS5). With match_budget > 0, only the rarest terms' postings are
  // walked and the others looked up for the best rows (bounded_rank.h; *exact, when given, says
  // whether the result is provably the unbounded one). Thread-safe: the index is immutable.
  // With stats, bm25 reads those (df in the order of terms) instead of the index's own.
  std::vector<Hit> rank(const std::vector<std::string>& terms, const double (&weights)[4],
                        std::optional<int64_t> repo, int limit, int64_t match_budget = 0,
                        bool* exact = nullptr, const LexicalStats* stats = nullptr) const;

  // How many rows hold term (fts5vocab's "doc" count).
  int64_t doc_frequency(std::string_view term) const;

  size_t rows() const { return docs_.size(); }
  int64_t tokens() const { return tokens_; }  // in all rows, all columns (FTS5's total size)
  size_t memory_bytes() const { return bytes_; }
  // How many of the rows were carried over from the previous index (0: built from scratch).
  size_t rows_reused() const { return reused_; }

 private:
  struct Posting {
    uint32_t doc;
    uint16_t tf[4];
  };
  struct Doc {
    int64_t rowid, repo_id;
    uint32_t length;  // tokens in the row, all columns (FTS5's column size -1)
    uint32_t path;    // rank of the row's path in sorted order: an index into paths_
    int64_t start_line;
    uint64_t id;  // id_hash of the chunk's public id
  };
  std::unordered_map<std::string, std::vector<Posting>, Hash, std::equal_to<>> postings_;
  std::vector<Doc> docs_;
  std::vector<std::string> paths_;  // sorted, distinct
  double avgdl_ = 0;
  int64_t tokens_ = 0;
  size_t bytes_ = 0, reused_ = 0;
};

// q ranked by index, its rows read by read_rows (rowids best first -> those rows in that order,
// missing ones left out, with content or not), each with its score (higher is better): what
// both stores' lexical_search return when they rank in memory.
std::vector<StoredChunk> ranked_rows(const Bm25Index& index, const LexicalQuery& q,
                                     const RowReader& read_rows);

}  // namespace pf
