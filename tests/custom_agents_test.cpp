// Custom agents (src/agent/custom_agents.h): `*.agent.md` read as Copilot writes them, found in
// their folders with the later one winning, bad files reported and never fatal, and the tool
// patterns an agent's `tools` list may hold.
#include "agent/custom_agents.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/error.h"
#include "test_util.h"

namespace pf {
namespace {

std::string error_of(std::string_view text) {
  try {
    parse_agent_file(text, "x.agent.md");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CustomAgentsTest, ReadsACopilotAgentFile) {
  AgentDefinition a = parse_agent_file(
      "---\n"
      "name: Code Reviewer\n"
      "description: Reviews changes for bugs and style\n"
      "tools: ['read', 'search', 'github/*']\n"
      "model: sonnet\n"
      "target: vscode\n"
      "mcp-servers:\n"
      "  github:\n"
      "    type: http\n"
      "---\n"
      "You review code. Cite path:line.\n",
      "reviewer.agent.md");
  EXPECT_EQ(a.name, "Code Reviewer");
  EXPECT_EQ(a.description, "Reviews changes for bugs and style");
  ASSERT_TRUE(a.tools);
  EXPECT_EQ(*a.tools, (std::vector<std::string>{"read", "search", "github/*"}));
  EXPECT_EQ(a.model, "sonnet");
  EXPECT_EQ(a.instructions, "You review code. Cite path:line.");
}

TEST(CustomAgentsTest, DefaultsComeFromTheFileNameAndTheBody) {
  AgentDefinition a = parse_agent_file("\n# Writes release notes\n\nMore.\n", "notes.agent.md");
  EXPECT_EQ(a.name, "notes");
  EXPECT_EQ(a.description, "Writes release notes");
  EXPECT_FALSE(a.tools);
  EXPECT_TRUE(a.model.empty());
  AgentDefinition b = parse_agent_file("---\ntools: read, edit\n---\nDo it.\n", "b.agent.md");
  EXPECT_EQ(*b.tools, (std::vector<std::string>{"read", "edit"}));
  AgentDefinition none = parse_agent_file("---\ntools: []\n---\nTalk only.\n", "c.agent.md");
  ASSERT_TRUE(none.tools);
  EXPECT_TRUE(none.tools->empty());
}

TEST(CustomAgentsTest, MalformedFilesSayWhy) {
  EXPECT_NE(error_of("---\nname: [a]\n---\nx").find("`name` must be a string"), std::string::npos);
  EXPECT_NE(error_of("---\nname: a/b\n---\nx").find("is not 1-64"), std::string::npos);
  EXPECT_NE(error_of("---\nname: a\n---\n\n  \n").find("no instructions"), std::string::npos);
  EXPECT_NE(error_of("---\ntools:\n  a: b\n---\nx").find("`tools` must be a list"),
            std::string::npos);
  EXPECT_NE(error_of("---\nmodel: [a, b]\n---\nx").find("`model` must be a string"),
            std::string::npos);
  EXPECT_NE(error_of("---\nname a\n---\nx").find("line 2"), std::string::npos);
  EXPECT_NE(error_of(std::string(70 * 1024, 'x')).find("over 64 KiB"), std::string::npos);
}

TEST(CustomAgentsTest, LaterFoldersWinAndBadFilesAreProblems) {
  test::TempDir home, ws;
  std::string user = home / "agents", github = ws / ".github/agents", plain = ws / "agents";
  test::write_file(user + "/reviewer.agent.md", "---\ndescription: user's\n---\nUser body.\n");
  test::write_file(user + "/writer.agent.md", "---\ndescription: writes\n---\nWrite.\n");
  test::write_file(github + "/reviewer.agent.md", "---\ndescription: team's\n---\nTeam body.\n");
  test::write_file(plain + "/broken.agent.md", "---\nname: x\n");
  test::write_file(plain + "/notes.md", "not an agent\n");
  std::filesystem::create_symlink(home / "agents/writer.agent.md", plain + "/escape.agent.md");
  AgentCatalog c = discover_agents({user, ws / "missing", github, plain});
  ASSERT_EQ(c.agents.size(), 2u);
  EXPECT_EQ(c.agents[0].name, "reviewer");
  EXPECT_EQ(c.agents[0].description, "team's");
  EXPECT_EQ(c.agents[0].path, github + "/reviewer.agent.md");
  EXPECT_EQ(c.agents[1].name, "writer");
  ASSERT_EQ(c.problems.size(), 2u);
  EXPECT_EQ(c.problems[0].path, plain + "/broken.agent.md");
  EXPECT_NE(c.problems[0].message.find("never closed"), std::string::npos);
  EXPECT_EQ(c.problems[1].path, plain + "/escape.agent.md");
  EXPECT_NE(c.problems[1].message.find("leaves its folder"), std::string::npos);
  EXPECT_EQ(c.find("REVIEWER"), &c.agents[0]);
  EXPECT_EQ(c.find("nobody"), nullptr);
}

TEST(CustomAgentsTest, DirsRunFromTheUserToTheWorkspace) {
  ::setenv("XDG_CONFIG_HOME", "/cfg", 1);
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(agent_dirs("/ws"),
            (std::vector<std::string>{"/cfg/pilotfish/agents", "/home/u/.copilot/agents",
                                      "/ws/.github/agents", "/ws/agents"}));
  ::unsetenv("XDG_CONFIG_HOME");
  EXPECT_EQ(agent_dirs("")[0], "/home/u/.config/pilotfish/agents");
}

TEST(CustomAgentsTest, ToolPatternsMatchNamesAliasesAndServers) {
  EXPECT_TRUE(agent_tool_matches("*", "run_command"));
  EXPECT_TRUE(agent_tool_matches("read_file", "read_file"));
  EXPECT_TRUE(agent_tool_matches("Read", "list_directory"));
  EXPECT_FALSE(agent_tool_matches("read", "write_file"));
  EXPECT_TRUE(agent_tool_matches("search", "grep"));
  EXPECT_TRUE(agent_tool_matches("edit", "edit_file"));
  EXPECT_TRUE(agent_tool_matches("execute", "run_command"));
  EXPECT_TRUE(agent_tool_matches("web", "fetch_url"));
  EXPECT_TRUE(agent_tool_matches("github/*", "github__create_issue"));
  EXPECT_FALSE(agent_tool_matches("github/*", "gitlab__create_issue"));
  EXPECT_TRUE(agent_tool_matches("github/create_issue", "github__create_issue"));
  EXPECT_FALSE(agent_tool_matches("github/create_issue", "github__delete_repo"));
  EXPECT_TRUE(agent_tool_matches("search_*", "search_code"));
  AgentDefinition a;
  EXPECT_TRUE(agent_allows_tool(a, "anything"));
  a.tools = std::vector<std::string>{"read"};
  EXPECT_TRUE(agent_allows_tool(a, "read_file"));
  EXPECT_FALSE(agent_allows_tool(a, "run_command"));
}

}  // namespace
}  // namespace pf
