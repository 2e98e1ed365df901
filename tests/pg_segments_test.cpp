// The PostgreSQL store's postings in the database (store/pg_segments.h) on a real server: a
// chunk's terms counted per column (as the in-memory ranking counts them), segments merged into postings equal to a rebuild's, a
// tombstone meeting its chunk's posting, searches scoring as FTS5 after merges, and a warm
// search reading no block.
#include "store/pg_segments.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>

#include "pg_search_fixture.h"
#include "store/bm25_index.h"
#include "store/stemmer.h"

namespace pf {
namespace {

using PgSegmentsTest = test::PgStoreFixture;
using test::kQuestions;
namespace fs = std::filesystem;

TEST_F(PgSegmentsTest, MergedSegmentsHoldWhatTheBatchesHeldAndTombstonesMeetTheirPostings) {
  // Many small batches (a file each), changed and removed files among them, merged two by two:
  // the postings equal a rebuild's after each step, and searches score as FTS5 does.
  // The first index is one segment, however many batches it took (a slow build's first index
  // can take seven, and merge with the rounds below).
  {
    pg::Transaction t(*conn_);
    pg_merge_repository(*conn_, 1);
    t.commit();
  }
  const fs::path dir = fs::path(repo_.path()) / "src" / "store";
  for (int round = 0; round < 3; ++round) {
    std::ofstream(dir / "pg_util.cpp", std::ios::app) << "\nint retry_jitter_" << round << "() { return 1; }\n";
    std::ofstream(dir / ("round" + std::to_string(round) + ".cpp")) << "// websocket replay " << round << "\n";
    if (round == 1) fs::remove(dir / "round0.cpp");
    reindex();
  }
  const int64_t segments_before = conn_->exec("SELECT count(*) FROM lexical_segments").int64(0, 0);
  ASSERT_GE(segments_before, 4);  // the first, and a batch or two a round
  const int64_t tombstones_before = live_index().tombstones;
  EXPECT_GT(tombstones_before, 0);
  int merges = 0;
  {
    pg::Transaction t(*conn_);
    merges = pg_merge_levels(*conn_, 1, 2);
    t.commit();
  }
  EXPECT_GE(merges, 1);
  const int64_t segments_after = conn_->exec("SELECT count(*) FROM lexical_segments").int64(0, 0);
  EXPECT_LT(segments_after, segments_before);
  expect_same_statistics();
  // Merged into one, the repository keeps no tombstone: each met its posting or had none left.
  {
    pg::Transaction t(*conn_);
    pg_merge_repository(*conn_, 1);
    t.commit();
  }
  EXPECT_EQ(conn_->exec("SELECT count(*) FROM lexical_segments").int64(0, 0), 1);
  EXPECT_EQ(live_index().tombstones, 0);
  expect_same_statistics();
  Fts5Search fts(db_);
  PgSearch pg(*conn_);
  for (const char* question : kQuestions) {
    LexicalQuery q;
    q.terms = analyze_query(question).stems;
    q.limit = 20;
    auto want = fts.rank(q, 0), got = pg.rank(q);
    ASSERT_EQ(got.size(), want.size()) << question;
    for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(got[k].score, want[k].score) << question;
  }
}

TEST_F(PgSegmentsTest, ChunkTermsCountEachColumn) {
  Chunk c = test::make_chunk("alpha/beta", 1, "gamma", "");
  c.symbol.clear();
  c.content = "gamma";
  for (int i = 0; i < 5000; ++i) c.content += " delta";
  PgChunkTerms t = pg_chunk_terms(c, c.path);
  EXPECT_EQ(t.length, 1u + 2u + 5001u);  // symbols; the path's two words; the body
  std::map<std::string, BoundedTopK::Counts> got(t.terms.begin(), t.terms.end());
  EXPECT_EQ(got.size(), t.terms.size());
  EXPECT_TRUE(std::is_sorted(t.terms.begin(), t.terms.end()));
  EXPECT_EQ(got["gamma"], (BoundedTopK::Counts{1, 0, 0, 1}));
  EXPECT_EQ(got["delta"], (BoundedTopK::Counts{0, 0, 0, 5000}));  // not clamped
  EXPECT_EQ(got["alpha"], (BoundedTopK::Counts{0, 1, 0, 0}));
}

TEST_F(PgSegmentsTest, ChunkTermsAreWhatTheInMemoryRankingCounts) {
  // Two ways to count a row's terms (bm25_index.h's map, pg_chunk_terms' sorted tokens) give the
  // same terms, counts and length, on every file of the source tree and on edge cases.
  std::vector<Chunk> chunks;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(repo_.path()) / "src")) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    Chunk c = test::make_chunk(e.path().filename().string(), 1, "parseHTTPResponse2", "");
    c.class_name = "Store_Base";
    c.heading_path = "Store \xe2\x80\xba Segments";
    c.content.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    chunks.push_back(std::move(c));
  }
  ASSERT_GT(chunks.size(), 100u);
  for (const char* text : {"", "__ _", "x", "a_b a_b A_B", "caf\xc3\xa9 caf\xc3\xa9_2"}) {
    Chunk c = test::make_chunk("", 1, "", "");
    c.content = text;
    chunks.push_back(std::move(c));
  }
  StemBuffer stem;
  RowTermCounts counts;
  for (const Chunk& c : chunks) {
    const std::string symbols = c.function_name + " " + c.class_name + " " + c.symbol;
    const std::string_view columns[4] = {symbols, c.path, c.heading_path, c.content};
    const uint32_t length = count_row_terms(columns, stem, counts);
    std::vector<std::pair<std::string, BoundedTopK::Counts>> want(counts.begin(), counts.end());
    std::sort(want.begin(), want.end());
    const PgChunkTerms got = pg_chunk_terms(c, c.path);
    EXPECT_EQ(got.length, length) << c.path;
    EXPECT_EQ(got.terms, want) << c.path;
  }
}

TEST_F(PgSegmentsTest, EightBatchesMergeAndTheirRowsSpaceIsReclaimedAtCommit) {
  const fs::path file = fs::path(repo_.path()) / "src" / "store" / "pg_util.cpp";
  auto segments = [&] { return conn_->exec("SELECT count(*) FROM lexical_segments").int64(0, 0); };
  // Counted, not looked for: the fixture's first index may itself have merged (and vacuumed)
  // when a slow machine committed it in eight batches or more.
  auto vacuums = [&] {
    return conn_->exec("SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'lexical_blocks'")
        .int64(0, 0);
  };
  // From one segment, however many batches the first index took: a slow build's can take dozens
  // and leave segments on three levels, more than kPgMergeAt of them in all.
  {
    pg::Transaction t(*conn_);
    pg_merge_repository(*conn_, 1);
    t.commit();
  }
  ASSERT_EQ(segments(), 1);
  const int64_t vacuums_before = vacuums();
  int64_t most = 0;
  for (int round = 0; round < kPgMergeAt + 1; ++round) {
    std::ofstream(file, std::ios::app) << "\nint merge_round_" << round << "() { return 1; }\n";
    reindex();
    most = std::max(most, segments());
  }
  EXPECT_LT(segments(), kPgMergeAt);  // merged as the eighth on the first level came
  EXPECT_GE(most, kPgMergeAt - 1);  // and not before
  EXPECT_GT(vacuums(), vacuums_before);  // by the store, after the merging batch committed
  expect_same_statistics();
}

TEST_F(PgSegmentsTest, AChunksPathTermsAreTheRowsWhateverTheChunkHolds) {
  // The store keeps the file's path in each row; the postings of an added chunk and the
  // tombstones of a deleted one are both made from it, so they meet.
  Chunk c = test::make_chunk("", 1, "zeta_handler", "");
  c.content = "int zeta_handler(void) { return 0; }";
  const FileRecord file{"docs/omega_path.c", 1, 1, "h", "c", ""};
  pg_->begin_batch();
  pg_->replace_file(1, file, {c});
  pg_->commit_batch();
  EXPECT_EQ(pg_->lexical_stats({"omega_path"}).df, std::vector<int64_t>{1});
  expect_postings_as_rebuilt();
  pg_->begin_batch();
  pg_->remove_file(1, file.path);
  pg_->commit_batch();
  EXPECT_EQ(pg_->lexical_stats({"omega_path"}).df, std::vector<int64_t>{0});
  expect_postings_as_rebuilt();
}

TEST_F(PgSegmentsTest, AWarmSearchReadsNoBlockOnAnyConnectionOfTheProcess) {
  LexicalQuery q;
  q.terms = analyze_query(kQuestions[0]).stems;
  q.limit = 10;
  const auto first = PgSearch(*conn_).rank(q);
  ASSERT_FALSE(first.empty());
  // With the blocks and lengths out of reach, another connection ranks the same question the
  // same from what the process kept; a question with other terms needs the blocks, and fails.
  test::PostgresServer::shared().psql(pg_name_, "ALTER TABLE lexical_blocks RENAME TO away; "
                                                "ALTER TABLE lexical_lengths RENAME TO away2");
  pg::Connection other(url_);
  const auto again = PgSearch(other).rank(q);
  ASSERT_EQ(again.size(), first.size());
  for (size_t k = 0; k < first.size(); ++k) {
    EXPECT_EQ(again[k].rowid, first[k].rowid);
    EXPECT_EQ(again[k].score, first[k].score);
  }
  LexicalQuery unseen;
  unseen.terms = analyze_query("websocket reconnect backoff").stems;
  unseen.limit = 10;
  EXPECT_THROW(PgSearch(other).rank(unseen), Error);
  test::PostgresServer::shared().psql(pg_name_, "ALTER TABLE away RENAME TO lexical_blocks; "
                                                "ALTER TABLE away2 RENAME TO lexical_lengths");
  EXPECT_FALSE(PgSearch(other).rank(unseen).empty());
}

}  // namespace
}  // namespace pf
