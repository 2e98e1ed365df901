// Hooks (src/agent/hooks.h): hooks.json read strictly, its three sources gathered, and hooks run
// with their event on standard input: preToolUse answers combined (deny over ask over allow), a
// hook that hangs, fails or prints garbage denying and saying so, and a workspace's hooks kept
// in the sandbox.
#include "agent/hooks.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"
#include "core/fs.h"
#include "test_util.h"

namespace pf {
namespace {

using nlohmann::json;
using A = HookDecision::Action;

std::string error_of(const std::string& text) {
  try {
    parse_hooks_json(text, "h.json", false);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(HooksTest, ReadsEveryEventOfAHooksFile) {
  HookSet s = parse_hooks_json(R"({"version": 1, "hooks": {
      "preToolUse": [{"type": "command", "bash": "./check.sh", "cwd": "scripts", "timeoutSec": 5,
                      "env": {"MODE": "strict"}, "comment": "policy"},
                     {"bash": "true", "powershell": "ignored"}],
      "postToolUse": [{"bash": "a"}], "userPromptSubmitted": [{"bash": "b"}],
      "sessionStart": [{"bash": "c"}], "sessionEnd": [{"bash": "d"}], "errorOccurred": [{"bash": "e"}]}})",
                               "team.json", true);
  ASSERT_EQ(s.of(HookEvent::kPreToolUse).size(), 2u);
  const HookCommand& h = s.of(HookEvent::kPreToolUse)[0];
  EXPECT_EQ(h.bash, "./check.sh");
  EXPECT_EQ(h.cwd, "scripts");
  EXPECT_EQ(h.timeout_sec, 5);
  EXPECT_EQ(h.env, (std::vector<std::pair<std::string, std::string>>{{"MODE", "strict"}}));
  EXPECT_EQ(h.source, "team.json");
  EXPECT_TRUE(h.sandboxed);
  EXPECT_EQ(s.of(HookEvent::kPreToolUse)[1].timeout_sec, 30);
  EXPECT_EQ(s.size(), 7u);
  EXPECT_EQ(parse_hooks_json(R"({"version": 1})", "x", false).size(), 0u);
}

TEST(HooksTest, MalformedFilesSayWhere) {
  EXPECT_NE(error_of("[").find("not JSON"), std::string::npos);
  EXPECT_NE(error_of("[]").find("a JSON object"), std::string::npos);
  EXPECT_NE(error_of(R"({"hooks": {}})").find("version 1"), std::string::npos);
  EXPECT_NE(error_of(R"({"version": 2, "hooks": {}})").find("version 1"), std::string::npos);
  EXPECT_NE(error_of(R"({"version": 1, "extra": 1})").find("extra: unknown key"), std::string::npos);
  EXPECT_NE(error_of(R"({"version": 1, "hooks": {"onSave": []}})").find("hooks.onSave: unknown event"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"version": 1, "hooks": {"preToolUse": {}}})").find("a list"), std::string::npos);
  EXPECT_NE(error_of(R"({"version": 1, "hooks": {"preToolUse": [{"powershell": "x"}]}})")
                .find("hooks.preToolUse[0].bash"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"version": 1, "hooks": {"preToolUse": [{"type": "prompt", "bash": "x"}]}})")
                .find(".type"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"version": 1, "hooks": {"preToolUse": [{"bash": "x", "cwd": "/etc"}]}})")
                .find("not an absolute one"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"version": 1, "hooks": {"preToolUse": [{"bash": "x", "cwd": "a/../.."}]}})")
                .find("may not leave"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"version": 1, "hooks": {"preToolUse": [{"bash": "x", "timeoutSec": 0}]}})")
                .find("1 to 600"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"version": 1, "hooks": {"preToolUse": [{"bash": "x", "env": {"A": 1}}]}})")
                .find(".env.A"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"version": 1, "hooks": {"preToolUse": [{"bash": "x", "shell": "zsh"}]}})")
                .find(".shell: unknown key"),
            std::string::npos);
}

TEST(HooksTest, TheConfigSectionAndTheFilesAreConcatenated) {
  test::TempDir ws, user;
  Config c = parse_config(R"({"hooks": {"version": 1, "allowWorkspaceHooks": true,
      "hooks": {"preToolUse": [{"bash": "from-config"}]}}})", "c.json");
  test::write_file(user / "hooks.json", R"({"version": 1, "hooks": {"preToolUse": [{"bash": "from-user"}]}})");
  test::write_file(ws / ".github/hooks/a.json", R"({"version": 1, "hooks": {"preToolUse": [{"bash": "from-ws"}]}})");
  test::write_file(ws / ".github/hooks/b.json", R"({"version": 1, "hooks": {"nope": []}})");
  HookSet s = load_hooks(c, ws.path(), user.path());
  ASSERT_EQ(s.of(HookEvent::kPreToolUse).size(), 3u);
  EXPECT_EQ(s.of(HookEvent::kPreToolUse)[0].bash, "from-config");
  EXPECT_EQ(s.of(HookEvent::kPreToolUse)[0].source, "config");
  EXPECT_EQ(s.of(HookEvent::kPreToolUse)[1].bash, "from-user");
  EXPECT_FALSE(s.of(HookEvent::kPreToolUse)[1].sandboxed);
  EXPECT_EQ(s.of(HookEvent::kPreToolUse)[2].bash, "from-ws");
  EXPECT_TRUE(s.of(HookEvent::kPreToolUse)[2].sandboxed);
  ASSERT_EQ(s.problems.size(), 1u);
  EXPECT_NE(s.problems[0].path.find("b.json"), std::string::npos);
  // Without allowWorkspaceHooks the workspace's files are not read at all.
  Config off = parse_config(R"({"hooks": {"version": 1}})", "c.json");
  EXPECT_EQ(load_hooks(off, ws.path(), user.path()).size(), 1u);
  EXPECT_THROW(parse_config(R"({"hooks": {"version": 1, "allowWorkspaceHooks": "yes"}})", "c.json"),
               ConfigError);
  EXPECT_THROW(parse_config(R"({"hooks": {"version": 1, "hooks": {"x": []}}})", "c.json"), ConfigError);
}

class HookRuns : public ::testing::Test {
 protected:
  HookCommand hook(const std::string& bash, int64_t timeout = 10) {
    HookCommand h;
    h.bash = bash;
    h.timeout_sec = timeout;
    h.source = "test";
    return h;
  }
  HookDecision decide(const std::vector<HookCommand>& list) {
    HookSet s;
    s.commands[0] = list;
    return run_pre_tool_hooks(s, "run_command", R"({"command":"ls"})", ctx_);
  }
  test::TempDir ws_;
  HookContext ctx_{ws_.path(), {}};
};

TEST_F(HookRuns, TheEventArrivesOnStandardInput) {
  HookCommand h = hook("cat > seen.json; echo \"$MODE\" > mode.txt; pwd > where.txt");
  h.env = {{"MODE", "strict"}};
  std::filesystem::create_directories(ws_ / "sub");
  h.cwd = "sub";
  EXPECT_EQ(decide({h}).action, A::kNone);  // no answer: no opinion
  json seen = json::parse(read_file(ws_ / "sub/seen.json"));
  EXPECT_EQ(seen["toolName"], "run_command");
  EXPECT_EQ(seen["toolArgs"], R"({"command":"ls"})");
  EXPECT_EQ(seen["cwd"], ws_.path());
  EXPECT_TRUE(seen["timestamp"].is_number());
  EXPECT_EQ(read_file(ws_ / "sub/mode.txt"), "strict\n");
  EXPECT_EQ(read_file(ws_ / "sub/where.txt"), ws_ / "sub\n");
}

TEST_F(HookRuns, DenyBeatsAskBeatsAllow) {
  auto say = [&](const std::string& d, const std::string& why) {
    return hook("echo '{\"permissionDecision\": \"" + d + "\", \"permissionDecisionReason\": \"" + why + "\"}'");
  };
  EXPECT_EQ(decide({say("allow", "fine")}).action, A::kAllow);
  HookDecision ask = decide({say("allow", "fine"), say("ask", "touches prod"), say("allow", "ok")});
  EXPECT_EQ(ask.action, A::kAsk);
  EXPECT_EQ(ask.reason, "touches prod");
  HookDecision deny = decide({say("ask", "hm"), say("deny", "no rm here"), say("allow", "x")});
  EXPECT_EQ(deny.action, A::kDeny);
  EXPECT_EQ(deny.reason, "no rm here");
  EXPECT_EQ(decide({say("DENY", "")}).reason, "denied by hook test preToolUse[0]");
}

TEST_F(HookRuns, AHookThatFailsDeniesAndSaysWhy) {
  HookDecision hung = decide({hook("sleep 30", 1)});
  EXPECT_EQ(hung.action, A::kDeny);
  EXPECT_NE(hung.reason.find("hook test preToolUse[0] failed (timed out after 1 s)"), std::string::npos)
      << hung.reason;
  HookDecision failed = decide({hook("echo broken config >&2; exit 3")});
  EXPECT_EQ(failed.action, A::kDeny);
  EXPECT_NE(failed.reason.find("exit status 3: broken config"), std::string::npos) << failed.reason;
  HookDecision garbage = decide({hook("echo 'allow please'")});
  EXPECT_EQ(garbage.action, A::kDeny);
  EXPECT_NE(garbage.reason.find("not a JSON object: allow please"), std::string::npos) << garbage.reason;
  HookDecision odd = decide({hook("echo '{\"permissionDecision\": \"maybe\"}'")});
  EXPECT_NE(odd.reason.find("unknown permissionDecision \"maybe\""), std::string::npos);
  // A hook that leaves a child holding its output does not hold the call past its time.
  HookDecision child = decide({hook("(sleep 30 &) ; echo '{}'", 1)});
  EXPECT_EQ(child.action, A::kDeny);
}

TEST_F(HookRuns, AWorkspaceHookRunsInTheSandbox) {
  std::string why;
  ASSERT_TRUE(sandbox_available("bwrap", &why)) << why;
  test::TempDir outside;
  test::write_file(outside / "secret.txt", "top secret\n");
  HookCommand h = hook("cat > seen.json; echo \"$HOME $MODE\" > env.txt; cat " + outside.path() +
                       "/secret.txt > leak.txt 2>&1; echo '{\"permissionDecision\": \"allow\"}'");
  h.sandboxed = true;
  h.env = {{"MODE", "sandboxed"}, {"HOME", "/root"}};  // the fixed entries stay
  HookDecision d = decide({h});
  EXPECT_EQ(d.action, A::kAllow) << d.reason;
  EXPECT_EQ(json::parse(read_file(ws_ / "seen.json"))["toolName"], "run_command");
  EXPECT_EQ(read_file(ws_ / "env.txt"), "/tmp sandboxed\n");
  EXPECT_EQ(read_file(ws_ / "leak.txt").find("top secret"), std::string::npos);
  HookCommand hung = hook("sleep 30", 1);
  hung.sandboxed = true;
  EXPECT_NE(decide({hung}).reason.find("timed out after 1 s"), std::string::npos);
}

TEST(HooksTest, AnswersAreReadWithoutTrustingThem) {
  HookDecision d;
  read_pre_tool_answer("", "h", d);
  EXPECT_EQ(d.action, A::kNone);
  read_pre_tool_answer("{\"permissionDecision\": 7}", "h", d);
  EXPECT_EQ(d.action, A::kNone);
  read_pre_tool_answer("{\"permissionDecision\": \"ask\"}", "h", d);
  EXPECT_EQ(d.action, A::kAsk);
  EXPECT_EQ(d.reason, "hook h asks");
  read_pre_tool_answer("{\"permissionDecision\": \"allow\"}", "h", d);
  EXPECT_EQ(d.action, A::kAsk);  // a later allow does not lower an ask
}

// `pilotfish ask` runs the hooks too: a preToolUse deny refuses the call (read-only tools
// included), and every other event reaches its hook in order.
TEST(HooksTest, AskRunsTheHooks) {
  test::TempDir repo, tmp;
  test::write_file(repo / "README.md", "# demo\n");
  std::string db = tmp / "a.db";
  ASSERT_EQ(test::run({test::pilotfish_bin(), "index", repo.path(), "--db", db, "-q"}).exit_code, 0);
  test::ScriptedModelServer model(R"([{"chat": {"finish": "tool_calls", "tool_calls":
      [{"id": "c1", "name": "read_file", "arguments": "{\"filePath\": \"README.md\"}"}]}},
      {"chat": {"text": ["Could not read it."]}}])");
  std::string log = tmp / "events.log";
  json logger = {{"bash", "cat >> " + log + "; echo >> " + log}};
  json cfg = {{"providers", {{"m", {{"type", "openai"}, {"baseUrl", model.base_url()}, {"models", {{{"id", "x"}}}}}}}},
              {"defaults", {{"chatModel", "m:x"}}},
              {"hooks", {{"version", 1},
                         {"hooks", {{"preToolUse", {{{"bash", "echo '{\"permissionDecision\": \"deny\", \"permissionDecisionReason\": \"not today\"}'"}}}},
                                    {"sessionStart", {logger}}, {"userPromptSubmitted", {logger}},
                                    {"postToolUse", {logger}}, {"sessionEnd", {logger}}}}}}};
  test::write_file(tmp / "c.json", cfg.dump());
  ::setenv("XDG_CONFIG_HOME", (tmp / "config").c_str(), 1);
  auto r = test::run({test::pilotfish_bin(), "ask", "read the readme", "--db", db, "--config", tmp / "c.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Could not read it.\n");
  EXPECT_NE(model.last_tool_result().find("denied by a hook: not today"), std::string::npos)
      << model.last_tool_result();
  std::vector<std::string> kinds;
  std::string text = read_file(log);
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    json e = json::parse(text.substr(at, end - at));
    kinds.push_back(e.contains("initialPrompt") ? "start"
                    : e.contains("prompt")      ? "prompt"
                    : e.contains("toolResult")  ? e["toolResult"]["resultType"].get<std::string>()
                                                : e.value("reason", "?"));
    at = end + 1;
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"start", "prompt", "failure", "complete"})) << text;
}

}  // namespace
}  // namespace pf
