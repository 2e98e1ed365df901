// The command line's side of the permission engine (src/cli/policy.cpp): `pilotfish policy
// explain` names the decision and the rule or check behind it, reading the same config and
// stored rules as the bridge; `pilotfish ask` asks y / n / always on its terminal (a real
// pseudo-terminal here) and refuses when there is none.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bridge/sqlite_state_store.h"
#include "test_util.h"

namespace pf {
namespace {

using nlohmann::json;

test::CommandResult pf(std::vector<std::string> args) {
  args.insert(args.begin(), test::pilotfish_bin());
  return test::run(args);
}

class PolicyExplain : public ::testing::Test {
 protected:
  void SetUp() override {
    json cfg = json::parse(R"j({
      "bridge": {
        "platforms": {"mm": {"url": "http://127.0.0.1:1", "bots": {"copilot": {"tokenEnv": "X_TOKEN"}}}},
        "channels": [{"id": "C1", "platform": "mm", "bot": "copilot", "workingDirectory": "",
                      "actions": ["shell", "write"]}]},
      "permissions": {"deny": ["shell(git push)"], "allowUrls": ["github.com"]}})j");
    cfg["bridge"]["channels"][0]["workingDirectory"] = ws.path();
    test::write_file(dir / "pilotfish.json", cfg.dump());
  }
  test::CommandResult explain(const std::string& tool, const json& args, std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"policy", "explain", "--config", dir / "pilotfish.json", "--db",
                                  dir / "index.db", "--bot", "copilot", "--channel", "C1",
                                  "--tool", tool, "--args", args.dump()};
    a.insert(a.end(), extra.begin(), extra.end());
    return pf(a);
  }
  test::TempDir dir, ws;
};

TEST_F(PolicyExplain, NamesTheCheckAndTheRuleThatDecided) {
  auto hard = explain("run_command", {{"command", "sudo env bash -c 'rm -Rf /'"}});
  EXPECT_EQ(hard.exit_code, 0) << hard.err;
  EXPECT_EQ(hard.out, "deny\thard-deny\trecursive rm of /\trun_command: sudo env bash -c 'rm -Rf /'\n");
  auto cfg = explain("run_command", {{"command", "git -C . push origin"}});
  EXPECT_EQ(cfg.out, "deny\tconfig-deny\tpermissions.deny[0] shell(git push) matched `git`\t"
                     "run_command: git -C . push origin\n");
  auto ask = explain("run_command", {{"command", "ls && curl x | sh"}});
  EXPECT_EQ(ask.out.rfind("ask\tprompt\t`sh` runs another command\t", 0), 0u) << ask.out;
  auto write = explain("write_file", {{"path", "src/a.c"}, {"content", ""}});
  EXPECT_EQ(write.out.rfind("approve\tworkspace\t", 0), 0u) << write.out;
  auto url = explain("fetch_url", {{"url", "https://api.github.com/x"}});
  EXPECT_EQ(url.out.rfind("approve\tallow-urls\tpermissions.allowUrls[0] github.com\t", 0), 0u) << url.out;
  EXPECT_NE(url.out.find("note: fetch_url is not offered here (the channel's actions does not include \"url\")"),
            std::string::npos) << url.out;
}

TEST_F(PolicyExplain, ReadsTheStoredRulesOfTheBridge) {
  {
    auto state = open_sqlite_state_store(dir / "bridge.db");
    state->add_permission_rule({0, "global", "run_command", "make", "deny"});
    state->add_permission_rule({0, "mm:C1", "run_command", "make", "allow"});
  }
  auto r = explain("run_command", {{"command", "make test"}}, {"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["decision"], "approve");
  EXPECT_EQ(j["check"], "stored-rule");
  EXPECT_EQ(j["detail"], "rule 2 (channel mm:C1: run_command make allow)");
  EXPECT_EQ(j["scopes"], json({"mm:C1", "bot:copilot", "global"}));
  EXPECT_EQ(j["remember"]["patterns"], json({"make"}));
  EXPECT_EQ(j["offered"], true);
  // Another channel of no rules of its own: the global deny decides.
  auto other = pf({"policy", "explain", "--config", dir / "pilotfish.json", "--db", dir / "index.db",
                   "--bot", "copilot", "--channel", "C2", "--tool", "run_command", "--args",
                   R"({"command": "make"})"});
  EXPECT_EQ(other.out.rfind("deny\tstored-rule\trule 1 (global: run_command make deny)", 0), 0u) << other.out;
}

// Issue 23: every tool the agent can be offered is explained: the repository's read tools, the
// chat tools (offered only in chat), the actions, and MCP tools as server__tool, whose server is
// not started; a write outside the workspace reaches the engine with its absolute path.
TEST_F(PolicyExplain, ExplainsEveryToolTheAgentCanBeOffered) {
  struct Expect {
    std::string tool;
    json args;
    std::string line;  // the start of the first line
  };
  const std::vector<Expect> expected = {
      {"read_file", {{"path", "README.md"}}, "approve\tno-permission\tread_file only reads the workspace"},
      {"list_directory", {{"path", "."}}, "approve\tno-permission\t"},
      {"grep", {{"pattern", "x"}}, "approve\tno-permission\t"},
      {"search_code", {{"query", "retry"}}, "approve\tno-permission\t"},
      {"show_file_in_chat", {{"path", "README.md"}}, "approve\tchat-tool\tshow_file_in_chat is a chat tool"},
      {"send_file", {{"path", "README.md"}}, "approve\tchat-tool\t"},
      {"no_reply", json::object(), "approve\tchat-tool\t"},
      {"schedule", {{"action", "list"}}, "approve\tchat-tool\t"},
      {"edit_file", {{"path", "a.c"}, {"old_string", "a"}, {"new_string", "b"}}, "approve\tworkspace\t"},
      {"github__create_issue", {{"title", "x"}}, "ask\tprompt\tno rule decides\tgithub__create_issue: github/create_issue"},
      {"write_file", {{"path", "/srv/elsewhere/x.txt"}, {"content", ""}}, "ask\tprompt\tno rule decides\twrite_file: /srv/elsewhere/x.txt"},
  };
  for (const Expect& e : expected) {
    auto r = explain(e.tool, e.args);
    EXPECT_EQ(r.exit_code, 0) << e.tool << ": " << r.err;
    EXPECT_EQ(r.out.rfind(e.line, 0), 0u) << e.tool << ": " << r.out;
  }
  auto mcp = explain("github__create_issue", json::object(), {"--json"});
  json j = json::parse(mcp.out);
  EXPECT_EQ(j["kind"], "mcp");
  EXPECT_EQ(j["remember"]["tool"], "mcp:github");
  EXPECT_EQ(j["offered"], false);
  EXPECT_NE(j["note"].get<std::string>().find("no MCP server \"github\" is configured"), std::string::npos);
  // Outside a chat channel the chat tools are not offered.
  test::write_file(dir / "plain.json", "{}");
  auto cli = pf({"policy", "explain", "--config", dir / "plain.json", "--db", dir / "index.db",
                 "--workspace", ws.path(), "--tool", "send_file", "--args", R"({"path": "a"})"});
  EXPECT_NE(cli.out.find("note: send_file is offered only in chat channels"), std::string::npos) << cli.out << cli.err;
}

TEST_F(PolicyExplain, BadInputIsAUsageError) {
  auto unknown = explain("format_disk", json::object());
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown tool: format_disk"), std::string::npos) << unknown.err;
  auto bad = pf({"policy", "explain", "--config", dir / "pilotfish.json", "--tool", "run_command",
                 "--args", "{not json"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("must be a JSON object"), std::string::npos) << bad.err;
  auto bot = explain("run_command", {{"command", "ls"}}, {"--bot", "nobody"});
  EXPECT_EQ(bot.exit_code, 2);
}

TEST(PolicyAsk, TheTerminalIsAskedAndAlwaysIsRemembered) {
  test::TempDir repo, tmp;
  test::write_file(repo / "README.md", "# r\n");
  std::string db = tmp / "a.db";
  ASSERT_EQ(pf({"index", repo.path(), "--db", db, "-q"}).exit_code, 0);
  auto call = [](const std::string& file) {
    json args = {{"command", "touch " + file}};
    return json{{"chat", {{"text", json::array()}, {"finish", "tool_calls"},
                          {"tool_calls", {{{"id", "c1"}, {"name", "run_command"}, {"arguments", args.dump()}}}}}}};
  };
  json done = {{"chat", {{"text", {"Done."}}}}};
  test::ScriptedModelServer server(json::array({call("one"), done, call("two"), done, call("three"), done}).dump());
  std::string cfg = tmp / "c.json";
  test::write_file(cfg, json({{"providers", {{"m", {{"type", "openai"}, {"baseUrl", server.base_url()},
                                                    {"models", {{{"id", "x"}}}}}}}},
                              {"defaults", {{"chatModel", "m:x"}}},
                              {"actions", {{"enabled", {"shell"}}}}}).dump());
  std::vector<std::string> ask = {test::pilotfish_bin(), "ask", "make files", "--db", db, "--config", cfg};
  // No terminal: refused, nothing runs.
  auto piped = test::run(ask);
  EXPECT_EQ(piped.exit_code, 0) << piped.err;
  struct stat st {};
  EXPECT_NE(::stat((repo / "one").c_str(), &st), 0);
  EXPECT_NE(server.requests().at(1)["body"].dump().find("no terminal to ask"), std::string::npos);
  // A terminal: "a" (always) approves and remembers `touch` in the terminal's scope...
  auto [code, out] = test::run_on_terminal(ask, "allow?", "a\n");
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("run_command wants to run: touch two"), std::string::npos) << out;
  EXPECT_EQ(::stat((repo / "two").c_str(), &st), 0) << out;
  // ...so the next touch runs without asking.
  auto [code2, out2] = test::run_on_terminal(ask, "allow?", "n\n");
  EXPECT_EQ(code2, 0) << out2;
  EXPECT_EQ(out2.find("allow?"), std::string::npos) << out2;
  EXPECT_EQ(::stat((repo / "three").c_str(), &st), 0) << out2;
}

}  // namespace
}  // namespace pf

namespace pf {
namespace {

TEST(PolicyAsk, McpToolsPassTheEngineInAskToo) {
  test::TempDir repo, tmp;
  test::write_file(repo / "README.md", "# r\n");
  std::string db = tmp / "a.db";
  ASSERT_EQ(pf({"index", repo.path(), "--db", db, "-q"}).exit_code, 0);
  json args = {{"message", "from the terminal"}};
  json call = {{"chat", {{"text", json::array()}, {"finish", "tool_calls"},
                         {"tool_calls", {{{"id", "c1"}, {"name", "everything__echo"}, {"arguments", args.dump()}}}}}}};
  json done = {{"chat", {{"text", {"Done."}}}}};
  test::ScriptedModelServer server(json::array({call, done, call, done}).dump());
  json everything = {{"command", "node"},
                     {"args", {test::source_dir() + "/tests/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"}}};
  json cfg = {{"providers", {{"m", {{"type", "openai"}, {"baseUrl", server.base_url()}, {"models", {{{"id", "x"}}}}}}}},
              {"defaults", {{"chatModel", "m:x"}}},
              {"mcp", {{"servers", {{"everything", everything}}}}}};
  test::write_file(tmp / "c.json", cfg.dump());
  // No rule and no terminal: refused.
  auto refused = pf({"ask", "echo it", "--db", db, "--config", tmp / "c.json"});
  EXPECT_EQ(refused.exit_code, 0) << refused.err;
  EXPECT_NE(server.last_tool_result().find("no terminal to ask"), std::string::npos) << server.last_tool_result();
  // A config rule for the server: it runs.
  cfg["permissions"] = {{"allow", {"mcp(everything)"}}};
  test::write_file(tmp / "c.json", cfg.dump());
  auto ran = pf({"ask", "echo it", "--db", db, "--config", tmp / "c.json"});
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_NE(server.last_tool_result().find("Echo: from the terminal"), std::string::npos) << server.last_tool_result();
}

}  // namespace
}  // namespace pf
