// The FTS5 entries of a SQLite write batch's new rows, made at its commit (pending_text_index.h).
#include "store/pending_text_index.h"

#include <string_view>

#include "store/fts_tokenizer.h"
#include "store/schema.h"

namespace pf {

struct PendingTextIndex::Statements {
  explicit Statements(sqlite3* db)
      : by_range(db,
                 "INSERT INTO copilot_code_chunks_fts(rowid, symbols, path, headings, body) "
                 "SELECT c.chunk_id, " PF_FTS_VALUES(
                     "c") " FROM copilot_code_chunks c WHERE c.chunk_id BETWEEN ? AND ?"),
        by_tokens(db,
                  "INSERT INTO copilot_code_chunks_fts(rowid, symbols, path, headings, body) "
                  "VALUES (?,?,?,?,?)") {}
  sqlite::Statement by_range, by_tokens;
};

PendingTextIndex::PendingTextIndex(sqlite3* db) : db_(db) {}
PendingTextIndex::~PendingTextIndex() = default;

void PendingTextIndex::add(int64_t rowid, std::string tokens) {
  rows_.push_back(Row{rowid, std::move(tokens)});
}

void PendingTextIndex::add_file(int64_t repo_id, const std::string& path) {
  paths_.insert(Path{repo_id, path});
}

void PendingTextIndex::flush() {
  if (rows_.empty()) return;
  if (!stmts_) stmts_ = std::make_unique<Statements>(db_);
  std::string_view columns[4];
  for (size_t i = 0; i < rows_.size();) {
    const Row& row = rows_[i];
    if (!row.tokens.empty() && text_token_columns(row.tokens, columns)) {
      stmts_->by_tokens.bind(1, row.rowid);
      for (int c = 0; c < 4; ++c) stmts_->by_tokens.bind_static(2 + c, columns[c]);
      stmts_->by_tokens.run();
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < rows_.size() && rows_[j].tokens.empty()) ++j;
    stmts_->by_range.bind(1, row.rowid).bind(2, rows_[j - 1].rowid).run();
    i = j;
  }
  clear();
}

void PendingTextIndex::flush_before_delete(int64_t repo_id, const std::string& path) {
  if (paths_.count(Path{repo_id, path})) flush();
}

void PendingTextIndex::clear() {
  rows_.clear();
  paths_.clear();
}

}  // namespace pf
