// store/content_codec: dictionaries trained the same from the same samples, frames that come
// back as the text, and pf_text on a real SQLite connection (text, NULL, frames, damage).
#include "store/content_codec.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "store/sqlite_util.h"

namespace pf {
namespace {

// Code-like chunks with the repetition real source has (names, keywords, layout) and enough
// variety that a dictionary has something to learn.
std::vector<std::string> code_chunks(int n, unsigned seed) {
  std::mt19937 rng(seed);
  const char* types[] = {"int", "size_t", "struct page *", "unsigned long", "bool"};
  const char* verbs[] = {"alloc", "free", "lookup", "insert", "remove", "flush", "lock"};
  const char* nouns[] = {"page", "inode", "buffer", "queue", "entry", "node", "cache"};
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    std::string noun = nouns[rng() % 7], verb = verbs[rng() % 7];
    std::string c = "/*\n * " + verb + "_" + noun + " - " + verb + " one " + noun +
                    " of the table\n */\nstatic " + types[rng() % 5] + " " + verb + "_" + noun +
                    "_" + std::to_string(rng() % 1000) + "(struct " + noun + " *" + noun +
                    ", int flags)\n{\n";
    for (int s = 0; s < 4 + static_cast<int>(rng() % 12); ++s)
      c += "\tif (" + noun + "->count > " + std::to_string(rng() % 64) + ")\n\t\treturn -E" +
           (rng() % 2 ? "INVAL" : "NOMEM") + ";\n\t" + noun + "->" + verbs[rng() % 7] +
           "_count++;\n";
    c += "\treturn 0;\n}\n";
    out.push_back(c);
  }
  return out;
}

std::vector<std::string_view> views(const std::vector<std::string>& v) {
  return std::vector<std::string_view>(v.begin(), v.end());
}

TEST(ContentCodec, TheSameSamplesTrainTheSameDictionaryWithTheGivenId) {
  auto samples = code_chunks(3000, 1);
  std::string a = train_content_dictionary(views(samples), kFirstContentDictionaryId + 7);
  std::string b = train_content_dictionary(views(samples), kFirstContentDictionaryId + 7);
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_LE(a.size(), 64u * 1024);
  EXPECT_EQ(content_dictionary_id(a), kFirstContentDictionaryId + 7);
  EXPECT_EQ(content_dictionary_id("not a dictionary"), 0u);
  // Too few samples, or too little text in them: no dictionary rather than noise.
  auto few = code_chunks(20, 2);
  EXPECT_EQ(train_content_dictionary(views(few), kFirstContentDictionaryId), "");
}

TEST(ContentCodec, FramesComeBackAsTheTextAndShortOrRandomTextStaysText) {
  auto samples = code_chunks(3000, 3);
  std::string dict = train_content_dictionary(views(samples), kFirstContentDictionaryId + 1);
  ContentCompressor compressor(dict);
  EXPECT_EQ(compressor.dictionary_id(), kFirstContentDictionaryId + 1);
  size_t plain = 0, packed = 0;
  for (const std::string& text : code_chunks(200, 4)) {  // chunks the dictionary never saw
    std::string s = text;
    ASSERT_TRUE(compressor.compress(&s));
    EXPECT_EQ(frame_dictionary_id(s), kFirstContentDictionaryId + 1);
    EXPECT_EQ(decompress_content(s, dict), text);
    plain += text.size();
    packed += s.size();
  }
  EXPECT_LT(packed * 3, plain) << packed << " of " << plain;  // at least 3x on such text

  std::string short_text = "int x;";
  EXPECT_FALSE(compressor.compress(&short_text));
  EXPECT_EQ(short_text, "int x;");
  std::mt19937 rng(5);
  std::string noise(4000, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  std::string kept = noise;
  EXPECT_FALSE(compressor.compress(&kept));
  EXPECT_EQ(kept, noise);
  EXPECT_THROW(ContentCompressor("not a dictionary"), Error);
}

TEST(ContentCodec, DamagedFramesAndWrongDictionariesAreErrors) {
  auto samples = code_chunks(3000, 6);
  std::string dict = train_content_dictionary(views(samples), kFirstContentDictionaryId + 1);
  std::string other = train_content_dictionary(views(samples), kFirstContentDictionaryId + 2);
  std::string frame = code_chunks(1, 7)[0];
  ASSERT_TRUE(ContentCompressor(dict).compress(&frame));
  EXPECT_THROW(decompress_content(frame, other), Error);
  std::string cut = frame.substr(0, frame.size() / 2);
  EXPECT_THROW(decompress_content(cut, dict), Error);
  std::string flipped = frame;
  flipped[flipped.size() / 2] ^= 0x5a;
  try {  // a flipped byte is either caught, or (rarely) still decodes to the same length
    std::string text = decompress_content(flipped, dict);
    EXPECT_EQ(text.size(), code_chunks(1, 7)[0].size());
  } catch (const Error&) {
  }
  EXPECT_THROW(decompress_content("", dict), Error);
}

class PfTextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(sqlite3_open(":memory:", &db_), SQLITE_OK);
    register_content_functions(db_);
    sqlite::exec(db_,
                 "CREATE TABLE content_dictionaries(id INTEGER PRIMARY KEY, repo_id INTEGER, "
                 "dictionary BLOB NOT NULL)");
    auto samples = code_chunks(3000, 8);
    dict_ = train_content_dictionary(views(samples), kFirstContentDictionaryId + 3);
    sqlite::Statement st(db_, "INSERT INTO content_dictionaries VALUES (3, 1, ?)");
    st.bind_blob(1, dict_).run();
  }
  void TearDown() override { sqlite3_close(db_); }

  // pf_text of a bound value; nullopt when the statement fails (its error in *error).
  std::optional<std::string> pf_text(std::string_view value, bool blob, std::string* error) {
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db_, "SELECT pf_text(?)", -1, &st, nullptr);
    if (blob)
      sqlite3_bind_blob(st, 1, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
    else
      sqlite3_bind_text(st, 1, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
    std::optional<std::string> out;
    if (sqlite3_step(st) == SQLITE_ROW) {
      EXPECT_EQ(sqlite3_column_type(st, 0), SQLITE_TEXT);
      out = std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)),
                        static_cast<size_t>(sqlite3_column_bytes(st, 0)));
    } else {
      *error = sqlite3_errmsg(db_);
    }
    sqlite3_finalize(st);
    return out;
  }

  sqlite3* db_ = nullptr;
  std::string dict_;
};

TEST_F(PfTextTest, TextPassesAndFramesAreDecompressedWithTheDictionaryTheyName) {
  std::string error;
  EXPECT_EQ(pf_text("plain text", false, &error), "plain text");
  sqlite::Statement null_value(db_, "SELECT pf_text(NULL) IS NULL");
  ASSERT_TRUE(null_value.step());
  EXPECT_EQ(null_value.int64(0), 1);
  std::string text = code_chunks(1, 9)[0], frame = text;
  ASSERT_TRUE(ContentCompressor(dict_).compress(&frame));
  EXPECT_EQ(pf_text(frame, true, &error), text);
  EXPECT_EQ(pf_text(frame, true, &error), text);  // the cached dictionary
}

TEST_F(PfTextTest, FramesOfUnknownDictionariesAndDamagedBlobsAreSqlErrors) {
  auto samples = code_chunks(3000, 10);
  std::string unknown = train_content_dictionary(views(samples), kFirstContentDictionaryId + 9);
  std::string frame = code_chunks(1, 11)[0];
  ASSERT_TRUE(ContentCompressor(unknown).compress(&frame));
  std::string error;
  EXPECT_FALSE(pf_text(frame, true, &error));
  EXPECT_NE(error.find("does not hold"), std::string::npos) << error;
  EXPECT_FALSE(pf_text("\x01\x02\x03 not zstd", true, &error));
  EXPECT_NE(error.find("damaged"), std::string::npos) << error;
}

}  // namespace
}  // namespace pf
