// The C token scan (index/c_chunker.h): what it claims, how it splits, that it agrees with
// tree-sitter on real C, and what it gives back to tree-sitter.
#include "index/c_chunker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "index/chunk_builder.h"
#include "index/chunker.h"
#include "test_util.h"

namespace pf {
namespace {

std::string listing(const std::vector<Chunk>& chunks) {
  std::ostringstream o;
  for (const Chunk& c : chunks)
    o << c.start_line << "-" << c.end_line << " " << c.chunk_type << " fn=" << c.function_name
      << " sym=" << c.symbol << "\n";
  return o.str();
}

const char* kSource = R"(/* A header comment */
#include <stdio.h>
#define MAX(a, b) ((a) > (b) ? (a) : (b))
typedef int (*handler_t)(int);
typedef Array(int) Ints;
struct point { int x, y; } __packed;
enum { A, B, C };
static const struct point table[] = {
  {1, 2},
  {3, 4},
#ifdef MORE
  {5, 6},
#endif
};
DEFINE_OP(add, "fadd")
#ifdef CONFIG_X
// Adds.
static int __init add(int a, int b) __acquires(x)
{
  if (a) {
    return b;
  } else if (b) {
    do { a++; } while (a < b);
  }
  switch (a) { case 1: return 2; default: break; }
  return a + b;
}
#endif
EXPORT_SYMBOL(add);
SYSCALL_DEFINE1(close, int, fd) { return fd; }
)";

TEST(CChunker, ClaimsWhatTheSyntaxTreeRulesClaim) {
  auto chunks = chunk_file("a.c", "c", kSource);
  // (first, last, type, symbol); a function's name is also its function_name.
  std::vector<std::tuple<int, int, std::string, std::string>> want = {
      {1, 2, "block", ""},          {3, 3, "function", "MAX"},   {4, 4, "type", "handler_t"},
      {5, 5, "type", "Ints"},       {6, 6, "type", "point"},     {7, 7, "type", ""},
      {8, 14, "module", "table"},   {15, 15, "block", ""},       {16, 28, "function", "add"},
      {29, 29, "block", ""},        {30, 30, "function", "SYSCALL_DEFINE1"}};
  ASSERT_EQ(chunks.size(), want.size()) << listing(chunks);
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(listing(chunks));
    EXPECT_EQ(chunks[i].start_line, std::get<0>(want[i])) << i;
    EXPECT_EQ(chunks[i].end_line, std::get<1>(want[i])) << i;
    EXPECT_EQ(chunks[i].chunk_type, std::get<2>(want[i])) << i;
    EXPECT_EQ(chunks[i].symbol, std::get<3>(want[i])) << i;
    EXPECT_EQ(chunks[i].function_name,
              chunks[i].chunk_type == "function" ? std::get<3>(want[i]) : "")
        << i;
  }
  test::expect_chunks_cover(kSource, chunks);
}

// A function of 14 statements of 4 rows each, an #if group of 5 rows among them: at a cap of 10
// rows each chunk ends where a statement (or the group) does, and the group stays whole.
TEST(CChunker, AFunctionOverTheCapSplitsAtItsStatements) {
  std::string src = "int long_one(int n)\n{\n";
  std::set<int> ends;  // rows a chunk may end on
  int row = 2;
  for (int i = 0; i < 14; ++i) {
    if (i == 6) {
      src += "#ifdef DEBUG\n  if (n)\n    trace(n);\n  n++;\n#endif\n";
      row += 5;
      ends.insert(row);
    }
    src += "  if (n > " + std::to_string(i) + ") {\n    n -= 1;\n    n *= 2;\n  }\n";
    row += 4;
    ends.insert(row);
  }
  src += "  return n;\n}\n";
  ends.insert(row + 2);
  ChunkLimits limits;
  limits.max_lines = 10;
  auto chunks = chunk_file("a.c", "c", src, limits);
  ASSERT_GE(chunks.size(), 7u) << listing(chunks);
  for (const Chunk& c : chunks) {
    SCOPED_TRACE(listing(chunks));
    EXPECT_EQ(c.chunk_type, "function");
    EXPECT_EQ(c.function_name, "long_one");
    EXPECT_LE(c.end_line - c.start_line + 1, 10);
    EXPECT_TRUE(ends.count(c.end_line)) << c.end_line;
  }
  test::expect_chunks_cover(src, chunks);
}

// A table over the cap splits between its elements, an element's braces kept whole.
TEST(CChunker, ATableOverTheCapSplitsBetweenItsElements) {
  std::string src = "static const struct op ops[] = {\n";
  for (int i = 0; i < 30; ++i) src += "\t{\n\t\t.id = " + std::to_string(i) + ",\n\t},\n";
  src += "};\n";
  ChunkLimits limits;
  limits.max_lines = 12;
  auto chunks = chunk_file("a.c", "c", src, limits);
  ASSERT_GE(chunks.size(), 8u) << listing(chunks);
  for (const Chunk& c : chunks) {
    SCOPED_TRACE(listing(chunks));
    EXPECT_EQ(c.chunk_type, "module");
    EXPECT_EQ(c.symbol, "ops");
    EXPECT_LE(c.end_line - c.start_line + 1, 12);
    // Each element is rows 3k+2 .. 3k+4: a chunk ends on an element's last row (or the file's).
    EXPECT_TRUE(c.end_line % 3 == 1 || c.end_line == 92) << c.end_line;
  }
  test::expect_chunks_cover(src, chunks);
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The first chunk of each named function: rows and name.
std::set<std::tuple<int, int, std::string>> functions(const std::vector<Chunk>& chunks) {
  std::set<std::tuple<int, int, std::string>> out;
  for (size_t i = 0; i < chunks.size(); ++i)
    if (chunks[i].chunk_type == "function" && !chunks[i].function_name.empty() &&
        (i == 0 || chunks[i - 1].function_name != chunks[i].function_name))
      out.insert({chunks[i].start_line, chunks[i].end_line, chunks[i].function_name});
  return out;
}

// On real C, the functions tree-sitter finds (rows and name): all of them in tree-sitter's own
// runtime, at least 97% in llama.cpp's ggml (macro-built and #if-heavy: the rest differ where a
// long function is split at other statements, or the scan names what tree-sitter misreads).
TEST(CChunker, FindsTheFunctionsTreeSitterFindsInRealC) {
  namespace fs = std::filesystem;
  for (auto [dir, share] : {std::pair{"third_party/tree-sitter/vendor/tree-sitter/lib/src", 1.0},
                            std::pair{"third_party/llama.cpp/ggml/src", 0.97}}) {
    std::vector<std::string> files;
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(test::source_dir() + "/" + dir, ec))
      if (e.path().extension() == ".c" && e.file_size() < (1u << 20)) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    ASSERT_GE(files.size(), 8u) << dir;
    size_t found = 0, same = 0;
    ChunkLimits tree;
    tree.c_by_syntax_tree = true;
    for (const std::string& path : files) {
      SCOPED_TRACE(path);
      std::string text = read(path);
      auto scanned = chunk_file("x.c", "c", text);
      auto parsed = chunk_file("x.c", "c", text, tree);
      auto mine = functions(scanned);
      for (const auto& f : functions(parsed)) {
        ++found;
        same += mine.count(f);
      }
      test::expect_chunks_cover(text, scanned);
      for (const Chunk& c : scanned) EXPECT_LE(c.end_line - c.start_line + 1, 80);
    }
    EXPECT_GT(found, 400u) << dir;
    EXPECT_GE(static_cast<double>(same), share * static_cast<double>(found))
        << dir << ": " << same << " of " << found;
  }
}

const char* scan(const std::string& text, bool header, std::vector<Chunk>* chunks = nullptr) {
  ChunkBuilder out("x", "c", text);
  const char* why = chunk_c(out, text, ChunkLimits{}, header);
  if (chunks) *chunks = out.take();
  return why;
}

TEST(CChunker, GivesBackWhatItCannotScan) {
  // A body opened in two #if branches: the braces do not pair up.
  std::string two_openings =
      "#ifdef A\nint f(int a) {\n#else\nint f(int a, int b) {\n#endif\n  return a;\n}\n";
  std::vector<Chunk> none;
  EXPECT_STREQ(scan(two_openings, false, &none), kCScanUnbalanced);
  EXPECT_TRUE(none.empty());
  EXPECT_STREQ(scan("int f(void) { return (1; }\n", false), kCScanUnbalanced);
  EXPECT_STREQ(scan("int x; /* never closed\n", false), kCScanUnterminated);
  EXPECT_STREQ(scan("#if 0\nit's prose\n#endif\n", false), kCScanUnterminated);
  // chunk_file then chunks it by its syntax tree: every line still lands in a chunk.
  std::string fallback;
  auto chunks = chunk_file("x.c", "c", two_openings, {}, &fallback);
  EXPECT_EQ(fallback, "");
  test::expect_chunks_cover(two_openings, chunks);
}

TEST(CChunker, HeadersHoldingCppGoToTreeSitter) {
  for (const char* cpp :
       {"namespace n { int a; }\n", "template <class T> T id(T t) { return t; }\n",
        "class Pool { int n; };\n", "int Pool::size() { return 0; }\n",
        "#ifdef __cplusplus\nextern \"C\" {\n#endif\nint a;\n#ifdef __cplusplus\n}\n#endif\n",
        "extern \"C\" int a;\n", "struct S { public: int a; };\n",
        "struct S { virtual int f(); };\n"}) {
    EXPECT_STREQ(scan(cpp, true), kCScanCpp) << cpp;
    EXPECT_EQ(scan(cpp, false) == kCScanCpp, false) << cpp;  // a .c file is not asked
  }
  // C that only looks like it: a struct named class, a member named private.
  std::string c = "struct class {\n\tvoid *private;\n\tint (*probe)(struct class *class);\n};\n";
  std::vector<Chunk> chunks;
  EXPECT_EQ(scan(c, true, &chunks), nullptr);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].chunk_type, "type");
  EXPECT_EQ(chunks[0].symbol, "class");
  // Through chunk_file, a .h of plain C is scanned (a C struct is a type, not a class).
  auto header = chunk_file("include/point.h", "cpp", "struct point {\n\tint x, y;\n};\n");
  ASSERT_EQ(header.size(), 1u);
  EXPECT_EQ(header[0].chunk_type, "type");
  auto cpp_header = chunk_file("include/pool.h", "cpp", "class Pool {\n\tint n;\n};\n");
  ASSERT_EQ(cpp_header.size(), 1u);
  EXPECT_EQ(cpp_header[0].chunk_type, "class");
}

}  // namespace
}  // namespace pf
