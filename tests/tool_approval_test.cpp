// Tool approval over HTTP (src/api/tool_approval.cpp and the chat route): the real ai 6 client
// is asked, approves or denies, and the continuation runs or refuses the call; a forged approval
// runs nothing; an ai 5 client, which does not opt in, keeps working and the call is refused.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "test_util.h"

namespace pf {
namespace {

using nlohmann::json;

class ToolApprovalTest : public ::testing::Test {
 protected:
  void start(const json& script, const json& extra = json::object()) {
    test::write_file(repo / "README.md", "# demo\n");
    auto r = test::run({test::pilotfish_bin(), "index", repo.path(), "--db", dir / "index.db", "--quiet"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    model = std::make_unique<test::ScriptedModelServer>(script.dump());
    auto h = test::run({"sh", "-c", "printf %s k1 | " + test::pilotfish_bin() + " hash-key"});
    json cfg = {{"providers", {{"m", {{"type", "openai"}, {"baseUrl", model->base_url()}, {"models", {{{"id", "x"}}}}}}}},
                {"defaults", {{"chatModel", "m:x"}}},
                {"server", {{"apiKeys", {{{"name", "t"}, {"hash", h.out.substr(0, h.out.find('\n'))}, {"role", "user"}}}}}},
                {"actions", {{"enabled", {"shell"}}}}};
    cfg.update(extra);
    test::write_file(dir / "c.json", cfg.dump());
    serve = std::make_unique<test::ServeProcess>(
        std::vector<std::string>{"--db", dir / "index.db", "--config", dir / "c.json", "--repo", repo.path()});
  }
  json client(const std::string& pkg, const std::string& mode) {
    auto r = test::run({"node", test::source_dir() + "/tests/node/tool_approval.mjs", pkg, serve->url(), "k1", mode});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json j = json::parse(r.out);
    EXPECT_FALSE(j.contains("failure")) << j["failure"] << "\n" << serve->log();
    return j;
  }
  bool exists(const std::string& rel) {
    struct stat st {};
    return ::stat((repo / rel).c_str(), &st) == 0;
  }
  // The tool call, then (after the answer) the model's text.
  static json script(const std::string& then) {
    json args = {{"command", "touch approved.txt"}};
    return json::array({{{"chat", {{"text", json::array()}, {"finish", "tool_calls"},
                                   {"tool_calls", {{{"id", "call-1"}, {"name", "run_command"}, {"arguments", args.dump()}}}}}}},
                        {{"chat", {{"text", {then}}}}}});
  }
  test::TempDir dir, repo;
  std::unique_ptr<test::ScriptedModelServer> model;
  std::unique_ptr<test::ServeProcess> serve;
};

TEST_F(ToolApprovalTest, Ai6ApprovesAndTheContinuationRunsTheCall) {
  start(script("Done after approval."));
  json r = client("ai-6-325", "approve");
  EXPECT_EQ(r["asked"]["state"], "approval-requested");
  EXPECT_EQ(r["asked"]["approvalId"].get<std::string>().rfind("pfa_", 0), 0u);
  EXPECT_EQ(r["after"]["state"], "output-available") << r;
  EXPECT_EQ(r["after"]["output"]["exit_code"], 0) << r;
  EXPECT_EQ(r["after"]["text"], "Done after approval.");
  EXPECT_EQ(r["after"]["messages"], 2);  // the continuation went into the same assistant message
  EXPECT_TRUE(r["after"]["sameMessage"]);
  EXPECT_TRUE(exists("approved.txt"));
  EXPECT_NE(model->last_tool_result().find("\"exit_code\":0"), std::string::npos) << model->last_tool_result();
}

TEST_F(ToolApprovalTest, Ai6DeniesAndTheModelIsTold) {
  start(script("Understood, not running it."));
  json r = client("ai-6-230", "deny");
  EXPECT_EQ(r["after"]["state"], "output-denied") << r;
  EXPECT_EQ(r["after"]["text"], "Understood, not running it.");
  EXPECT_FALSE(exists("approved.txt"));
  EXPECT_NE(model->last_tool_result().find("the user denied this call: not now"), std::string::npos) << model->last_tool_result();
}

TEST_F(ToolApprovalTest, AForgedApprovalRunsNothing) {
  start(script("Hmm."));
  json r = client("ai-6-325", "forge");
  EXPECT_EQ(r["after"]["state"], "output-error") << r;
  EXPECT_NE(r["after"]["errorText"].get<std::string>().find("does not answer a request of this server"), std::string::npos);
  EXPECT_FALSE(exists("forged.txt"));
  EXPECT_FALSE(exists("approved.txt"));
}

TEST_F(ToolApprovalTest, Ai5ClientsAreNotOfferedApprovalsAndKeepWorking) {
  start(script("Could not run it."));
  json r = client("ai-5-277", "plain");
  EXPECT_EQ(r["errors"], json::array()) << r;
  EXPECT_EQ(r["after"]["state"], "output-error") << r;
  EXPECT_NE(r["after"]["errorText"].get<std::string>().find("user-not-available"), std::string::npos);
  EXPECT_EQ(r["after"]["text"], "Could not run it.");
  EXPECT_FALSE(exists("approved.txt"));
}

TEST_F(ToolApprovalTest, McpServersToolsAreOfferedOverHttpUnderTheRules) {
  json args = {{"message", "over the API"}};
  json calls = json::array({{{"chat", {{"text", json::array()}, {"finish", "tool_calls"},
                                      {"tool_calls", {{{"id", "call-1"}, {"name", "everything__echo"}, {"arguments", args.dump()}}}}}}},
                            {{"chat", {{"text", {"Echoed."}}}}}});
  json server = {{"command", "node"},
                 {"args", {test::source_dir() + "/tests/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"}}};
  start(calls, {{"mcp", {{"servers", {{"everything", server}}}}}, {"permissions", {{"allow", {"mcp(everything)"}}}}});
  json r = client("ai-5-277", "plain");
  EXPECT_EQ(r["errors"], json::array()) << r;
  EXPECT_EQ(r["after"]["state"], "output-available") << r;
  EXPECT_NE(model->last_tool_result().find("Echo: over the API"), std::string::npos) << model->last_tool_result();
  bool offered = false;
  for (const json& q : model->requests())
    offered = offered || (q["body"].contains("tools") && q["body"]["tools"].dump().find("everything__echo") != std::string::npos);
  EXPECT_TRUE(offered);
}

}  // namespace
}  // namespace pf
