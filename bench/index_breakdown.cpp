// Where does a full index spend its time? Runs the indexer's stages one after the other on ONE
// thread over a repository and times each: walk, read, hash, classify, chunk, code-tokenize
// (the FTS5 tokenizer's work, run outside SQLite), then the store writes into a fresh store as
// pilotfish does them (chunk rows, and each batch's FTS5 entries at commit), and an FTS5 table
// alone filled with the same columns, so that the FTS5 share of the write cost shows.
//
//   pf_index_breakdown ROOT WORKDIR [--max-files N]
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "core/fs.h"
#include "core/hash.h"
#include "index/chunker.h"
#include "index/file_filter.h"
#include "index/walker.h"
#include "store/code_tokenizer.h"
#include "store/fts_tokenizer.h"
#include "store/schema.h"
#include "store/store.h"

namespace {

using Clock = std::chrono::steady_clock;
double secs(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

struct Prepared {
  pf::FileRecord record;
  std::vector<pf::Chunk> chunks;
};

double write_all(const std::string& db, const std::string& root,
                 const std::vector<Prepared>& files) {
  for (const char* suffix : {"", "-wal", "-shm", ".lock"}) std::filesystem::remove(db + suffix);
  auto store = pf::open_sqlite_store(db, pf::OpenMode::kReadWrite);
  auto lock = store->acquire_writer_lock();
  auto t0 = Clock::now();
  store->begin_batch();
  int64_t repo = store->ensure_repository(root);
  int in_batch = 0;
  for (const auto& f : files) {
    store->replace_file(repo, f.record, f.chunks);
    if (++in_batch == 500) {
      store->commit_batch();
      store->begin_batch();
      in_batch = 0;
    }
  }
  store->mark_indexed(repo, pf::kChunkerVersion);
  store->commit_batch();
  return secs(t0, Clock::now());
}

// The FTS5 table alone (no chunk rows, no triggers), filled through the raw SQLite API with the
// given tokenizer, committing every 500 files like the indexer.
double fts_only(const std::string& db, const std::vector<Prepared>& files, const char* tokenizer) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
  sqlite3* h = nullptr;
  sqlite3_open(db.c_str(), &h);
  pf::register_store_functions(h);
  std::string ddl = std::string(
                        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; "
                        "PRAGMA cache_size = -65536; CREATE VIRTUAL TABLE f USING fts5("
                        "symbols, path, headings, body, content='', tokenize='") +
                    tokenizer + "')";
  if (sqlite3_exec(h, ddl.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "fts_only: %s\n", sqlite3_errmsg(h));
    std::exit(1);
  }
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(h, "INSERT INTO f(rowid, symbols, path, headings, body) VALUES (?,?,?,?,?)",
                     -1, &st, nullptr);
  auto t0 = Clock::now();
  sqlite3_exec(h, "BEGIN", nullptr, nullptr, nullptr);
  int64_t rowid = 0;
  int in_batch = 0;
  for (const auto& f : files) {
    for (const auto& ch : f.chunks) {
      std::string symbols = ch.function_name + " " + ch.class_name + " " + ch.symbol;
      sqlite3_bind_int64(st, 1, ++rowid);
      sqlite3_bind_text(st, 2, symbols.data(), static_cast<int>(symbols.size()), SQLITE_TRANSIENT);
      sqlite3_bind_text(st, 3, ch.path.data(), static_cast<int>(ch.path.size()), SQLITE_STATIC);
      sqlite3_bind_text(st, 4, ch.heading_path.data(), static_cast<int>(ch.heading_path.size()),
                        SQLITE_STATIC);
      sqlite3_bind_text(st, 5, ch.content.data(), static_cast<int>(ch.content.size()),
                        SQLITE_STATIC);
      if (sqlite3_step(st) != SQLITE_DONE) {
        std::fprintf(stderr, "fts_only: %s\n", sqlite3_errmsg(h));
        std::exit(1);
      }
      sqlite3_reset(st);
    }
    if (++in_batch == 500) {
      sqlite3_exec(h, "COMMIT; BEGIN", nullptr, nullptr, nullptr);
      in_batch = 0;
    }
  }
  sqlite3_exec(h, "COMMIT", nullptr, nullptr, nullptr);
  double s = secs(t0, Clock::now());
  sqlite3_finalize(st);
  sqlite3_close(h);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: pf_index_breakdown ROOT WORKDIR [--max-files N]\n");
    return 2;
  }
  std::string root = argv[1], work = argv[2];
  size_t max_files = SIZE_MAX;
  if (argc >= 5 && std::string(argv[3]) == "--max-files")
    max_files = std::strtoull(argv[4], nullptr, 10);
  try {
    std::filesystem::create_directories(work);
    auto t = Clock::now();
    pf::WalkResult walk = pf::walk_repository(root, pf::WalkOptions{});
    double t_walk = secs(t, Clock::now());

    double t_read = 0, t_hash = 0, t_classify = 0, t_chunk = 0;
    int64_t bytes = 0, n_chunks = 0, chunk_bytes = 0;
    std::vector<Prepared> prepared;
    for (const auto& e : walk.files) {
      if (prepared.size() >= max_files) break;
      auto a = Clock::now();
      std::string content = pf::read_file(walk.root + "/" + e.rel);
      auto b = Clock::now();
      std::string hash = pf::hash_hex(content);
      auto c = Clock::now();
      pf::SkipReason why = pf::classify_content(&content);
      auto d = Clock::now();
      t_read += secs(a, b);
      t_hash += secs(b, c);
      t_classify += secs(c, d);
      if (why != pf::SkipReason::kNone) continue;
      Prepared p;
      p.record = pf::FileRecord{e.rel, e.size, e.mtime_ns, hash, pf::detect_language(e.rel)};
      p.chunks = pf::chunk_file(e.rel, p.record.language, content);
      t_chunk += secs(d, Clock::now());
      bytes += e.size;
      n_chunks += static_cast<int64_t>(p.chunks.size());
      for (const auto& ch : p.chunks) chunk_bytes += static_cast<int64_t>(ch.content.size());
      prepared.push_back(std::move(p));
    }

    // The tokenizer's work for every FTS column of every chunk, outside SQLite.
    t = Clock::now();
    int64_t tokens = 0;
    auto count = [&](std::string_view s) {
      pf::for_each_code_token(s, true, [&](std::string_view, bool, size_t, size_t) { ++tokens; });
    };
    for (const auto& p : prepared)
      for (const auto& ch : p.chunks) {
        count(ch.function_name + " " + ch.class_name + " " + ch.symbol);
        count(ch.path);
        count(ch.heading_path);
        count(ch.content);
      }
    double t_tokenize = secs(t, Clock::now());

    double t_write = write_all(work + "/breakdown.db", walk.root, prepared);
    double t_fts_pf = fts_only(work + "/breakdown-fts-pilotfish.db", prepared, "pilotfish");
    double t_fts_u61 = fts_only(work + "/breakdown-fts-unicode61.db", prepared, "unicode61");

    std::printf(
        "{\"files\": %zu, \"bytes\": %lld, \"chunks\": %lld, \"chunk_bytes\": %lld, "
        "\"tokens\": %lld, \"walk_s\": %.3f, \"read_s\": %.3f, \"hash_s\": %.3f, "
        "\"classify_s\": %.3f, \"chunk_s\": %.3f, \"tokenize_s\": %.3f, \"write_s\": %.3f, "
        "\"fts_only_pilotfish_tokenizer_s\": %.3f, "
        "\"fts_only_unicode61_s\": %.3f}\n",
        prepared.size(), static_cast<long long>(bytes), static_cast<long long>(n_chunks),
        static_cast<long long>(chunk_bytes), static_cast<long long>(tokens), t_walk, t_read, t_hash,
        t_classify, t_chunk, t_tokenize, t_write, t_fts_pf, t_fts_u61);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pf_index_breakdown: %s\n", e.what());
    return 1;
  }
  return 0;
}
