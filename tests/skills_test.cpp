// Skills (src/agent/skills.h): SKILL.md folders found and matched by name, one prompt line each,
// and the use_skill tool reading a skill and its files without ever leaving its folder.
#include "agent/skills.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/error.h"
#include "test_util.h"

namespace pf {
namespace {

using nlohmann::json;

std::string error_of(std::string_view text) {
  try {
    parse_skill_file(text, "folder");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SkillsTest, ReadsNameAndDescription) {
  Skill s = parse_skill_file("---\nname: release-notes\ndescription: >\n  Writes notes\n  from "
                             "commits\n---\n# How\n",
                             "folder");
  EXPECT_EQ(s.name, "release-notes");
  EXPECT_EQ(s.description, "Writes notes from commits");
  EXPECT_EQ(parse_skill_file("---\ndescription: d\n---\n", "deploy").name, "deploy");
}

TEST(SkillsTest, MalformedSkillsSayWhy) {
  EXPECT_NE(error_of("# no front matter\n").find("no front matter"), std::string::npos);
  EXPECT_NE(error_of("---\nname: a\n---\n").find("no description"), std::string::npos);
  EXPECT_NE(error_of("---\nname: a b\ndescription: d\n---\n").find("is not 1-64"),
            std::string::npos);
  EXPECT_NE(error_of("---\ndescription: " + std::string(1100, 'd') + "\n---\n").find("1,024"),
            std::string::npos);
  EXPECT_NE(error_of("---\ndescription: [a]\n---\n").find("must be a string"), std::string::npos);
}

class SkillFolders : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_file(user_ / "deploy/SKILL.md", "---\ndescription: user deploy\n---\nUser way.\n");
    test::write_file(ws_ / ".github/skills/deploy/SKILL.md",
                     "---\nname: deploy\ndescription: Deploys the service\n---\n"
                     "Run scripts/deploy.sh, then check the health page.\n");
    test::write_file(ws_ / ".github/skills/deploy/scripts/deploy.sh", "#!/bin/sh\necho deploy\n");
    test::write_file(ws_ / ".github/skills/deploy/.env", "TOKEN=hunter2\n");
    test::write_file(ws_ / ".github/skills/deploy/key.txt",
                     "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
                     "-----END OPENSSH PRIVATE KEY-----\n");
    test::write_file(ws_ / ".github/skills/review-pr/SKILL.md",
                     "---\ndescription: Reviews a pull request\n---\nRead the diff.\n");
    test::write_file(ws_ / ".github/skills/review-docs/SKILL.md",
                     "---\ndescription: Reviews docs\n---\nRead the docs.\n");
    test::write_file(ws_ / ".agents/skills/bad/SKILL.md", "---\nname: bad\n---\n");
    test::write_file(outside_ / "secret.txt", "outside the skill\n");
    std::filesystem::create_symlink(outside_ / "secret.txt",
                                    ws_ / ".github/skills/deploy/link.txt");
    catalog_ = discover_skills({user_.path(), ws_ / ".github/skills", ws_ / ".agents/skills"});
  }
  json call(const json& args) {
    return use_skill_tool(catalog_.skills).run(args.dump(), nullptr);
  }
  test::TempDir user_, ws_, outside_;
  SkillCatalog catalog_;
};

TEST_F(SkillFolders, LaterFoldersWinAndBadOnesAreProblems) {
  ASSERT_EQ(catalog_.skills.size(), 3u);
  EXPECT_EQ(catalog_.skills[0].name, "deploy");
  EXPECT_EQ(catalog_.skills[0].description, "Deploys the service");
  ASSERT_EQ(catalog_.problems.size(), 1u);
  EXPECT_NE(catalog_.problems[0].path.find(".agents/skills/bad/SKILL.md"), std::string::npos);
  EXPECT_NE(catalog_.problems[0].message.find("no description"), std::string::npos);
}

TEST_F(SkillFolders, NamesMatchExactlyThenByAUniqueSubstring) {
  std::vector<std::string> unmatched;
  EXPECT_EQ(match_skill_names(catalog_, "DEPLOY pr", &unmatched),
            (std::vector<std::string>{"deploy", "review-pr"}));
  EXPECT_TRUE(unmatched.empty());
  EXPECT_TRUE(match_skill_names(catalog_, "review nothing", &unmatched).empty());
  EXPECT_EQ(unmatched, (std::vector<std::string>{"review: 2 skills match", "nothing: no skill"}));
  EXPECT_EQ(match_skill_names(catalog_, "all", nullptr).size(), 3u);
}

TEST_F(SkillFolders, ThePromptHasOneLinePerSkill) {
  std::string p = skills_prompt(catalog_.skills);
  EXPECT_NE(p.find("- deploy: Deploys the service\n"), std::string::npos);
  EXPECT_NE(p.find("- review-pr: Reviews a pull request\n"), std::string::npos);
  EXPECT_EQ(p.find("Run scripts/deploy.sh"), std::string::npos);  // the body is not in it
  EXPECT_EQ(skills_prompt({}), "");
}

TEST_F(SkillFolders, UseSkillLoadsTheBodyAndListsFiles) {
  json r = call({{"name", "deploy"}});
  EXPECT_EQ(r["instructions"], "Run scripts/deploy.sh, then check the health page.");
  EXPECT_EQ(r["files"], (json{"key.txt", "scripts/deploy.sh"}));  // no .env, no link
  json f = call({{"name", "Deploy"}, {"file", "scripts/deploy.sh"}});
  EXPECT_EQ(f["content"], "#!/bin/sh\necho deploy\n");
  EXPECT_NE(call({{"name", "nope"}})["error"].get<std::string>().find("deploy, review-docs"),
            std::string::npos);
  EXPECT_TRUE(call(json::array()).contains("error"));
}

TEST_F(SkillFolders, UseSkillNeverLeavesTheFolder) {
  for (std::string bad : std::vector<std::string>{"../review-pr/SKILL.md", "scripts/../../review-pr/SKILL.md", "/etc/passwd",
                          "link.txt", ".env", "key.txt", "missing.txt", "scripts", "a\\b",
                          std::string("x\0y", 3)}) {
    json r = call({{"name", "deploy"}, {"file", bad}});
    EXPECT_TRUE(r.contains("error")) << bad << " " << r.dump();
    EXPECT_EQ(r.dump().find("outside the skill"), std::string::npos) << bad;
    EXPECT_EQ(r.dump().find("hunter2"), std::string::npos) << bad;
    EXPECT_EQ(r.dump().find("PRIVATE KEY"), std::string::npos) << bad;
  }
}

}  // namespace
}  // namespace pf
