// The PostgreSQL implementation of Store, for several `pilotfish serve` replicas on one shared
// store. The schema is a superset of the reference's copilot_code_chunks (its column names,
// quoted camelCase as TypeORM makes them) plus repository id, symbol, heading path and content
// hash. Each batch is one transaction, so a search never sees half a file. Lexical ranking, with
// the same scores as the SQLite store: in the database (pg_search.h, from postings of our own
// that each batch adds a segment to: pg_segments.h; the reference's "searchVector" column stays
// NULL), or, for a store small enough, by the in-memory index (bm25_index.h) a process builds in
// the background from its second search on. Vectors are bytea (Debian 12 has no pgvector),
// scanned in process. One
// indexer at a time and one migrator at a time through advisory locks, which PostgreSQL releases
// when the holder's connection ends, however the process dies.
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <string>

#include "core/error.h"
#include "core/log.h"
#include "store/bm25_cache.h"
#include "store/bm25_index.h"
#include "store/chunk_id.h"
#include "store/pg_search.h"
#include "store/pg_segments.h"
#include "store/pg_store.h"
#include "store/pg_util.h"
#include "store/vector_blob.h"

namespace pf {
namespace {

using pg::Param;

// The chunk columns every chunk query selects, in the order read_row reads them.
std::string pg_chunk_columns(bool with_content) {
  return std::string(
             "SELECT c.chunk_id, c.repo_id, c.path, coalesce(c.language,''), c.\"startLine\", "
             "c.\"endLine\", c.\"chunkType\", coalesce(c.\"functionName\",''), "
             "coalesce(c.\"className\",''), coalesce(c.symbol,''), coalesce(c.heading_path,''), ") +
         (with_content ? "c.content" : "''") + ", coalesce(c.tokens,0), c.content_hash ";
}

StoredChunk read_row(const pg::Result& r, int row, bool with_content) {
  StoredChunk s;
  s.rowid = r.int64(row, 0);
  s.repo_id = r.int64(row, 1);
  Chunk& c = s.chunk;
  c.path = r.text(row, 2);
  c.language = r.text(row, 3);
  c.start_line = static_cast<int>(r.int64(row, 4));
  c.end_line = static_cast<int>(r.int64(row, 5));
  c.chunk_type = r.text(row, 6);
  c.function_name = r.text(row, 7);
  c.class_name = r.text(row, 8);
  c.symbol = r.text(row, 9);
  c.heading_path = r.text(row, 10);
  c.content = r.text(row, 11);
  c.tokens = static_cast<int>(r.int64(row, 12));
  c.content_hash = r.text(row, 13);
  s.partial = !with_content;
  return s;
}

class PgWriterLock : public WriterLock {
 public:
  // The lock lives in the connection's session: a new session would not hold it, so while
  // it is held the connection is not made again (a broken one fails the run instead).
  explicit PgWriterLock(std::shared_ptr<pg::Connection> c) : c_(std::move(c)) {
    c_->allow_reconnect(false);
  }
  ~PgWriterLock() override {
    c_->allow_reconnect(true);
    try {
      c_->exec("SELECT pg_advisory_unlock($1, $2)",
               {Param::number(pg::kPgLockClass), Param::number(pg::kPgWriterLockKey)});
    } catch (const Error& e) {
      log::warn("store", std::string("releasing the writer lock: ") + e.what());
    }
  }

 private:
  std::shared_ptr<pg::Connection> c_;
};

// The in-memory ranking of the store at conninfo at its current generation, on a connection of
// its own (any thread) in one snapshot: previous and the rows changed since where it can, else
// every row. Throws pf::Error.
Bm25Snapshot build_pg_bm25_index(const std::string& conninfo,
                                 const std::shared_ptr<const Bm25Index>& previous) {
  pg::Connection c(conninfo);
  c.run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  Bm25Snapshot s;
  auto g = c.exec("SELECT value FROM pilotfish_meta WHERE key = 'generation'");
  s.generation = g.rows() ? g.int64(0, 0) : 0;
  if (c.exec("SELECT coalesce(sum(size), 0) FROM files").int64(0, 0) > kMaxRankedInMemory) {
    c.run("COMMIT");
    return s;  // ranked in the database (pg_search.h)
  }
  std::unique_ptr<Bm25Index::Builder> builder;
  std::vector<std::string> missing_ids;
  if (previous) {
    auto k = c.exec("SELECT chunk_id, id FROM copilot_code_chunks");
    std::vector<Bm25Index::RowKey> now;
    for (int i = 0; i < k.rows(); ++i)
      now.push_back(Bm25Index::RowKey{k.int64(i, 0), Bm25Index::id_hash(k.view(i, 1))});
    size_t rows = now.size();
    std::vector<int64_t> missing;
    builder = std::make_unique<Bm25Index::Builder>(*previous, std::move(now), &missing);
    if (missing.size() * 2 > rows) builder.reset();  // reading everything costs about the same
    for (int64_t id : missing) missing_ids.push_back(std::to_string(id));
  }
  const std::string columns =
      "SELECT chunk_id, id, repo_id, trim(coalesce(\"functionName\",'') || ' ' || "
      "coalesce(\"className\",'') || ' ' || coalesce(symbol,'')), path, coalesce(heading_path,''), "
      "content, \"startLine\" FROM copilot_code_chunks ";
  pg::Result r = builder ? c.exec(columns + "WHERE chunk_id = ANY($1::bigint[]) ORDER BY chunk_id",
                                  {Param::text(pg::text_array(missing_ids))})
                         : c.exec(columns + "ORDER BY chunk_id");
  if (!builder) builder = std::make_unique<Bm25Index::Builder>();
  for (int i = 0; i < r.rows(); ++i) {
    const std::string_view cols[4] = {r.view(i, 3), r.view(i, 4), r.view(i, 5), r.view(i, 6)};
    builder->add(r.int64(i, 0), Bm25Index::id_hash(r.view(i, 1)), r.int64(i, 2), cols,
                 r.int64(i, 7));
  }
  c.run("COMMIT");
  s.index = builder->finish();  // null when a count is over its layout: ranked in the database
  return s;
}

class PgStore : public Store {
 public:
  PgStore(std::shared_ptr<pg::Connection> c, std::string conninfo)
      : c_(std::move(c)), conninfo_(std::move(conninfo)) {
    // A new session has missed every NOTIFY of the old one and listens to none.
    c_->on_reconnect([this] {
      generation_ = -1;
      c_->run("LISTEN pilotfish_generation");
    });
  }

  std::unique_ptr<WriterLock> acquire_writer_lock() override {
    auto r = c_->exec("SELECT pg_try_advisory_lock($1, $2)",
                      {Param::number(pg::kPgLockClass), Param::number(pg::kPgWriterLockKey)});
    if (r.text(0, 0) != "t") {
      auto who = c_->exec(
          "SELECT a.application_name, coalesce(host(a.client_addr), 'local'), a.pid "
          "FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = "
          "'advisory' AND l.classid = $1 AND l.objid = $2 AND l.objsubid = 2 AND l.granted",
          {Param::number(pg::kPgLockClass), Param::number(pg::kPgWriterLockKey)});
      std::string holder = who.rows() ? who.text(0, 0) + " on " + who.text(0, 1) +
                                            ", server pid " + who.text(0, 2)
                                      : "unknown";
      throw BusyError("another pilotfish indexer (" + holder + ") is writing " + c_->where() +
                      "; wait for it to finish");
    }
    return std::make_unique<PgWriterLock>(c_);
  }

  bool refresh_text_index() override {
    auto r = c_->exec("SELECT value FROM pilotfish_meta WHERE key = 'tokenizer_version'");
    if (r.rows() && r.text(0, 0) == pg_postings_version()) return false;
    log::info("store", "rebuilding the lexical postings for version " + pg_postings_version());
    begin_batch();
    try {
      // A store from before schema 5 kept its terms in each row: gone, as the postings replace them.
      c_->run("UPDATE copilot_code_chunks SET \"searchVector\" = NULL WHERE \"searchVector\" IS NOT NULL");
      pg_rebuild_postings(*c_);
      set_tokenizer_version();
      changed_ = true;
      commit_batch();
    } catch (...) {
      rollback_batch();
      throw;
    }
    return true;
  }

  void set_tokenizer_version() {
    c_->exec("INSERT INTO pilotfish_meta(key, value) VALUES ('tokenizer_version', $1) "
             "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
             {Param::text(pg_postings_version())});
  }

  int64_t ensure_repository(const std::string& root) override {
    auto r = c_->exec(
        "WITH ins AS (INSERT INTO repositories(root) VALUES ($1) ON CONFLICT (root) DO NOTHING "
        "RETURNING id) SELECT id FROM ins UNION ALL SELECT id FROM repositories WHERE root = $1",
        {Param::text(root)});
    return r.int64(0, 0);
  }

  std::optional<RepositoryInfo> find_repository(const std::string& root) override {
    auto r = c_->exec("SELECT id, root, coalesce(last_indexed_at,''), coalesce(indexed_commit,'') "
                      "FROM repositories WHERE root = $1",
                      {Param::text(root)});
    if (!r.rows()) return std::nullopt;
    return repository_row(r, 0);
  }

  // id, root, last_indexed_at and indexed_commit from a result whose rows start with them.
  static RepositoryInfo repository_row(const pg::Result& r, int row) {
    RepositoryInfo info;
    info.id = r.int64(row, 0);
    info.root = r.text(row, 1);
    info.last_indexed_at = r.text(row, 2);
    info.commit = r.text(row, 3);
    return info;
  }

  std::vector<RepositoryInfo> list_repositories(bool with_counts) override {
    auto r = c_->exec(with_counts
                          ? "SELECT r.id, r.root, coalesce(r.last_indexed_at,''), coalesce(r.indexed_commit,''), "
                            "(SELECT count(*) FROM files f WHERE f.repo_id = r.id), "
                            "(SELECT coalesce(sum(size),0) FROM files f WHERE f.repo_id = r.id), "
                            "(SELECT count(*) FROM copilot_code_chunks c WHERE c.repo_id = r.id) "
                            "FROM repositories r ORDER BY r.id"
                          : "SELECT id, root, coalesce(last_indexed_at,''), coalesce(indexed_commit,'') "
                            "FROM repositories ORDER BY id");
    std::vector<RepositoryInfo> out;
    for (int i = 0; i < r.rows(); ++i) {
      out.push_back(repository_row(r, i));
      if (!with_counts) continue;
      out.back().files = r.int64(i, 4);
      out.back().bytes = r.int64(i, 5);
      out.back().chunks = r.int64(i, 6);
    }
    return out;
  }

  bool has_chunks(std::optional<int64_t> repo_id) override {
    auto r = repo_id ? c_->exec("SELECT EXISTS(SELECT 1 FROM copilot_code_chunks WHERE repo_id = $1)",
                                {Param::number(*repo_id)})
                     : c_->exec("SELECT EXISTS(SELECT 1 FROM copilot_code_chunks)");
    return r.rows() && r.text(0, 0) == "t";
  }

  std::vector<FileRecord> list_files(int64_t repo_id) override {
    // Bytewise, whatever the server's collation.
    auto r = c_->exec("SELECT path, size, mtime_ns, content_hash, coalesce(language,''), "
                      "coalesce(fallback,'') FROM files WHERE repo_id = $1 "
                      "ORDER BY path COLLATE \"C\"",
                      {Param::number(repo_id)});
    std::vector<FileRecord> out;
    out.reserve(static_cast<size_t>(r.rows()));
    for (int i = 0; i < r.rows(); ++i)
      out.push_back(FileRecord{r.text(i, 0), r.int64(i, 1), r.int64(i, 2), r.text(i, 3),
                               r.text(i, 4), r.text(i, 5)});
    return out;
  }

  void begin_batch() override {
    c_->run("BEGIN");
    changed_ = false;
    segments_.clear();
  }
  void commit_batch() override {
    // Bumped in the same transaction as the change; NOTIFY is delivered at commit, so other
    // replicas hear of a generation they can already read.
    bool reclaim = false;
    if (changed_) {
      reclaim = segments_.flush(*c_);
      c_->run("UPDATE pilotfish_meta SET value = (value::bigint + 1)::text WHERE key = "
              "'generation'; NOTIFY pilotfish_generation");
    }
    c_->run("COMMIT");
    // The merged segments' rows, dead now, made reusable by the next segments rather than
    // left to grow the tables until autovacuum comes.
    if (reclaim) {
      try {
        c_->run("VACUUM lexical_blocks, lexical_lengths");
      } catch (const Error& e) {  // the batch is committed: autovacuum will come instead
        log::warn("store", std::string("reclaiming merged segments' space: ") + e.what());
      }
    }
    if (changed_) generation_ = -1;
    changed_ = false;
  }
  void rollback_batch() override {
    segments_.clear();
    try {
      c_->run("ROLLBACK");
    } catch (const Error&) {
    }
    changed_ = false;
  }

  // Read from the table once, then again only when a commit said it changed: this connection
  // LISTENs on pilotfish_generation, so a search costs no round trip for it. Inside a batch, and
  // right after this connection's own commit, read from the table.
  int64_t generation() override {
    if (!c_->in_transaction() && generation_ >= 0 && !c_->notified()) return generation_;
    auto r = c_->exec("SELECT value FROM pilotfish_meta WHERE key = 'generation'");
    int64_t g = r.rows() ? r.int64(0, 0) : 0;
    if (!c_->in_transaction()) generation_ = g;
    return g;
  }
  const std::string& path() const override { return c_->where(); }

  void replace_file(int64_t repo_id, const FileRecord& file, std::vector<Chunk> chunks) override {
    delete_chunks(repo_id, file.path);
    if (!chunks.empty()) insert_chunks(repo_id, file.path, chunks);
    upsert_file(repo_id, file);
  }

  void touch_file(int64_t repo_id, const FileRecord& file) override { upsert_file(repo_id, file); }

  void remove_file(int64_t repo_id, const std::string& path) override {
    delete_chunks(repo_id, path);
    c_->exec("DELETE FROM files WHERE repo_id = $1 AND path = $2",
             {Param::number(repo_id), Param::text(path)});
  }

  void mark_indexed(int64_t repo_id, const std::string& chunker_version,
                    const std::string& commit) override {
    c_->exec("UPDATE repositories SET chunker_version = $1, indexed_commit = nullif($3, ''), "
             "last_indexed_at = "
             "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') WHERE id = $2",
             {Param::text(chunker_version), Param::number(repo_id), Param::text(commit)});
  }

  void set_chunker_version(int64_t repo_id, const std::string& chunker_version) override {
    c_->exec("UPDATE repositories SET chunker_version = $1 WHERE id = $2",
             {Param::text(chunker_version), Param::number(repo_id)});
  }

  std::string chunker_version(int64_t repo_id) override {
    auto r = c_->exec("SELECT coalesce(chunker_version,'') FROM repositories WHERE id = $1",
                      {Param::number(repo_id)});
    return r.rows() ? r.text(0, 0) : std::string();
  }

  std::string repository_root(int64_t repo_id) override {
    auto r = c_->exec("SELECT root FROM repositories WHERE id = $1", {Param::number(repo_id)});
    return r.rows() ? r.text(0, 0) : std::string();
  }

  std::vector<StoredChunk> lexical_search(const LexicalQuery& q) override {
    if (q.terms.empty()) return {};
    // The ranking is one generation's (in memory) or one snapshot's (in the database), and the
    // rows are read in one statement, so a file is never seen half-written; a row deleted since
    // is left out.
    auto read = [&](const std::vector<int64_t>& ids, bool content) { return read_rows(ids, content); };
    if (auto index = bm25_index()) return ranked_rows(*index, q, read);
    return read_ranked(PgSearch(*c_).rank(q), q.with_content, read);
  }

  std::vector<StoredChunk> chunks_by_rowid(const std::vector<int64_t>& rowids) override {
    return read_rows(rowids, true);
  }

  std::vector<StoredChunk> file_chunks(int64_t repo_id, const std::string& path) override {
    auto r = c_->exec(pg_chunk_columns(true) +
                          "FROM copilot_code_chunks c WHERE c.repo_id = $1 AND c.path = $2 "
                          "ORDER BY c.chunk_id",
                      {Param::number(repo_id), Param::text(path)});
    std::vector<StoredChunk> out;
    for (int i = 0; i < r.rows(); ++i) out.push_back(read_row(r, i, true));
    return out;
  }

  std::vector<ChunkToEmbed> chunks_to_embed(const std::string& model, int limit,
                                            int64_t after_rowid) override {
    auto r = c_->exec(
        "SELECT chunk_id, content FROM copilot_code_chunks WHERE chunk_id > $1 AND "
        "(embedding IS NULL OR \"embeddingModel\" IS DISTINCT FROM $2) ORDER BY chunk_id LIMIT $3",
        {Param::number(after_rowid), Param::text(model), Param::number(limit)});
    std::vector<ChunkToEmbed> out;
    for (int i = 0; i < r.rows(); ++i) out.push_back(ChunkToEmbed{r.int64(i, 0), r.text(i, 1)});
    return out;
  }

  void set_embeddings(const std::string& model,
                      const std::vector<std::pair<int64_t, std::vector<float>>>& vectors) override {
    changed_ = true;
    size_t dim = vectors.empty() ? 0 : vectors.front().second.size();
    for (const auto& [rowid, v] : vectors) {
      if (v.size() != dim || dim == 0)
        throw Error("embedding model " + model + " returned vectors of different sizes (" +
                    std::to_string(dim) + " and " + std::to_string(v.size()) + ")");
      c_->exec("UPDATE copilot_code_chunks SET embedding = $1, \"embeddingModel\" = $2, "
               "updated = now() WHERE chunk_id = $3",
               {Param::bytes(encode_vector(v)), Param::text(model), Param::number(rowid)});
      c_->exec("DELETE FROM embedding_failures WHERE chunk_id = $1 AND model = $2",
               {Param::number(rowid), Param::text(model)});
    }
  }

  void record_embedding_failures(
      const std::string& model,
      const std::vector<std::pair<int64_t, std::string>>& failures) override {
    for (const auto& [rowid, reason] : failures)
      c_->exec("INSERT INTO embedding_failures(chunk_id, model, reason) VALUES ($1, $2, $3) "
               "ON CONFLICT (chunk_id, model) DO UPDATE SET reason = excluded.reason, "
               "failed_at = now()",
               {Param::number(rowid), Param::text(model), Param::text(reason)});
  }

  EmbeddingMatrix load_embeddings(const std::string& model) override {
    // Binary results: the vectors come as their bytes, the ids as big-endian int8.
    auto r = c_->exec("SELECT chunk_id, embedding FROM copilot_code_chunks WHERE "
                      "\"embeddingModel\" = $1 AND embedding IS NOT NULL ORDER BY chunk_id",
                      {Param::text(model)}, true);
    EmbeddingMatrix m;
    m.model = model;
    for (int i = 0; i < r.rows(); ++i) {
      add_encoded_vector(&m, pg::binary_int(r.view(i, 0)), r.view(i, 1));
    }
    return m;
  }

  LexicalStats lexical_stats(const std::vector<std::string>& terms) override {
    return PgSearch(*c_).stats(terms);
  }

  StoreStats stats() override;

 private:
  std::vector<StoredChunk> read_rows(const std::vector<int64_t>& rowids, bool with_content) {
    if (rowids.empty()) return {};
    std::vector<std::string> ids;
    for (int64_t id : rowids) ids.push_back(std::to_string(id));
    auto r = c_->exec(pg_chunk_columns(with_content) +
                          "FROM copilot_code_chunks c WHERE c.chunk_id = ANY($1::bigint[])",
                      {Param::text(pg::text_array(ids))});
    std::map<int64_t, int> at;
    for (int i = 0; i < r.rows(); ++i) at[r.int64(i, 0)] = i;
    std::vector<StoredChunk> out;
    for (int64_t id : rowids)
      if (auto it = at.find(id); it != at.end()) out.push_back(read_row(r, it->second, with_content));
    return out;
  }

  // A file's chunks go, a tombstone for each of their terms (tokenized again from the rows).
  void delete_chunks(int64_t repo_id, const std::string& path) {
    changed_ = true;
    auto r = c_->exec(std::string("DELETE FROM copilot_code_chunks WHERE repo_id = $1 AND path = "
                                  "$2 RETURNING chunk_id, ") + kPgTermColumns,
                      {Param::number(repo_id), Param::text(path)});
    for (int i = 0; i < r.rows(); ++i) segments_.remove(repo_id, r.int64(i, 0), pg_row_terms(r, i, 1));
  }

  // A file's chunks in one statement (one round trip, one plan), its columns as arrays; each
  // chunk's terms posted for the batch's segment under the id the insert gave it.
  void insert_chunks(int64_t repo_id, const std::string& path, const std::vector<Chunk>& chunks) {
    std::vector<std::string> col[12];
    for (const Chunk& c : chunks) {
      const std::string values[12] = {new_chunk_id(), c.language, c.content,
                                      std::to_string(c.start_line), std::to_string(c.end_line),
                                      c.function_name, c.class_name, c.chunk_type,
                                      std::to_string(c.tokens), c.symbol, c.heading_path,
                                      c.content_hash};
      for (int i = 0; i < 12; ++i) col[i].push_back(std::move(values[i]));
    }
    std::vector<Param> params = {Param::number(repo_id), Param::text(path)};
    for (int i = 0; i < 12; ++i) {
      // Names and language are NULL when empty, as the SQLite store keeps them.
      bool nullable = i == 1 || i == 5 || i == 6 || i == 9 || i == 10;
      params.push_back(Param::text(pg::text_array(col[i], nullable)));
    }
    auto r = c_->exec(
        "INSERT INTO copilot_code_chunks(id, repo_id, path, language, content, \"startLine\", "
        "\"endLine\", \"functionName\", \"className\", \"chunkType\", tokens, symbol, heading_path, "
        "content_hash) SELECT u.id, $1, $2, u.language, u.content, u.start, u.stop, u.fn, u.cls, "
        "u.kind, u.tokens, u.symbol, u.heading, u.hash FROM unnest($3::text[], $4::text[], "
        "$5::text[], $6::int[], $7::int[], $8::text[], $9::text[], $10::text[], $11::int[], "
        "$12::text[], $13::text[], $14::text[]) WITH ORDINALITY AS u(id, language, content, start, "
        "stop, fn, cls, kind, tokens, symbol, heading, hash, n) ORDER BY u.n RETURNING chunk_id, id",
        params);
    std::unordered_map<std::string, int64_t> ids;
    for (int i = 0; i < r.rows(); ++i) ids.emplace(r.text(i, 1), r.int64(i, 0));
    for (size_t k = 0; k < chunks.size(); ++k) {
      auto id = ids.find(col[0][k]);
      if (id == ids.end()) throw Error("the store did not return the id of an inserted chunk");
      segments_.add(repo_id, id->second, pg_chunk_terms(chunks[k], path));
    }
  }

  void upsert_file(int64_t repo_id, const FileRecord& f) {
    c_->exec("INSERT INTO files(repo_id, path, size, mtime_ns, content_hash, language, fallback) "
             "VALUES ($1,$2,$3,$4,$5,$6,$7) ON CONFLICT (repo_id, path) DO UPDATE SET "
             "size = excluded.size, mtime_ns = excluded.mtime_ns, "
             "content_hash = excluded.content_hash, language = excluded.language, "
             "fallback = excluded.fallback, indexed_at = now()",
             {Param::number(repo_id), Param::text(f.path), Param::number(f.size),
              Param::number(f.mtime_ns), Param::text(f.content_hash),
              Param::text_or_null(f.language), Param::text_or_null(f.fallback)});
  }

  // The process's shared in-memory ranking at this generation, or null: the database ranks (the
  // same scores) while the store is too large, on the process's first search, and while that
  // generation's index is being made (store/bm25_cache.h), so a search never builds one and
  // never waits for one.
  std::shared_ptr<const Bm25Index> bm25_index() {
    if (instance_.empty()) {
      auto r = c_->exec("SELECT value FROM pilotfish_meta WHERE key = 'instance'");
      instance_ = r.rows() ? r.text(0, 0) : "-";
    }
    auto build = [conninfo = conninfo_](const std::shared_ptr<const Bm25Index>& previous) {
      return build_pg_bm25_index(conninfo, previous);
    };
    const int64_t g = generation();
    Bm25Snapshot s = shared_bm25_index(c_->where() + "\n" + instance_, g, build,
                                       FirstBuild::kInBackgroundFromTheSecondSearch);
    return s.generation == g ? s.index : nullptr;
  }

  std::shared_ptr<pg::Connection> c_;
  bool changed_ = false;  // chunks or embeddings changed in the open batch
  PgSegmentWriter segments_;  // and the postings, written at its commit
  std::string instance_;
  std::string conninfo_;     // for the connections that build the in-memory ranking
  int64_t generation_ = -1;  // as last read; -1: read it
};

StoreStats PgStore::stats() {
  StoreStats s;
  auto one = [&](const std::string& sql) { return c_->exec(sql); };
  {
    auto r = one("SELECT value FROM pilotfish_meta WHERE key = 'schema_version'");
    if (r.rows()) s.schema_version = static_cast<int>(r.int64(0, 0));
  }
  s.files = one("SELECT count(*) FROM files").int64(0, 0);
  {
    auto r = one("SELECT \"chunkType\", count(*) FROM copilot_code_chunks GROUP BY 1");
    for (int i = 0; i < r.rows(); ++i) {
      s.chunks_by_type[r.text(i, 0)] = r.int64(i, 1);
      s.chunks += r.int64(i, 1);
    }
  }
  {
    auto r = one("SELECT coalesce(language,'?'), count(*) FROM copilot_code_chunks GROUP BY 1");
    for (int i = 0; i < r.rows(); ++i) s.chunks_by_language[r.text(i, 0)] = r.int64(i, 1);
  }
  {
    auto r = one("SELECT \"embeddingModel\", count(*) FROM copilot_code_chunks WHERE embedding IS "
                 "NOT NULL GROUP BY 1");
    for (int i = 0; i < r.rows(); ++i) s.embeddings_by_model[r.text(i, 0)] = r.int64(i, 1);
  }
  {
    auto r = one("SELECT model, count(*) FROM embedding_failures GROUP BY 1");
    for (int i = 0; i < r.rows(); ++i) s.embedding_failures_by_model[r.text(i, 0)] = r.int64(i, 1);
  }
  {
    auto r = one("SELECT fallback, count(*) FROM files WHERE fallback IS NOT NULL GROUP BY 1");
    for (int i = 0; i < r.rows(); ++i) s.fallbacks_by_reason[r.text(i, 0)] = r.int64(i, 1);
  }
  s.repositories = list_repositories(true);
  s.db_bytes = one("SELECT sum(pg_total_relation_size(t)) FROM unnest(ARRAY['repositories', "
                   "'files', 'copilot_code_chunks', 'embedding_failures', 'pilotfish_meta', "
                   "'lexical_segments', 'lexical_blocks', 'lexical_lengths']) t")
                   .int64(0, 0);
  return s;
}

}  // namespace

std::unique_ptr<Store> open_pg_store(const std::string& conninfo, OpenMode mode) {
  auto c = std::make_shared<pg::Connection>(conninfo);
  // Who holds a lock, as other replicas' messages name it.
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  c->exec("SELECT set_config('application_name', $1, false)",
          {Param::text("pilotfish pid " + std::to_string(::getpid()) + " on " + host)});
  try {
    migrate_pg(*c, mode == OpenMode::kReadWrite);
    c->run("LISTEN pilotfish_generation");
    auto store = std::make_unique<PgStore>(c, conninfo);
    auto version = c->exec("SELECT value FROM pilotfish_meta WHERE key = 'tokenizer_version'");
    bool current = version.rows() && version.text(0, 0) == pg_postings_version();
    if (mode == OpenMode::kReadWrite) {
      // A new store's vectors are made by this tokenizer from the start.
      if (c->exec("SELECT 1 FROM copilot_code_chunks LIMIT 1").rows() == 0) store->set_tokenizer_version();
    } else if (!current) {
      throw UsageError("the store's lexical postings were made by another pilotfish version; run "
                       "`pilotfish index` to rebuild them");
    }
    return store;
  } catch (const UsageError& e) {
    throw UsageError("cannot use store " + c->where() + ": " + e.what());
  } catch (const Error& e) {
    throw Error("cannot use store " + c->where() + ": " + e.what());
  }
}

}  // namespace pf
