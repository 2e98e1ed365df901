// The text index's levels read from FTS5's structure record and the first level's merge at the
// end of an index run (store/text_index_levels.h), on real store files: within a run a level
// merges at 64 segments, not 16; the run's end merges a first level of 16 or more, and the index
// answers as before; damaged or unknown records are refused, never misread.
#include "store/text_index_levels.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <string>
#include <vector>

#include "search/query.h"
#include "store/sqlite_util.h"
#include "store/store.h"
#include "test_util.h"

namespace pf {
namespace {

class TextIndexLevelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = open_sqlite_store(path_, OpenMode::kReadWrite);
    repo_ = store_->ensure_repository("/srv/app");
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db_), SQLITE_OK);
  }
  void TearDown() override { sqlite3_close(db_); }

  // A word only file n holds: "mark" and two letters.
  static std::string mark(int n) {
    return "mark" + std::string(1, static_cast<char>('a' + n % 26)) +
           std::string(1, static_cast<char>('a' + n / 26 % 26));
  }
  // One batch replacing file `n`: one commit, one new segment.
  void commit_file(int n) {
    std::string path = "src/f" + std::to_string(n) + ".c";
    store_->begin_batch();
    store_->replace_file(repo_, {path, 10, 1, "fh" + std::to_string(n), "c"},
                         {test::make_chunk(path, 1, "helper",
                                           "int helper(void) { return " + mark(n) +
                                               "; } shared words")});
    store_->commit_batch();
  }
  // The index run's end, as the indexer does it.
  void end_run() {
    store_->begin_batch();
    store_->mark_indexed(repo_, "v", "");
    store_->commit_batch();
  }
  int64_t segments() {
    sqlite::Statement st(db_, "SELECT count(DISTINCT segid) FROM copilot_code_chunks_fts_idx");
    return st.step() ? st.int64(0) : -1;
  }
  std::string record() {
    sqlite::Statement st(db_, "SELECT block FROM copilot_code_chunks_fts_data WHERE id = 10");
    if (!st.step()) return {};
    auto* p = static_cast<const char*>(sqlite3_column_blob(st.handle(), 0));
    return std::string(p, static_cast<size_t>(sqlite3_column_bytes(st.handle(), 0)));
  }
  std::vector<TextIndexLevel> levels() {
    auto l = decode_text_index_levels(record());
    EXPECT_TRUE(l.has_value());
    return l.value_or(std::vector<TextIndexLevel>{});
  }
  std::vector<std::string> found(const std::string& question) {
    LexicalQuery q;
    q.terms = analyze_query(question).stems;
    q.limit = 100;
    std::vector<std::string> out;
    for (const StoredChunk& c : store_->lexical_search(q)) out.push_back(c.chunk.path);
    std::sort(out.begin(), out.end());
    return out;
  }

  test::TempDir dir_;
  std::string path_ = dir_ / "s.db";
  std::unique_ptr<Store> store_;
  int64_t repo_ = 0;
  sqlite3* db_ = nullptr;
};

TEST_F(TextIndexLevelsTest, TheRecordGivesEverySegmentAndItsPages) {
  for (int n = 0; n < 20; ++n) commit_file(n);
  std::vector<TextIndexLevel> l = levels();
  int64_t total = 0;
  for (const TextIndexLevel& level : l) {
    total += level.segments;
    EXPECT_GE(level.pages, level.segments);
    EXPECT_EQ(level.merging, 0);
  }
  EXPECT_EQ(total, segments());
  EXPECT_EQ(l.front().segments, 20);
}

TEST_F(TextIndexLevelsTest, WithinARunALevelMergesAtSixtyFourSegmentsNotSixteen) {
  int64_t most = 0;
  for (int n = 0; n < 70; ++n) {
    commit_file(n);
    most = std::max(most, segments());
    if (n == 39) {
      EXPECT_EQ(segments(), 40);  // no merge at 16 (or at FTS5's default of 4)
    }
  }
  EXPECT_EQ(most, 63);  // but one as the 64th is written
  EXPECT_LT(segments(), 10);
  EXPECT_EQ(found("shared").size(), 70u);
}

TEST_F(TextIndexLevelsTest, TheRunsEndMergesAFirstLevelOfSixteenOrMore) {
  for (int n = 0; n < 15; ++n) commit_file(n);
  end_run();  // 15: left as they are
  EXPECT_EQ(segments(), 15);
  commit_file(15);
  commit_file(16);
  end_run();
  EXPECT_EQ(segments(), 1);
  EXPECT_EQ(levels().front().segments, 0);
  EXPECT_EQ(found("shared").size(), 17u);
  EXPECT_EQ(found(mark(16)), std::vector<std::string>{"src/f16.c"});
  EXPECT_EQ(found(mark(3)), std::vector<std::string>{"src/f3.c"});
  // Files replaced since: their old entries are gone, the new ones found.
  for (int n = 0; n < 17; ++n) commit_file(n);
  end_run();
  EXPECT_EQ(found("shared").size(), 17u);
  EXPECT_LE(segments(), 2);
}

TEST_F(TextIndexLevelsTest, TheRunsEndMergesTheFirstLevelOnly) {
  for (int n = 0; n < 64; ++n) commit_file(n);  // FTS5 merges these into one segment
  ASSERT_EQ(segments(), 1);
  for (int n = 64; n < 80; ++n) commit_file(n);
  ASSERT_EQ(levels().front().segments, 16);
  end_run();
  EXPECT_EQ(levels().front().segments, 0);
  EXPECT_EQ(segments(), 2);  // the first level's 16 made one; the older one is left as it is
  EXPECT_EQ(found("shared").size(), 80u);
}

// A record written by hand in FTS5's first format: two levels, the first's two segments being
// merged, and a varint of two bytes.
TEST(TextIndexLevels, AMergeUnderWayIsReadWithItsPages) {
  const std::string r("\x00\x00\x00\x01\x02\x03\x05"      // cookie, 2 levels, 3 segments, writes
                      "\x02\x02\x01\x01\x03\x02\x01\x02"  // 2 of 2 merging: pages 1-3, 1-2
                      "\x00\x01\x03\x01\x81\x00",           // none merging: pages 1-128
                      21);
  auto l = decode_text_index_levels(r);
  ASSERT_TRUE(l.has_value());
  ASSERT_EQ(l->size(), 2u);
  EXPECT_EQ((*l)[0].segments, 2);
  EXPECT_EQ((*l)[0].merging, 2);
  EXPECT_EQ((*l)[0].pages, 5);
  EXPECT_EQ((*l)[0].merging_pages, 5);
  EXPECT_EQ((*l)[1].segments, 1);
  EXPECT_EQ((*l)[1].merging, 0);
  EXPECT_EQ((*l)[1].pages, 128);
}

TEST_F(TextIndexLevelsTest, DamagedAndUnknownRecordsAreRefused) {
  for (int n = 0; n < 5; ++n) commit_file(n);
  std::string r = record();
  ASSERT_TRUE(decode_text_index_levels(r).has_value());
  for (size_t len = 0; len < r.size(); ++len)
    EXPECT_FALSE(decode_text_index_levels(r.substr(0, len)).has_value()) << len;
  // FTS5's second format (SQLite 3.45 on, where a table asks for it).
  EXPECT_FALSE(decode_text_index_levels(r.substr(0, 4) + std::string("\xff\x00\x00\x01", 4) +
                                        r.substr(4))
                   .has_value());
  // Any byte changed to any value: a result or a refusal, never a read past the end.
  for (size_t i = 0; i < r.size(); ++i)
    for (int b = 0; b < 256; ++b) {
      std::string bad = r;
      bad[i] = static_cast<char>(b);
      auto l = decode_text_index_levels(bad);
      if (l) {
        for (const TextIndexLevel& level : *l) EXPECT_LE(level.merging, level.segments);
      }
    }
  EXPECT_FALSE(decode_text_index_levels(std::string(9, '\xff')).has_value());
}

}  // namespace
}  // namespace pf
