// pilotfish's own documentation (src/agent/own_docs.cpp): the README compiled in and split at
// its headings (not inside code fences), and the pilotfish_documentation tool's answers.
#include "agent/own_docs.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "test_util.h"

namespace pf {
namespace {

using nlohmann::json;

TEST(OwnDocs, SectionsFollowTheHeadingsOutsideFences) {
  auto s = doc_sections("# Title\nintro\n## Setup\none\n```sh\n## not a heading\n```\n### Keys\ntwo\n## Use\nthree\n");
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].title, "Setup");
  EXPECT_NE(s[0].text.find("## not a heading"), std::string::npos);
  EXPECT_EQ(s[1].path, "Setup > Keys");
  EXPECT_EQ(s[1].text, "two\n");
  EXPECT_EQ(s[2].path, "Use");
}

TEST(OwnDocs, TheBuiltReadmeIsTheOneInTheTree) {
  std::vector<DocSection> tree = doc_sections(read_file(test::source_dir() + "/README.md"));
  const std::vector<DocSection>& built = own_doc_sections();
  ASSERT_EQ(built.size(), tree.size());
  for (size_t i = 0; i < built.size(); ++i) EXPECT_EQ(built[i].path, tree[i].path);
}

TEST(OwnDocs, TheToolAnswersByTopic) {
  ToolEntry tool = own_docs_tool();
  EXPECT_EQ(tool.spec.name, "pilotfish_documentation");
  EXPECT_EQ(tool.permission, ToolPermission::kNone);
  json list = tool.run("{}", nullptr);
  EXPECT_NE(list["sections"].get<std::string>().find("Calls between bots"), std::string::npos);
  json bots = tool.run(R"({"topic": "calls between bots"})", nullptr);
  EXPECT_TRUE(bots["found"]);
  EXPECT_NE(bots["text"].get<std::string>().find("canBeCalledBy"), std::string::npos);
  // Not in any heading: the sections whose text mentions it.
  json key = tool.run(R"({"topic": "askUserTimeoutSeconds"})", nullptr);
  EXPECT_TRUE(key["found"]);
  EXPECT_NE(key["text"].get<std::string>().find("Questions back to the user"), std::string::npos);
  json none = tool.run(R"({"topic": "quantum teleportation"})", nullptr);
  EXPECT_FALSE(none["found"]);
  EXPECT_FALSE(none["sections"].get<std::string>().empty());
  EXPECT_LE(tool.run(R"({"topic": "the"})", nullptr)["text"].get<std::string>().size(), 12010u);
  EXPECT_TRUE(tool.run("not json", nullptr).contains("sections"));
}

}  // namespace
}  // namespace pf
