// A write batch's FTS5 entries made at its commit (store/pending_text_index.h), on a real store
// file: rows with tokens made ahead and runs of rows without, in any mix, get the entries their
// text gives; a file's pending rows are indexed before a delete, so the delete trigger removes
// them; rows forgotten by a rollback get none.
#include "store/pending_text_index.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

#include "store/fts_tokenizer.h"
#include "store/schema.h"
#include "store/sqlite_util.h"
#include "test_util.h"

namespace pf {
namespace {

class PendingTextIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(sqlite3_open((dir_ / "s.db").c_str(), &db_), SQLITE_OK);
    register_store_functions(db_);
    migrate(db_, true);
    sqlite::exec(db_,
                 "CREATE VIRTUAL TABLE temp.instances USING fts5vocab(main, "
                 "'copilot_code_chunks_fts', 'instance')");
  }
  void TearDown() override { sqlite3_close(db_); }

  // Inserts a chunk row of `path` holding `body`; returns its rowid.
  int64_t insert_row(const std::string& path, const std::string& body) {
    static int n = 0;
    sqlite::Statement st(db_,
                         "INSERT INTO copilot_code_chunks(id, repo_id, path, content, startLine, "
                         "endLine, functionName, chunkType, content_hash) "
                         "VALUES (?, 1, ?, ?, 1, 2, 'fn', 'function', 'h')");
    st.bind(1, std::string_view("id" + std::to_string(++n))).bind(2, path).bind(3, body).run();
    return sqlite3_last_insert_rowid(db_);
  }
  // What the store's workers make for such a row (Store::text_tokens).
  static std::string tokens_of(const std::string& path, const std::string& body) {
    Chunk c;
    c.path = path;
    c.function_name = "fn";
    return encode_text_tokens(c, body);
  }
  std::vector<std::string> instances() {
    std::vector<std::string> out;
    sqlite::Statement st(db_, "SELECT term, doc, col, offset FROM temp.instances ORDER BY 1, 2, 3, 4");
    while (st.step())
      out.push_back(st.text(0) + " " + std::to_string(st.int64(1)) + " " + st.text(2) + " " +
                    std::to_string(st.int64(3)));
    return out;
  }
  test::TempDir dir_;
  sqlite3* db_ = nullptr;
};

const std::vector<std::string> kBodies = {
    "int netif_receive_skb(struct sk_buff *skb)", "parseHTTPResponse2(keep-alive)",
    "how does pooling work", "kmem_cache_alloc_node(cachep, flags, node)", "plain words here"};

TEST_F(PendingTextIndexTest, TokensAndRunsWithoutGiveTheEntriesOfTheText) {
  // Rows 1 and 2 without tokens (one range), 3 with, 4 without, 5 with.
  PendingTextIndex pending(db_);
  sqlite::exec(db_, "BEGIN");
  for (size_t i = 0; i < kBodies.size(); ++i) {
    std::string path = "f" + std::to_string(i) + ".c";
    int64_t rowid = insert_row(path, kBodies[i]);
    pending.add(rowid, i == 2 || i == 4 ? tokens_of(path, kBodies[i]) : "");
    pending.add_file(1, path);
  }
  pending.flush();
  EXPECT_TRUE(pending.empty());
  sqlite::exec(db_, "COMMIT");
  std::vector<std::string> got = instances();
  // The same rows indexed from their text, all in one range, give the same entries.
  sqlite::exec(db_, "INSERT INTO copilot_code_chunks_fts(copilot_code_chunks_fts) VALUES('delete-all')");
  ASSERT_TRUE(instances().empty());
  PendingTextIndex plain(db_);
  for (int64_t rowid = 1; rowid <= static_cast<int64_t>(kBodies.size()); ++rowid) plain.add(rowid, "");
  plain.flush();
  EXPECT_EQ(got, instances());
  EXPECT_GT(got.size(), 30u);
  for (const char* term : {"netif_receive_skb ", "respons ", "pool ", "kmem ", "plain "}) {
    bool found = false;
    for (const std::string& i : got) found = found || i.rfind(term, 0) == 0;
    EXPECT_TRUE(found) << term;
  }
}

TEST_F(PendingTextIndexTest, APendingFileIsIndexedBeforeItsRowsAreDeleted) {
  PendingTextIndex pending(db_);
  sqlite::exec(db_, "BEGIN");
  int64_t a = insert_row("a.c", kBodies[0]);
  pending.add(a, tokens_of("a.c", kBodies[0]));
  pending.add_file(1, "a.c");
  pending.flush_before_delete(1, "b.c");  // not pending: nothing is flushed
  EXPECT_FALSE(pending.empty());
  pending.flush_before_delete(1, "a.c");
  EXPECT_TRUE(pending.empty());
  EXPECT_FALSE(instances().empty());
  sqlite::exec(db_, "DELETE FROM copilot_code_chunks WHERE path = 'a.c'");  // the trigger
  sqlite::exec(db_, "COMMIT");
  EXPECT_TRUE(instances().empty());
}

TEST_F(PendingTextIndexTest, ClearedRowsGetNoEntries) {
  PendingTextIndex pending(db_);
  pending.add(insert_row("a.c", kBodies[1]), "");
  pending.add_file(1, "a.c");
  pending.clear();
  EXPECT_TRUE(pending.empty());
  pending.flush();
  EXPECT_TRUE(instances().empty());
}

}  // namespace
}  // namespace pf
