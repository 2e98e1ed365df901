// gitignore semantics: wildmatch cases, then parity with `git ls-files --others
// --exclude-standard` on generated trees with nested ignore files, negations, anchoring and
// .git/info/exclude.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <sstream>

#include "index/ignore.h"
#include "index/walker.h"
#include "test_util.h"

namespace pf {
namespace {

TEST(Wildmatch, StarsQuestionMarksAndClasses) {
  EXPECT_TRUE(wildmatch("*.js", "a.js"));
  EXPECT_FALSE(wildmatch("*.js", "dir/a.js"));  // '*' does not cross '/'
  EXPECT_TRUE(wildmatch("a?c", "abc"));
  EXPECT_FALSE(wildmatch("a?c", "a/c"));
  EXPECT_TRUE(wildmatch("[a-c]x", "bx"));
  EXPECT_FALSE(wildmatch("[!a-c]x", "bx"));
  EXPECT_TRUE(wildmatch("[[:digit:]]*", "9lives"));
  EXPECT_TRUE(wildmatch("\\*lit", "*lit"));
  EXPECT_FALSE(wildmatch("\\*lit", "xlit"));
}

TEST(Wildmatch, DoubleStarSpansDirectories) {
  EXPECT_TRUE(wildmatch("**/foo", "foo"));
  EXPECT_TRUE(wildmatch("**/foo", "a/b/foo"));
  EXPECT_TRUE(wildmatch("a/**/b", "a/b"));
  EXPECT_TRUE(wildmatch("a/**/b", "a/x/y/b"));
  EXPECT_TRUE(wildmatch("abc/**", "abc/x/y"));
  EXPECT_FALSE(wildmatch("abc/**", "abc"));
  EXPECT_FALSE(wildmatch("a**b", "a/x/b"));  // not a whole segment: like '*'
}

// Patterns with many stars used to backtrack exponentially: each of these took hours (the
// first: about C(60,12) tries). Now each is settled in one pass over the text.
TEST(Wildmatch, ManyStarsDoNotBacktrackExponentially) {
  std::string text(60, 'a');
  EXPECT_FALSE(wildmatch("*a*a*a*a*a*a*a*a*a*a*a*a*b", text));
  EXPECT_TRUE(wildmatch("*a*a*a*a*a*a*a*a*a*a*a*a*", text));
  EXPECT_FALSE(wildmatch("*?*?*?*?*?*?*?*?*?*?*?*?*/", text + "/" + text));
  EXPECT_FALSE(wildmatch("**/*a*a*a*a*a*a*a*a*a*a*a*a*b", text + "/" + text + "/" + text));
  EXPECT_TRUE(wildmatch("**/*a*a*a*a*a*a*a*a*a*a*a*a*", text + "/" + text + "/" + text));
  EXPECT_FALSE(wildmatch("*[a-", text));  // unterminated class
}

// Each "**/" tries the rest of the pattern after every '/', so repeated ones multiplied: 20 of
// them against a 60-directory path are C(60,20) (about 4e15) splits, and the fuzzer's 433-byte
// .gitignore line took 44 s. Every (rest of pattern, text position) pair is now settled once.
TEST(Wildmatch, RepeatedDoubleStarsDoNotMultiply) {
  std::string path;
  for (int i = 0; i < 60; ++i) path += "d/";
  std::string many;
  for (int i = 0; i < 20; ++i) many += "**/";
  EXPECT_FALSE(wildmatch(many + "x", path + "y"));
  EXPECT_TRUE(wildmatch(many + "y", path + "y"));
  EXPECT_TRUE(wildmatch(many + "d/y", path + "y"));
  std::string separated;  // "**/d*/**/d*/..." needs a segment between each pair
  for (int i = 0; i < 15; ++i) separated += "**/d*/";
  EXPECT_FALSE(wildmatch(separated + "x", path + "y"));
  EXPECT_TRUE(wildmatch(separated + "y", path + "y"));
  EXPECT_FALSE(wildmatch(separated + "y", "d/d/d/y"));  // fewer segments than the pattern needs
  // The same through an ignore file, as the walker would read it from a repository.
  IgnoreFile file("", many + "x\n" + many + "y/\n");
  EXPECT_EQ(file.match(path + "x", false), IgnoreVerdict::kIgnore);
  EXPECT_EQ(file.match(path + "y", false), IgnoreVerdict::kNone);  // "y/" is for directories
  EXPECT_EQ(file.match(path + "y", true), IgnoreVerdict::kIgnore);
}

// What the fuzzer found: hundreds of "**/" segments against a path of hundreds of directories
// took 29 s when every (segment, directory) pair tried every later directory again.
TEST(Wildmatch, HundredsOfDoubleStarSegmentsStayLinear) {
  std::string path;
  for (int i = 0; i < 1500; ++i) path += "d/";
  std::string run, separated;
  for (int i = 0; i < 730; ++i) run += "**/";
  for (int i = 0; i < 700; ++i) separated += "**/d*/";
  EXPECT_FALSE(wildmatch(run + "x", path + "y"));
  EXPECT_TRUE(wildmatch(run + "y", path + "y"));
  EXPECT_FALSE(wildmatch(separated + "x", path + "y"));
  EXPECT_TRUE(wildmatch(separated + "y", path + "y"));
  EXPECT_FALSE(wildmatch(separated + "y", "d/d/y"));
}

TEST(IgnoreFile, LastMatchWinsAndNegationReincludes) {
  IgnoreFile f("", "*.log\n!keep.log\n# comment\n\n/build\ndocs/\n");
  EXPECT_EQ(f.match("x.log", false), IgnoreVerdict::kIgnore);
  EXPECT_EQ(f.match("a/keep.log", false), IgnoreVerdict::kInclude);
  EXPECT_EQ(f.match("build", true), IgnoreVerdict::kIgnore);
  EXPECT_EQ(f.match("src/build", true), IgnoreVerdict::kNone);  // anchored to the root
  EXPECT_EQ(f.match("docs", false), IgnoreVerdict::kNone);      // dir-only pattern, a file
  EXPECT_EQ(f.match("a/docs", true), IgnoreVerdict::kIgnore);
}

TEST(IgnoreFile, NestedBaseAndTrailingSpaces) {
  IgnoreFile f("sub", "gen/*.js  \nescaped\\ \n");
  EXPECT_EQ(f.match("sub/gen/a.js", false), IgnoreVerdict::kIgnore);
  EXPECT_EQ(f.match("gen/a.js", false), IgnoreVerdict::kNone);  // outside the file's directory
  EXPECT_EQ(f.match("sub/escaped ", false), IgnoreVerdict::kIgnore);
}

// The shortcuts (a literal name compared, "*suffix" as ends-with, a glob tried only after its
// literal head) say what wildmatch says, line by line, anchored or not.
TEST(IgnoreFile, ShortcutsAgreeWithWildmatch) {
  const char* globs[] = {"*.o",     "*.mod.c", "Makefile", "foo*",   "f?o",       "[ab]*.c",
                         "*",       "*.[oa]",  "\\*.o",    "a\\*b",  ".*",        "*~",
                         "*.so.*",  "**",      "x/*.o",    "x/y",    "x/**/z",    "*.o/",
                         "foo*bar", "\\#x",    "[!a]b",    "*o",     "modules.order",
                         // the longest literal run and the last byte (the Linux tree's lines)
                         "*.asn1.[ch]", "*.c.[012]*.*", "*.tab.[ch]", "\\#*#", "**/foo",
                         "foo/**", "a/**/b", "*.o.*", "cscope.*", "*\\*", "a?c", "/x/y/"};
  const char* names[] = {"x.o",    ".o",        "o",        "a.mod.c", "Makefile", "Makefile.am",
                         "foo",    "foobar",    "fzo",      "a.c",     "b.x.c",    "*.o",
                         "a*b",    ".gitignore", "x~",      "libx.so.1", "x/a.o",  "x/y",
                         "x/q/z",  "foo1bar",   "#x",       "bb",      "ab",       "",
                         "modules.order", "x/y/a.o",
                         "k.asn1.c", "k.asn1.h", "k.asn1.o", "a.c.012.x", "a.c.9.x", "p.tab.c",
                         "#y#",     "#y",       "q/foo",    "foo/x",   "a/b",      "a/q/b",
                         "a/q/r/b", "m.o.cmd",  "cscope.out", "a*",    "abc",      "x/y/z"};
  for (const char* glob : globs) {
    IgnoreFile f("", glob);
    std::string line = glob;
    bool dir_only = !line.empty() && line.back() == '/';
    if (dir_only) line.pop_back();
    bool anchored = line.find('/') != std::string::npos;
    if (!line.empty() && line[0] == '/') line.erase(0, 1);
    for (const char* name : names) {
      std::string_view rel = name;
      std::string_view last = rel.substr(rel.rfind('/') == std::string_view::npos ? 0 : rel.rfind('/') + 1);
      bool expect = wildmatch(line, anchored ? rel : last);
      for (bool is_dir : {false, true}) {
        IgnoreVerdict want = expect && (is_dir || !dir_only) ? IgnoreVerdict::kIgnore : IgnoreVerdict::kNone;
        EXPECT_EQ(f.match(rel, is_dir), want) << "glob " << glob << " name " << name;
      }
    }
  }
}

std::set<std::string> git_visible(const std::string& dir) {
  auto r = test::run({"git", "-C", dir, "ls-files", "--others", "--exclude-standard", "-z"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> out;
  std::string cur;
  for (char c : r.out) {
    if (c == '\0') {
      out.insert(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

std::set<std::string> walker_visible(const std::string& dir) {
  WalkOptions opt;
  opt.secure_defaults = false;
  WalkResult r = walk_repository(dir, opt);
  std::set<std::string> out;
  for (const auto& e : r.files) out.insert(e.rel);
  return out;
}

// Builds a random tree with random ignore files drawn from a pool of pattern shapes.
void generate_tree(std::mt19937& rng, const std::string& root) {
  const std::vector<std::string> dirs = {"",     "src",   "src/lib", "src/lib/deep",
                                         "docs", "build", "out/gen", "a",
                                         "a/b",  "a/b/c", "vendor",  "logs"};
  const std::vector<std::string> names = {
      "main.js",  "util.ts",   "README.md", "x.log",    "keep.log", "data.json",  "gen.js",
      "a.min.js", "notes.txt", "Makefile",  "temp.tmp", "b.ts",     "index.d.ts", "[x].md"};
  const std::vector<std::string> patterns = {
      "*.log",      "!keep.log", "/build",        "build/", "out/",       "*.tmp",
      "gen.*",      "!gen.js",   "src/**/deep",   "**/b",   "a/**/c",     "*.min.js",
      "docs/*.md",  "/a/b",      "lib",           "!lib",   "*.[jt]s",    "!*.ts",
      "\\[x\\].md", "vendor/**", "!vendor/b.ts",  "deep/",  "**/util.ts", "notes.txt ",
      "#*.md",      "logs",      "!logs/keep.log"};
  std::uniform_int_distribution<size_t> pick_dir(0, dirs.size() - 1),
      pick_name(0, names.size() - 1), pick_pat(0, patterns.size() - 1);
  for (int i = 0; i < 40; ++i) {
    std::string d = dirs[pick_dir(rng)];
    test::write_file(root + "/" + (d.empty() ? "" : d + "/") + names[pick_name(rng)], "x\n");
  }
  for (int i = 0; i < 5; ++i) {
    std::string d = dirs[pick_dir(rng)];
    std::ostringstream ig;
    int n = 1 + static_cast<int>(rng() % 5);
    for (int k = 0; k < n; ++k) ig << patterns[pick_pat(rng)] << "\n";
    test::write_file(root + "/" + (d.empty() ? "" : d + "/") + ".gitignore", ig.str());
  }
  std::ostringstream ex;
  ex << patterns[pick_pat(rng)] << "\n";
  test::write_file(root + "/.git/info/exclude", ex.str());
}

TEST(WalkerGitParity, MatchesGitOnGeneratedTrees) {
  if (test::shell("git --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "git not installed";
  std::mt19937 rng(20261129);
  for (int round = 0; round < 60; ++round) {
    test::TempDir tmp;
    ASSERT_EQ(test::shell("git init -q '" + tmp.path() + "'"), 0);
    generate_tree(rng, tmp.path());
    auto git = git_visible(tmp.path());
    auto ours = walker_visible(tmp.path());
    // git lists ignore files themselves too; so do we (they are files in the tree).
    EXPECT_EQ(ours, git) << "round " << round << " in " << tmp.path();
    if (ours != git) {
      test::shell("cd '" + tmp.path() +
                  "' && find . -name .gitignore -exec sh -c 'echo == $1; cat $1' _ {} \\; && cat "
                  ".git/info/exclude");
      break;
    }
  }
}

TEST(WalkerGitParity, SubdirectoryRootUsesEnclosingIgnoreFiles) {
  test::TempDir tmp;
  ASSERT_EQ(test::shell("git init -q '" + tmp.path() + "'"), 0);
  test::write_file(tmp / ".gitignore", "*.gen.js\n");
  test::write_file(tmp / "pkg/a.js", "a\n");
  test::write_file(tmp / "pkg/b.gen.js", "b\n");
  auto ours = walker_visible(tmp / "pkg");
  EXPECT_EQ(ours, (std::set<std::string>{"a.js"}));
}

}  // namespace
}  // namespace pf
