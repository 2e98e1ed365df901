// Schema migrations for the SQLite store.
//
// copilot_code_chunks keeps every column of the reference table (so tools written against it
// still read ours) and adds repo_id, symbol, heading_path and content_hash. The full-text index is
// a contentless FTS5 table kept in step by the store: a batch's new rows are indexed in one
// statement just before it commits, and a trigger removes the entries of deleted rows. Either way
// the chunk row and its index entry change in the same transaction, so a reader never sees one
// without the other. Tools written against the reference read `content` as text except in a
// repository whose chunks the indexer compresses (store/content_codec.h; a large repository's
// by default): there it is a zstd frame, and pf_text(content) the text.
#include "store/schema.h"

#include <string>

#include "core/error.h"
#include "store/content_codec.h"
#include "store/fts_tokenizer.h"
#include "store/sqlite_util.h"

namespace pf {
namespace {

const char* const kMigrations[] = {
    // 1: initial schema.
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE repositories("
    "  id INTEGER PRIMARY KEY,"
    "  root TEXT NOT NULL UNIQUE,"
    "  created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),"
    "  chunker_version TEXT,"
    "  last_indexed_at TEXT);"
    "CREATE TABLE files("
    "  repo_id INTEGER NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,"
    "  path TEXT NOT NULL,"
    "  size INTEGER NOT NULL,"
    "  mtime_ns INTEGER NOT NULL,"
    "  content_hash TEXT NOT NULL,"
    "  language TEXT,"
    "  indexed_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),"
    "  PRIMARY KEY(repo_id, path)) WITHOUT ROWID;"
    "CREATE TABLE copilot_code_chunks("
    "  chunk_id INTEGER PRIMARY KEY,"
    "  id TEXT NOT NULL UNIQUE,"
    "  created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),"
    "  updated TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),"
    "  repo_id INTEGER NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,"
    "  path TEXT NOT NULL,"
    "  language TEXT,"
    "  content TEXT NOT NULL,"
    "  summary TEXT,"
    "  embedding BLOB,"
    "  embeddingModel TEXT,"
    "  startLine INTEGER NOT NULL,"
    "  endLine INTEGER NOT NULL,"
    "  functionName TEXT,"
    "  className TEXT,"
    "  chunkType TEXT NOT NULL,"
    "  tokens INTEGER,"
    "  searchVector TEXT,"
    "  symbol TEXT,"
    "  heading_path TEXT,"
    "  content_hash TEXT NOT NULL);"
    "CREATE INDEX idx_copilot_code_chunks_path ON copilot_code_chunks(repo_id, path);"
    "CREATE INDEX idx_copilot_code_chunks_model ON copilot_code_chunks(embeddingModel);"
    "CREATE VIRTUAL TABLE copilot_code_chunks_fts USING fts5("
    "  symbols, path, headings, body, content='', tokenize='pilotfish');"
    "CREATE TRIGGER copilot_code_chunks_ai AFTER INSERT ON copilot_code_chunks BEGIN"
    "  INSERT INTO copilot_code_chunks_fts(rowid, symbols, path, headings, body)"
    "  VALUES (new.chunk_id, " PF_FTS_VALUES("new") ");"
    "END;"
    "CREATE TRIGGER copilot_code_chunks_ad AFTER DELETE ON copilot_code_chunks BEGIN"
    "  INSERT INTO copilot_code_chunks_fts(copilot_code_chunks_fts, rowid, symbols, path,"
    "  headings, body) VALUES ('delete', old.chunk_id, " PF_FTS_VALUES("old") ");"
    "END;",
    // 2: the store fills the FTS index for a batch's new rows in one INSERT ... SELECT before
    // the batch commits (SqliteStore::index_pending_chunks), not row by row from a trigger.
    "DROP TRIGGER copilot_code_chunks_ai;",
    // 3: chunks an embedding model refused (too long even split, invalid), with the server's
    // reason: left out of the rest of that run, counted by stats, tried again by the next run.
    "CREATE TABLE embedding_failures("
    "  chunk_id INTEGER NOT NULL, model TEXT NOT NULL, reason TEXT NOT NULL,"
    "  failed_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),"
    "  PRIMARY KEY (chunk_id, model)) WITHOUT ROWID;"
    "CREATE TRIGGER copilot_code_chunks_ad_failures AFTER DELETE ON copilot_code_chunks BEGIN"
    "  DELETE FROM embedding_failures WHERE chunk_id = old.chunk_id;"
    "END;"
    // And a random identity, so in-memory copies keyed by (store, generation) never take a new
    // store at the same path for the old one.
    "INSERT OR IGNORE INTO meta(key, value) VALUES('instance', lower(hex(randomblob(16))));",
    // 4: why a file was chunked in line windows instead of by its syntax (NULL: it was not);
    // counted by stats, chunked again by the next run.
    "ALTER TABLE files ADD COLUMN fallback TEXT;",
    // 5: the git commit a repository's last finished run indexed (`pilotfish stats`).
    "ALTER TABLE repositories ADD COLUMN indexed_commit TEXT;",
    // 6: compressed chunk content (store/content_codec.h): the dictionaries frames name (id +
    // kFirstContentDictionaryId), kept while any row may name them, and the delete trigger
    // re-tokenizing the decompressed text. And the embedding model's index holds only rows
    // that have one (every query of it names a model): an entry per chunk of a store without
    // embeddings was 16 MB on the Linux tree, and a B-tree insert per chunk for the writer.
    "CREATE TABLE content_dictionaries("
    "  id INTEGER PRIMARY KEY,"
    "  repo_id INTEGER NOT NULL,"
    "  dictionary BLOB NOT NULL,"
    "  created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')));"
    "DROP INDEX idx_copilot_code_chunks_model;"
    "CREATE INDEX idx_copilot_code_chunks_model ON copilot_code_chunks(embeddingModel)"
    "  WHERE embeddingModel IS NOT NULL;"
    "DROP TRIGGER copilot_code_chunks_ad;"
    "CREATE TRIGGER copilot_code_chunks_ad AFTER DELETE ON copilot_code_chunks BEGIN"
    "  INSERT INTO copilot_code_chunks_fts(copilot_code_chunks_fts, rowid, symbols, path,"
    "  headings, body) VALUES ('delete', old.chunk_id, " PF_FTS_VALUES("old") ");"
    "END;",
    // 7: FTS5 merges a level's segments when it has 16 of them, not 4: the one writer is an
    // index run's critical path, and on the Linux tree merging at 4 took its CPU to 68-71 s
    // (full index 84-87 s), at 16 54 s (68 s), the store 0.5% larger and searches as fast
    // (docs/BENCHMARKS.md). Crisis merges still cap a level at 16 segments.
    "INSERT INTO copilot_code_chunks_fts(copilot_code_chunks_fts, rank) VALUES('automerge', 16);",
    // 8: a level merges at 64 segments, FTS5's most (automerge and crisismerge): the Linux tree
    // takes about 1,300 flushes of the pending index, which 16 merged twice (16 x 16 = 256
    // flushes to a level-2 segment) and 64 once (64 x 64 = 4,096). Writer 48-52 -> 41-44 CPU-s,
    // full index 63-68 -> 56-59 s, 5.8 GB written instead of 7.2. Searches seek each
    // segment: an index run ends by merging a first level of 16 segments or more
    // (store/text_index_levels.h; docs/BENCHMARKS.md).
    "INSERT INTO copilot_code_chunks_fts(copilot_code_chunks_fts, rank) VALUES('automerge', 64);"
    "INSERT INTO copilot_code_chunks_fts(copilot_code_chunks_fts, rank) VALUES('crisismerge', 64);"
    // And the merge an index run ends with (store/text_index_levels.h) goes on to another level
    // only where that one holds 16 segments or more, FTS5's most for 'usermerge'.
    "INSERT INTO copilot_code_chunks_fts(copilot_code_chunks_fts, rank) VALUES('usermerge', 16);",
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kSchemaVersion);

}  // namespace

void register_store_functions(sqlite3* db) {
  register_code_tokenizer(db);
  register_content_functions(db);
}

namespace {

int pragma_int(sqlite3* db, const char* sql) {
  sqlite::Statement st(db, sql);
  return st.step() ? static_cast<int>(st.int64(0)) : 0;
}

}  // namespace

void migrate(sqlite3* db, bool create) {
  int version = pragma_int(db, "PRAGMA user_version");
  int app_id = pragma_int(db, "PRAGMA application_id");
  if (version == 0 && app_id == 0 && pragma_int(db, "SELECT count(*) FROM sqlite_master") > 0)
    throw Error("this file is a SQLite database but not a pilotfish store; pass another --db");
  if (app_id != 0 && app_id != kApplicationId)
    throw Error("this SQLite database belongs to another application; pass another --db");
  if (version == 0 && !create)
    throw UsageError("the store is empty; run `pilotfish index DIR` first");
  if (version > kSchemaVersion)
    throw Error("this store has schema version " + std::to_string(version) +
                ", newer than this pilotfish understands (" + std::to_string(kSchemaVersion) +
                "); upgrade pilotfish or use another --db");
  for (int v = version; v < kSchemaVersion; ++v) {
    sqlite::exec(db, "BEGIN IMMEDIATE");
    try {
      sqlite::exec(db, kMigrations[v]);
      std::string bump = "PRAGMA user_version = " + std::to_string(v + 1) +
                         "; PRAGMA application_id = " + std::to_string(kApplicationId);
      sqlite::exec(db, bump.c_str());
      sqlite::exec(db, "COMMIT");
    } catch (...) {
      sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }
}

}  // namespace pf
