// Counting a SQLite store for `pilotfish stats` (store/sqlite_stats.h) on a real store file:
// chunks by type and language, embeddings by model, refusals, fallbacks and compressed rows,
// each counted from what was written.
#include "store/sqlite_stats.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>
#include <string>

#include "store/schema.h"
#include "store/sqlite_util.h"
#include "test_util.h"

namespace pf {
namespace {

TEST(SqliteStats, CountsWhatWasWritten) {
  test::TempDir dir;
  std::string db = dir / "s.db";
  {
    auto store = open_store(db, OpenMode::kReadWrite);
    int64_t repo = store->ensure_repository("/srv/a");
    Chunk cls = test::make_chunk("b.py", 1, "Pool", "class Pool: pass");
    cls.chunk_type = "class";
    cls.language = "python";
    Chunk text = test::make_chunk("notes.txt", 1, "", "plain words");
    text.chunk_type = "text";
    text.language = "";
    store->begin_batch();
    store->replace_file(repo, {"a.js", 10, 1, "h1", "javascript"},
                        {test::make_chunk("a.js", 1, "f", "function f() {}"),
                         test::make_chunk("a.js", 5, "g", "function g() {}")});
    store->replace_file(repo, {"b.py", 10, 1, "h2", "python"}, {cls});
    store->replace_file(repo, {"notes.txt", 10, 1, "h3", "", "too deep"}, {text});
    store->commit_batch();
    store->set_embeddings("m1", {{1, {0.5f, 0.25f}}, {2, {1.0f, 0.0f}}});
    store->record_embedding_failures("m2", {{3, "too long"}});
  }
  // A row kept as a zstd frame is a BLOB; two bytes stand in for one here.
  ASSERT_EQ(test::sqlite_int(db, "SELECT count(*) FROM copilot_code_chunks"), 4);
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
    sqlite::exec(raw, "UPDATE copilot_code_chunks SET content = x'2800' WHERE chunk_id = 4");
    StoreStats s;
    count_sqlite_store(raw, &s);
    sqlite3_close(raw);
    EXPECT_EQ(s.schema_version, kSchemaVersion);
    EXPECT_EQ(s.files, 3);
    EXPECT_EQ(s.chunks, 4);
    EXPECT_EQ(s.chunks_by_type,
              (std::map<std::string, int64_t>{{"class", 1}, {"function", 2}, {"text", 1}}));
    EXPECT_EQ(s.chunks_by_language,
              (std::map<std::string, int64_t>{{"?", 1}, {"javascript", 2}, {"python", 1}}));
    EXPECT_EQ(s.embeddings_by_model, (std::map<std::string, int64_t>{{"m1", 2}}));
    EXPECT_EQ(s.embedding_failures_by_model, (std::map<std::string, int64_t>{{"m2", 1}}));
    EXPECT_EQ(s.fallbacks_by_reason, (std::map<std::string, int64_t>{{"too deep", 1}}));
    EXPECT_EQ(s.compressed_chunks, 1);
    EXPECT_EQ(s.compressed_bytes, 2);
  }
}

}  // namespace
}  // namespace pf
