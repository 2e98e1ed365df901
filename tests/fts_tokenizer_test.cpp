// The text index's tokens made ahead of the store (store/fts_tokenizer.h encode_text_tokens,
// replayed by the tokenizer): a SQLite store given a chunk's tokens indexes it term for term,
// position for position and length for length as one that tokenized the text itself, so its
// rankings are the same and the delete trigger's re-tokenizing removes exactly what went in.
#include "store/fts_tokenizer.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <string>
#include <vector>

#include "search/query.h"
#include "store/store.h"
#include "test_util.h"

namespace pf {
namespace {

const std::string_view kReplayMark("\0pf\x01", 4);  // what fts_tokenizer.cpp's values open with

std::vector<Chunk> sample_chunks() {
  std::vector<Chunk> out = {
      test::make_chunk("net/core/dev.c", 1, "netif_receive_skb",
                       "int netif_receive_skb(struct sk_buff *skb)\n{\n  /* Receives the "
                       "packets, counting drops */\n  return __netif_receive_skb(skb);\n}"),
      test::make_chunk("src/HttpClient.ts", 5, "parseHTTPResponse2",
                       "export function parseHTTPResponse2(keep-alive) { return "
                       "getUserName(max_redirections) }  // caf\xc3\xa9 r\xc3\xa9sum\xc3\xa9s"),
      test::make_chunk("docs/guide.md", 9, "", "Running the servers: how does pooling work?")};
  out[1].class_name = "HttpClient";
  out[2].heading_path = "Guide > Connection pooling";
  out[2].chunk_type = "section";
  return out;
}

std::vector<Chunk> with_tokens(std::vector<Chunk> chunks) {
  for (Chunk& c : chunks) c.text_tokens = encode_text_tokens(c, c.content);
  return chunks;
}

// Every row of one query over the store's file, as text, in order.
std::vector<std::string> rows(const std::string& db_path, const char* sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  register_code_tokenizer(db);
  EXPECT_EQ(sqlite3_exec(db,
                         "CREATE VIRTUAL TABLE temp.instances USING fts5vocab(main, "
                         "'copilot_code_chunks_fts', 'instance')",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::vector<std::string> out;
  while (st && sqlite3_step(st) == SQLITE_ROW) {
    std::string row;
    for (int i = 0; i < sqlite3_column_count(st); ++i) {
      const void* v = sqlite3_column_blob(st, i);
      row.append(static_cast<const char*>(v ? v : ""), sqlite3_column_bytes(st, i)) += '|';
    }
    out.push_back(row);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

const char* kInstances =
    "SELECT term, doc, col, offset FROM temp.instances ORDER BY 1, 2, 3, 4";
const char* kLengths = "SELECT id, sz FROM copilot_code_chunks_fts_docsize ORDER BY id";

class TextTokens : public ::testing::Test {
 protected:
  std::unique_ptr<Store> open(const std::string& name) {
    auto store = open_store(dir_ / name, OpenMode::kReadWrite);
    repo_ = store->ensure_repository("/srv/app");
    return store;
  }
  void replace(Store& store, const std::vector<Chunk>& chunks) {
    store.begin_batch();
    for (const Chunk& c : chunks)
      store.replace_file(repo_, FileRecord{c.path, 10, 1, "fh", c.language}, {c});
    store.commit_batch();
  }
  void remove_all(Store& store, const std::vector<Chunk>& chunks) {
    store.begin_batch();
    for (const Chunk& c : chunks) store.remove_file(repo_, c.path);
    store.commit_batch();
  }
  std::vector<std::pair<std::string, double>> search(Store& store, const std::string& q) {
    LexicalQuery query;
    query.terms = analyze_query(q).stems;
    query.limit = 10;
    std::vector<std::pair<std::string, double>> out;
    for (const StoredChunk& c : store.lexical_search(query)) out.emplace_back(c.chunk.path, c.score);
    return out;
  }
  test::TempDir dir_;
  int64_t repo_ = 0;
};

TEST_F(TextTokens, TheSqliteStoreMakesThemAndTheIndexIsTheSameAsFromTheText) {
  auto plain = open("plain.db"), replayed = open("replayed.db");
  const Chunk c = sample_chunks()[0];
  ASSERT_FALSE(replayed->text_tokens(c, c.content).empty());
  replace(*plain, sample_chunks());
  replace(*replayed, with_tokens(sample_chunks()));
  std::vector<std::string> instances = rows(dir_ / "plain.db", kInstances);
  ASSERT_GT(instances.size(), 40u);
  EXPECT_EQ(rows(dir_ / "replayed.db", kInstances), instances);
  EXPECT_EQ(rows(dir_ / "replayed.db", kLengths), rows(dir_ / "plain.db", kLengths));
  for (const char* q : {"netif receive skb", "HttpClient parse response", "connection pooling",
                        "guide servers", "caf\xc3\xa9 r\xc3\xa9sum\xc3\xa9", "dev.c drops"}) {
    auto want = search(*plain, q);
    EXPECT_FALSE(want.empty()) << q;
    EXPECT_EQ(search(*replayed, q), want) << q;
  }
}

TEST_F(TextTokens, DeletingRowsIndexedByTokensLeavesNothingBehind) {
  // The delete trigger tokenizes the stored text: only tokens identical to the replayed ones
  // take every entry out again.
  auto store = open("s.db");
  replace(*store, with_tokens(sample_chunks()));
  remove_all(*store, sample_chunks());
  EXPECT_EQ(rows(dir_ / "s.db", kInstances), std::vector<std::string>{});
  EXPECT_EQ(store->stats().chunks, 0);
}

TEST_F(TextTokens, AValueThatOpensAsAnEncodingIsTokenizedByTheStoreAndDeletedCleanly) {
  // A chunk can start at a NUL past the 8 KiB the binary filter reads: such text is left to
  // the store, whose tokenizer takes it the same way when it is inserted and when deleted.
  std::vector<Chunk> chunks = sample_chunks();
  chunks[0].content = std::string(kReplayMark) + "\x05hello";
  EXPECT_EQ(encode_text_tokens(chunks[0], chunks[0].content), "");
  // The symbols value as the delete trigger gives it, trimmed of spaces, opens so too.
  chunks[1].function_name = chunks[1].class_name = "";
  chunks[1].symbol = std::string(kReplayMark) + "\x03" "abc";
  EXPECT_EQ(encode_text_tokens(chunks[1], chunks[1].content), "");
  auto plain = open("plain.db"), replayed = open("replayed.db");
  replace(*plain, chunks);
  replace(*replayed, with_tokens(chunks));
  EXPECT_EQ(rows(dir_ / "replayed.db", kInstances), rows(dir_ / "plain.db", kInstances));
  remove_all(*replayed, chunks);
  EXPECT_EQ(rows(dir_ / "replayed.db", kInstances), std::vector<std::string>{});
}

TEST_F(TextTokens, AReplayedValueStopsAtATokenHoldingANul) {
  // A value that opens as an encoding and has a NUL in a token: the tokens before it are
  // indexed, none from it on (FTS5 would cut such a term short, and a delete would miss it).
  // A value without a NUL anywhere is replayed whole.
  std::vector<Chunk> chunks = sample_chunks();
  chunks[0].content = std::string(kReplayMark) + "\x06" "abc" "\x06" + std::string("d\0e", 3) +
                      "\x06" "fgh";
  chunks[2].content = std::string(kReplayMark) + "\x06" "abc" "\x06" "fgh";
  auto store = open("s.db");
  replace(*store, chunks);
  std::vector<std::string> instances = rows(dir_ / "s.db", kInstances);
  auto holds = [&](const std::string& term, int64_t doc) {
    std::string prefix = term + "|" + std::to_string(doc) + "|body|";
    return std::any_of(instances.begin(), instances.end(),
                       [&](const std::string& r) { return r.rfind(prefix, 0) == 0; });
  };
  EXPECT_TRUE(holds("abc", 1));
  EXPECT_FALSE(holds("fgh", 1));
  EXPECT_TRUE(holds("abc", 3));
  EXPECT_TRUE(holds("fgh", 3));
  remove_all(*store, chunks);
  EXPECT_EQ(rows(dir_ / "s.db", kInstances), std::vector<std::string>{});
}

TEST(TextTokenColumns, TakesOnlyAWholeEncoding) {
  Chunk c = sample_chunks()[1];
  std::string tokens = encode_text_tokens(c, c.content);
  std::string_view columns[4];
  ASSERT_TRUE(text_token_columns(tokens, columns));
  for (std::string_view column : columns) EXPECT_EQ(column.substr(0, 4), kReplayMark);
  EXPECT_NE(columns[3].find("respons"), std::string_view::npos);  // the body's stems
  EXPECT_FALSE(text_token_columns(tokens.substr(0, tokens.size() - 1), columns));
  EXPECT_FALSE(text_token_columns(tokens + "x", columns));
  EXPECT_FALSE(text_token_columns("", columns));
  std::string damaged = tokens;
  damaged[4] = 'x';  // the first column's mark
  EXPECT_FALSE(text_token_columns(damaged, columns));
}

TEST_F(TextTokens, TokensThatDoNotDecodeAreIgnoredAndTheTextIsIndexed) {
  // A chunk whose tokens are not an encoding (never made by encode_text_tokens) is indexed
  // from its text, as if it had none.
  auto plain = open("plain.db"), odd = open("odd.db");
  std::vector<Chunk> chunks = sample_chunks();
  replace(*plain, chunks);
  for (Chunk& c : chunks) c.text_tokens = "not tokens";
  replace(*odd, chunks);
  EXPECT_EQ(rows(dir_ / "odd.db", kInstances), rows(dir_ / "plain.db", kInstances));
}

}  // namespace
}  // namespace pf
