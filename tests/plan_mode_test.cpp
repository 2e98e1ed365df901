// Plan mode and autopilot's shared rules (agent/plan_mode.h), and their command-line forms:
// `pilotfish ask --plan` offers only what reads, whatever the config enables and approves, and
// `pilotfish ask --implement FILE` carries a plan out on autopilot, step after step, until the
// model says it is done.
#include "agent/plan_mode.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "test_util.h"

namespace pf {
namespace {

ToolEntry entry(ToolPermission permission, bool acts = false) {
  ToolEntry e;
  e.spec.name = "t";
  e.permission = permission;
  e.acts = acts;
  return e;
}

TEST(PlanMode, KeepsOnlyWhatReadsAndActsNowhere) {
  EXPECT_TRUE(plan_mode_keeps(entry(ToolPermission::kNone)));
  for (ToolPermission p : {ToolPermission::kWrite, ToolPermission::kShell, ToolPermission::kUrl,
                           ToolPermission::kMcp})
    EXPECT_FALSE(plan_mode_keeps(entry(p)));
  EXPECT_FALSE(plan_mode_keeps(entry(ToolPermission::kNone, true)));  // schedule, ask_agent
}

TEST(PlanMode, AutopilotGoesOnUntilTheMarker) {
  std::optional<std::string> nudge = autopilot_continue("Step 1 done; next, the tests.");
  ASSERT_TRUE(nudge);
  EXPECT_NE(nudge->find(kAutopilotDone), std::string::npos);
  EXPECT_FALSE(autopilot_continue(std::string("All done.\n") + kAutopilotDone));
  EXPECT_NE(autopilot_instructions().find(kAutopilotDone), std::string::npos);
  std::string request = implement_request("1. Add a test.", "Skip the docs.");
  EXPECT_EQ(request.rfind("Implement the following plan.", 0), 0u);
  EXPECT_LT(request.find("Skip the docs."), request.find("1. Add a test."));
}

struct AskFixture {
  test::TempDir repo, tmp;
  std::string db = tmp / "a.db";
  std::string cfg = tmp / "c.json";
  explicit AskFixture(const test::ScriptedModelServer& model) {
    test::write_file(repo / "src/server.ts", "export function start() { return listen(8080); }\n");
    EXPECT_EQ(test::run({test::pilotfish_bin(), "index", repo.path(), "--db", db, "-q"}).exit_code,
              0);
    // Writes and commands enabled, and writes in the workspace approved without asking.
    test::write_file(cfg, "{\"providers\": {\"m\": {\"type\": \"openai\", \"baseUrl\": \"" +
                              model.base_url() + "\", \"models\": [{\"id\": \"x\"}]}}, " +
                              "\"defaults\": {\"chatModel\": \"m:x\"}, \"actions\": {\"enabled\": "
                              "[\"write\", \"shell\"]}, \"permissions\": "
                              "{\"writeInsideWorkspace\": \"allow\"}}");
  }
  test::CommandResult ask(std::vector<std::string> extra) {
    std::vector<std::string> a = {test::pilotfish_bin(), "ask", "--db", db, "--config", cfg};
    a.insert(a.end(), extra.begin(), extra.end());
    return test::run(a);
  }
};

std::string tool_names(const nlohmann::json& body) {
  std::string out;
  for (const auto& t : body.value("tools", nlohmann::json::array()))
    out += t["function"]["name"].get<std::string>() + " ";
  return out;
}

std::string write_call(const std::string& path) {
  return R"({"chat": {"text": [], "finish": "tool_calls", "tool_calls": [{"id": "w1", "name":
      "write_file", "arguments": "{\"path\": \")" + path + R"(\", \"content\": \"x\"}"}]}})";
}

// --plan: write_file and run_command are not offered even though the config enables and
// approves them; a call the model makes anyway changes nothing; the answer is the plan.
TEST(PlanMode, AskPlanOnlyReadsAndAnswersWithAPlan) {
  test::ScriptedModelServer model("[" + write_call("src/new.ts") +
                                  R"(, {"chat": {"text": ["1. Change start()."]}}])");
  AskFixture f(model);
  auto r = f.ask({"--plan", "how do I make the port configurable?"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1. Change start().\n");
  EXPECT_FALSE(std::filesystem::exists(f.repo / "src/new.ts"));
  auto requests = model.requests();
  ASSERT_EQ(requests.size(), 2u);
  nlohmann::json body = requests[0]["body"];
  EXPECT_EQ(tool_names(body), "read_file list_directory grep search_code ");
  EXPECT_NE(body["messages"][0]["content"].get<std::string>().find("<plan_mode>"),
            std::string::npos);
  EXPECT_NE(model.last_tool_result().find("unknown tool: write_file"), std::string::npos)
      << model.last_tool_result();
}

// --implement: the plan file is the request; the model is sent on after each step that does not
// end with the marker (more than ask's usual 5 steps), and its approved write lands.
TEST(PlanMode, AskImplementCarriesThePlanOutOnAutopilot) {
  std::string script = "[";
  for (int i = 0; i < 5; ++i) script += R"({"chat": {"text": ["Working."]}}, )";
  script += write_call("src/port.ts") + ", " +
            R"({"chat": {"text": ["Done: src/port.ts.\nAUTOPILOT: DONE"]}}])";
  test::ScriptedModelServer model(script);
  AskFixture f(model);
  test::write_file(f.tmp / "plan.md", "1. Add src/port.ts.\n2. Use it in start().\n");
  auto r = f.ask({"--implement", f.tmp / "plan.md", "keep it small"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto requests = model.requests();
  ASSERT_EQ(requests.size(), 7u) << r.err;
  nlohmann::json first = requests[0]["body"]["messages"];
  std::string question = first.back()["content"];
  EXPECT_EQ(question.rfind("Implement the following plan.", 0), 0u) << question;
  EXPECT_NE(question.find("keep it small"), std::string::npos);
  EXPECT_NE(question.find("1. Add src/port.ts."), std::string::npos);
  EXPECT_NE(first[0]["content"].get<std::string>().find("<autopilot>"), std::string::npos);
  EXPECT_NE(tool_names(requests[0]["body"]).find("write_file"), std::string::npos);
  std::string nudge = requests[1]["body"]["messages"].back()["content"];
  EXPECT_EQ(nudge.rfind("Continue on your own.", 0), 0u) << nudge;
  EXPECT_EQ(read_file(f.repo / "src/port.ts"), "x");
  EXPECT_NE(r.out.find("Working.\nWorking."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("AUTOPILOT: DONE"), std::string::npos);

  // Bad plans and bad combinations are usage errors, before any model request.
  size_t asked = model.requests().size();
  test::write_file(f.tmp / "empty.md", "  \n");
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"--implement", f.tmp / "missing.md"},
           {"--implement", f.tmp / "empty.md"},
           {"--plan", "--implement", f.tmp / "plan.md"},
           {"--plan"}}) {
    auto bad = f.ask(args);
    EXPECT_EQ(bad.exit_code, 2) << args[0] << ": " << bad.err;
    EXPECT_EQ(bad.err.rfind("pilotfish: ", 0), 0u) << bad.err;
  }
  EXPECT_EQ(model.requests().size(), asked);
}

}  // namespace
}  // namespace pf
