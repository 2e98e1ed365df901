// What the SQLite store's searches share, and FTS5's own ranking (see fts5_search.h).
#include "store/fts5_search.h"

namespace pf {

using sqlite::Statement;

std::string chunk_columns(bool with_content) {
  return std::string(
             "SELECT c.chunk_id, c.repo_id, c.path, coalesce(c.language,''), c.startLine, "
             "c.endLine, c.chunkType, coalesce(c.functionName,''), coalesce(c.className,''), "
             "coalesce(c.symbol,''), coalesce(c.heading_path,''), ") +
         (with_content ? "c.content" : "''") + ", coalesce(c.tokens,0), c.content_hash, ";
}

StoredChunk read_chunk(const Statement& st, bool with_content) {
  StoredChunk r;
  r.rowid = st.int64(0);
  r.repo_id = st.int64(1);
  Chunk& c = r.chunk;
  c.path = st.text(2);
  c.language = st.text(3);
  c.start_line = static_cast<int>(st.int64(4));
  c.end_line = static_cast<int>(st.int64(5));
  c.chunk_type = st.text(6);
  c.function_name = st.text(7);
  c.class_name = st.text(8);
  c.symbol = st.text(9);
  c.heading_path = st.text(10);
  c.content = st.text(11);
  c.tokens = static_cast<int>(st.int64(12));
  c.content_hash = st.text(13);
  r.partial = !with_content;
  return r;
}

ReadSnapshot::ReadSnapshot(sqlite3* db) : db_(sqlite3_get_autocommit(db) ? db : nullptr) {
  if (db_) sqlite::exec(db_, "BEGIN");
}

ReadSnapshot::~ReadSnapshot() {
  if (db_) sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
}

std::string fts5_match(const std::vector<std::string>& terms) {
  std::string out;
  for (const std::string& t : terms) {
    if (!out.empty()) out += " OR ";
    out += '"';
    for (char c : t) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    out += '"';
  }
  return out;
}

std::vector<StoredChunk> Fts5Search::search(const LexicalQuery& q) {
  // Rank inside the FTS table and join only the top rows to the chunk table: reading the
  // chunk rows (with their content) of every match costs more than ranking them. With a
  // repository filter the join must come first, or the top rows could all be elsewhere.
  auto& slot = search_[q.repo_id ? 1 : 0][q.with_content ? 1 : 0];
  if (!slot) {
    std::string sql = chunk_columns(q.with_content);
    if (q.repo_id) {
      sql +=
          "-bm25(copilot_code_chunks_fts, ?1, ?2, ?3, ?4) AS score "
          "FROM copilot_code_chunks_fts JOIN copilot_code_chunks c "
          "ON c.chunk_id = copilot_code_chunks_fts.rowid "
          "WHERE copilot_code_chunks_fts MATCH ?5 AND c.repo_id = ?7 "
          "ORDER BY score DESC, c.path, c.startLine LIMIT ?6";
    } else {
      sql =
          "WITH top AS (SELECT rowid AS rid, bm25(copilot_code_chunks_fts, ?1, ?2, ?3, ?4) AS r "
          "FROM copilot_code_chunks_fts WHERE copilot_code_chunks_fts MATCH ?5 "
          "ORDER BY r LIMIT ?6) " +
          sql + "-top.r AS score FROM top JOIN copilot_code_chunks c ON c.chunk_id = top.rid " +
          "ORDER BY score DESC, c.path, c.startLine";
    }
    slot = std::make_unique<Statement>(db_, sql);
  }
  Statement& st = *slot;
  st.reset();
  st.bind(1, q.w_symbols).bind(2, q.w_path).bind(3, q.w_headings).bind(4, q.w_body);
  st.bind(5, fts5_match(q.terms)).bind(6, static_cast<int64_t>(q.limit));
  if (q.repo_id) st.bind(7, *q.repo_id);
  std::vector<StoredChunk> out;
  while (st.step()) {
    out.push_back(read_chunk(st, q.with_content));
    out.back().score = st.real(14);
  }
  st.reset();
  return out;
}

std::vector<int64_t> Fts5Search::document_frequencies(const std::vector<std::string>& terms) {
  if (!vocab_) {
    // fts5vocab over the index, in the connection's temp schema (nothing is written to the
    // store): one b-tree lookup per term.
    sqlite::exec(db_,
                 "CREATE VIRTUAL TABLE IF NOT EXISTS temp.pf_vocab USING "
                 "fts5vocab(main, 'copilot_code_chunks_fts', 'row')");
    vocab_ = std::make_unique<Statement>(db_, "SELECT doc FROM temp.pf_vocab WHERE term = ?");
  }
  std::vector<int64_t> out;
  out.reserve(terms.size());
  for (const std::string& t : terms) {
    vocab_->bind(1, std::string_view(t));
    out.push_back(vocab_->step() ? vocab_->int64(0) : 0);
    vocab_->reset();
  }
  return out;
}

}  // namespace pf
