// chat/slack/mrkdwn.h: the agent's Markdown as Slack mrkdwn (a table of cases), people's mrkdwn
// as plain text for the model, and long replies cut into labelled parts within Slack's limit
// with code blocks closed and reopened across a cut.
#include "chat/slack/mrkdwn.h"
#include "core/text.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace pf {
namespace {

struct Case {
  const char* markdown;
  const char* mrkdwn;
};

const Case kCases[] = {
    {"plain text", "plain text"},
    {"**bold**", "*bold*"},
    {"__bold__", "*bold*"},
    {"*italic*", "_italic_"},
    {"_italic_", "_italic_"},
    {"***both***", "_*both*_"},
    {"**bold *and italic***", "*bold _and italic_*"},
    {"~~strike~~", "~strike~"},
    {"a ~b~ c", "a ~b~ c"},
    {"`code`", "`code`"},
    {"`a **b** <c>`", "`a **b** &lt;c&gt;`"},
    {"use `x & y` here", "use `x &amp; y` here"},
    {"Use the `<@U1>` form", "Use the `&lt;@U1&gt;` form"},
    {"[label](https://example.com)", "<https://example.com|label>"},
    {"[**bold link**](https://x.com)", "<https://x.com|bold link>"},
    {"[x](https://e.com/?a=1&b=2)", "<https://e.com/?a=1&amp;b=2|x>"},
    {"[a](<https://x.com/a b>)", "<https://x.com/a%20b|a>"},
    {"[t](https://x.com \"Title\")", "<https://x.com|t>"},
    {"[https://x.com](https://x.com)", "<https://x.com>"},
    {"[not a link] (x)", "[not a link] (x)"},
    {"![alt text](https://e.com/i.png)", "<https://e.com/i.png|alt text>"},
    {"see https://example.com/a_b_c.", "see https://example.com/a_b_c."},
    {"**https://x.com/a_b**", "*https://x.com/a_b*"},
    {"# Title", "*Title*"},
    {"### **Bold** heading ###", "*Bold heading*"},
    {"## Step _one_", "*Step _one_*"},
    {"Title\n=====", "*Title*"},
    {"Sub\n---", "*Sub*"},
    {"- one\n- two", "• one\n• two"},
    {"* one\n+ two", "• one\n• two"},
    {"1. first\n2. second", "1. first\n2. second"},
    {"1) x", "1. x"},
    {"- a\n  - b\n    - c\n- d", "• a\n    • b\n        • c\n• d"},
    {"1. step\n   - detail", "1. step\n    • detail"},
    {"- [ ] todo\n- [x] done", "• ☐ todo\n• ☑ done"},
    {"- **key**: value", "• *key*: value"},
    {"> quoted **text**", "> quoted *text*"},
    {"> # Heading in quote\n>\n> - item", "> *Heading in quote*\n>\n> • item"},
    {"> > nested\n>> twice", "> nested\n> twice"},
    {"---", "──────────"},
    {"* * *", "──────────"},
    {"para\n\n___\n\nnext", "para\n\n──────────\n\nnext"},
    {"a & b < c > d", "a &amp; b &lt; c &gt; d"},
    {"<div>", "&lt;div&gt;"},
    {"hi <@U123ABC>, see <#C123|general> and <#C456>",
     "hi <@U123ABC>, see <#C123|general> and <#C456>"},
    {"<!here> <!channel> <!everyone> <!subteam^S123>",
     "<!here> <!channel> <!everyone> <!subteam^S123>"},
    {"<https://x.com|label> and <mailto:a@b.com|a@b.com>",
     "<https://x.com|label> and <mailto:a@b.com|a@b.com>"},
    {"<@U1 oops> <!nothere>", "&lt;@U1 oops&gt; &lt;!nothere&gt;"},
    {"**<@U1>** look", "*<@U1>* look"},
    {"\\*not italic\\*", "*not italic*"},
    {"\\# not a heading", "# not a heading"},
    {"snake_case_name", "snake_case_name"},
    {"2 * 3 * 4", "2 * 3 * 4"},
    {"unclosed **bold", "unclosed **bold"},
    {"`unclosed code", "`unclosed code"},
    {"line one  \nline two", "line one\nline two"},
    {"foo\\\nbar", "foo\nbar"},
    {"```python\nx = a < b && c\n```", "```\nx = a &lt; b &amp;&amp; c\n```"},
    {"```\n**not bold** [x](y)\n```", "```\n**not bold** [x](y)\n```"},
    {"~~~\ncode\n~~~", "```\ncode\n```"},
    {"````\n```\ninner\n```\n````", "```\n```\ninner\n```\n```"},
    {"```js\nunclosed", "```\nunclosed\n```"},
    {"1. step\n   ```sh\n   ls -l\n   ```", "1. step\n```\nls -l\n```"},
    {"| a | b |\n|---|:-:|\n| 1 | x<y |\n\nafter",
     "```\n| a | b |\n|---|:-:|\n| 1 | x&lt;y |\n```\n\nafter"},
    {"para\n\n- item\n\nnext", "para\n\n• item\n\nnext"},
    {"**Note:** see [docs](https://d.io) & `cfg`", "*Note:* see <https://d.io|docs> &amp; `cfg`"},
    {"# ", ""},
    {"", ""},
};

TEST(Mrkdwn, MarkdownTable) {
  ASSERT_GE(std::size(kCases), 40u);
  for (const Case& c : kCases)
    EXPECT_EQ(markdown_to_mrkdwn(c.markdown), c.mrkdwn) << "markdown: " << c.markdown;
}

TEST(Mrkdwn, SurvivesHostileInput) {
  // Deep nesting, long runs and unmatched brackets finish quickly and keep every byte's meaning.
  std::string deep(20000, '[');
  std::string stars;
  for (int i = 0; i < 5000; ++i) stars += "*a _b ";
  std::string links;
  for (int i = 0; i < 3000; ++i) links += "[a](";
  for (const std::string& s :
       {deep, stars, links, std::string("\xff\xfe<\x80>&"), std::string(5000, '`')}) {
    std::string out = markdown_to_mrkdwn(s);
    EXPECT_EQ(out.find('<'), std::string::npos) << s.substr(0, 40);  // nothing became a link
    EXPECT_EQ(std::count(out.begin(), out.end(), 'b'), std::count(s.begin(), s.end(), 'b'));
  }
  EXPECT_EQ(markdown_to_mrkdwn("\xff\xfe <b>"), "\xff\xfe &lt;b&gt;");
  // Thousands of quote levels on one line: one level, and no recursion per level.
  std::string quotes;
  for (int i = 0; i < 100000; ++i) quotes += "> ";
  EXPECT_EQ(markdown_to_mrkdwn(quotes + "deep"), "> deep");
}

TEST(Mrkdwn, ToText) {
  EXPECT_EQ(mrkdwn_to_text("<@U123> hi"), "@U123 hi");
  auto names = [](const std::string& id) {
    return id == "U123" ? std::string("alice") : std::string();
  };
  EXPECT_EQ(mrkdwn_to_text("<@U123> and <@U9>", names), "@alice and @U9");
  EXPECT_EQ(mrkdwn_to_text("<@U7|bob> hi"), "@bob hi");
  EXPECT_EQ(mrkdwn_to_text("<#C1|general> <#C2>"), "#general #C2");
  EXPECT_EQ(mrkdwn_to_text("see <https://x.com|label>"), "see label (https://x.com)");
  EXPECT_EQ(mrkdwn_to_text("see <https://x.com>"), "see https://x.com");
  EXPECT_EQ(mrkdwn_to_text("<http://example.com|example.com>"), "example.com");
  EXPECT_EQ(mrkdwn_to_text("<mailto:a@b.com|a@b.com> <mailto:c@d.com>"), "a@b.com c@d.com");
  EXPECT_EQ(mrkdwn_to_text("<!here> <!channel> <!everyone>"), "@here @channel @everyone");
  EXPECT_EQ(mrkdwn_to_text("<!subteam^S1|@devs> <!subteam^S2>"), "@devs @subteam");
  EXPECT_EQ(mrkdwn_to_text("a &lt;b&gt; &amp;amp; c"), "a <b> &amp; c");
  EXPECT_EQ(mrkdwn_to_text("&amp;lt;"), "&lt;");
  EXPECT_EQ(mrkdwn_to_text("<https://x.com?a=1&amp;b=2|q&amp;a>"), "q&a (https://x.com?a=1&b=2)");
  // A resolved name is not decoded again; stray brackets stay.
  auto odd = [](const std::string&) { return std::string("a&amp;b"); };
  EXPECT_EQ(mrkdwn_to_text("<@U1>", odd), "@a&amp;b");
  EXPECT_EQ(mrkdwn_to_text("a <b\nc> <"), "a <b\nc> <");
  EXPECT_EQ(mrkdwn_to_text("*bold* _it_ `code`"), "*bold* _it_ `code`");
}

// Whether s is well-formed UTF-8 (no sequence cut).
bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

// The parts' labels are "(Part i of n)" in order; returns the parts without them.
std::vector<std::string> check_parts(const std::vector<std::string>& parts, size_t max) {
  std::vector<std::string> bodies;
  for (size_t i = 0; i < parts.size(); ++i) {
    EXPECT_LE(code_points(parts[i]), max) << "part " << i;
    EXPECT_TRUE(valid_utf8(parts[i])) << "part " << i;
    std::string label =
        "\n(Part " + std::to_string(i + 1) + " of " + std::to_string(parts.size()) + ")";
    EXPECT_EQ(parts[i].substr(parts[i].size() - std::min(label.size(), parts[i].size())), label);
    bodies.push_back(parts[i].substr(0, parts[i].size() - label.size()));
  }
  return bodies;
}

TEST(Mrkdwn, SplitShortAndEmpty) {
  EXPECT_TRUE(split_mrkdwn("", 100).empty());
  EXPECT_EQ(split_mrkdwn("short", 100), std::vector<std::string>{"short"});
  std::string exact(100, 'x');
  EXPECT_EQ(split_mrkdwn(exact, 100), std::vector<std::string>{exact});
  // A limit below 64 counts as 64.
  EXPECT_EQ(split_mrkdwn(std::string(64, 'y'), 10).size(), 1u);
  EXPECT_EQ(split_mrkdwn(std::string(65, 'y'), 10).size(), 2u);
}

TEST(Mrkdwn, SplitProseAtBlankLinesWithLabels) {
  std::string text;
  for (int p = 0; p < 30; ++p)
    text += "Paragraph " + std::to_string(p) + " has a few words in it.\n\n";
  std::vector<std::string> parts = split_mrkdwn(text, 200);
  ASSERT_GT(parts.size(), 3u);
  std::vector<std::string> bodies = check_parts(parts, 200);
  std::string joined;
  for (const std::string& b : bodies) {
    EXPECT_EQ(b.find("Paragraph"), 0u) << b;  // cut at paragraph boundaries
    EXPECT_EQ(b.back(), '.') << b;
    joined += b + "\n\n";
  }
  EXPECT_EQ(joined, text);
}

TEST(Mrkdwn, SplitReopensCodeBlocks) {
  std::string text = "Intro line.\n```\n";
  for (int i = 0; i < 60; ++i)
    text += "let value_" + std::to_string(i) + " = compute(" + std::to_string(i) + ");\n";
  text += "```\nAfter the code.";
  std::vector<std::string> parts = split_mrkdwn(text, 300);
  ASSERT_GT(parts.size(), 3u);
  std::vector<std::string> bodies = check_parts(parts, 300);
  std::string code;
  for (size_t i = 0; i < bodies.size(); ++i) {
    const std::string& b = bodies[i];
    size_t fences = 0;
    for (size_t at = b.find("```"); at != std::string::npos; at = b.find("```", at + 3)) ++fences;
    EXPECT_EQ(fences % 2, 0u) << "part " << i << " leaves a block open:\n" << b;
    if (i > 0 && i + 1 < bodies.size()) {
      EXPECT_EQ(b.rfind("```\n", 0), 0u) << b;
    }
    for (size_t at = b.find("let "); at != std::string::npos; at = b.find("let ", at + 1))
      code += b.substr(at, b.find('\n', at) - at) + "\n";
  }
  std::string expected;
  for (int i = 0; i < 60; ++i)
    expected += "let value_" + std::to_string(i) + " = compute(" + std::to_string(i) + ");\n";
  EXPECT_EQ(code, expected);  // no line lost or cut
  EXPECT_NE(bodies.back().find("After the code."), std::string::npos);
}

TEST(Mrkdwn, SplitNeverCutsUtf8AndHandlesLongWords) {
  std::string text;
  for (int i = 0; i < 700; ++i) text += i % 3 ? "é" : "🐟";
  std::vector<std::string> parts = split_mrkdwn(text, 100);
  std::vector<std::string> bodies = check_parts(parts, 100);
  std::string joined;
  for (const std::string& b : bodies) joined += b;
  EXPECT_EQ(joined, text);

  std::string word(1000, 'a');
  bodies = check_parts(split_mrkdwn(word, 64), 64);
  joined.clear();
  for (const std::string& b : bodies) joined += b;
  EXPECT_EQ(joined, word);
  EXPECT_GE(bodies.size(), 20u);  // two-digit labels fit too
}

TEST(Mrkdwn, SplitDropsAFenceThatWouldOpenAnEmptyBlock) {
  // The block ends right where a part must end: no part holds an empty ``` block.
  std::string text = "```\n" + std::string(180, 'c') + "\n```\n" + std::string(50, 'd');
  for (const std::string& b : check_parts(split_mrkdwn(text, 200), 200))
    EXPECT_EQ(b.find("```\n```"), std::string::npos) << b;
}

}  // namespace
}  // namespace pf
