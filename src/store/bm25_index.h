// Internal to the store: the lexical ranking in memory. FTS5 spends about 1 µs per matching row
// on bm25() (a docsize lookup and the row's phrase instances), which on a 1,600-chunk index is
// two thirds of a chat's retrieval. This index holds what bm25() reads (per term, the rows it is
// in with its count per column; per row, its token count) and computes the same score as FTS5's
// bm25() (SQLite 3.40's fts5_aux.c: k1 = 1.2, b = 0.75, IDF = ln((N - n + 0.5) / (n + 0.5)),
// floored at 1e-6, over the whole table, then -1 times the sum over the query's phrases in their
// order), so the ranking is the same; the tests compare it with FTS5 score for score. The
// documents are tokenized by the same code as the FTS5 tokenizer (code_tokenizer.h, stemmer.h).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace pf {

class Bm25Index {
 public:
  struct Hit {
    int64_t rowid;
    double score;  // as FTS5's bm25() returns it: negative, lower ranks higher
  };

  // Reads every chunk of the store behind db (inside the caller's read transaction, so the index
  // matches one snapshot) and tokenizes its four FTS columns. Returns null when the chunks' text
  // is over max_bytes (the index would take about that much memory), or when a count does not fit
  // the compact layout (then FTS5 ranks). Throws pf::Error on SQLite errors.
  static std::shared_ptr<const Bm25Index> build(sqlite3* db, int64_t max_bytes);

  // The rows holding any of terms (each one index token, as analyze_query makes them), ranked by
  // bm25 with these column weights (symbols, path, headings, body) best first, ties by path, then
  // start line, then rowid; at most limit; only repo's rows when given (statistics stay those of
  // the whole table, as in FTS5). Thread-safe: the index is immutable.
  std::vector<Hit> rank(const std::vector<std::string>& terms, const double (&weights)[4],
                        std::optional<int64_t> repo, int limit) const;

  // How many rows hold term (fts5vocab's "doc" count).
  int64_t doc_frequency(std::string_view term) const;

  size_t rows() const { return docs_.size(); }
  size_t memory_bytes() const { return bytes_; }

 private:
  struct Posting {
    uint32_t doc;
    uint16_t tf[4];
  };
  struct Doc {
    int64_t rowid, repo_id;
    uint32_t length;  // tokens in the row, all columns (FTS5's column size -1)
    uint32_t path;    // rank of the row's path in sorted order
    int64_t start_line;
  };
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::vector<Posting>, Hash, std::equal_to<>> postings_;
  std::vector<Doc> docs_;
  double avgdl_ = 0;
  size_t bytes_ = 0;
};

// The index of the store identified by store_key (its path and instance id) at generation, shared
// by every connection of this process: built from db (inside the caller's read transaction) when
// there is none for this generation, unless one was built less than a second ago, in which case
// this returns null and the caller ranks with FTS5 (a store being indexed changes every half
// second; rebuilding for each search would cost more than it saves). Null too when the store is
// over max_bytes. Thread-safe.
std::shared_ptr<const Bm25Index> shared_bm25_index(sqlite3* db, const std::string& store_key,
                                                   int64_t generation, int64_t max_bytes);

// The terms of a MATCH string of the form `"a" OR "b" ...` with word-only terms (what
// search/query.cpp writes), or nullopt for any other form, which only FTS5 can answer.
std::optional<std::vector<std::string>> or_query_terms(std::string_view match);

}  // namespace pf
