// Permissions in the chat, end to end: the real `pilotfish bridge` against the Mattermost test
// server and a scripted model that calls side-effecting tools. A prompt is posted and answered
// by a reply, a command or a reaction; remembered; refused by hard denies without asking;
// answered as user-not-available by other text or the timeout; and tools that are not enabled
// are not offered.
#include "bridge_fixture.h"

#include <sys/stat.h>

namespace pf::test {
namespace {

json tool_call(const std::string& name, const json& args, const std::string& id = "1") {
  return {{"id", id}, {"name", name}, {"arguments", args.dump()}};
}

// A model that calls one tool, then answers with text.
json call_then_say(const json& call, const std::string& text) {
  return json::array({{{"chat", {{"tool_calls", json::array({call})}, {"finish", "tool_calls"}}}},
                      {{"chat", {{"text", {text}}}}}});
}

// A model that runs `touch one.txt` and says "First done.", then runs second and says "Second
// done.".
json two_commands(const std::string& second) {
  json script = call_then_say(tool_call("run_command", {{"command", "touch one.txt"}}), "First done.");
  for (const json& step : call_then_say(tool_call("run_command", {{"command", second}}, "2"), "Second done."))
    script.push_back(step);
  return script;
}

// The content of the last tool result the model was sent in its n-th request, or "".
std::string tool_result(ScriptedModelServer& model, size_t request) {
  auto requests = model.requests();
  if (requests.size() <= request) return "";
  std::string last;
  for (const json& m : requests[request]["body"]["messages"])
    if (m["role"] == "tool") last = m["content"].is_string() ? m["content"].get<std::string>() : m["content"].dump();
  return last;
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

class BridgePermissionsTest : public BridgeTest {
 protected:
  // Alice asks; returns her post's id once the prompt is up (the prompt post in *prompt).
  std::string ask_until_prompt(ServeProcess& bridge, json* prompt) {
    std::string id = mm_.post(alice_, channel_, "@copilot please do it")["id"];
    EXPECT_TRUE(wait_for([&] {
      for (const json& p : replies_to(id))
        if (p["message"].get<std::string>().find("Permission needed") != std::string::npos) {
          *prompt = p;
          return true;
        }
      return false;
    })) << bridge.log();
    return id;
  }
  json reply_in_thread(const json& user, const std::string& root, const std::string& text) {
    return mm_.call("POST", "/_test/posts",
                    {{"user_id", user["id"]}, {"channel_id", channel_}, {"message", text}, {"root_id", root}});
  }
  bool post_says(const std::string& post_id, const std::string& fragment) {
    for (const json& p : bot_posts())
      if (p["id"] == post_id) return p["message"].get<std::string>().find(fragment) != std::string::npos;
    return false;
  }
};

TEST_F(BridgePermissionsTest, APromptIsApprovedByYesAndTheCommandRunsInTheSandbox) {
  ScriptedModelServer model(
      call_then_say(tool_call("run_command", {{"command", "echo made > approved.txt && cat approved.txt"},
                                              {"intent", "make a file"}}),
                    "All done.")
          .dump());
  write_config(one_model(model), "a:m", {{"actions", {"shell"}}});
  auto bridge = start_bridge();
  json prompt;
  std::string id = ask_until_prompt(*bridge, &prompt);
  std::string text = prompt["message"];
  EXPECT_NE(text.find("`run_command`"), std::string::npos) << text;
  EXPECT_NE(text.find("make a file"), std::string::npos) << text;
  EXPECT_NE(text.find("echo made > approved.txt"), std::string::npos) << text;
  EXPECT_FALSE(exists(repo_ / "approved.txt"));  // nothing ran before the answer
  reply_in_thread(alice_, id, "yes");
  ASSERT_TRUE(wait_for([&] { return answered(id, "All done."); })) << bridge->log();
  EXPECT_TRUE(exists(repo_ / "approved.txt"));
  EXPECT_NE(tool_result(model, 1).find("\"exit_code\":0"), std::string::npos) << tool_result(model, 1);
  EXPECT_NE(tool_result(model, 1).find("made"), std::string::npos);
  EXPECT_TRUE(wait_for([&] { return post_says(prompt["id"], "approved by @alice"); }));
}

TEST_F(BridgePermissionsTest, NoDeniesAndTheModelIsToldWhy) {
  ScriptedModelServer model(
      call_then_say(tool_call("run_command", {{"command", "touch denied.txt"}}), "Understood.").dump());
  write_config(one_model(model), "a:m", {{"actions", {"shell"}}});
  auto bridge = start_bridge();
  json prompt;
  std::string id = ask_until_prompt(*bridge, &prompt);
  reply_in_thread(alice_, id, "no");
  ASSERT_TRUE(wait_for([&] { return answered(id, "Understood."); })) << bridge->log();
  EXPECT_FALSE(exists(repo_ / "denied.txt"));
  EXPECT_NE(tool_result(model, 1).find("permission denied by @alice"), std::string::npos) << tool_result(model, 1);
  EXPECT_TRUE(wait_for([&] { return post_says(prompt["id"], "denied by @alice"); }));
}

TEST_F(BridgePermissionsTest, AlwaysApproveIsRememberedForTheChannel) {
  ScriptedModelServer model(two_commands("touch two.txt").dump());
  write_config(one_model(model), "a:m", {{"actions", {"shell"}}});
  auto bridge = start_bridge();
  json prompt;
  std::string id = ask_until_prompt(*bridge, &prompt);
  reply_in_thread(alice_, id, "@copilot /always approve");
  ASSERT_TRUE(wait_for([&] { return answered(id, "First done."); })) << bridge->log();
  EXPECT_TRUE(wait_for([&] { return post_says(prompt["id"], "approved and remembered"); }));
  // The second `touch` runs without a prompt.
  std::string second = mm_.post(alice_, channel_, "@copilot again")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(second, "Second done."); })) << bridge->log();
  EXPECT_TRUE(exists(repo_ / "two.txt"));
  for (const json& p : replies_to(second))
    EXPECT_EQ(p["message"].get<std::string>().find("Permission needed"), std::string::npos);
  std::string rules = mm_.post(alice_, channel_, "@copilot /rules")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(rules, "`run_command` `touch` \u2192 allow"); })) << bridge->log();
  std::string clear = mm_.post(alice_, channel_, "@copilot /rules clear shell(touch)")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(clear, "Removed 1 rule"); })) << bridge->log();
}

// Issue 23: /remember list, /remember clear and /rules list or clear the rules; a prompt that
// waits keeps waiting, and nothing is stored for it.
TEST_F(BridgePermissionsTest, ListingOrClearingRulesLeavesAWaitingPromptAlone) {
  ScriptedModelServer model(two_commands("mkdir two").dump());
  write_config(one_model(model), "a:m", {{"actions", {"shell"}}});
  auto bridge = start_bridge();
  json prompt;
  std::string id = ask_until_prompt(*bridge, &prompt);
  reply_in_thread(alice_, id, "@copilot /always approve");
  ASSERT_TRUE(wait_for([&] { return answered(id, "First done."); })) << bridge->log();

  std::string second = mm_.post(alice_, channel_, "@copilot make a folder")["id"];
  ASSERT_TRUE(wait_for([&] {
    for (const json& p : replies_to(second))
      if (p["message"].get<std::string>().find("Permission needed") != std::string::npos) {
        prompt = p;
        return true;
      }
    return false;
  })) << bridge->log();
  auto count = [&](const std::string& fragment) {
    size_t n = 0;
    for (const json& p : replies_to(second)) n += p["message"].get<std::string>().find(fragment) != std::string::npos;
    return n;
  };
  reply_in_thread(alice_, second, "@copilot /remember list");
  ASSERT_TRUE(wait_for([&] { return count("`run_command` `touch` \u2192 allow") == 1; })) << bridge->log();
  reply_in_thread(alice_, second, "@copilot /rules");
  ASSERT_TRUE(wait_for([&] { return count("`run_command` `touch` \u2192 allow") == 2; })) << bridge->log();
  reply_in_thread(alice_, second, "@copilot /remember clear shell(touch)");
  ASSERT_TRUE(wait_for([&] { return answered(second, "Removed 1 rule"); })) << bridge->log();
  reply_in_thread(alice_, second, "@copilot /remember clear");
  ASSERT_TRUE(wait_for([&] { return answered(second, "Removed 0 rules"); })) << bridge->log();
  reply_in_thread(alice_, second, "@copilot /rule");
  ASSERT_TRUE(wait_for([&] { return answered(second, "No stored permission rules"); })) << bridge->log();
  // The prompt still waits: nothing ran, its post is unchanged.
  EXPECT_FALSE(exists(repo_ / "two"));
  EXPECT_TRUE(post_says(prompt["id"], "Permission needed"));
  EXPECT_EQ(model.requests().size(), 3u);
  reply_in_thread(alice_, second, "no");
  ASSERT_TRUE(wait_for([&] { return answered(second, "Second done."); })) << bridge->log();
  EXPECT_FALSE(exists(repo_ / "two"));
  EXPECT_TRUE(wait_for([&] { return post_says(prompt["id"], "denied by @alice"); }));
  std::string rules = mm_.post(alice_, channel_, "@copilot /rules")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(rules, "No stored permission rules"); })) << bridge->log();
}

TEST_F(BridgePermissionsTest, AReactionAnswersAndOnlyAllowedUsersCount) {
  ScriptedModelServer model(
      call_then_say(tool_call("run_command", {{"command", "touch reacted.txt"}}), "Reacted.").dump());
  write_config(one_model(model), "a:m", {{"actions", {"shell"}}});
  auto bridge = start_bridge();
  json prompt;
  std::string id = ask_until_prompt(*bridge, &prompt);
  mm_.call("POST", "/_test/reactions", {{"user_id", mallory_["id"]}, {"post_id", prompt["id"]}, {"emoji_name", "+1"}});
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  EXPECT_FALSE(exists(repo_ / "reacted.txt"));  // mallory may not talk to the bot
  mm_.call("POST", "/_test/reactions", {{"user_id", alice_["id"]}, {"post_id", prompt["id"]}, {"emoji_name", "+1"}});
  ASSERT_TRUE(wait_for([&] { return answered(id, "Reacted."); })) << bridge->log();
  EXPECT_TRUE(exists(repo_ / "reacted.txt"));
}

TEST_F(BridgePermissionsTest, OtherTextAnswersAsUserNotAvailableAndSteers) {
  json script = json::array(
      {{{"chat", {{"tool_calls", json::array({tool_call("run_command", {{"command", "touch x.txt"}})})},
                  {"finish", "tool_calls"}}}},
       {{"chat", {{"text", {"Carrying on without it."}}}}}});
  ScriptedModelServer model(script.dump());
  write_config(one_model(model), "a:m", {{"actions", {"shell"}}});
  auto bridge = start_bridge();
  json prompt;
  std::string id = ask_until_prompt(*bridge, &prompt);
  reply_in_thread(alice_, id, "@copilot actually, just tell me about the README");
  ASSERT_TRUE(wait_for([&] { return answered(id, "Carrying on without it."); })) << bridge->log();
  EXPECT_FALSE(exists(repo_ / "x.txt"));
  EXPECT_NE(tool_result(model, 1).find("user-not-available"), std::string::npos) << tool_result(model, 1);
  // The text itself reached the model as the user's next message.
  EXPECT_NE(model.requests()[1]["body"].dump().find("just tell me about the README"), std::string::npos);
  EXPECT_TRUE(wait_for([&] { return post_says(prompt["id"], "sent another message instead"); }));
}

TEST_F(BridgePermissionsTest, HardDeniesAreRefusedWithoutAskingEvenInYolo) {
  ScriptedModelServer model(
      call_then_say(tool_call("run_command", {{"command", "sudo env bash -c 'rm -rf /'"}}), "Refused.").dump());
  write_config(one_model(model), "a:m", {{"actions", {"shell"}}}, {{"defaults", {{"permissionMode", "autopilot"}}}});
  auto bridge = start_bridge();
  std::string id = mm_.post(alice_, channel_, "@copilot clean up")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "Refused."); })) << bridge->log();
  EXPECT_NE(tool_result(model, 1).find("hard-deny"), std::string::npos) << tool_result(model, 1);
  for (const json& p : replies_to(id))
    EXPECT_EQ(p["message"].get<std::string>().find("Permission needed"), std::string::npos);
}

TEST_F(BridgePermissionsTest, WritesInTheWorkspaceAreApprovedAndUnansweredPromptsTimeOut) {
  json script = call_then_say(tool_call("write_file", {{"path", "notes/plan.md"}, {"content", "# Plan\n"}}), "Written.");
  for (const json& step : call_then_say(tool_call("fetch_url", {{"url", "https://example.com/"}}, "2"), "Gave up."))
    script.push_back(step);
  ScriptedModelServer model(script.dump());
  write_config(one_model(model), "a:m", {{"actions", {"write", "url"}}}, {{"permissionTimeoutSeconds", 1}});
  auto bridge = start_bridge();
  std::string id = mm_.post(alice_, channel_, "@copilot write a plan")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "Written."); })) << bridge->log();
  EXPECT_EQ(test::run({"cat", repo_ / "notes/plan.md"}).out, "# Plan\n");
  std::string second = mm_.post(alice_, channel_, "@copilot fetch it")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(second, "Gave up."); })) << bridge->log();
  EXPECT_NE(tool_result(model, 3).find("nobody answered within 1 s"), std::string::npos) << tool_result(model, 3);
}

TEST_F(BridgePermissionsTest, ToolsThatAreNotEnabledAreNotOffered) {
  ScriptedModelServer model(
      call_then_say(tool_call("run_command", {{"command", "touch sneaky.txt"}}), "Tried.").dump());
  write_config(one_model(model), "a:m");
  auto bridge = start_bridge();
  std::string id = mm_.post(alice_, channel_, "@copilot run something")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "Tried."); })) << bridge->log();
  EXPECT_EQ(model.requests()[0]["body"].dump().find("run_command"), std::string::npos);
  EXPECT_NE(tool_result(model, 1).find("unknown tool"), std::string::npos) << tool_result(model, 1);
  EXPECT_FALSE(exists(repo_ / "sneaky.txt"));
}

TEST_F(BridgePermissionsTest, YoloRunsWithoutAsking) {
  ScriptedModelServer model(
      call_then_say(tool_call("run_command", {{"command", "touch yolo.txt"}}), "Ran it.").dump());
  write_config(one_model(model), "a:m", {{"actions", {"shell"}}});
  auto bridge = start_bridge();
  std::string on = mm_.post(alice_, channel_, "@copilot /yolo on")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(on, "Autopilot on"); })) << bridge->log();
  std::string id = mm_.post(alice_, channel_, "@copilot go")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "Ran it."); })) << bridge->log();
  EXPECT_TRUE(exists(repo_ / "yolo.txt"));
}

// Adds top-level sections to the config write_config wrote.
void add_to_config(const std::string& path, const json& sections) {
  json cfg = json::parse(test::run({"cat", path}).out);
  cfg.update(sections);
  test::write_file(path, cfg.dump(2));
}

json everything_server() {
  return {{"everything", {{"command", "node"},
                          {"args", {test::source_dir() + "/tests/node/node_modules/@modelcontextprotocol/"
                                                          "server-everything/dist/index.js",
                                    "stdio"}}}}};
}

TEST_F(BridgePermissionsTest, McpToolsAreOfferedAndAskPerServer) {
  ScriptedModelServer model(
      call_then_say(tool_call("everything__echo", {{"message", "from chat"}}), "Echoed.").dump());
  write_config(one_model(model), "a:m");
  add_to_config(dir_ / "pilotfish.json", {{"mcp", {{"servers", everything_server()}}}});
  auto bridge = start_bridge();
  json prompt;
  std::string id = ask_until_prompt(*bridge, &prompt);
  EXPECT_NE(prompt["message"].get<std::string>().find("MCP server: `everything`, tool `echo`"), std::string::npos)
      << prompt["message"];
  reply_in_thread(alice_, id, "@copilot /always approve");
  ASSERT_TRUE(wait_for([&] { return answered(id, "Echoed."); })) << bridge->log();
  EXPECT_NE(tool_result(model, model.requests().size() - 1).find("Echo: from chat"), std::string::npos)
      << tool_result(model, model.requests().size() - 1);
  std::string status = mm_.post(alice_, channel_, "@copilot /mcp")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(status, "everything: running"); })) << bridge->log();
  std::string tools = mm_.post(alice_, channel_, "@copilot /tools")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(tools, "`everything__echo` (asks permission)"); })) << bridge->log();
  std::string rules = mm_.post(alice_, channel_, "@copilot /rules")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(rules, "`mcp:everything` (any) \u2192 allow"); })) << bridge->log();
}

TEST_F(BridgePermissionsTest, AConfigRuleApprovesAnMcpServerAndADeadServerFailsCleanly) {
  json script = call_then_say(tool_call("everything__get-sum", {{"a", 2}, {"b", 40}}), "Summed.");
  for (const json& step : call_then_say(tool_call("gone__echo", {{"message", "x"}}, "2"), "No server."))
    script.push_back(step);
  ScriptedModelServer model(script.dump());
  write_config(one_model(model), "a:m");
  json servers = everything_server();
  servers["gone"] = {{"command", "no-such-mcp-server"}};
  add_to_config(dir_ / "pilotfish.json",
                {{"mcp", {{"servers", servers}}}, {"permissions", {{"allow", {"mcp(everything)", "mcp(gone)"}}}}});
  auto bridge = start_bridge();
  std::string id = mm_.post(alice_, channel_, "@copilot add 2 and 40")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "Summed."); })) << bridge->log();
  EXPECT_NE(tool_result(model, model.requests().size() - 1).find("is 42"), std::string::npos);
  std::string second = mm_.post(alice_, channel_, "@copilot echo via the missing server")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(second, "No server."); })) << bridge->log();
  // Its tools were never offered: the call is an unknown tool, refused without a prompt.
  EXPECT_NE(tool_result(model, model.requests().size() - 1).find("error"), std::string::npos);
  std::string status = mm_.post(alice_, channel_, "@copilot /mcp")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(status, "gone: down (cannot find the program no-such-mcp-server)"); }))
      << bridge->log();
}

TEST_F(BridgePermissionsTest, BridgeCheckSaysWhetherCommandsCanRunInTheSandbox) {
  write_config({}, "", {{"actions", {"shell"}}});
  auto r = test::run({test::pilotfish_bin(), "bridge", "check", "--config", dir_ / "pilotfish.json"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("ok   mm/copilot: channel " + channel_ + ": run_command runs in the bubblewrap sandbox"),
            std::string::npos) << r.out;
  // No bwrap on the PATH: said clearly, and the check fails.
  r = test::run({"/usr/bin/env", "PATH=/nonexistent", test::pilotfish_bin(), "bridge", "check", "--config",
                 dir_ / "pilotfish.json"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("FAIL mm/copilot: channel " + channel_ + ": run_command is offered but cannot run: "
                       "bubblewrap (bwrap) is not installed"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace pf::test
