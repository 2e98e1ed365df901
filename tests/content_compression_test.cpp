// index/content_compression with a real SQLite store: which runs compress, that every reader
// (search, file chunks, chunks to embed, the in-memory ranking's rows) gets the text back, that
// edits and deletions leave no stale text entries, and that the same files give the same bytes.
#include "index/content_compression.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "core/fs.h"
#include "index/indexer.h"
#include "search/lexical.h"
#include "store/sqlite_util.h"
#include "store/store.h"
#include "test_util.h"

namespace pf {
namespace {

namespace fs = std::filesystem;

// pilotfish's own src/ (2.6 MB of C++): real code, enough of it to train a dictionary.
class ContentCompressionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    corpus_ = new test::TempDir();
    fs::copy(test::source_dir() + "/src", corpus_->path() + "/src", fs::copy_options::recursive);
  }
  static void TearDownTestSuite() { delete corpus_; }

  IndexReport index(const std::string& db, ContentCompression mode, int threads = 0,
                    int64_t from_bytes = int64_t{64} << 20) {
    auto store = open_sqlite_store(db, OpenMode::kReadWrite);
    IndexOptions opt;
    opt.root = corpus_->path();
    opt.compress = mode;
    opt.compress_from_bytes = from_bytes;
    opt.threads = threads;
    return index_repository(*store, opt);
  }

  // (path, start, end) -> content, as the store's readers return it.
  std::map<std::tuple<std::string, int, int>, std::string> contents(const std::string& db) {
    auto store = open_sqlite_store(db, OpenMode::kReadOnly);
    int64_t repo = store->list_repositories().at(0).id;
    std::map<std::tuple<std::string, int, int>, std::string> out;
    std::vector<std::string> paths;
    sqlite3* raw = nullptr;
    sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
    {
      sqlite::Statement st(raw, "SELECT DISTINCT path FROM copilot_code_chunks ORDER BY path");
      while (st.step()) paths.push_back(st.text(0));
    }  // finalized before the close
    sqlite3_close(raw);
    for (const std::string& p : paths)
      for (const StoredChunk& c : store->file_chunks(repo, p))
        out[{p, c.chunk.start_line, c.chunk.end_line}] = c.chunk.content;
    return out;
  }

  int64_t scalar(const std::string& db, const char* sql) {
    sqlite3* raw = nullptr;
    sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
    int64_t v;
    {
      sqlite::Statement st(raw, sql);
      v = st.step() ? st.int64(0) : -1;
    }
    sqlite3_close(raw);
    return v;
  }

  static test::TempDir* corpus_;
  test::TempDir dir_;
};
test::TempDir* ContentCompressionTest::corpus_ = nullptr;

TEST_F(ContentCompressionTest, AlwaysCompressesAndEveryReaderGetsTheText) {
  std::string packed = dir_ / "packed.db", plain = dir_ / "plain.db";
  index(packed, ContentCompression::kAlways);
  index(plain, ContentCompression::kNever);
  int64_t chunks = scalar(packed, "SELECT count(*) FROM copilot_code_chunks");
  int64_t blobs =
      scalar(packed, "SELECT count(*) FROM copilot_code_chunks WHERE typeof(content)='blob'");
  EXPECT_GT(blobs * 10, chunks * 9) << blobs << " of " << chunks;
  EXPECT_EQ(scalar(plain, "SELECT count(*) FROM copilot_code_chunks WHERE typeof(content)='blob'"),
            0);
  EXPECT_EQ(scalar(plain, "SELECT count(*) FROM content_dictionaries"), 0);
  int64_t packed_bytes = scalar(packed, "SELECT sum(length(content)) FROM copilot_code_chunks");
  int64_t text_bytes = scalar(plain, "SELECT sum(length(content)) FROM copilot_code_chunks");
  EXPECT_LT(packed_bytes * 5, text_bytes * 2) << packed_bytes << " of " << text_bytes;

  // The same chunks, and the same text, from either store.
  auto a = contents(packed), b = contents(plain);
  ASSERT_EQ(a.size(), static_cast<size_t>(chunks));
  EXPECT_TRUE(a == b);
  // ... which is the file's own lines.
  std::ifstream in(corpus_->path() + "/src/store/content_codec.cpp");
  std::stringstream file;
  file << in.rdbuf();
  int seen = 0;
  for (const auto& [key, text] : a)
    if (std::get<0>(key) == "src/store/content_codec.cpp") {
      EXPECT_EQ(text, test::lines_of(file.str(), std::get<1>(key), std::get<2>(key)));
      ++seen;
    }
  EXPECT_GT(seen, 3);

  // Searches rank the same rows with the same scores, and return their text.
  auto s1 = open_sqlite_store(packed, OpenMode::kReadOnly);
  auto s2 = open_sqlite_store(plain, OpenMode::kReadOnly);
  for (const char* q : {"register_content_functions", "how is the writer lock taken",
                        "ZSTD_compress_usingCDict dictionary"}) {
    auto h1 = lexical_search(*s1, q), h2 = lexical_search(*s2, q);
    ASSERT_EQ(h1.size(), h2.size()) << q;
    ASSERT_FALSE(h1.empty()) << q;
    for (size_t i = 0; i < h1.size(); ++i) {
      EXPECT_EQ(h1[i].hit.chunk.path, h2[i].hit.chunk.path) << q;
      EXPECT_DOUBLE_EQ(h1[i].hit.score, h2[i].hit.score) << q;
      EXPECT_EQ(h1[i].hit.chunk.content, h2[i].hit.chunk.content) << q;
    }
  }
  // An embedding run reads text.
  auto rw = open_sqlite_store(packed, OpenMode::kReadWrite);
  auto to_embed = rw->chunks_to_embed("m", 50, 0);
  ASSERT_EQ(to_embed.size(), 50u);
  auto text_of = [&](int64_t rowid) { return rw->chunks_by_rowid({rowid}).at(0).chunk.content; };
  for (const auto& c : to_embed) EXPECT_EQ(c.text, text_of(c.rowid));
  EXPECT_FALSE(to_embed[0].text.empty());
  EXPECT_GT(rw->stats().compressed_chunks, 0);
}

TEST_F(ContentCompressionTest, EditsAndDeletionsLeaveNoStaleTextEntries) {
  test::TempDir repo;
  fs::copy(corpus_->path() + "/src", repo.path() + "/src", fs::copy_options::recursive);
  std::string db = dir_ / "index.db";
  auto run = [&] {
    auto store = open_sqlite_store(db, OpenMode::kReadWrite);
    IndexOptions opt;
    opt.root = repo.path();
    opt.compress = ContentCompression::kAlways;
    return index_repository(*store, opt);
  };
  test::write_file(repo / "src/store/zebra_notes.cpp",
                   "// zebraquokka: a word no other file holds\nint zebra() { return 1; }\n");
  test::write_file(repo / "src/store/gone.cpp", "// wombatfinch goes away\nint gone();\n");
  run();
  auto hits = [&](const char* q) {
    auto store = open_sqlite_store(db, OpenMode::kReadOnly);
    return lexical_search(*store, q).size();
  };
  ASSERT_EQ(hits("zebraquokka"), 1u);
  ASSERT_EQ(hits("wombatfinch"), 1u);
  test::write_file(repo / "src/store/zebra_notes.cpp",
                   "// platypusheron replaced it\nint zebra() { return 2; }\n");
  fs::remove(repo / "src/store/gone.cpp");
  IndexReport r = run();
  EXPECT_EQ(r.indexed, 1);
  EXPECT_EQ(r.removed, 1);
  // The delete trigger tokenized the decompressed text: the old words' entries are gone.
  EXPECT_EQ(hits("zebraquokka"), 0u);
  EXPECT_EQ(hits("wombatfinch"), 0u);
  EXPECT_EQ(hits("platypusheron"), 1u);
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM content_dictionaries"), 1);  // kept, not retrained
}

TEST_F(ContentCompressionTest, AutoWaitsForALargeRunThenKeepsTheDictionary) {
  std::string db = dir_ / "index.db";
  index(db, ContentCompression::kAuto, 0, int64_t{1} << 30);
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM content_dictionaries"), 0);
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM copilot_code_chunks WHERE typeof(content)='blob'"),
            0);
  std::string db2 = dir_ / "index2.db";
  index(db2, ContentCompression::kAuto, 0, 1);
  EXPECT_EQ(scalar(db2, "SELECT count(*) FROM content_dictionaries"), 1);
  // A later small run (one new file, far under the threshold) compresses with the same one.
  std::string added = corpus_->path() + "/src/store/added_later.cpp";
  std::string body;
  for (int i = 0; i < 40; ++i)
    body += "int added_later_" + std::to_string(i) + "(int x) { return x * " +
            std::to_string(i) + " + added_later_" + std::to_string(i ? i - 1 : 0) + "(x); }\n";
  test::write_file(added, body);
  IndexReport r = index(db2, ContentCompression::kAuto);
  fs::remove(added);
  EXPECT_EQ(r.indexed, 1);
  EXPECT_EQ(scalar(db2, "SELECT count(*) FROM content_dictionaries"), 1);
  EXPECT_GT(scalar(db2,
                   "SELECT count(*) FROM copilot_code_chunks WHERE path = "
                   "'src/store/added_later.cpp' AND typeof(content)='blob'"),
            0);
}

TEST_F(ContentCompressionTest, TheSameFilesGiveTheSameStoredBytesOnAnyNumberOfThreads) {
  std::string one = dir_ / "one.db", two = dir_ / "two.db";
  index(one, ContentCompression::kAlways, 1);
  index(two, ContentCompression::kAlways, 2);
  auto dump = [&](const std::string& db) {
    sqlite3* raw = nullptr;
    sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
    std::string out;
    {
      sqlite::Statement d(raw, "SELECT hex(dictionary) FROM content_dictionaries");
      while (d.step()) out += d.text(0) + "\n";
      sqlite::Statement st(raw,
                           "SELECT path, startLine, hex(content) FROM copilot_code_chunks "
                           "ORDER BY path, startLine");
      while (st.step()) out += st.text(0) + ":" + st.text(1) + ":" + st.text(2) + "\n";
    }
    sqlite3_close(raw);
    return out;
  };
  std::string a = dump(one), b = dump(two);
  EXPECT_GT(a.size(), 1000u);
  EXPECT_TRUE(a == b);
}

// Two repositories in one store: each its own dictionary, with its own id, and each one's
// frames read back with the dictionary they name.
TEST_F(ContentCompressionTest, EachRepositoryHasItsOwnDictionary) {
  test::TempDir other;
  for (const auto& e : fs::directory_iterator(test::source_dir() + "/tests"))
    if (e.path().extension() == ".cpp") fs::copy(e.path(), other.path() + "/" + e.path().filename().string());
  std::string db = dir_ / "index.db";
  auto store = open_sqlite_store(db, OpenMode::kReadWrite);
  for (const std::string& root : {corpus_->path(), other.path()}) {
    IndexOptions opt;
    opt.root = root;
    opt.compress = ContentCompression::kAlways;
    opt.walk.include_tests = true;  // the second one is pilotfish's tests
    index_repository(*store, opt);
  }
  auto repos = store->list_repositories();
  ASSERT_EQ(repos.size(), 2u);
  std::string a = store->content_dictionary(repos[0].id), b = store->content_dictionary(repos[1].id);
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  EXPECT_NE(content_dictionary_id(a), content_dictionary_id(b));
  EXPECT_EQ(scalar(db, "SELECT count(DISTINCT repo_id) FROM content_dictionaries"), 2);
  for (const RepositoryInfo& r : repos) {
    LexicalQuery q;
    q.terms = {"test"};
    q.repo_id = r.id;
    q.limit = 20;
    auto hits = store->lexical_search(q);
    ASSERT_FALSE(hits.empty()) << r.root;
    for (const StoredChunk& h : hits)
      EXPECT_EQ(h.chunk.content, test::lines_of(read_file(r.root + "/" + h.chunk.path),
                                                h.chunk.start_line, h.chunk.end_line))
          << h.chunk.path;
  }
}

TEST_F(ContentCompressionTest, TooLittleTextToTrainStaysText) {
  test::TempDir repo;
  test::write_file(repo / "a.ts", "export function tiny(a: number) {\n  return a + 1\n}\n");
  std::string db = dir_ / "index.db";
  auto store = open_sqlite_store(db, OpenMode::kReadWrite);
  IndexOptions opt;
  opt.root = repo.path();
  opt.compress = ContentCompression::kAlways;
  IndexReport r = index_repository(*store, opt);
  EXPECT_EQ(r.indexed, 1);
  EXPECT_EQ(store->content_dictionary(store->list_repositories().at(0).id), "");
  EXPECT_EQ(store->stats().compressed_chunks, 0);
}

}  // namespace
}  // namespace pf
