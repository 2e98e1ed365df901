// Schema migrations for the PostgreSQL store (see pg_store.cpp): the reference's
// copilot_code_chunks columns (quoted camelCase, as TypeORM makes them) plus repo_id, symbol,
// heading_path, content_hash, the tsvector of our terms and what the lexical ranking reads
// (pg_search.h); versions recorded in pilotfish_meta,
// applied by one replica at a time under an advisory lock.
#include "core/error.h"
#include "store/pg_store.h"
#include "store/pg_util.h"

namespace pf {
namespace {

using pg::Param;

constexpr int kPgSchemaVersion = 5;

const char* const kPgMigrations[] = {
    // 1: initial schema.
    "CREATE TABLE repositories("
    "  id BIGSERIAL PRIMARY KEY,"
    "  root TEXT NOT NULL UNIQUE,"
    "  created TIMESTAMPTZ NOT NULL DEFAULT now(),"
    "  chunker_version TEXT,"
    "  last_indexed_at TEXT);"
    "CREATE TABLE files("
    "  repo_id BIGINT NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,"
    "  path TEXT NOT NULL,"
    "  size BIGINT NOT NULL,"
    "  mtime_ns BIGINT NOT NULL,"
    "  content_hash TEXT NOT NULL,"
    "  language TEXT,"
    "  indexed_at TIMESTAMPTZ NOT NULL DEFAULT now(),"
    "  PRIMARY KEY(repo_id, path));"
    "CREATE TABLE copilot_code_chunks("
    "  chunk_id BIGSERIAL PRIMARY KEY,"
    "  id TEXT NOT NULL UNIQUE,"
    "  created TIMESTAMPTZ NOT NULL DEFAULT now(),"
    "  updated TIMESTAMPTZ NOT NULL DEFAULT now(),"
    "  repo_id BIGINT NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,"
    "  path TEXT NOT NULL,"
    "  language TEXT,"
    "  content TEXT NOT NULL,"
    "  summary TEXT,"
    "  embedding BYTEA,"
    "  \"embeddingModel\" TEXT,"
    "  \"startLine\" INTEGER NOT NULL,"
    "  \"endLine\" INTEGER NOT NULL,"
    "  \"functionName\" TEXT,"
    "  \"className\" TEXT,"
    "  \"chunkType\" TEXT NOT NULL,"
    "  tokens INTEGER,"
    "  \"searchVector\" TSVECTOR,"
    "  symbol TEXT,"
    "  heading_path TEXT,"
    "  content_hash TEXT NOT NULL);"
    "CREATE INDEX idx_copilot_code_chunks_path ON copilot_code_chunks(repo_id, path);"
    "CREATE INDEX idx_copilot_code_chunks_model ON copilot_code_chunks(\"embeddingModel\");"
    "CREATE INDEX idx_copilot_code_chunks_search ON copilot_code_chunks USING GIN(\"searchVector\");"
    "CREATE TABLE embedding_failures("
    "  chunk_id BIGINT NOT NULL REFERENCES copilot_code_chunks(chunk_id) ON DELETE CASCADE,"
    "  model TEXT NOT NULL, reason TEXT NOT NULL,"
    "  failed_at TIMESTAMPTZ NOT NULL DEFAULT now(),"
    "  PRIMARY KEY (chunk_id, model));"
    "INSERT INTO pilotfish_meta(key, value) VALUES ('instance', md5(random()::text || clock_timestamp()::text)),"
    "  ('generation', '0') ON CONFLICT DO NOTHING;",
    // 2: why a file was chunked in line windows instead of by its syntax (NULL: it was not);
    // counted by stats, chunked again by the next run.
    "ALTER TABLE files ADD COLUMN fallback TEXT;",
    // 3: the lexical ranking in the database (pg_search.h): each chunk's token count, how many
    // chunks hold each term, and the totals. Chunks written before are counted when their
    // search vectors are rebuilt (their tokenizer version is the old one).
    "ALTER TABLE copilot_code_chunks ADD COLUMN lexical_length INTEGER;"
    "CREATE TABLE lexical_terms(term TEXT COLLATE \"C\" PRIMARY KEY, chunks BIGINT NOT NULL);"
    "INSERT INTO pilotfish_meta(key, value) VALUES ('lexical_rows', '0'), ('lexical_tokens', '0') "
    "ON CONFLICT DO NOTHING;",
    // 4: the git commit a repository's last finished run indexed (`pilotfish stats`).
    "ALTER TABLE repositories ADD COLUMN indexed_commit TEXT;",
    // 5: postings of our own in place of the GIN-indexed "searchVector", lexical_length and
    // lexical_terms (pg_segments.h), which were two thirds of the database. A block of postings
    // (8 KB) is compressed by lz4 into TOAST's 2 KB chunks, which fill their pages (blocks kept
    // within a row filled them to 72% on the Linux tree; lz4 takes another 30%, and decompresses
    // at GB/s). The next index run makes them (the tokenizer version it finds is the old one).
    "DROP INDEX IF EXISTS idx_copilot_code_chunks_search;"
    "DROP TABLE IF EXISTS lexical_terms;"
    "ALTER TABLE copilot_code_chunks DROP COLUMN IF EXISTS lexical_length;"
    "CREATE TABLE lexical_segments(segment BIGSERIAL PRIMARY KEY, repo_id BIGINT NOT NULL,"
    "  level INTEGER NOT NULL);"
    "CREATE TABLE lexical_blocks(segment BIGINT NOT NULL, first_term TEXT COLLATE \"C\" NOT NULL,"
    "  data BYTEA NOT NULL, PRIMARY KEY (segment, first_term));"
    "ALTER TABLE lexical_blocks ALTER COLUMN data SET COMPRESSION lz4;"
    "CREATE TABLE lexical_lengths(segment BIGINT NOT NULL, bucket BIGINT NOT NULL,"
    "  data BYTEA NOT NULL, PRIMARY KEY (segment, bucket));"
    "ALTER TABLE lexical_lengths ALTER COLUMN data SET STORAGE EXTERNAL;"
    // Only embedded chunks are looked up by model: the rows without one leave the index.
    "DROP INDEX IF EXISTS idx_copilot_code_chunks_model;"
    "CREATE INDEX idx_copilot_code_chunks_model ON copilot_code_chunks(\"embeddingModel\") "
    "  WHERE \"embeddingModel\" IS NOT NULL;",
};
static_assert(sizeof(kPgMigrations) / sizeof(kPgMigrations[0]) == kPgSchemaVersion);

}  // namespace

// Migrations, one replica at a time (the others wait on the lock, then find nothing to do).
void migrate_pg(pg::Connection& c, bool create) {
  c.exec("SELECT pg_advisory_lock($1, $2)", {Param::number(pg::kPgLockClass), Param::number(pg::kPgMigrationLockKey)});
  struct Unlock {
    pg::Connection& c;
    ~Unlock() {
      try {
        c.exec("SELECT pg_advisory_unlock($1, $2)",
               {Param::number(pg::kPgLockClass), Param::number(pg::kPgMigrationLockKey)});
      } catch (const Error&) {
      }
    }
  } unlock{c};
  bool has_meta = !c.exec("SELECT to_regclass('pilotfish_meta')").is_null(0, 0);
  int version = 0;
  if (has_meta) {
    auto r = c.exec("SELECT value FROM pilotfish_meta WHERE key = 'schema_version'");
    version = r.rows() ? static_cast<int>(r.int64(0, 0)) : 0;
  } else if (!c.exec("SELECT to_regclass('copilot_code_chunks')").is_null(0, 0)) {
    throw Error("this database has a copilot_code_chunks table but is not a pilotfish store; "
                "use another database");
  }
  if (version == 0 && !create) throw UsageError("the store is empty; run `pilotfish index DIR` first");
  if (version > kPgSchemaVersion)
    throw Error("this store has schema version " + std::to_string(version) +
                ", newer than this pilotfish understands (" + std::to_string(kPgSchemaVersion) +
                "); upgrade pilotfish");
  for (int v = version; v < kPgSchemaVersion; ++v) {
    c.run("BEGIN");
    try {
      c.run("CREATE TABLE IF NOT EXISTS pilotfish_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)");
      c.run(kPgMigrations[v]);
      c.exec("INSERT INTO pilotfish_meta(key, value) VALUES ('schema_version', $1) "
             "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
             {Param::number(v + 1)});
      c.run("COMMIT");
    } catch (...) {
      try {
        c.run("ROLLBACK");
      } catch (const Error&) {
      }
      throw;
    }
  }
}

}  // namespace pf
