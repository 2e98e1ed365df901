// bridge/workspace_templates.h: a new workspace's AGENTS.md and MEMORY.md from the built-in or
// the operator's templates, placeholders filled, a file that exists (or a symlink in its place)
// never written over.
#include "bridge/workspace_templates.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"
#include "core/fs.h"
#include "test_util.h"

namespace pf {
namespace {

namespace fs = std::filesystem;

TEST(WorkspaceTemplatesTest, PlaceholdersAreFilled) {
  WorkspaceVars v{"ops", "#payments", "/w/payments", "https://h/pay.git", ""};
  EXPECT_EQ(fill_template("{{bot}} in {{channel}} at {{workspace}} for {{repository}}", v),
            "ops in #payments at /w/payments for https://h/pay.git");
  EXPECT_EQ(fill_template("purpose: {{purpose}}", v), "purpose: (not given yet)");
  EXPECT_EQ(fill_template("{{unknown}} {{bot", v), "{{unknown}} {{bot");
  EXPECT_EQ(fill_template("{{date}}", v).size(), 10u);  // YYYY-MM-DD
  v.bot = "{{channel}}";  // a value is not filled again
  EXPECT_EQ(fill_template("{{bot}}", v), "{{channel}}");
}

TEST(WorkspaceTemplatesTest, WritesBothOnceAndKeepsWhatIsThere) {
  test::TempDir dir, templates;
  std::string ws = dir / "ops/payments";
  WorkspaceVars v{"ops", "#payments", ws, "", "pay things"};
  std::vector<std::string> written = init_workspace(ws, v, templates.path());
  EXPECT_EQ(written, (std::vector<std::string>{"AGENTS.md", "MEMORY.md"}));
  std::string agents = read_file(ws + "/AGENTS.md");
  EXPECT_NE(agents.find("# ops in #payments"), std::string::npos) << agents;
  EXPECT_NE(agents.find("pay things"), std::string::npos) << agents;
  EXPECT_NE(read_file(ws + "/MEMORY.md").find("# Memory"), std::string::npos);

  test::write_file(ws + "/AGENTS.md", "mine\n");
  fs::remove(ws + "/MEMORY.md");
  written = init_workspace(ws, v, templates.path());
  EXPECT_EQ(written, std::vector<std::string>{"MEMORY.md"});
  EXPECT_EQ(read_file(ws + "/AGENTS.md"), "mine\n");

  // A symlink where a file would go is left alone, and what it points to is not written.
  std::string other = dir / "other";
  fs::create_directories(other);
  fs::create_symlink(dir / "elsewhere.md", other + "/AGENTS.md");
  init_workspace(other, v, templates.path());
  EXPECT_FALSE(fs::exists(dir / "elsewhere.md"));
}

TEST(WorkspaceTemplatesTest, TheOperatorsTemplatesWin) {
  test::TempDir dir, templates;
  test::write_file(templates / "AGENTS.md", "Team rules for {{bot}}: {{purpose}}\n");
  init_workspace(dir / "w", {"ops", "#c", dir / "w", "", "ship it"}, templates.path());
  EXPECT_EQ(read_file(dir / "w/AGENTS.md"), "Team rules for ops: ship it\n");
  EXPECT_NE(read_file(dir / "w/MEMORY.md").find("# Memory"), std::string::npos);  // built in
}

TEST(WorkspaceTemplatesTest, AFolderThatCannotBeMadeIsAnError) {
  test::TempDir dir;
  test::write_file(dir / "file", "x");
  EXPECT_THROW(init_workspace(dir / "file/sub", {}, dir.path()), Error);
}

}  // namespace
}  // namespace pf
