// Diagnostic for search latency: for each query (one a line) runs the analysed FTS5 MATCH
// expression through three SQL shapes on a raw read-only connection, and prints per-shape
// p50/p99 plus the number of matching chunks, as JSON:
//   store:    the shape the store uses (join every match to its chunk row, ORDER BY score)
//   fts_only: bm25 over the FTS table alone, ORDER BY bm25 LIMIT 60, then join those 60 rows
//   count:    SELECT count(*) of the MATCH (how many rows each query touches)
//
//   pf_search_sql_variants DB QUERIES
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "search/query.h"
#include "store/fts5_search.h"
#include "store/fts_tokenizer.h"
#include "store/schema.h"

namespace {

using Clock = std::chrono::steady_clock;

double pct(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1,
                    static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5))];
}

const char* kStore =
    "SELECT c.chunk_id, c.path, c.startLine, pf_text(c.content), "
    "-bm25(copilot_code_chunks_fts, 4.0, 2.0, 3.0, 1.0) AS score "
    "FROM copilot_code_chunks_fts JOIN copilot_code_chunks c "
    "ON c.chunk_id = copilot_code_chunks_fts.rowid WHERE copilot_code_chunks_fts MATCH ?1 "
    "ORDER BY score DESC, c.path, c.startLine LIMIT 60";
const char* kFtsOnly =
    "WITH top AS (SELECT rowid, -bm25(copilot_code_chunks_fts, 4.0, 2.0, 3.0, 1.0) AS score "
    "FROM copilot_code_chunks_fts WHERE copilot_code_chunks_fts MATCH ?1 "
    "ORDER BY bm25(copilot_code_chunks_fts, 4.0, 2.0, 3.0, 1.0) LIMIT 60) "
    "SELECT c.chunk_id, c.path, c.startLine, c.content, top.score FROM top "
    "JOIN copilot_code_chunks c ON c.chunk_id = top.rowid ORDER BY top.score DESC, c.path, "
    "c.startLine";
const char* kCount =
    "SELECT count(*) FROM copilot_code_chunks_fts WHERE copilot_code_chunks_fts MATCH ?1";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: pf_search_sql_variants DB QUERIES\n");
    return 2;
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return 1;
  pf::register_store_functions(db);
  sqlite3_exec(db, "PRAGMA cache_size = -65536", nullptr, nullptr, nullptr);
  std::vector<std::string> matches;
  std::ifstream in(argv[2]);
  for (std::string line; std::getline(in, line);) {
    auto q = pf::analyze_query(line);
    if (!q.stems.empty()) matches.push_back(pf::fts5_match(q.stems));
  }
  std::printf("{\"queries_with_terms\": %zu", matches.size());
  for (auto [name, sql] : {std::pair{"store", kStore}, {"fts_only", kFtsOnly}, {"count", kCount}}) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) {
      std::fprintf(stderr, "%s: %s\n", name, sqlite3_errmsg(db));
      return 1;
    }
    std::vector<double> ms;
    int64_t rows = 0;
    std::vector<int64_t> counts;
    for (int pass = 0; pass < 2; ++pass) {  // pass 0 warms up
      for (const auto& m : matches) {
        auto t0 = Clock::now();
        sqlite3_bind_text(st, 1, m.c_str(), -1, SQLITE_STATIC);
        int64_t n = 0;
        while (sqlite3_step(st) == SQLITE_ROW)
          n = std::string(name) == "count" ? sqlite3_column_int64(st, 0) : n + 1;
        sqlite3_reset(st);
        if (pass == 1) {
          ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
          rows += n;
          counts.push_back(n);
        }
      }
    }
    sqlite3_finalize(st);
    std::printf(", \"%s\": {\"p50_ms\": %.3f, \"p99_ms\": %.3f, \"rows\": %lld", name, pct(ms, 0.5),
                pct(ms, 0.99), static_cast<long long>(rows));
    if (std::string(name) == "count")
      std::printf(", \"matches_p50\": %.0f, \"matches_p99\": %.0f",
                  pct(std::vector<double>(counts.begin(), counts.end()), 0.5),
                  pct(std::vector<double>(counts.begin(), counts.end()), 0.99));
    std::printf("}");
  }
  std::printf("}\n");
  sqlite3_close(db);
  return 0;
}
