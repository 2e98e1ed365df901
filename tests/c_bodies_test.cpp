// index/c_bodies: the brace scan that lets C be parsed without its function bodies. Each case
// is a shape real C has: comments, literals and directives holding braces, initializers,
// structs, bodies opened in two #if branches.
#include "index/c_bodies.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pf {
namespace {

// The text of each body found, from its '{' to its '}'; {"<unbalanced>"} when the scan refuses.
std::vector<std::string> bodies(const std::string& text) {
  std::vector<BodyBraces> found;
  if (!find_function_bodies(text, &found)) return {"<unbalanced>"};
  std::vector<std::string> out;
  for (const BodyBraces& b : found) {
    EXPECT_EQ(text[b.open], '{');
    EXPECT_EQ(text[b.close], '}');
    out.push_back(text.substr(b.open, b.close - b.open + 1));
  }
  return out;
}

TEST(CBodies, FunctionBodiesButNotInitializersStructsOrNestedBlocks) {
  EXPECT_EQ(bodies("static int add(int a, int b)\n{\n\tif (a) { return a + b; }\n\treturn b;\n}\n"),
            (std::vector<std::string>{"{\n\tif (a) { return a + b; }\n\treturn b;\n}"}));
  EXPECT_EQ(bodies("struct point { int x, y; };\nstatic struct point origin = { 0, 0 };\n"
                   "enum color { RED, GREEN };\nint table[] = { 1, 2, 3 };\n"),
            std::vector<std::string>{});
  // A macro after the parameter list still ends in ')'; K&R parameters end in ';' (left in).
  EXPECT_EQ(bodies("void lock(struct m *m) __acquires(m->lock) { spin(m); }\n"
                   "int old(a) int a; { return a; }\n"),
            (std::vector<std::string>{"{ spin(m); }"}));
  EXPECT_EQ(bodies("SYSCALL_DEFINE2(kill, pid_t, pid, int, sig)\n{\n\treturn 0;\n}\n"),
            (std::vector<std::string>{"{\n\treturn 0;\n}"}));
}

TEST(CBodies, BracesInCommentsLiteralsAndDirectivesAreNotBraces) {
  std::string text =
      "/* { not a body */\n"
      "// }\n"
      "#define OPEN {\n"
      "#define LONG_MACRO(x) do { \\\n"
      "\t} while (0)\n"
      "#error don't { worry\n"
      "#define S \"/* not a comment\"\n"
      "int f(void)\n{\n\tputs(\"}{\");\n\tchar c = '}';\n\tchar q = '\\'';\n\treturn 0; /* } */\n}\n";
  auto found = bodies(text);
  ASSERT_EQ(found.size(), 1u) << found[0];
  EXPECT_EQ(found[0].rfind("{\n\tputs", 0), 0u);
}

TEST(CBodies, UnbalancedTextIsRefused) {
  // One body opened in both branches of an #if: two '{', one '}'.
  EXPECT_EQ(bodies("#ifdef A\nint f(int a) {\n#else\nint f(void) {\n#endif\n\treturn 0;\n}\n"),
            std::vector<std::string>{"<unbalanced>"});
  EXPECT_EQ(bodies("int f(void) { return 0; }}\n"), std::vector<std::string>{"<unbalanced>"});
  EXPECT_EQ(bodies("int f(void) { /* never closed\n}\n"), std::vector<std::string>{"<unbalanced>"});
  EXPECT_EQ(bodies("int f(void) { puts(\"open\n\"); }\n"),
            std::vector<std::string>{"<unbalanced>"});
  EXPECT_EQ(bodies("int f(void) {\n"), std::vector<std::string>{"<unbalanced>"});
  EXPECT_EQ(bodies(""), std::vector<std::string>{});
}

}  // namespace
}  // namespace pf
