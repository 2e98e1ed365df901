// The Store: where chunks, per-file bookkeeping and the full-text index live. One interface,
// with SQLite as the embedded default (sqlite_store.cpp) and PostgreSQL for several replicas on
// one store (pg_store.cpp). Indexer and search code talk only to this interface. A Store is one
// connection: one thread at a time.
//
// Consistency contract: each write (replace_file, remove_file, ...) happens inside the caller's
// open write batch (begin_batch/commit_batch); a batch is atomic, so a crash leaves every file
// either fully old or fully new, never half-written.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "store/chunk.h"

namespace pf {

// What bm25 reads of a corpus besides the rows it ranks: one store's, or several stores'
// summed when a question is ranked across shards (their scores then compare, and merge by
// value, as if the shards were one store).
struct LexicalStats {
  int64_t rows = 0;         // chunks
  int64_t tokens = 0;       // their tokens, all columns together
  std::vector<int64_t> df;  // how many chunks hold each term, in the order asked
};

// A lexical search: the rows holding any of the terms, ranked by BM25 over the whole store.
struct LexicalQuery {
  // Index terms (stemmed code tokens, as search/query.h's analyze_query makes them); a row
  // matches when it holds any of them.
  std::vector<std::string> terms;
  int limit = 50;
  std::optional<int64_t> repo_id;
  // bm25 column weights (>= 0): symbols, path, headings, body.
  double w_symbols = 8.0, w_path = 4.0, w_headings = 3.0, w_body = 1.0;
  // Bounds the work at any store size: when the terms together match more rows than this (> 0),
  // only the rarest terms' rows are enumerated (the rarest always) and the others' shares are
  // added to the best of them. The ranking is the unbounded one whenever that can be proved from
  // the common terms' score bounds; otherwise rows that hold only common terms are left out.
  int64_t match_budget = 0;
  // false: the rows come without their content (candidates of which only a few are kept; the
  // kept ones are read with chunks_by_rowid).
  bool with_content = true;
  // When given (df in the order of terms), bm25 uses these statistics instead of the store's
  // own: a shard ranks with the whole corpus's (search/sharded.h).
  std::optional<LexicalStats> stats;
};

struct StoredChunk {
  int64_t rowid = 0;
  int64_t repo_id = 0;
  Chunk chunk;
  double score = 0;      // higher is better
  bool partial = false;  // read without its content (LexicalQuery::with_content false)
};

struct RepositoryInfo {
  int64_t id = 0;
  std::string root;
  std::string last_indexed_at;  // ISO-8601, empty if never finished
  std::string commit;  // the git commit its last finished run indexed; empty: none known
  int64_t files = 0;
  int64_t chunks = 0;
  int64_t bytes = 0;
};

// The embeddings of one model, for an in-process vector scan: row i of `values` (dim floats) is
// the vector of chunk `rowids[i]`.
struct EmbeddingMatrix {
  std::string model;
  int dim = 0;
  std::vector<int64_t> rowids;
  std::vector<float> values;
};

struct ChunkToEmbed {
  int64_t rowid = 0;
  std::string text;  // what to embed: the chunk's content
};

struct StoreStats {
  int schema_version = 0;
  int64_t files = 0;
  int64_t chunks = 0;
  std::map<std::string, int64_t> chunks_by_type;
  std::map<std::string, int64_t> chunks_by_language;
  std::map<std::string, int64_t> embeddings_by_model;
  // Chunks a model refused in its last run, by model (pending = chunks - embedded - failed).
  std::map<std::string, int64_t> embedding_failures_by_model;
  // Files chunked in line windows because their chunker gave up, by reason (FileRecord::fallback).
  std::map<std::string, int64_t> fallbacks_by_reason;
  std::vector<RepositoryInfo> repositories;
  int64_t db_bytes = 0;
  // Chunks whose content is kept compressed (store/content_codec.h), and the bytes they take.
  int64_t compressed_chunks = 0;
  int64_t compressed_bytes = 0;
};

// Held by the one indexer allowed to write a store; released when destroyed (or when the
// process dies, however it dies).
class WriterLock {
 public:
  virtual ~WriterLock() = default;
};

class Store {
 public:
  virtual ~Store() = default;

  // Throws pf::BusyError, naming the holder, if another indexer holds the store.
  virtual std::unique_ptr<WriterLock> acquire_writer_lock() = 0;

  // When the store's full-text index was built by another tokenizer version, rebuilds it from
  // the chunks (the caller holds the writer lock). Returns true if it rebuilt.
  virtual bool refresh_text_index() = 0;

  virtual int64_t ensure_repository(const std::string& root) = 0;
  virtual std::optional<RepositoryInfo> find_repository(const std::string& root) = 0;
  // The repository's files, sorted by path bytewise (as std::string's operator< and a walk's
  // result), so a caller can merge them with a walk without hashing either.
  virtual std::vector<FileRecord> list_files(int64_t repo_id) = 0;

  virtual void begin_batch() = 0;
  virtual void commit_batch() = 0;
  virtual void rollback_batch() = 0;
  // Changes with every committed batch that changed chunks or embeddings, whichever connection
  // committed it: what in-memory copies (the vector index) are checked against.
  virtual int64_t generation() = 0;
  // Where this store lives, for messages and as a key of in-process caches: the file as
  // opened, or the server's URL without its password.
  virtual const std::string& path() const = 0;

  // Replaces every chunk of file.path with chunks, and records file. Takes the chunks (a
  // caller that keeps its own passes a copy): the store may keep parts of them until the batch
  // commits.
  virtual void replace_file(int64_t repo_id, const FileRecord& file,
                            std::vector<Chunk> chunks) = 0;
  // Records a new size/mtime for a file whose content did not change.
  virtual void touch_file(int64_t repo_id, const FileRecord& file) = 0;
  virtual void remove_file(int64_t repo_id, const std::string& path) = 0;
  // Marks a run finished now, with the chunker that made the chunks and the git commit the work
  // tree was at (empty: not a git work tree).
  virtual void mark_indexed(int64_t repo_id, const std::string& chunker_version,
                            const std::string& commit = "") = 0;
  // Records which chunker makes the repository's chunks, without marking a run finished: what
  // the first run of a repository does at its start, so that one killed midway is resumed by
  // the next run, not redone. Inside a batch.
  virtual void set_chunker_version(int64_t repo_id, const std::string& chunker_version) = 0;
  virtual std::string chunker_version(int64_t repo_id) = 0;

  virtual std::vector<StoredChunk> lexical_search(const LexicalQuery& q) = 0;
  // Chunks that have no embedding from `model` (none at all, or one from another model), up to
  // limit, in rowid order, rowids above after_rowid only (a run walks forward, so the ones it
  // could not embed are not handed out again in the same run).
  virtual std::vector<ChunkToEmbed> chunks_to_embed(const std::string& model, int limit,
                                                    int64_t after_rowid = 0) = 0;
  // Stores vectors (all of one dimension) for chunks, as produced by `model`, and forgets that
  // `model` refused them before. Inside a batch.
  virtual void set_embeddings(
      const std::string& model,
      const std::vector<std::pair<int64_t, std::vector<float>>>& vectors) = 0;
  // Records that `model` refused these chunks, with its reason (replacing an older record).
  // Inside a batch. A deleted chunk's records go with it.
  virtual void record_embedding_failures(
      const std::string& model, const std::vector<std::pair<int64_t, std::string>>& failures) = 0;
  virtual EmbeddingMatrix load_embeddings(const std::string& model) = 0;
  // The chunks with these rowids, in the order given (missing ones left out); score is 0.
  virtual std::vector<StoredChunk> chunks_by_rowid(const std::vector<int64_t>& rowids) = 0;

  // The chunks of one file with their content, in the order they were written.
  virtual std::vector<StoredChunk> file_chunks(int64_t repo_id, const std::string& path) = 0;

  // The store's chunk and token counts, and how many chunks contain each (already stemmed)
  // index term, in the order given: what a shard contributes to a corpus's statistics.
  virtual LexicalStats lexical_stats(const std::vector<std::string>& terms) = 0;
  virtual std::string repository_root(int64_t repo_id) = 0;
  // The indexed repositories with id, root, last_indexed_at and commit (counts left 0), oldest first:
  // a read of the repositories table, cheap at any store size. With counts, also each one's
  // files, bytes and chunks: index scans (0.09 s at 1.6M chunks, where stats() takes 3 s).
  virtual std::vector<RepositoryInfo> list_repositories(bool with_counts = false) = 0;
  // Whether the store holds a chunk (of repo_id when given): one index probe.
  virtual bool has_chunks(std::optional<int64_t> repo_id = std::nullopt) = 0;
  // Counts of everything: reads every chunk row, seconds on a store of a million chunks. For
  // `pilotfish stats` and index_status, not for start-up paths.
  virtual StoreStats stats() = 0;

  // Compressed chunk content (store/content_codec.h). A store that keeps it says so; the others
  // (PostgreSQL) keep text and are never given compressed chunks.
  virtual bool keeps_compressed_content() const { return false; }
  // The tokens replace_file indexes a chunk by (its Chunk::text_tokens), made from the chunk and
  // its plain content; "" where the store tokenizes for itself (the default). Thread-safe: the
  // indexer's workers call it, so that SQLite's one writer replays tokens, not makes them.
  virtual std::string text_tokens(const Chunk& /*c*/, std::string_view /*plain_content*/) const {
    return {};
  }
  // The repository's newest content dictionary, "" if it has none.
  virtual std::string content_dictionary(int64_t /*repo_id*/) { return {}; }
  // The id the next saved dictionary gets (train it with this id); inside a write batch.
  virtual uint32_t next_content_dictionary_id() { return 0; }
  // Saves a dictionary trained with next_content_dictionary_id(); inside a write batch. Throws
  // pf::Error where the store keeps no compressed content.
  virtual void add_content_dictionary(int64_t /*repo_id*/, const std::string& /*dictionary*/) {
    throw Error("this store keeps chunk content as text");
  }
};

enum class OpenMode {
  kReadOnly,   // search, stats: the store must already exist
  kReadWrite,  // index: created (with parent directories) if missing
};

// Opens the store that db names: a postgres:// or postgresql:// URL (as libpq takes them, a
// unix-socket host included: postgresql:///pilotfish?host=/run/postgresql) is a PostgreSQL
// store; any other scheme:// is refused, never taken for a path; anything else is the path of a
// SQLite store file. Throws pf::Error with an actionable message when the file is missing
// (kReadOnly), not a database, corrupt, or from a newer pilotfish, or when the server cannot be
// reached (one line naming it, never its password); UsageError for a URL of another scheme.
std::unique_ptr<Store> open_store(const std::string& db, OpenMode mode);

// Whether db names a PostgreSQL store (a postgres:// or postgresql:// URL).
bool is_postgres_url(const std::string& db);

// The SQLite store at path (what open_store opens for a path).
std::unique_ptr<Store> open_sqlite_store(const std::string& path, OpenMode mode);

}  // namespace pf
