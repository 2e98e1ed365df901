// libFuzzer entry point: the text index's tokens made ahead (store/fts_tokenizer.h) on arbitrary
// chunk text, and the tokenizer's replay on arbitrary values, as a file's bytes can open a chunk
// with the replay mark. A chunk's encoding always decodes; its replayed entries are removed by
// a delete that tokenizes the texts (what the store's delete trigger does), leaving the index
// empty; a malformed replay is inserted and deleted without a crash. And the terms the
// PostgreSQL store counts for the chunk (pg_chunk_terms, a table kept from input to input) are
// those the in-memory ranking counts (count_row_terms).
#include <sqlite3.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "store/bm25_index.h"
#include "store/chunk.h"
#include "store/fts_tokenizer.h"
#include "store/pg_segments.h"
#include "store/stemmer.h"

namespace {

sqlite3* index_db() {
  static sqlite3* db = [] {
    sqlite3* d = nullptr;
    if (sqlite3_open(":memory:", &d) != SQLITE_OK) __builtin_trap();
    pf::register_code_tokenizer(d);
    if (sqlite3_exec(d,
                     "CREATE VIRTUAL TABLE t USING fts5(symbols, path, headings, body, "
                     "content='', tokenize='pilotfish');"
                     "CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, 't', 'instance');",
                     nullptr, nullptr, nullptr) != SQLITE_OK)
      __builtin_trap();
    return d;
  }();
  return db;
}

// Runs sql (an INSERT into t with rowid 1 and four values) on the values; false on an error.
bool write(const char* sql, const std::string_view (&values)[4]) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(index_db(), sql, -1, &st, nullptr) != SQLITE_OK) __builtin_trap();
  for (int i = 0; i < 4; ++i)
    sqlite3_bind_text(st, i + 1, values[i].data(), static_cast<int>(values[i].size()),
                      SQLITE_TRANSIENT);
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  return rc == SQLITE_DONE;
}

const char* kInsert = "INSERT INTO t(rowid, symbols, path, headings, body) VALUES (1, ?, ?, ?, ?)";
const char* kDelete =
    "INSERT INTO t(t, rowid, symbols, path, headings, body) VALUES ('delete', 1, ?, ?, ?, ?)";

int64_t entries() {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(index_db(), "SELECT count(*) FROM temp.v", -1, &st, nullptr) !=
      SQLITE_OK)
    __builtin_trap();
  int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // The chunk's fields, split at the first three '\x1f' bytes.
  std::string_view fields[4];
  for (int i = 0; i < 3; ++i) {
    size_t cut = bytes.find('\x1f');
    fields[i] = bytes.substr(0, cut);
    bytes = cut == std::string_view::npos ? std::string_view() : bytes.substr(cut + 1);
  }
  fields[3] = bytes;
  pf::Chunk c;
  c.function_name = std::string(fields[0]);
  c.path = std::string(fields[1]);
  c.heading_path = std::string(fields[2]);
  std::string tokens = pf::encode_text_tokens(c, fields[3]);
  // The values the store's delete trigger gives (PF_FTS_VALUES): the symbols value is
  // trim(name || ' ' || class || ' ' || symbol).
  std::string_view symbols = fields[0];
  while (!symbols.empty() && symbols.front() == ' ') symbols.remove_prefix(1);
  while (!symbols.empty() && symbols.back() == ' ') symbols.remove_suffix(1);
  std::string_view texts[4] = {symbols, c.path, c.heading_path, fields[3]};
  std::string_view columns[4];
  if (!tokens.empty()) {
    if (!pf::text_token_columns(tokens, columns)) __builtin_trap();
    if (!write(kInsert, columns) || !write(kDelete, texts)) __builtin_trap();
    if (entries() != 0) __builtin_trap();  // a delete by the text took out every entry
  } else {
    // A value that opens like an encoding: replayed as it is, inserted and deleted alike.
    if (write(kInsert, texts)) write(kDelete, texts);
    if (entries() != 0) __builtin_trap();
  }
  c.content = std::string(fields[3]);
  const std::string symbol_value = c.function_name + " " + c.class_name + " " + c.symbol;
  const std::string_view row[4] = {symbol_value, c.path, c.heading_path, c.content};
  pf::StemBuffer stem;
  pf::RowTermCounts counts;
  const uint32_t length = pf::count_row_terms(row, stem, counts);
  std::vector<std::pair<std::string, pf::BoundedTopK::Counts>> want(counts.begin(), counts.end());
  std::sort(want.begin(), want.end());
  const pf::PgChunkTerms got = pf::pg_chunk_terms(c, c.path);
  if (got.length != length || got.terms != want) __builtin_trap();
  return 0;
}
