// The bridge's hooks end to end (src/bridge/hook_gate.h), on Mattermost and Slack: a preToolUse
// hook denies a call (even with /yolo on), asks a person through the channel's prompt as
// hook:<tool> (never remembered, and not asked twice), and denies when it fails; the other
// events reach their hooks; a workspace's hooks run only when allowed, and then in the sandbox.
#include <filesystem>

#include "chat_bridge_fixture.h"
#include "core/fs.h"

namespace pf {
namespace {

using nlohmann::json;
using test::ChatPost;
using test::wait_for;

using test::scripted_call;
using test::scripted_text;

// The policy hook: no rm, ask before touch, allow the rest.
const char* kPolicy =
    "input=$(cat); case \"$input\" in "
    "*'rm -rf'*) echo '{\"permissionDecision\": \"deny\", \"permissionDecisionReason\": \"no rm here\"}';; "
    "*touch*) echo '{\"permissionDecision\": \"ask\", \"permissionDecisionReason\": \"touching files needs a person\"}';; "
    "*) echo '{\"permissionDecision\": \"allow\"}';; esac";

class HookGateTest : public test::ChatBridgeTest {
 protected:
  void SetUp() override {
    test::ChatBridgeTest::SetUp();
    ::setenv("XDG_CONFIG_HOME", (dir_ / "config").c_str(), 1);
  }
  // The config with hooks (a hooks.json document) and the shell enabled in the channel.
  void configure(const test::ScriptedModelServer& model, const json& hooks) {
    write_config(test::one_model(model), "a:m", {{"actions", {"shell"}}});
    json cfg = json::parse(read_file(dir_ / "pilotfish.json"));
    cfg["hooks"] = hooks;
    test::write_file(dir_ / "pilotfish.json", cfg.dump(2));
  }
  // A hook that appends each event it gets to log_ (one JSON document per line).
  json logger() const { return {{"bash", "cat >> " + log_ + "; echo >> " + log_}}; }
  std::vector<json> logged() {
    std::vector<json> out;
    std::string text;
    try {
      text = read_file(log_);
    } catch (const Error&) {
      return out;
    }
    size_t at = 0;
    while (at < text.size()) {
      size_t end = text.find('\n', at);
      if (end == std::string::npos) end = text.size();
      if (end > at) out.push_back(json::parse(text.substr(at, end - at)));
      at = end + 1;
    }
    return out;
  }
  std::string tool_result_for(const test::ScriptedModelServer& model, const std::string& question) {
    std::string last;
    for (const json& r : model.requests()) {
      if (!r["body"].contains("messages") || r["body"]["messages"].dump().find(question) == std::string::npos)
        continue;
      for (const json& m : r["body"]["messages"])
        if (m["role"] == "tool") last = m["content"].get<std::string>();
    }
    return last;
  }
  bool exists(const std::string& f) { return std::filesystem::exists(repo_ / f); }

  std::string log_ = dir_ / "events.log";
  std::unique_ptr<test::ServeProcess> bridge_;
};

TEST_P(HookGateTest, APreToolUseHookDeniesAsksAndAllows) {
  json script = json::array({scripted_call("run_command", {{"command", "rm -rf src"}}, "clean up"),
                             scripted_text("Tried.", "clean up"),
                             scripted_call("run_command", {{"command", "touch a.txt"}}, "make a"),
                             scripted_text("Made a.", "make a"),
                             scripted_call("run_command", {{"command", "touch b.txt"}}, "make b"),
                             scripted_text("Made b.", "make b")});
  test::ScriptedModelServer model(script.dump());
  configure(model, {{"version", 1},
                    {"hooks", {{"preToolUse", {{{"bash", kPolicy}}}},
                               {"userPromptSubmitted", {logger()}},
                               {"sessionStart", {logger()}},
                               {"postToolUse", {logger()}}}}});
  bridge_ = start_bridge();
  // /yolo approves what the engine would ask; a hook's deny still holds.
  ASSERT_TRUE(new_reply("/yolo on", "Autopilot on")) << bridge_->log();
  std::string id = ask("clean up please");
  ASSERT_TRUE(wait_for([&] { return answered(id, "Tried."); })) << dump(bot_posts()) << bridge_->log();
  EXPECT_NE(tool_result_for(model, "clean up").find("denied by a hook: no rm here"), std::string::npos)
      << tool_result_for(model, "clean up");
  EXPECT_TRUE(exists("src/retry.ts"));
  ASSERT_TRUE(new_reply("/yolo off", "Autopilot off")) << dump(bot_posts()) << bridge_->log();
  // An ask is the channel's prompt, named hook:<tool>, with the hook's reason; one prompt only,
  // though the engine would have asked too.
  std::string a = ask("make a");
  ChatPost prompt;
  ASSERT_TRUE(wait_reply(a, "Permission needed", &prompt)) << bridge_->log();
  EXPECT_NE(prompt.text.find("hook:run_command"), std::string::npos) << prompt.text;
  EXPECT_NE(prompt.text.find("A hook asks: touching files needs a person"), std::string::npos) << prompt.text;
  EXPECT_NE(prompt.text.find("not remembered"), std::string::npos) << prompt.text;
  ask("yes", "alice", a);
  ASSERT_TRUE(wait_for([&] { return answered(a, "Made a."); })) << bridge_->log();
  // The prompt, edited to its outcome, and no second one.
  EXPECT_EQ(count_replies(a, "`hook:run_command` approved by @alice"), 1) << dump(replies_to(a));
  EXPECT_EQ(count_replies(a, "Permission needed"), 0) << dump(replies_to(a));
  EXPECT_TRUE(exists("a.txt"));
  // "Always" answers it but stores nothing.
  std::string b = ask("make b");
  ASSERT_TRUE(wait_reply(b, "Permission needed", &prompt)) << bridge_->log();
  ask("/always approve", "alice", b);
  ASSERT_TRUE(wait_for([&] { return answered(b, "Made b."); })) << bridge_->log();
  EXPECT_TRUE(exists("b.txt"));
  EXPECT_TRUE(new_reply("/rules", "No stored permission rules")) << dump(bot_posts());
  // The other events reached the logger: a session start, each prompt, each tool's result.
  std::vector<json> events = logged();
  int starts = 0, prompts = 0, results = 0;
  for (const json& e : events) {
    EXPECT_EQ(e["cwd"], repo_.path());
    if (e.contains("initialPrompt")) ++starts;
    if (e.contains("prompt")) ++prompts;
    if (e.contains("toolResult")) {
      ++results;
      EXPECT_EQ(e["toolName"], "run_command");
    }
  }
  EXPECT_EQ(starts, 1) << read_file(log_);
  EXPECT_EQ(prompts, 3) << read_file(log_);
  EXPECT_TRUE(wait_for([&] {
    int n = 0;
    for (const json& e : logged()) n += e.contains("toolResult");
    return n == 3;
  })) << read_file(log_);
}

TEST_P(HookGateTest, AFailingHookDeniesAndWorkspaceHooksNeedLeave) {
  json script = json::array({scripted_call("run_command", {{"command", "echo hi"}}, "say hi"),
                             scripted_text("Said.", "say hi"),
                             scripted_call("read_file", {{"filePath", "README.md"}}, "read it"),
                             scripted_text("Read.", "read it")});
  test::ScriptedModelServer model(script.dump());
  // The workspace's own hook would deny everything, but workspace hooks are off.
  test::write_file(repo_ / ".github/hooks/policy.json",
                   R"({"version": 1, "hooks": {"preToolUse": [{"bash": "echo '{\"permissionDecision\": \"deny\", \"permissionDecisionReason\": \"workspace says no\"}'"}]}})");
  test::write_file(dir_ / "config/pilotfish/hooks.json",
                   R"({"version": 1, "hooks": {"preToolUse": [{"bash": "echo 'policy server down' >&2; exit 2"}]}})");
  configure(model, {{"version", 1}});
  bridge_ = start_bridge();
  ASSERT_TRUE(new_reply("/yolo on", "Autopilot on"));
  std::string id = ask("say hi");
  ASSERT_TRUE(wait_for([&] { return answered(id, "Said."); })) << bridge_->log();
  std::string result = tool_result_for(model, "say hi");
  EXPECT_NE(result.find("failed (exit status 2: policy server down), so the call is denied"),
            std::string::npos)
      << result;
  std::string listed = new_reply("/skills", "Hooks").value_or("");
  EXPECT_NE(listed.find("preToolUse 1"), std::string::npos) << listed;  // the user's file only
  // Allowed, the workspace's hooks join (and deny read-only tools too: hooks see every call).
  test::write_file(dir_ / "config/pilotfish/hooks.json", R"({"version": 1})");
  configure(model, {{"version", 1}, {"allowWorkspaceHooks", true}});
  ASSERT_TRUE(new_reply("/reload config", "Applied")) << bridge_->log();
  std::string r = ask("read it");
  ASSERT_TRUE(wait_for([&] { return answered(r, "Read."); })) << dump(bot_posts()) << bridge_->log();
  EXPECT_NE(tool_result_for(model, "read it").find("denied by a hook: workspace says no"),
            std::string::npos)
      << tool_result_for(model, "read it");
  // `bridge check` counts them and names a file that does not load.
  test::write_file(repo_ / ".github/hooks/broken.json", "{\"version\": 1,");
  auto check = test::run({test::pilotfish_bin(), "bridge", "check", "--config", dir_ / "pilotfish.json"});
  EXPECT_NE(check.out.find("0 custom agents, 0 skills, 1 hooks"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("warn " + repo_.path() + "/.github/hooks/broken.json: not JSON"),
            std::string::npos)
      << check.out;
}

INSTANTIATE_TEST_SUITE_P(Platforms, HookGateTest, ::testing::Values("mattermost", "slack"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace pf
