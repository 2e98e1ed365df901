// Copying a store across backends (src/store/migrate.h, `pilotfish migrate`): a SQLite store with
// two repositories and embeddings copied into PostgreSQL and back answers every search as the
// original did, with the same vectors; a store that is not empty is never written into.
#include "store/migrate.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "pg_server.h"
#include "search/query.h"
#include "test_util.h"

namespace pf {
namespace {

// What a store answers: each question's ranked (path, line, score, content), and each model's
// vectors by chunk content.
std::string answers(Store& s) {
  std::string out;
  auto add = [&](std::initializer_list<std::string> parts) {
    for (const std::string& p : parts) {
      out += p;
      out += ' ';
    }
    out += '\n';
  };
  for (const char* q : {"pool dispatch", "retry backoff jitter", "parse headers", "client"}) {
    LexicalQuery lq;
    lq.terms = analyze_query(q).stems;
    for (const StoredChunk& c : s.lexical_search(lq))
      add({q, s.repository_root(c.repo_id), c.chunk.path, std::to_string(c.chunk.start_line),
           std::to_string(c.score), c.chunk.function_name, c.chunk.heading_path, c.chunk.content});
  }
  EmbeddingMatrix m = s.load_embeddings("embed-small");
  auto rows = s.chunks_by_rowid(m.rowids);
  for (size_t i = 0; i < rows.size(); ++i) {
    std::string v;
    for (int d = 0; d < m.dim; ++d) {
      v += std::to_string(m.values[i * static_cast<size_t>(m.dim) + static_cast<size_t>(d)]);
      v += ',';
    }
    add({"vector", rows[i].chunk.content, v});
  }
  return out;
}

Chunk in_class(Chunk c) {
  c.class_name = "Pool";
  c.heading_path = "class Pool";
  return c;
}

TEST(Migrate, SqliteToPostgresAndBackAnswersTheSame) {
  test::TempDir dir;
  auto sqlite = open_store(dir / "a.db", OpenMode::kReadWrite);
  int64_t r1 = sqlite->ensure_repository("/srv/one"), r2 = sqlite->ensure_repository("/srv/two");
  sqlite->begin_batch();
  sqlite->replace_file(r1, {"lib/pool.js", 100, 7, "f1", "javascript"},
                       {in_class(test::make_chunk("lib/pool.js", 1, "dispatch", "dispatch picks a pool client")),
                        test::make_chunk("lib/pool.js", 9, "drain", "drain the pool")});
  sqlite->replace_file(r1, {"lib/retry.js", 50, 8, "f2", "javascript", "parser failed"},
                       {test::make_chunk("lib/retry.js", 1, "retry", "retry with backoff and jitter")});
  sqlite->replace_file(r2, {"src/headers.js", 70, 9, "f3", "javascript"},
                       {test::make_chunk("src/headers.js", 4, "parseHeaders", "parse headers of a client request")});
  sqlite->mark_indexed(r1, "chunker-7");
  sqlite->commit_batch();
  auto todo = sqlite->chunks_to_embed("embed-small", 10);
  ASSERT_EQ(todo.size(), 4u);
  sqlite->begin_batch();
  sqlite->set_embeddings("embed-small", {{todo[0].rowid, {0.5f, -1.0f, 2.0f}}, {todo[2].rowid, {1.0f, 0.0f, -0.25f}}});
  sqlite->commit_batch();
  std::string want = answers(*sqlite);
  ASSERT_NE(want.find("vector retry with backoff"), std::string::npos) << want;

  auto pg = open_store(test::PostgresServer::shared().new_database(), OpenMode::kReadWrite);
  int64_t calls = 0;
  MigrateReport r = migrate_store(*sqlite, *pg, [&](int64_t done, int64_t total) {
    ++calls;
    EXPECT_LE(done, total);
  });
  EXPECT_EQ(r.repositories, 2);
  EXPECT_EQ(r.files, 3);
  EXPECT_EQ(r.chunks, 4);
  EXPECT_EQ(r.embeddings, 2);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(answers(*pg), want);
  EXPECT_EQ(test::file_named(pg->list_files(pg->find_repository("/srv/one")->id), "lib/pool.js").mtime_ns, 7);
  EXPECT_EQ(pg->stats().fallbacks_by_reason, sqlite->stats().fallbacks_by_reason);  // and why
  EXPECT_EQ(pg->chunker_version(pg->find_repository("/srv/one")->id), "chunker-7");

  auto back = open_store(dir / "back.db", OpenMode::kReadWrite);
  migrate_store(*pg, *back);
  EXPECT_EQ(answers(*back), want);
  EXPECT_EQ(back->stats().fallbacks_by_reason["parser failed"], 1);
  // Into a store that holds something: refused, nothing written.
  int64_t before = pg->stats().chunks;
  EXPECT_THROW(migrate_store(*sqlite, *pg), UsageError);
  EXPECT_EQ(pg->stats().chunks, before);
}

TEST(Migrate, TheCommandCopiesAndRefusesATargetThatIsNotEmpty) {
  test::TempDir dir, repo;
  test::write_file(repo / "lib/a.js", "function alpha () { return 1 }\n");
  std::string db = dir / "a.db";
  ASSERT_EQ(test::run({test::pilotfish_bin(), "index", repo.path(), "--db", db, "-q"}).exit_code, 0);
  std::string url = test::PostgresServer::shared().new_database();
  auto r = test::run({test::pilotfish_bin(), "migrate", db, url, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["files"], 1);
  EXPECT_EQ(j["to"], url);
  auto search = [&](const std::string& store) {
    return test::run({test::pilotfish_bin(), "search", "alpha", "--db", store, "--json"}).out;
  };
  EXPECT_EQ(search(url), search(db));
  auto again = test::run({test::pilotfish_bin(), "migrate", db, url});
  EXPECT_NE(again.exit_code, 0);
  EXPECT_NE(again.err.find("already holds 1 repository; migrate into an empty store"), std::string::npos) << again.err;
  auto bad = test::run({test::pilotfish_bin(), "migrate", db, "mysql://x/y"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("postgres://"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace pf
