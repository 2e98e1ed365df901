// The code-aware tokenizer and query analysis.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "search/query.h"
#include "store/code_tokenizer.h"
#include "store/stemmer.h"

namespace pf {
namespace {

std::vector<std::string> tokens(std::string_view text, bool split = true) {
  std::vector<std::string> out;
  for_each_code_token(text, split, [&](std::string_view t, bool part, size_t, size_t) {
    out.push_back(std::string(part ? "+" : "") + std::string(t));
  });
  return out;
}

using V = std::vector<std::string>;

TEST(CodeTokenizer, SplitsCamelCaseKeepingTheWholeWord) {
  EXPECT_EQ(tokens("getUserName"), (V{"getusername", "+get", "+user", "+name"}));
  EXPECT_EQ(tokens("HTTPServer"), (V{"httpserver", "+http", "+server"}));
  EXPECT_EQ(tokens("parseHTTPResponse2"),
            (V{"parsehttpresponse2", "+parse", "+http", "+response", "+2"}));
}

TEST(CodeTokenizer, SplitsSnakeKebabAndDigits) {
  EXPECT_EQ(tokens("max_redirections"), (V{"max_redirections", "+max", "+redirections"}));
  EXPECT_EQ(tokens("keep-alive"), (V{"keep-alive", "+keep", "+alive"}));
  EXPECT_EQ(tokens("client-h1.js"), (V{"client-h1", "+client", "+1", "js"}));
  EXPECT_EQ(tokens("http2"), (V{"http2", "+http", "+2"}));
  EXPECT_EQ(tokens("UNDICI_NO_WASM_SIMD"),
            (V{"undici_no_wasm_simd", "+undici", "+no", "+wasm", "+simd"}));
}

// The words on each side of the shortcut that skips the structure test (no joiner or upper-case
// letter past the first byte, and not letters and digits both): only the second of each pair
// has parts.
TEST(CodeTokenizer, OnlyAWordWithAChangeInsideItHasParts) {
  EXPECT_EQ(tokens("Http HtTp"), (V{"http", "http", "+ht", "+tp"}));
  EXPECT_EQ(tokens("HTTP ABc"), (V{"http", "abc", "+bc"}));
  EXPECT_EQ(tokens("x86 v2"), (V{"x86", "+86", "v2", "+2"}));
  EXPECT_EQ(tokens("2024 2fa"), (V{"2024", "2fa", "+2", "+fa"}));
  EXPECT_EQ(tokens("_init __x8"), (V{"_init", "__x8", "+8"}));  // a '_' first is no change
  EXPECT_EQ(tokens("caf\xc3\xa9 caf\xc3\xa9_2"),
            (V{"caf\xc3\xa9", "caf\xc3\xa9_2", "+caf\xc3\xa9", "+2"}));
}

TEST(CodeTokenizer, PlainWordsAreNotSplitAndPunctuationSeparates) {
  EXPECT_EQ(tokens("a.b(c, d) => e"), (V{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(tokens("x - 1"), (V{"x", "1"}));  // subtraction is not a kebab join
  EXPECT_EQ(tokens("Hello world"), (V{"hello", "world"}));
}

TEST(CodeTokenizer, DropsOverlongTokensAndLoneUnderscores) {
  std::string b64(200, 'A');
  EXPECT_EQ(tokens("x " + b64 + " y __ _"), (V{"x", "y"}));
}

TEST(CodeTokenizer, QueryModeDoesNotSplit) {
  EXPECT_EQ(tokens("getUserName", false), (V{"getusername"}));
}

TEST(CodeTokenizer, OffsetsPointAtTheWholeWord) {
  std::string text = "  fooBar baz";
  std::vector<std::pair<size_t, size_t>> spans;
  for_each_code_token(
      text, true, [&](std::string_view, bool, size_t b, size_t e) { spans.emplace_back(b, e); });
  ASSERT_EQ(spans.size(), 4u);
  EXPECT_EQ(spans[0], (std::pair<size_t, size_t>{2, 8}));
  EXPECT_EQ(spans[1], spans[0]);
  EXPECT_EQ(spans[3], (std::pair<size_t, size_t>{9, 12}));
}

TEST(CodeTokenizer, NonAsciiBytesStayInsideWords) {
  auto t = tokens("caf\xC3\xA9 na\xC3\xAFve");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0], "caf\xC3\xA9");
}

TEST(Stemmer, InflectionsMeetAtOneStem) {
  EXPECT_EQ(stem_word("redirects"), "redirect");
  EXPECT_EQ(stem_word("redirected"), "redirect");
  EXPECT_EQ(stem_word("redirecting"), "redirect");
  EXPECT_EQ(stem_word("caching"), stem_word("cache"));
  EXPECT_EQ(stem_word("connection"), "connect");
  // Short words, identifiers with digits or separators are left alone.
  EXPECT_EQ(stem_word("has"), "has");
  EXPECT_EQ(stem_word("http2"), "http2");
  EXPECT_EQ(stem_word("max_sockets"), "max_sockets");
}

// Porter's and Snowball's published examples (Porter2, the "english" algorithm, differs from the
// 1980 algorithm on "generalizations" and on its exception list: "dying", "skies"), through the
// allocation-free form the FTS5 tokenizer uses.
TEST(Stemmer, SnowballEnglishThroughTheBufferForm) {
  const std::pair<const char*, const char*> cases[] = {
      {"caresses", "caress"},      {"ponies", "poni"},          {"hopping", "hop"},
      {"conflated", "conflat"},    {"troubled", "troubl"},      {"sized", "size"},
      {"happy", "happi"},          {"relational", "relat"},     {"digitizer", "digit"},
      {"electricity", "electr"},   {"adjustment", "adjust"},    {"controlling", "control"},
      {"rolling", "roll"},         {"generalizations", "general"}, {"generously", "generous"},
      {"dying", "die"},            {"skies", "sky"},            {"consigned", "consign"},
      {"knightly", "knight"}};
  for (const auto& [word, stem] : cases) {
    StemBuffer buffer;
    EXPECT_EQ(stem_word(word, buffer), stem) << word;
    EXPECT_EQ(stem_word(word), stem) << word;
  }
  std::string long_word(kMaxStemmedBytes + 1, 'a');
  long_word += "ing";
  StemBuffer buffer;
  EXPECT_EQ(stem_word(long_word, buffer), long_word);
}

// stem_word keeps recent stems in a per-thread cache. Words that share a cache slot must each
// get their own stem: many more words than slots, stemmed in two orders on two fresh threads,
// give the same stems, and the known stems survive the evictions.
TEST(Stemmer, CacheNeverHandsOneWordAnothersStem) {
  std::vector<std::string> words;
  uint32_t seed = 12345;
  for (int i = 0; i < 60000; ++i) {
    std::string w;
    int len = 4 + static_cast<int>((seed = seed * 1103515245u + 12345u) >> 16) % 19;
    for (int k = 0; k < len; ++k)
      w += static_cast<char>('a' + ((seed = seed * 1103515245u + 12345u) >> 16) % 26);
    const char* suffixes[] = {"", "ing", "ed", "ation", "s", "ness"};
    words.push_back(w + suffixes[i % 6]);
  }
  auto stem_all = [&](bool reverse) {
    std::vector<std::string> stems(words.size());
    std::thread t([&] {
      for (size_t k = 0; k < words.size(); ++k) {
        size_t i = reverse ? words.size() - 1 - k : k;
        stems[i] = stem_word(words[i]);
      }
    });
    t.join();
    return stems;
  };
  EXPECT_EQ(stem_all(false), stem_all(true));
  EXPECT_EQ(stem_word("redirecting"), "redirect");
  for (const auto& w : words) stem_word(w);
  EXPECT_EQ(stem_word("redirecting"), "redirect");
  EXPECT_EQ(stem_word("generalizations"), "general");
}

TEST(QueryAnalysis, DropsStopWordsAndBuildsAnOrQuery) {
  AnalyzedQuery q = analyze_query("How does the pool pick a client?");
  EXPECT_EQ(q.terms, (V{"pool", "pick", "client"}));
  EXPECT_EQ(q.stems, (V{"pool", "pick", "client"}));
}

TEST(QueryAnalysis, IdentifiersContributeWholeAndParts) {
  AnalyzedQuery q = analyze_query("keepAliveTimeout");
  EXPECT_EQ(q.terms, (V{"keepalivetimeout", "keep", "alive", "timeout"}));
}

TEST(QueryAnalysis, NothingSearchableGivesAnEmptyMatch) {
  EXPECT_TRUE(analyze_query("how is the what?").stems.empty());
  EXPECT_TRUE(analyze_query("\"'()*").stems.empty());
}

}  // namespace
}  // namespace pf
