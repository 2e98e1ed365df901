// The SQLite implementation of Store: WAL mode so searches run while an indexer writes (the log
// checkpointed on a thread of its own, wal_checkpointer.h), one prepared statement per
// operation, and a lock file beside the database that keeps a second indexer out
// (store_file_lock.h).
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <utility>

#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"
#include "store/bm25_cache.h"
#include "store/bm25_index.h"
#include "store/chunk_id.h"
#include "store/content_codec.h"
#include "store/fts_tokenizer.h"
#include "store/fts5_search.h"
#include "store/pending_text_index.h"
#include "store/schema.h"
#include "store/sqlite_stats.h"
#include "store/sqlite_util.h"
#include "store/store.h"
#include "store/store_file_lock.h"
#include "store/text_index_levels.h"
#include "store/vector_blob.h"
#include "store/wal_checkpointer.h"

namespace pf {
namespace {

// Each repository with its files, bytes and chunks (index scans; list_repositories(true)).
constexpr const char* kRepositoriesWithCounts =
    "SELECT r.id, r.root, coalesce(r.last_indexed_at,''), coalesce(r.indexed_commit,''), "
    "(SELECT count(*) FROM files f WHERE f.repo_id = r.id), "
    "(SELECT coalesce(sum(size),0) FROM files f WHERE f.repo_id = r.id), "
    "(SELECT count(*) FROM copilot_code_chunks c WHERE c.repo_id = r.id) "
    "FROM repositories r ORDER BY r.id";

using sqlite::Statement;

// The in-memory ranking of the store at path at its current generation, on a read-only
// connection of its own (any thread), from previous and the rows changed since where it can.
Bm25Snapshot build_bm25_index(const std::string& path,
                              const std::shared_ptr<const Bm25Index>& previous) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close_v2);
  if (rc != SQLITE_OK)
    throw Error("cannot open store " + path + ": " +
                (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  sqlite3_busy_timeout(raw, 10000);
  register_content_functions(raw);
  sqlite::exec(raw, "BEGIN");  // one snapshot: the generation and the rows read
  Bm25Snapshot s;
  {
    Statement g(raw, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'generation'");
    s.generation = g.step() ? g.int64(0) : 0;
  }
  s.index = Bm25Index::build(raw, kMaxRankedInMemory, previous.get());
  sqlite::exec(raw, "COMMIT");
  return s;
}

class SqliteStore : public Store {
 public:
  SqliteStore(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  ~SqliteStore() override {
    checkpointer_.reset();
    stmts_.reset();
    fts_.reset();
    by_rowid_[0].reset();
    by_rowid_[1].reset();
    generation_.reset();
    sqlite3_close_v2(db_);
  }

  std::unique_ptr<WriterLock> acquire_writer_lock() override { return lock_store_file(path_); }

  bool refresh_text_index() override {
    if (text_index_current()) return false;
    log::info("store", "rebuilding the full-text index for tokenizer version " +
                           std::string(kTokenizerVersion));
    sqlite::exec(db_, "BEGIN IMMEDIATE");
    try {
      sqlite::exec(
          db_,
          "INSERT INTO copilot_code_chunks_fts(copilot_code_chunks_fts) VALUES('delete-all');"
          "INSERT INTO copilot_code_chunks_fts(rowid, symbols, path, headings, body) "
          "SELECT c.chunk_id, " PF_FTS_VALUES("c") " FROM copilot_code_chunks c;");
      Statement st(db_, "INSERT OR REPLACE INTO meta(key, value) VALUES ('tokenizer_version', ?)");
      st.bind(1, std::string_view(kTokenizerVersion)).run();
      sqlite::exec(db_, "COMMIT");
    } catch (...) {
      rollback_batch();
      throw;
    }
    return true;
  }

  bool text_index_current() {
    Statement st(db_, "SELECT value FROM meta WHERE key = 'tokenizer_version'");
    return st.step() && st.text(0) == kTokenizerVersion;
  }

  int64_t ensure_repository(const std::string& root) override {
    if (auto r = find_repository(root)) return r->id;
    Statement st(db_, "INSERT INTO repositories(root) VALUES (?)");
    st.bind(1, std::string_view(root)).run();
    return sqlite3_last_insert_rowid(db_);
  }

  std::optional<RepositoryInfo> find_repository(const std::string& root) override {
    Statement st(db_,
                 "SELECT id, root, coalesce(last_indexed_at,''), coalesce(indexed_commit,'') FROM "
                 "repositories WHERE root = ?");
    st.bind(1, std::string_view(root));
    if (!st.step()) return std::nullopt;
    return repository_row(st);
  }

  // id, root, last_indexed_at and indexed_commit from a row that starts with them.
  static RepositoryInfo repository_row(const Statement& st) {
    RepositoryInfo info;
    info.id = st.int64(0);
    info.root = st.text(1);
    info.last_indexed_at = st.text(2);
    info.commit = st.text(3);
    return info;
  }

  std::vector<RepositoryInfo> list_repositories(bool with_counts) override {
    Statement st(db_, with_counts ? kRepositoriesWithCounts
                                  : "SELECT id, root, coalesce(last_indexed_at,''), "
                                    "coalesce(indexed_commit,'') FROM repositories ORDER BY id");
    std::vector<RepositoryInfo> out;
    while (st.step()) {
      out.push_back(repository_row(st));
      if (!with_counts) continue;
      out.back().files = st.int64(4);
      out.back().bytes = st.int64(5);
      out.back().chunks = st.int64(6);
    }
    return out;
  }

  bool has_chunks(std::optional<int64_t> repo_id) override {
    Statement st(db_, repo_id ? "SELECT EXISTS(SELECT 1 FROM copilot_code_chunks WHERE repo_id = ?)"
                              : "SELECT EXISTS(SELECT 1 FROM copilot_code_chunks)");
    if (repo_id) st.bind(1, *repo_id);
    return st.step() && st.int64(0) != 0;
  }

  std::vector<FileRecord> list_files(int64_t repo_id) override {
    // The primary key's order (BINARY: memcmp), so no sort.
    Statement st(db_,
                 "SELECT path, size, mtime_ns, content_hash, coalesce(language,''), "
                 "coalesce(fallback,'') FROM files WHERE repo_id = ? ORDER BY path");
    st.bind(1, repo_id);
    std::vector<FileRecord> out;
    while (st.step())
      out.push_back(FileRecord{st.text(0), st.int64(1), st.int64(2), st.text(3), st.text(4),
                               st.text(5)});
    return out;
  }

  void begin_batch() override {
    // The log is checkpointed on a thread of its own from the first batch on.
    if (!checkpointer_ && !checkpointer_failed_) {
      try {
        checkpointer_ = std::make_unique<WalCheckpointer>(db_, path_);
      } catch (const Error& e) {
        log::warn("store", std::string(e.what()) + "; checkpointing as each batch commits");
        checkpointer_failed_ = true;
      }
    }
    if (checkpointer_) checkpointer_->before_write();
    sqlite::exec(db_, "BEGIN IMMEDIATE");
    chunks_changed_ = false;
    pending_.clear();
  }
  void commit_batch() override {
    pending_.flush();
    // Bumped in the same transaction as the change, so a reader never sees one without the other.
    if (chunks_changed_)
      sqlite::exec(db_,
                   "INSERT INTO meta(key, value) VALUES('generation', '1') ON CONFLICT(key) DO "
                   "UPDATE SET value = CAST(value AS INTEGER) + 1");
    sqlite::exec(db_, "COMMIT");
  }
  void rollback_batch() override {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    pending_.clear();
  }

  int64_t generation() override {
    if (!generation_)
      generation_ = std::make_unique<Statement>(
          db_, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'generation'");
    int64_t g = generation_->step() ? generation_->int64(0) : 0;
    generation_->reset();
    return g;
  }
  const std::string& path() const override { return path_; }

  void replace_file(int64_t repo_id, const FileRecord& file, std::vector<Chunk> chunks) override {
    chunks_changed_ = true;
    auto& s = statements();
    delete_chunks(repo_id, file.path);
    // The file's time, formatted once: SQLite's strftime for each row's two columns was 5% of
    // the writer's time on the Linux tree.
    const std::string now = format_utc_ms(unix_time_ms());
    // The row's values are read where they are (bind_static): they outlive the insert. Its
    // tokens move to the pending index, which keeps them until the batch commits.
    for (Chunk& c : chunks) {
      Statement& ins = s.insert_chunk;
      const std::string id = new_chunk_id();
      ins.bind_static(1, id)
          .bind(2, repo_id)
          .bind_static(3, c.path)
          .bind_text_or_null(4, c.language)
          .bind(6, static_cast<int64_t>(c.start_line))
          .bind(7, static_cast<int64_t>(c.end_line))
          .bind_text_or_null(8, c.function_name)
          .bind_text_or_null(9, c.class_name)
          .bind_static(10, c.chunk_type)
          .bind(11, static_cast<int64_t>(c.tokens))
          .bind_text_or_null(12, c.symbol)
          .bind_text_or_null(13, c.heading_path)
          .bind_static(14, c.content_hash)
          .bind_static(15, now);
      if (c.compressed)  // a zstd frame: a BLOB, which pf_text tells from text
        ins.bind_static_blob(5, c.content);
      else
        ins.bind_static(5, c.content);
      ins.run();
      pending_.add(sqlite3_last_insert_rowid(db_), std::move(c.text_tokens));
    }
    if (!chunks.empty()) pending_.add_file(repo_id, file.path);
    upsert_file(repo_id, file, now);
  }

  void touch_file(int64_t repo_id, const FileRecord& file) override {
    upsert_file(repo_id, file, format_utc_ms(unix_time_ms()));
  }

  bool keeps_compressed_content() const override { return true; }
  std::string text_tokens(const Chunk& c, std::string_view plain_content) const override {
    return encode_text_tokens(c, plain_content);
  }

  std::string content_dictionary(int64_t repo_id) override {
    Statement st(db_,
                 "SELECT dictionary FROM content_dictionaries WHERE repo_id = ? "
                 "ORDER BY id DESC LIMIT 1");
    st.bind(1, repo_id);
    return st.step() ? st.text(0) : std::string();
  }

  uint32_t next_content_dictionary_id() override {
    Statement st(db_, "SELECT coalesce(max(id), 0) + 1 FROM content_dictionaries");
    return kFirstContentDictionaryId + static_cast<uint32_t>(st.step() ? st.int64(0) : 1);
  }

  void add_content_dictionary(int64_t repo_id, const std::string& dictionary) override {
    uint32_t id = content_dictionary_id(dictionary);
    if (id < kFirstContentDictionaryId) throw Error("not a content dictionary of this store");
    Statement st(db_, "INSERT INTO content_dictionaries(id, repo_id, dictionary) VALUES (?,?,?)");
    st.bind(1, static_cast<int64_t>(id - kFirstContentDictionaryId))
        .bind(2, repo_id)
        .bind_blob(3, dictionary)
        .run();
  }

  void remove_file(int64_t repo_id, const std::string& path) override {
    chunks_changed_ = true;
    auto& s = statements();
    delete_chunks(repo_id, path);
    s.delete_file.bind(1, repo_id).bind(2, std::string_view(path)).run();
  }

  void mark_indexed(int64_t repo_id, const std::string& chunker_version,
                    const std::string& commit) override {
    Statement st(db_,
                 "UPDATE repositories SET chunker_version = ?, indexed_commit = nullif(?, ''), "
                 "last_indexed_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?");
    st.bind(1, std::string_view(chunker_version)).bind(2, std::string_view(commit)).bind(3, repo_id).run();
    // The run's last batch: the small segments it left on the index's first level merge, and
    // the file gives back its free pages (a store made before auto_vacuum keeps them).
    merge_first_text_index_level(db_);
    sqlite::exec(db_, "PRAGMA incremental_vacuum");
  }

  void set_chunker_version(int64_t repo_id, const std::string& chunker_version) override {
    Statement st(db_, "UPDATE repositories SET chunker_version = ? WHERE id = ?");
    st.bind(1, std::string_view(chunker_version)).bind(2, repo_id).run();
  }

  std::string chunker_version(int64_t repo_id) override {
    Statement st(db_, "SELECT coalesce(chunker_version,'') FROM repositories WHERE id = ?");
    st.bind(1, repo_id);
    return st.step() ? st.text(0) : std::string();
  }

  std::string repository_root(int64_t repo_id) override {
    Statement st(db_, "SELECT root FROM repositories WHERE id = ?");
    st.bind(1, repo_id);
    return st.step() ? st.text(0) : std::string();
  }

  std::vector<StoredChunk> lexical_search(const LexicalQuery& q) override {
    ReadSnapshot snapshot(db_);
    if (q.terms.empty()) return {};
    if (auto index = bm25_index())  // same snapshot, so every ranked row is there
      return ranked_rows(*index, q, [&](const std::vector<int64_t>& ids, bool content) {
        return read_rows(ids, content);
      });
    LexicalQuery ranked = q;
    // The filter costs a row lookup per match; with one repository in the store it keeps all.
    if (q.repo_id && only_repository() == *q.repo_id) ranked.repo_id.reset();
    return read_ranked(fts_->rank(ranked, generation()), q.with_content,
                       [&](const std::vector<int64_t>& ids, bool content) {
                         return read_rows(ids, content);
                       });
  }

  // The id of the store's one repository; 0 when it has none or several.
  int64_t only_repository() {
    Statement st(db_, "SELECT min(id), count(*) FROM repositories");
    return st.step() && st.int64(1) == 1 ? st.int64(0) : 0;
  }

  std::vector<StoredChunk> chunks_by_rowid(const std::vector<int64_t>& rowids) override {
    return read_rows(rowids, true);
  }

  std::vector<StoredChunk> file_chunks(int64_t repo_id, const std::string& path) override {
    Statement st(db_, chunk_columns(true) +
                          "0 FROM copilot_code_chunks c WHERE c.repo_id = ? AND c.path = ? "
                          "ORDER BY c.chunk_id");
    st.bind(1, repo_id).bind(2, std::string_view(path));
    std::vector<StoredChunk> out;
    while (st.step()) out.push_back(read_chunk(st, true));
    return out;
  }

  std::vector<StoredChunk> read_rows(const std::vector<int64_t>& rowids, bool with_content) {
    auto& st = by_rowid_[with_content ? 1 : 0];
    if (!st)
      st = std::make_unique<Statement>(
          db_, chunk_columns(with_content) +
                   "0 FROM copilot_code_chunks c WHERE c.chunk_id = ?");
    std::vector<StoredChunk> out;
    for (int64_t id : rowids) {
      st->bind(1, id);
      if (st->step()) out.push_back(read_chunk(*st, with_content));
      st->reset();
    }
    return out;
  }

  std::vector<ChunkToEmbed> chunks_to_embed(const std::string& model, int limit,
                                            int64_t after_rowid) override {
    Statement st(db_,
                 "SELECT chunk_id, pf_text(content) FROM copilot_code_chunks WHERE chunk_id > ? AND "
                 "(embedding IS NULL OR embeddingModel IS NOT ?) ORDER BY chunk_id LIMIT ?");
    st.bind(1, after_rowid).bind(2, std::string_view(model)).bind(3, static_cast<int64_t>(limit));
    std::vector<ChunkToEmbed> out;
    while (st.step()) out.push_back(ChunkToEmbed{st.int64(0), st.text(1)});
    return out;
  }

  void set_embeddings(const std::string& model,
                      const std::vector<std::pair<int64_t, std::vector<float>>>& vectors) override {
    chunks_changed_ = true;
    Statement st(db_,
                 "UPDATE copilot_code_chunks SET embedding = ?, embeddingModel = ?, "
                 "updated = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE chunk_id = ?");
    Statement forget(db_, "DELETE FROM embedding_failures WHERE chunk_id = ? AND model = ?");
    size_t dim = vectors.empty() ? 0 : vectors.front().second.size();
    for (const auto& [rowid, v] : vectors) {
      if (v.size() != dim || dim == 0)
        throw Error("embedding model " + model + " returned vectors of different sizes (" +
                    std::to_string(dim) + " and " + std::to_string(v.size()) + ")");
      std::string blob = encode_vector(v);
      sqlite3_bind_blob(st.handle(), 1, blob.data(), static_cast<int>(blob.size()),
                        SQLITE_TRANSIENT);
      st.bind(2, std::string_view(model)).bind(3, rowid);
      st.run();
      forget.bind(1, rowid).bind(2, std::string_view(model));
      forget.run();
    }
  }

  void record_embedding_failures(
      const std::string& model,
      const std::vector<std::pair<int64_t, std::string>>& failures) override {
    Statement st(db_,
                 "INSERT OR REPLACE INTO embedding_failures(chunk_id, model, reason) "
                 "VALUES (?, ?, ?)");
    for (const auto& [rowid, reason] : failures) {
      st.bind(1, rowid).bind(2, std::string_view(model)).bind(3, std::string_view(reason));
      st.run();
    }
  }

  EmbeddingMatrix load_embeddings(const std::string& model) override {
    Statement st(db_,
                 "SELECT chunk_id, embedding FROM copilot_code_chunks WHERE embeddingModel = ? AND "
                 "embedding IS NOT NULL ORDER BY chunk_id");
    st.bind(1, std::string_view(model));
    EmbeddingMatrix m;
    m.model = model;
    while (st.step()) {
      const auto* p = static_cast<const char*>(sqlite3_column_blob(st.handle(), 1));
      int bytes = sqlite3_column_bytes(st.handle(), 1);
      if (p && bytes > 0)
        add_encoded_vector(&m, st.int64(0), std::string_view(p, static_cast<size_t>(bytes)));
    }
    return m;
  }

  LexicalStats lexical_stats(const std::vector<std::string>& terms) override {
    ReadSnapshot snapshot(db_);
    LexicalStats s;
    std::tie(s.rows, s.tokens) = fts_->totals();
    s.df = fts_->document_frequencies(terms, generation());
    return s;
  }

  StoreStats stats() override {
    StoreStats s;
    count_sqlite_store(db_, &s);
    s.repositories = list_repositories(true);
    struct stat st {};
    if (::stat(path_.c_str(), &st) == 0) s.db_bytes = st.st_size;
    return s;
  }

 private:
  struct Statements {
    explicit Statements(sqlite3* db)
        : delete_chunks(db, "DELETE FROM copilot_code_chunks WHERE repo_id = ? AND path = ?"),
          insert_chunk(db,
                       "INSERT INTO copilot_code_chunks(id, repo_id, path, language, content, "
                       "startLine, endLine, functionName, className, chunkType, tokens, symbol, "
                       "heading_path, content_hash, created, updated) "
                       "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?15,?15)"),
          upsert_file(db,
                      "INSERT INTO files(repo_id, path, size, mtime_ns, content_hash, language, "
                      "fallback, indexed_at) VALUES (?,?,?,?,?,?,?,?) "
                      "ON CONFLICT(repo_id, path) DO UPDATE SET "
                      "size = excluded.size, mtime_ns = excluded.mtime_ns, "
                      "content_hash = excluded.content_hash, language = excluded.language, "
                      "fallback = excluded.fallback, indexed_at = excluded.indexed_at"),
          delete_file(db, "DELETE FROM files WHERE repo_id = ? AND path = ?") {}
    Statement delete_chunks, insert_chunk, upsert_file, delete_file;
  };

  // New rows get their FTS entries when the batch commits (pending_text_index.h); deleting a
  // file whose rows are still pending indexes them first, since the delete trigger removes
  // the entries.
  void delete_chunks(int64_t repo_id, const std::string& path) {
    pending_.flush_before_delete(repo_id, path);
    statements().delete_chunks.bind(1, repo_id).bind(2, std::string_view(path)).run();
  }

  Statements& statements() {
    if (!stmts_) stmts_ = std::make_unique<Statements>(db_);
    return *stmts_;
  }

  // indexed_at: now, as format_utc_ms writes it.
  void upsert_file(int64_t repo_id, const FileRecord& f, const std::string& indexed_at) {
    statements()
        .upsert_file.bind(1, repo_id)
        .bind(2, std::string_view(f.path))
        .bind(3, f.size)
        .bind(4, f.mtime_ns)
        .bind(5, std::string_view(f.content_hash))
        .bind_text_or_null(6, f.language)
        .bind_text_or_null(7, f.fallback)
        .bind(8, std::string_view(indexed_at))
        .run();
  }

  sqlite3* db_;
  std::string path_;
  bool chunks_changed_ = false;  // in the open batch
  PendingTextIndex pending_{db_};  // the open batch's rows without FTS entries yet
  std::unique_ptr<Statements> stmts_;
  std::unique_ptr<Fts5Search> fts_ = std::make_unique<Fts5Search>(db_);
  std::unique_ptr<Statement> by_rowid_[2], generation_;
  std::string instance_;  // the store's random identity (meta 'instance'), read once
  std::unique_ptr<WalCheckpointer> checkpointer_;  // from the first batch on
  bool checkpointer_failed_ = false;

  // The shared in-memory ranking at this snapshot's generation, or null: FTS5 ranks (the same
  // scores) while the store is too large, on the process's first search, and while that
  // generation's index is still being made (store/bm25_cache.h), so a search never builds one,
  // never waits for one, and never sees an older generation.
  std::shared_ptr<const Bm25Index> bm25_index() {
    // PILOTFISH_LEXICAL_RANKER=fts5 keeps the ranking in FTS5 (for comparisons and benchmarks).
    static const bool fts5_only = [] {
      const char* v = std::getenv("PILOTFISH_LEXICAL_RANKER");
      return v && std::string_view(v) == "fts5";
    }();
    if (fts5_only) return nullptr;
    if (instance_.empty()) {
      Statement st(db_, "SELECT value FROM meta WHERE key = 'instance'");
      instance_ = st.step() ? st.text(0) : "-";
    }
    int64_t g = generation();
    auto build = [path = path_](const std::shared_ptr<const Bm25Index>& previous) {
      return build_bm25_index(path, previous);
    };
    Bm25Snapshot s = shared_bm25_index(path_ + "\n" + instance_, g, build,
                                       FirstBuild::kInBackgroundFromTheSecondSearch);
    return s.generation == g ? s.index : nullptr;
  }
};

}  // namespace

std::unique_ptr<Store> open_sqlite_store(const std::string& path, OpenMode mode) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (mode == OpenMode::kReadOnly && !fs::exists(path, ec))
    throw UsageError("no index at " + path + "; run `pilotfish index DIR` first, or pass --db");
  if (fs::is_directory(path, ec))
    throw UsageError(path + " is a directory; --db takes the path of the store file");
  if (mode == OpenMode::kReadWrite) {
    fs::path parent = fs::path(path).parent_path();
    if (!parent.empty()) fs::create_directories(parent, ec);
  }
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX |
              (mode == OpenMode::kReadWrite ? SQLITE_OPEN_CREATE : 0);
  // Memory statistics take a global mutex on every allocation; nothing here reads them.
  static const int config_once = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  (void)config_once;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    throw Error("cannot open store " + path + ": " + msg);
  }
  auto store = std::make_unique<SqliteStore>(db, path);
  try {
    sqlite3_busy_timeout(db, 10000);
    sqlite3_extended_result_codes(db, 1);
    register_store_functions(db);
    // 32 KiB pages for a new store (an existing one keeps its own): on the Linux tree the full
    // index took 119 s with 4 KiB pages (SQLite's default), 79 s with 16 KiB, in a store 7%
    // smaller (fewer page splits, WAL frames and overflow pages for the one writer); then 32 KiB
    // against 16 KiB 43-47 s against 46-49 s, the writer 2 CPU-s less, the store 0.4% smaller,
    // warm searches 3-5% slower (docs/BENCHMARKS.md). 64 KiB was slower and 2% larger.
    sqlite::exec(db, "PRAGMA page_size = 32768");
    // And a new store gives its free pages back when an index run ends (mark_indexed): merges of
    // the text index and deleted files leave them, 19-35 MB after a full index of the Linux tree.
    // Set on an empty file only: on a store in use the pragma writes its header.
    bool empty = false;
    if (mode == OpenMode::kReadWrite) {
      sqlite::Statement pages(db, "PRAGMA page_count");
      empty = pages.step() && pages.int64(0) == 0;
    }
    if (empty) sqlite::exec(db, "PRAGMA auto_vacuum = INCREMENTAL");
    // WAL lets searches read the last committed index while an indexer writes the next one.
    sqlite::exec(db,
                 "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; "
                 "PRAGMA foreign_keys = ON; PRAGMA cache_size = -65536; "
                 "PRAGMA temp_store = MEMORY");
    // A searching connection reads pages from the file's mapping, not copied by pread (a
    // search of a large store reads megabytes of doclists); SQLite caps the size at its build's
    // maximum. Not the indexer's: its peak RSS would count every page it maps (1 GiB on the
    // Linux tree), where its own memory is a third of that.
    if (mode == OpenMode::kReadOnly) sqlite::exec(db, "PRAGMA mmap_size = 4294967296");
    migrate(db, mode == OpenMode::kReadWrite);
    if (mode == OpenMode::kReadWrite) {
      // A new store's index is built by this tokenizer from the start.
      sqlite::exec(db, ("INSERT OR IGNORE INTO meta(key, value) SELECT 'tokenizer_version', '" +
                        std::string(kTokenizerVersion) +
                        "' WHERE NOT EXISTS (SELECT 1 FROM copilot_code_chunks)")
                           .c_str());
    } else if (!store->text_index_current()) {
      throw UsageError(
          "the store's text index was built by another pilotfish version; run "
          "`pilotfish index` to rebuild it");
    }
  } catch (const UsageError& e) {
    throw UsageError("cannot use store " + path + ": " + e.what());
  } catch (const Error& e) {
    throw Error("cannot use store " + path + ": " + e.what());
  }
  return store;
}

}  // namespace pf
