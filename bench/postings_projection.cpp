// What postings of our own would cost the SQLite store's index run, against FTS5 (issue 25).
// Reads the first CHUNKS chunk rows of a store made by `pilotfish index`, then times on one
// thread: what the workers make for each chunk today (encode_text_tokens: FTS5's tokens,
// replayed by the writer) and for postings (pg_chunk_terms: each term's count per column); what
// the writer does today (the tokens into a contentless FTS5 table, as the store's schema sets it
// up, one commit per batch); and the PostgreSQL store's postings written into SQLite instead (per
// batch, one segment: its terms' postings in blocks, its chunks' lengths in buckets), then one
// merge of every segment into one, in memory. Prints the times and the bytes of each index.
//
//   pf_postings_projection STORE [CHUNKS (400000)] [BATCH (6000)]   writes under /tmp
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"
#include "store/chunk.h"
#include "store/fts_tokenizer.h"
#include "store/pg_postings.h"
#include "store/pg_segments.h"
#include "store/schema.h"
#include "store/sqlite_util.h"

namespace {

using namespace pf;
using Clock = std::chrono::steady_clock;
using sqlite::Statement;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

sqlite3* fresh_db(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) throw Error("cannot open " + path);
  sqlite::exec(db,
               "PRAGMA page_size = 32768; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
               "PRAGMA cache_size = -65536");
  return db;
}

struct Rows {
  std::vector<int64_t> ids;
  std::vector<Chunk> chunks;
  size_t bytes = 0;
};

Rows read_rows(const char* store, int64_t limit) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(store, &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
    throw Error(std::string("cannot open ") + store);
  register_store_functions(db);
  Rows rows;
  {
    Statement st(db,
                 "SELECT chunk_id, coalesce(functionName,''), coalesce(className,''), "
                 "coalesce(symbol,''), path, coalesce(heading_path,''), pf_text(content) FROM "
                 "copilot_code_chunks ORDER BY chunk_id LIMIT ?");
    st.bind(1, limit);
    while (st.step()) {
      Chunk c;
      c.function_name = st.text(1);
      c.class_name = st.text(2);
      c.symbol = st.text(3);
      c.path = st.text(4);
      c.heading_path = st.text(5);
      c.content = st.text(6);
      rows.bytes += c.content.size();
      rows.ids.push_back(st.int64(0));
      rows.chunks.push_back(std::move(c));
    }
  }
  sqlite3_close(db);
  return rows;
}

double fts5_writer(const Rows& rows, const std::vector<std::string>& tokens, size_t batch) {
  sqlite3* db = fresh_db("/tmp/pf_projection_fts5.db");
  register_code_tokenizer(db);
  sqlite::exec(db,
               "CREATE VIRTUAL TABLE f USING fts5(symbols, path, headings, body, content='', "
               "tokenize='pilotfish');"
               "INSERT INTO f(f, rank) VALUES('automerge', 64);"
               "INSERT INTO f(f, rank) VALUES('crisismerge', 64)");
  const auto start = Clock::now();
  {
    Statement ins(db, "INSERT INTO f(rowid, symbols, path, headings, body) VALUES (?,?,?,?,?)");
    std::string_view columns[4];
    for (size_t i = 0; i < rows.ids.size(); ++i) {
      if (i % batch == 0) sqlite::exec(db, i ? "COMMIT; BEGIN" : "BEGIN");
      if (!text_token_columns(tokens[i], columns)) continue;
      ins.bind(1, rows.ids[i]);
      for (int c = 0; c < 4; ++c) ins.bind(2 + c, columns[c]);
      ins.run();
    }
    sqlite::exec(db, "COMMIT");
  }
  const double s = seconds_since(start);
  Statement size(db, "SELECT sum(length(block)) FROM f_data");
  std::printf("writer, FTS5: %.2f s, index %.1f MB\n", s, size.step() ? size.int64(0) / 1e6 : 0);
  sqlite3_close_v2(db);
  return s;
}

// Postings into SQLite: one segment per batch, then one merge of them all.
void postings_writer(const Rows& rows, const std::vector<PgChunkTerms>& terms, size_t batch) {
  sqlite3* db = fresh_db("/tmp/pf_projection_postings.db");
  sqlite::exec(db,
               "CREATE TABLE blocks(segment INTEGER, first BLOB, data BLOB, "
               "PRIMARY KEY(segment, first)) WITHOUT ROWID;"
               "CREATE TABLE lengths(segment INTEGER, bucket INTEGER, data BLOB, "
               "PRIMARY KEY(segment, bucket)) WITHOUT ROWID");
  Statement put_block(db, "INSERT INTO blocks VALUES (?,?,?)");
  Statement put_lengths(db, "INSERT INTO lengths VALUES (?,?,?)");
  int64_t segment = 0;
  size_t bytes = 0;
  auto put = [&](PgBlockWriter& w) {
    for (auto& [first, data] : w.take_blocks()) {
      bytes += data.size();
      put_block.bind(1, segment).bind_blob(2, first).bind_blob(3, data).run();
    }
  };
  std::unordered_map<std::string, std::vector<PgPosting>> pending;
  std::vector<std::pair<int64_t, uint32_t>> lengths;
  auto flush = [&] {
    std::vector<const std::pair<const std::string, std::vector<PgPosting>>*> order;
    for (const auto& entry : pending) order.push_back(&entry);
    std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->first < b->first; });
    ++segment;
    PgBlockWriter w;
    for (const auto* entry : order) {
      w.add(entry->first, entry->second);
      put(w);
    }
    w.finish();
    put(w);
    for (auto& [bucket, data] : pg_encode_lengths(lengths))
      put_lengths.bind(1, segment).bind(2, bucket).bind_blob(3, data).run();
    pending.clear();
    lengths.clear();
  };
  auto start = Clock::now();
  for (size_t i = 0; i < rows.ids.size(); ++i) {
    if (i % batch == 0) {
      if (i) {
        flush();
        sqlite::exec(db, "COMMIT");
      }
      sqlite::exec(db, "BEGIN");
    }
    for (const auto& [term, counts] : terms[i].terms)
      pending[term].push_back(PgPosting{rows.ids[i], counts});
    lengths.emplace_back(rows.ids[i], terms[i].length);
  }
  flush();
  sqlite::exec(db, "COMMIT");
  std::printf("writer, postings: %.2f s, %lld segments, %.1f MB\n", seconds_since(start),
              static_cast<long long>(segment), bytes / 1e6);
  start = Clock::now();
  std::map<std::string, std::vector<PgPosting>> all;
  {
    Statement read(db, "SELECT data FROM blocks ORDER BY segment, first");
    while (read.step()) {
      std::string_view block(static_cast<const char*>(sqlite3_column_blob(read.handle(), 0)),
                             static_cast<size_t>(sqlite3_column_bytes(read.handle(), 0)));
      pg_for_each_term(block, [&](std::string_view term, const PgTermPostings& p) {
        auto& v = all[std::string(term)];
        v.insert(v.end(), p.postings.begin(), p.postings.end());
      });
    }
  }
  sqlite::exec(db, "BEGIN; DELETE FROM blocks");
  ++segment;
  bytes = 0;
  PgBlockWriter w;
  for (const auto& [term, postings] : all) {
    w.add(term, postings);
    put(w);
  }
  w.finish();
  put(w);
  sqlite::exec(db, "COMMIT");
  std::printf("one merge of every segment, in memory: %.2f s, %.1f MB\n", seconds_since(start),
              bytes / 1e6);
  sqlite3_close_v2(db);  // closed once the statements above are finalized
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: pf_postings_projection STORE [CHUNKS] [BATCH]\n");
    return 2;
  }
  try {
    const int64_t limit = argc > 2 ? std::atoll(argv[2]) : 400000;
    const size_t batch = argc > 3 ? static_cast<size_t>(std::atoll(argv[3])) : 6000;
    const Rows rows = read_rows(argv[1], limit);
    std::printf("%zu chunks, %.1f MB of text\n", rows.chunks.size(), rows.bytes / 1e6);
    // The workers' share, each chunk's result dropped as a worker hands it on; then kept, untimed,
    // for the writers.
    size_t sink = 0;
    auto start = Clock::now();
    for (const Chunk& c : rows.chunks) sink += encode_text_tokens(c, c.content).size();
    std::printf("workers, FTS5's tokens: %.2f s\n", seconds_since(start));
    start = Clock::now();
    for (const Chunk& c : rows.chunks) sink += pg_chunk_terms(c, c.path).terms.size();
    std::printf("workers, terms with their counts: %.2f s (%zu)\n", seconds_since(start), sink);
    std::vector<std::string> tokens;
    std::vector<PgChunkTerms> terms;
    for (const Chunk& c : rows.chunks) {
      tokens.push_back(encode_text_tokens(c, c.content));
      terms.push_back(pg_chunk_terms(c, c.path));
    }
    fts5_writer(rows, tokens, batch);
    postings_writer(rows, terms, batch);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pf_postings_projection: %s\n", e.what());
    return 1;
  }
  return 0;
}
