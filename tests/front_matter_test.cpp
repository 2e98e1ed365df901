// The front matter reader (src/core/front_matter.h): the YAML that agent and skill files use,
// and every malformed block refused with its line.
#include "core/front_matter.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace pf {
namespace {

std::string error_of(std::string_view text) {
  try {
    parse_front_matter(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(FrontMatterTest, TextWithoutABlockIsAllBody) {
  FrontMatter fm = parse_front_matter("# Title\n\n---\nname: x\n---\n");
  EXPECT_FALSE(fm.present);
  EXPECT_EQ(fm.body, "# Title\n\n---\nname: x\n---\n");
  EXPECT_TRUE(fm.scalars.empty());
}

TEST(FrontMatterTest, ReadsScalarsOfEveryStyle) {
  FrontMatter fm = parse_front_matter(
      "---\r\n"
      "name: reviewer   # a comment\r\n"
      "title: 'It''s #1'\n"
      "quoted: \"tab\\there \\u00e9 \\\"q\\\"\"\n"
      "url: http://x.example/a#b\n"
      "empty:\n"
      "folded_plain: first part\n"
      "  second part\n"
      "literal: |\n"
      "  line one\n"
      "    indented\n"
      "\n"
      "  after blank\n"
      "folded: >-\n"
      "  joined\n"
      "  words\n"
      "---\n"
      "Body text.\n");
  EXPECT_TRUE(fm.present);
  EXPECT_EQ(fm.get("name"), "reviewer");
  EXPECT_EQ(fm.get("title"), "It's #1");
  EXPECT_EQ(fm.get("quoted"), "tab\there \xC3\xA9 \"q\"");
  EXPECT_EQ(fm.get("url"), "http://x.example/a#b");
  EXPECT_EQ(fm.get("empty", "unset"), "");
  EXPECT_EQ(fm.get("folded_plain"), "first part second part");
  EXPECT_EQ(fm.get("literal"), "line one\n  indented\n\nafter blank\n");
  EXPECT_EQ(fm.get("folded"), "joined words");
  EXPECT_EQ(fm.body, "Body text.\n");
}

TEST(FrontMatterTest, ReadsListsAndSkipsMappings) {
  FrontMatter fm = parse_front_matter(
      "---\n"
      "tools: ['read', \"search\", github/*]\n"
      "more:\n"
      "  - edit\n"
      "  - 'execute'\n"
      "flat:\n"
      "- a\n"
      "- b\n"
      "multi: [one,\n"
      "  two]\n"
      "none: []\n"
      "mcp-servers:\n"
      "  github:\n"
      "    url: https://x\n"
      "inline: {a: 1}\n"
      "model: gpt-5\n"
      "---\n");
  EXPECT_EQ(fm.lists.at("tools"), (std::vector<std::string>{"read", "search", "github/*"}));
  EXPECT_EQ(fm.lists.at("more"), (std::vector<std::string>{"edit", "execute"}));
  EXPECT_EQ(fm.lists.at("flat"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(fm.lists.at("multi"), (std::vector<std::string>{"one", "two"}));
  EXPECT_TRUE(fm.lists.at("none").empty());
  EXPECT_TRUE(fm.nested.count("mcp-servers"));
  EXPECT_TRUE(fm.nested.count("inline"));
  EXPECT_EQ(fm.get("model"), "gpt-5");
  EXPECT_EQ(fm.get("tools", "not a scalar"), "not a scalar");
  EXPECT_TRUE(fm.body.empty());
}

TEST(FrontMatterTest, AByteOrderMarkAndDotsCloseAreAccepted) {
  FrontMatter fm = parse_front_matter("\xEF\xBB\xBF---\nname: a\n...\nrest");
  EXPECT_TRUE(fm.present);
  EXPECT_EQ(fm.get("name"), "a");
  EXPECT_EQ(fm.body, "rest");
}

TEST(FrontMatterTest, MalformedBlocksNameTheirLine) {
  EXPECT_NE(error_of("---\nname: a\n").find("never closed"), std::string::npos);
  EXPECT_NE(error_of("---\nname: a\njust words\n---\n").find("line 3: expected \"key: value\""),
            std::string::npos);
  EXPECT_NE(error_of("---\nname: a\nname: b\n---\n").find("line 3: the key \"name\" is given twice"),
            std::string::npos);
  EXPECT_NE(error_of("---\nname: 'open\n---\n").find("never closed"), std::string::npos);
  EXPECT_NE(error_of("---\nname: \"bad \\q\"\n---\n").find("unknown escape"), std::string::npos);
  EXPECT_NE(error_of("---\nname: \"\\u12\"\n---\n").find("four hex digits"), std::string::npos);
  EXPECT_NE(error_of("---\ntools: [a, b\n---\n").find("never closed with ]"), std::string::npos);
  EXPECT_NE(error_of("---\ntools: [a b] c\n---\n").find("unexpected text"), std::string::npos);
  EXPECT_NE(error_of("---\nname: 'a' b\n---\n").find("unexpected text"), std::string::npos);
  EXPECT_NE(error_of("---\n  indented: a\n---\n").find("line 2: an indented line"),
            std::string::npos);
  EXPECT_NE(error_of("---\nlist:\n  - a\n  b\n---\n").find("line 4: expected \"- item\""),
            std::string::npos);
  EXPECT_NE(error_of("---\nx: |q\n  a\n---\n").find("block scalar"), std::string::npos);
  EXPECT_NE(error_of("---\n: v\n---\n").find("empty"), std::string::npos);
  std::string huge = "---\n" + std::string(70 * 1024, 'a') + "\n---\n";
  EXPECT_NE(error_of(huge).find("over 64 KiB"), std::string::npos);
}

}  // namespace
}  // namespace pf
