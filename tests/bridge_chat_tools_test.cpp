// The bridge's chat tools end to end (src/bridge/bridge_chat_tools.cpp): a model that shows a
// file in the channel, uploads one, or decides no answer is needed, against the Mattermost test
// server.
#include "bridge_fixture.h"

namespace pf::test {
namespace {

json call_then_say(const std::string& name, const json& args, const std::string& text) {
  json call = {{"id", "1"}, {"name", name}, {"arguments", args.dump()}};
  return json::array({{{"chat", {{"tool_calls", json::array({call})}, {"finish", "tool_calls"}}}},
                      {{"chat", {{"text", {text}}}}}});
}

using BridgeChatToolsTest = BridgeTest;

TEST_F(BridgeChatToolsTest, ShowFileInChatPostsAFencedExcerpt) {
  ScriptedModelServer model(
      call_then_say("show_file_in_chat", {{"path", "src/retry.ts"}, {"startLine", 1}, {"endLine", 2}}, "Shown above.").dump());
  write_config(one_model(model), "a:m");
  auto bridge = start_bridge();
  std::string id = mm_.post(alice_, channel_, "@copilot show me the retry helper")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "Shown above."); })) << bridge->log();
  ASSERT_TRUE(answered(id, "`src/retry.ts` lines 1-2\n````typescript\n// Retries a request"));
  for (const json& p : replies_to(id))
    EXPECT_EQ(p["message"].get<std::string>().find("tries - 1"), std::string::npos);  // line 3 is not shown
  EXPECT_NE(model.last_tool_result().find("\"shown\":\"src/retry.ts\""), std::string::npos) << model.last_tool_result();
}

TEST_F(BridgeChatToolsTest, ShowFileInChatPostsAFilesUncommittedChanges) {
  if (test::shell("command -v git >/dev/null && command -v bwrap >/dev/null") != 0)
    GTEST_SKIP() << "git or bwrap is not installed";
  std::string git = "git -C '" + repo_.path() + "' -c user.name=t -c user.email=t@e ";
  ASSERT_EQ(test::shell(git + "init -q && " + git + "add -A && " + git + "commit -qm first"), 0);
  test::write_file(repo_ / "src/retry.ts", "// Retries a request with jittered backoff.\n");
  json diff = call_then_say("show_file_in_chat", {{"path", "src/retry.ts"}, {"diff", true}}, "Diff shown.");
  json same = call_then_say("show_file_in_chat", {{"path", "README.md"}, {"diff", true}}, "No changes.");
  for (const json& a : same) diff.push_back(a);
  ScriptedModelServer model(diff.dump());
  write_config(one_model(model), "a:m");
  auto bridge = start_bridge();
  std::string id = mm_.post(alice_, channel_, "@copilot what changed in retry?")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "Diff shown."); })) << bridge->log();
  EXPECT_TRUE(answered(id, "`src/retry.ts` uncommitted changes\n````diff\ndiff --git a/src/retry.ts b/src/retry.ts"))
      << model.last_tool_result();
  EXPECT_TRUE(answered(id, "+// Retries a request with jittered backoff."));
  EXPECT_TRUE(answered(id, "-// Retries a request with exponential backoff."));
  std::string second = mm_.post(alice_, channel_, "@copilot and the readme?")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(second, "No changes."); })) << bridge->log();
  EXPECT_TRUE(answered(second, "`README.md` has no uncommitted changes."));
}

TEST_F(BridgeChatToolsTest, ChatToolsKeepToTheWorkspace) {
  test::write_file(repo_ / ".env", "TOKEN=hunter2\n");
  ScriptedModelServer model(call_then_say("show_file_in_chat", {{"path", ".env"}}, "Could not.").dump());
  write_config(one_model(model), "a:m");
  auto bridge = start_bridge();
  std::string id = mm_.post(alice_, channel_, "@copilot show the env file")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "Could not."); })) << bridge->log();
  for (const json& p : replies_to(id))
    EXPECT_EQ(p["message"].get<std::string>().find("hunter2"), std::string::npos);
  EXPECT_NE(model.last_tool_result().find("error"), std::string::npos);
}

TEST_F(BridgeChatToolsTest, SendFileUploadsTheFileIntoTheThread) {
  ScriptedModelServer model(call_then_say("send_file", {{"path", "README.md"}, {"message", "Here it is."}}, "Sent.").dump());
  write_config(one_model(model), "a:m");
  auto bridge = start_bridge();
  std::string id = mm_.post(alice_, channel_, "@copilot send me the readme")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "Sent."); })) << bridge->log();
  bool uploaded = false;
  for (const json& p : replies_to(id))
    if (p["message"] == "Here it is." && !p["file_ids"].empty()) uploaded = true;
  EXPECT_TRUE(uploaded) << bridge->log();
  EXPECT_NE(model.last_tool_result().find("\"sent\":\"README.md\""), std::string::npos) << model.last_tool_result();
}

TEST_F(BridgeChatToolsTest, NoReplyPostsNothing) {
  json script = call_then_say("no_reply", json::object(), "this text is not posted");
  script.push_back({{"chat", {{"text", {"NO_REPLY"}}}}});
  script.push_back({{"chat", {{"text", {"A real answer."}}}}});
  ScriptedModelServer model(script.dump());
  write_config(one_model(model), "a:m");
  auto bridge = start_bridge();
  std::string first = mm_.post(alice_, channel_, "@copilot thanks, bob")["id"];
  std::string second = mm_.post(alice_, channel_, "@copilot ok")["id"];
  std::string third = mm_.post(alice_, channel_, "@copilot and the README?")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(third, "A real answer."); })) << bridge->log();
  EXPECT_TRUE(wait_for([&] { return replies_to(first).empty() && replies_to(second).empty(); })) << bridge->log();
}

}  // namespace
}  // namespace pf::test
