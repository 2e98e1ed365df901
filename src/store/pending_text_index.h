// Internal to the SQLite store: the FTS5 entries of a write batch's new chunk rows, made when
// the batch commits rather than by a per-row trigger (FTS5 builds the same index about twice as
// fast that way: 4.7 s against ~10 s on the 79 MB benchmark corpus, docs/BENCHMARKS.md). The
// entries still commit with their rows.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "store/sqlite_util.h"

namespace pf {

class PendingTextIndex {
 public:
  // db is borrowed and must outlive this; its schema is migrated (store/schema.h) before the
  // first flush. Not thread-safe: the store's one writing connection uses it.
  explicit PendingTextIndex(sqlite3* db);
  ~PendingTextIndex();

  // Row `rowid` was inserted in the open batch and has no entry yet; tokens is its
  // Chunk::text_tokens ("" where the text is to be tokenized). Rows are added in rowid order.
  void add(int64_t rowid, std::string tokens);
  // Rows of file (repo_id, path) are among those added.
  void add_file(int64_t repo_id, const std::string& path);
  // Gives every pending row its entries and forgets them: a row with tokens gives them as its
  // columns' values (the tokenizer replays them, store/fts_tokenizer.h); a run of rows without
  // goes through one INSERT ... SELECT over its rowid range, which holds only that run (SQLite
  // gives a new row max(rowid) + 1, above every older row). Throws pf::Error from SQLite.
  void flush();
  // Before the rows of (repo_id, path) are deleted: the delete trigger removes a row's entry, so
  // a row must have one first. Flushes when any of them is pending.
  void flush_before_delete(int64_t repo_id, const std::string& path);
  // Forgets the pending rows without indexing them (a batch begun or rolled back).
  void clear();
  bool empty() const { return rows_.empty(); }

 private:
  struct Row {
    int64_t rowid;
    std::string tokens;
  };
  using Path = std::pair<int64_t, std::string>;
  struct PathHash {
    size_t operator()(const Path& p) const {
      return std::hash<std::string>()(p.second) ^ static_cast<size_t>(p.first);
    }
  };
  struct Statements;

  sqlite3* db_;
  std::vector<Row> rows_;
  std::unordered_set<Path, PathHash> paths_;
  std::unique_ptr<Statements> stmts_;  // prepared at the first flush
};

}  // namespace pf
