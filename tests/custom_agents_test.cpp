// Custom agents (src/agent/custom_agents.h): `*.agent.md` read as Copilot writes them, found in
// their folders with the later one winning, bad files reported and never fatal, and the tool
// patterns an agent's `tools` list may hold.
#include "agent/custom_agents.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/error.h"
#include "test_util.h"

#include <nlohmann/json.hpp>

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

// `pilotfish ask --agent`: the agent's instructions, tools and model reach the request, with
// the repository's skills; an unknown agent is a usage error naming those there are.
TEST(CustomAgentsTest, AskRunsAsTheAgentWithTheSkills) {
  test::TempDir repo, tmp;
  test::write_file(repo / "src/a.ts", "export const a = 1;\n");
  test::write_file(repo / ".github/agents/reviewer.agent.md",
                   "---\ndescription: Reviews\ntools: [read]\nmodel: second\n---\nREVIEW-MARKER\n");
  test::write_file(repo / ".github/skills/deploy/SKILL.md",
                   "---\ndescription: Deploys the service\n---\nSteps.\n");
  std::string db = tmp / "a.db";
  ASSERT_EQ(test::run({test::pilotfish_bin(), "index", repo.path(), "--db", db, "-q"}).exit_code, 0);
  test::ScriptedModelServer model;
  std::string cfg = tmp / "c.json";
  test::write_file(cfg, "{\"providers\": {\"m\": {\"type\": \"openai\", \"baseUrl\": \"" +
                            model.base_url() +
                            "\", \"models\": [{\"id\": \"x\"}, {\"id\": \"second\"}]}}, "
                            "\"defaults\": {\"chatModel\": \"m:x\"}}");
  ::setenv("XDG_CONFIG_HOME", (tmp / "config").c_str(), 1);
  auto r = test::run({test::pilotfish_bin(), "ask", "check it", "--db", db, "--config", cfg,
                      "--agent", "Reviewer"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("answered by m:second"), std::string::npos) << r.err;
  nlohmann::json body = model.requests().at(0)["body"];
  std::string system = body["messages"][0]["content"];
  EXPECT_NE(system.find("<custom_agent name=\"reviewer\">\nREVIEW-MARKER"), std::string::npos);
  EXPECT_NE(system.find("- deploy: Deploys the service"), std::string::npos);
  std::string tools;
  for (const auto& t : body["tools"]) tools += t["function"]["name"].get<std::string>() + " ";
  EXPECT_EQ(tools, "read_file list_directory use_skill ");
  r = test::run({test::pilotfish_bin(), "ask", "x", "--db", db, "--config", cfg, "--agent", "ghost"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--agent ghost: no such agent (the agents: reviewer)"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace pf
