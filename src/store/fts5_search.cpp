// What the SQLite store's searches share, and FTS5's own ranking (see fts5_search.h).
#include "store/fts5_search.h"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "core/log.h"
#include "store/bm25_index.h"
#include "store/text_index_levels.h"

namespace pf {

using sqlite::Statement;

std::string chunk_columns(bool with_content) {
  return std::string(
             "SELECT c.chunk_id, c.repo_id, c.path, coalesce(c.language,''), c.startLine, "
             "c.endLine, c.chunkType, coalesce(c.functionName,''), coalesce(c.className,''), "
             "coalesce(c.symbol,''), coalesce(c.heading_path,''), ") +
         (with_content ? "pf_text(c.content)" : "''") + ", coalesce(c.tokens,0), c.content_hash, ";
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

namespace {

// pf_counts(fts): what bm25() reads for the current row, as a blob of int64: the table's row
// count and token count, the row's token count, then each phrase's instances per column (4 per
// phrase, in the MATCH expression's order).
void pf_counts(const Fts5ExtensionApi* api, Fts5Context* fts, sqlite3_context* ctx, int,
               sqlite3_value**) {
  const int phrases = api->xPhraseCount(fts);
  std::vector<int64_t> out(3 + 4 * static_cast<size_t>(phrases), 0);
  sqlite3_int64 rows = 0, tokens = 0;
  int dl = 0;
  int n_inst = 0;
  int rc = api->xRowCount(fts, &rows);
  if (rc == SQLITE_OK) rc = api->xColumnTotalSize(fts, -1, &tokens);
  if (rc == SQLITE_OK) rc = api->xColumnSize(fts, -1, &dl);
  if (rc == SQLITE_OK) rc = api->xInstCount(fts, &n_inst);
  out[0] = rows;
  out[1] = tokens;
  out[2] = dl;
  for (int i = 0; rc == SQLITE_OK && i < n_inst; ++i) {
    int phrase = 0, col = 0, off = 0;
    rc = api->xInst(fts, i, &phrase, &col, &off);
    if (rc == SQLITE_OK && phrase >= 0 && phrase < phrases && col >= 0 && col < 4)
      ++out[3 + 4 * static_cast<size_t>(phrase) + static_cast<size_t>(col)];
  }
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(ctx, rc);
    return;
  }
  sqlite3_result_blob(ctx, out.data(), static_cast<int>(out.size() * sizeof(int64_t)),
                      SQLITE_TRANSIENT);
}

// The blob of pf_counts as int64s (size checked).
std::vector<int64_t> read_counts(const Statement& st, int col, size_t phrases) {
  std::vector<int64_t> v(3 + 4 * phrases, 0);
  const void* blob = sqlite3_column_blob(st.handle(), col);
  size_t bytes = static_cast<size_t>(sqlite3_column_bytes(st.handle(), col));
  if (blob && bytes == v.size() * sizeof(int64_t)) std::memcpy(v.data(), blob, bytes);
  return v;
}

void set_counts(BoundedTopK::Counts& tf, const int64_t* c) {
  for (size_t k = 0; k < 4; ++k) tf[k] = static_cast<uint32_t>(c[k]);
}

// "term(df)" for each term, "*" after the enumerated ones: for the debug log.
std::string describe_terms(const std::vector<std::string>& terms, const std::vector<int64_t>& df,
                           const std::vector<bool>& enumerated) {
  std::string out;
  for (size_t i = 0; i < terms.size(); ++i)
    out += (i ? " " : "") + terms[i] + (enumerated[i] ? "*" : "") + "(" + std::to_string(df[i]) +
           ")";
  return out;
}

}  // namespace

std::string fts5_rows_sql(bool repo_filter) {
  // CROSS JOIN keeps the FTS5 table outside: else the planner may walk the repository's rows by
  // the (repo_id, path) index and run the MATCH once per row (1.6M times on the Linux tree).
  return repo_filter ? "SELECT copilot_code_chunks_fts.rowid, pf_counts(copilot_code_chunks_fts) "
                       "FROM copilot_code_chunks_fts CROSS JOIN copilot_code_chunks c "
                       "ON c.chunk_id = copilot_code_chunks_fts.rowid "
                       "WHERE copilot_code_chunks_fts MATCH ?1 AND c.repo_id = ?2"
                     : "SELECT rowid, pf_counts(copilot_code_chunks_fts) "
                       "FROM copilot_code_chunks_fts WHERE copilot_code_chunks_fts MATCH ?1";
}

Statement& Fts5Search::rows_statement(bool repo_filter) {
  register_functions();
  auto& st = rows_[repo_filter ? 1 : 0];
  if (!st) st = std::make_unique<Statement>(db_, fts5_rows_sql(repo_filter));
  st->reset();
  return *st;
}

void Fts5Search::register_functions() {
  if (registered_) return;
  fts5_api* api = sqlite::fts5(db_);
  if (api->xCreateFunction(api, "pf_counts", nullptr, pf_counts, nullptr) != SQLITE_OK)
    throw Error("cannot register the pf_counts FTS5 function");
  registered_ = true;
}

std::vector<BoundedTopK::Row> Fts5Search::rank(const LexicalQuery& q, int64_t generation,
                                               bool* exact) {
  if (exact) *exact = true;
  if (q.terms.empty() || q.limit <= 0) return {};
  const auto t0 = std::chrono::steady_clock::now();
  const size_t n = q.terms.size();
  check_stats(q.stats ? &*q.stats : nullptr, n);
  const std::vector<int64_t> df = q.stats ? q.stats->df : document_frequencies(q.terms, generation);
  const std::vector<bool> enumerate = terms_to_enumerate(df, q.match_budget, q.limit);
  std::vector<std::string> first, others;  // enumerated terms; the rest some row holds
  std::vector<size_t> at;                  // each one's position in the query, first's first
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < n; ++i)
      if (pass == 0 ? enumerate[i] : !enumerate[i] && df[i] > 0) {
        (pass == 0 ? first : others).push_back(q.terms[i]);
        at.push_back(i);
      }
  if (first.empty()) return {};

  const double w[4] = {q.w_symbols, q.w_path, q.w_headings, q.w_body};
  std::unique_ptr<BoundedTopK> top;
  if (q.stats)
    top = std::make_unique<BoundedTopK>(df, static_cast<double>(q.stats->rows),
                                        average_length(*q.stats), w, q.match_budget, q.limit);
  std::unordered_set<int64_t> added;
  std::vector<BoundedTopK::Counts> tf(n);
  // Adds the rows matching `match`, whose phrases are the first `phrases` terms of `at`, with
  // their counts of those terms (the others' stay zero: the row does not hold them).
  auto add_rows = [&](const std::string& match, size_t phrases) {
    Statement& st = rows_statement(q.repo_id.has_value());
    st.bind(1, match);
    if (q.repo_id) st.bind(2, *q.repo_id);
    while (st.step()) {
      if (!added.insert(st.int64(0)).second) continue;
      std::vector<int64_t> c = read_counts(st, 1, phrases);
      if (!top) {  // the table's statistics, the same in every row
        double avgdl = c[0] > 0 ? static_cast<double>(c[1]) / static_cast<double>(c[0]) : 0.0;
        top = std::make_unique<BoundedTopK>(df, static_cast<double>(c[0]), avgdl, w,
                                            q.match_budget, q.limit);
      }
      std::fill(tf.begin(), tf.end(), BoundedTopK::Counts{});
      for (size_t k = 0; k < phrases; ++k) set_counts(tf[at[k]], c.data() + 3 + 4 * k);
      top->add(st.int64(0), static_cast<uint32_t>(c[2]), tf.data());
    }
    st.reset();
  };
  // First the rows holding an enumerated term and another, with every term's counts: FTS5
  // walks the common terms' doclists only where they meet the rare ones' (skipping by each
  // doclist's index), milliseconds where enumerating them takes seconds on the Linux tree.
  // Then the rows holding enumerated terms only, unless the best of the first already score
  // above anything those can.
  bool first_only_rows = true;
  if (!others.empty()) {
    std::string match = "(";
    match += fts5_match(first);
    match += ") AND (";
    match += fts5_match(others);
    match += ")";
    add_rows(match, at.size());
    first_only_rows = !top || !(top->kth_score() > top->enumerated_bound());
  }
  if (first_only_rows) add_rows(fts5_match(first), first.size());
  if (!top || top->candidates() == 0) return {};
  auto fill = [](int64_t, BoundedTopK::Counts*) {};  // every row came with all its counts
  bool proved = false;
  std::vector<BoundedTopK::Row> out =
      top->finish(fill, [](int64_t a, int64_t b) { return a < b; }, &proved);
  if (exact) *exact = proved;
  if (log::enabled(log::Level::kDebug)) {
    auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0);
    log::debug("store", "ranked in FTS5: " + describe_terms(q.terms, df, enumerate) + ", " +
                            std::to_string(top->candidates()) + " rows" +
                            (first_only_rows ? "" : " (none holding rare terms only)") + ", " +
                            (proved ? "exact, " : "bounded, ") +
                            std::to_string(static_cast<int>(ms.count())) + " ms");
  }
  return out;
}

std::pair<int64_t, int64_t> Fts5Search::totals() {
  // FTS5's averages record (fts5_storage.c, fts5StorageSaveTotals): the row count, then each
  // column's token count, as varints, in the row of id 1 of the index's data table. What
  // xRowCount and xColumnTotalSize read.
  Statement st(db_, "SELECT block FROM copilot_code_chunks_fts_data WHERE id = 1");
  if (!st.step()) return {0, 0};
  const auto* p = static_cast<const char*>(sqlite3_column_blob(st.handle(), 0));
  std::string_view record(p ? p : "",
                          p ? static_cast<size_t>(sqlite3_column_bytes(st.handle(), 0)) : 0);
  size_t pos = 0;
  uint64_t rows = 0, tokens = 0, column = 0;
  if (!read_fts5_varint(record, &pos, &rows)) return {0, 0};
  while (pos < record.size() && read_fts5_varint(record, &pos, &column)) tokens += column;
  // A damaged record reads as nothing rather than as negative counts.
  auto count = [](uint64_t v) { return v > INT64_MAX ? int64_t{0} : static_cast<int64_t>(v); };
  return {count(rows), count(tokens)};
}

std::vector<int64_t> Fts5Search::document_frequencies(const std::vector<std::string>& terms,
                                                      int64_t generation) {
  if (generation != df_generation_ || df_.size() > 100000) {
    df_.clear();
    df_generation_ = generation;
  }
  if (!vocab_) {
    // fts5vocab over the index, in the connection's temp schema (nothing is written to the
    // store).
    sqlite::exec(db_,
                 "CREATE VIRTUAL TABLE IF NOT EXISTS temp.pf_vocab USING "
                 "fts5vocab(main, 'copilot_code_chunks_fts', 'row')");
    vocab_ = std::make_unique<Statement>(db_, "SELECT doc FROM temp.pf_vocab WHERE term = ?");
  }
  std::vector<int64_t> out;
  out.reserve(terms.size());
  for (const std::string& t : terms) {
    auto it = df_.find(t);
    if (it == df_.end()) {
      vocab_->bind(1, std::string_view(t));
      it = df_.emplace(t, vocab_->step() ? vocab_->int64(0) : 0).first;
      vocab_->reset();
    }
    out.push_back(it->second);
  }
  return out;
}

}  // namespace pf
