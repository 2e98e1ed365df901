// A search's latency while the in-memory ranking is being remade after a commit (issue 23 §4):
// before, the search that noticed the new generation rebuilt the whole index itself (on
// PostgreSQL every search that came meanwhile built one of its own); now it ranks with the
// previous index at once while a background thread updates it from the changed rows
// (store/bm25_cache.h). Also the rebuild itself: from every row against from the previous
// index plus one commit's rows. Prints JSON.
//
//   pf_bm25_rebuild DB QUERIES [--changed-files N]
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "search/query.h"
#include "store/bm25_cache.h"
#include "store/bm25_index.h"
#include "store/content_codec.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

sqlite3* open(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "cannot open %s\n", path.c_str());
    std::exit(1);
  }
  pf::register_content_functions(db);  // the ranking's build reads content through pf_text
  sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
  return db;
}

// The index as it was before a commit that wrote the chunks of the last n files (by rowid): a
// copy of the store without them, so an update from it reads just those rows.
std::shared_ptr<const pf::Bm25Index> before_commit(const std::string& path, int n) {
  std::string copy = path + ".bench-before";
  std::remove(copy.c_str());
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_exec(db, ("VACUUM INTO '" + copy + "'").c_str(), nullptr, nullptr, nullptr);
  sqlite3_close(db);
  sqlite3_open(copy.c_str(), &db);
  pf::register_content_functions(db);
  std::string sql =
      "DROP TRIGGER IF EXISTS copilot_code_chunks_ad; "
      "DELETE FROM copilot_code_chunks WHERE path IN (SELECT path FROM copilot_code_chunks GROUP BY path ORDER BY max(chunk_id) DESC LIMIT " +
      std::to_string(n) + ")";
  sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
  auto index = pf::Bm25Index::build(db, 1ll << 40);
  sqlite3_close(db);
  std::remove(copy.c_str());
  return index;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: pf_bm25_rebuild DB QUERIES [--changed-files N]\n");
    return 2;
  }
  std::string path = argv[1];
  int changed = argc > 4 && std::string(argv[3]) == "--changed-files" ? std::atoi(argv[4]) : 10;
  std::vector<std::vector<std::string>> queries;
  std::ifstream in(argv[2]);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) queries.push_back(pf::analyze_query(line).stems);
  const double w[4] = {4, 2, 2, 1};

  sqlite3* db = open(path);
  auto t0 = Clock::now();
  auto full = pf::Bm25Index::build(db, 1ll << 40);
  double full_ms = ms_since(t0);
  if (!full) return 1;
  auto previous = before_commit(path, changed);
  t0 = Clock::now();
  auto updated = pf::Bm25Index::build(db, 1ll << 40, previous.get());
  double incremental_ms = ms_since(t0);

  // Before: the search that noticed the commit waited for a whole rebuild, then ranked.
  std::vector<double> before, after;
  for (const auto& q : queries) {
    t0 = Clock::now();
    auto index = pf::Bm25Index::build(db, 1ll << 40);
    index->rank(q, w, std::nullopt, 10);
    before.push_back(ms_since(t0));
    if (before.size() == 5) break;  // each one is a whole rebuild
  }
  // After: the searches rank with the previous index while a full rebuild runs beside them.
  pf::shared_bm25_index("bench", 1, [&](const auto&) { return pf::Bm25Snapshot{previous, 1}; });
  pf::shared_bm25_index("bench", 2, [&](const auto&) {
    sqlite3* own = open(path);
    auto index = pf::Bm25Index::build(own, 1ll << 40);
    sqlite3_close(own);
    return pf::Bm25Snapshot{index, 2};
  });
  for (const auto& q : queries) {
    t0 = Clock::now();
    pf::Bm25Snapshot s = pf::shared_bm25_index("bench", 2, nullptr);
    s.index->rank(q, w, std::nullopt, 10);
    after.push_back(ms_since(t0));
  }
  pf::wait_for_bm25_builds();
  sqlite3_close(db);
  std::printf(
      "{\"chunks\": %zu, \"changed_files\": %d, \"rows_read_by_update\": %zu, "
      "\"full_rebuild_ms\": %.1f, \"incremental_rebuild_ms\": %.1f, "
      "\"search_during_rebuild_before_ms_p50\": %.2f, \"search_during_rebuild_after_ms_p50\": "
      "%.3f, \"ratio\": %.0f}\n",
      full->rows(), changed, updated->rows() - updated->rows_reused(), full_ms, incremental_ms,
      median(before), median(after), median(before) / std::max(median(after), 1e-6));
  return 0;
}
