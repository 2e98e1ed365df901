// The chat bridge end to end: the real `pilotfish bridge` binary against the Mattermost test
// server (tests/servers/mattermost_server.mjs, checked against the real @mattermost/client)
// and the scripted model server, over loopback. Posts get streamed answers that cite the
// channel's repository, edits are throttled, strangers get nothing, a dropped socket and a
// restart lose nothing and answer nothing twice, commands answer, a model outage falls back
// with a notice, and a looping model is stopped.
#include "bridge_fixture.h"

namespace pf {
namespace {

using nlohmann::json;
using test::BridgeTest;
using test::wait_for;

TEST_F(BridgeTest, APostGetsAStreamedAnswerCitingTheChannelsRepository) {
  write_config();
  auto bridge = start_bridge();
  json q = mm_.post(alice_, channel_, "@copilot where is retryWithBackoff?");
  std::string id = q["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "src/retry.ts"); })) << bridge->log();
  std::vector<json> replies = replies_to(id);
  ASSERT_EQ(replies.size(), 1u);
  std::string text = replies[0]["message"];
  EXPECT_EQ(text.find("Working"), std::string::npos) << text;
  // Edits of one reply are at least one interval apart (500 ms, less scheduling slack).
  std::vector<json> edits = replies[0]["edits"].get<std::vector<json>>();
  for (size_t i = 1; i < edits.size(); ++i)
    EXPECT_GE(edits[i]["t"].get<double>() - edits[i - 1]["t"].get<double>(), 450.0);
}

TEST_F(BridgeTest, StrangersAndUnmentionedPostsGetNothing) {
  write_config();
  auto bridge = start_bridge();
  json stranger = mm_.post(mallory_, channel_, "@copilot where is retryWithBackoff?");
  json unmentioned = mm_.post(alice_, channel_, "where is retryWithBackoff?");
  json asked = mm_.post(alice_, channel_, "@copilot where is the README?");
  std::string asked_id = asked["id"];
  ASSERT_TRUE(wait_for([&] { return answered(asked_id, "README.md"); })) << bridge->log();
  EXPECT_TRUE(replies_to(stranger["id"]).empty());
  EXPECT_TRUE(replies_to(unmentioned["id"]).empty());
  EXPECT_EQ(bot_posts().size(), 1u);
}

TEST_F(BridgeTest, PostsDuringASocketDropAreAnsweredOnceEach) {
  write_config();
  auto bridge = start_bridge();
  json first = mm_.post(alice_, channel_, "@copilot where is retryWithBackoff?");
  std::string first_id = first["id"];
  ASSERT_TRUE(wait_for([&] { return answered(first_id, "src/retry.ts"); })) << bridge->log();
  // Drop the bot's socket and refuse it for a while: these posts are never sent on it.
  mm_.call("POST", "/_test/ws/drop", {{"user_id", bot_["id"]}, {"refuse_ms", 1500}});
  std::vector<std::string> gap;
  for (int i = 0; i < 3; ++i)
    gap.push_back(mm_.post(alice_, channel_, "@copilot README question")["id"]);
  for (const auto& id : gap)
    ASSERT_TRUE(wait_for([&] { return answered(id, "README.md"); }))
        << bridge->log() << "\n" << json(bot_posts()).dump() << "\n"
        << mm_.call("GET", "/_test/ws").dump();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  for (const auto& id : gap) EXPECT_EQ(replies_to(id).size(), 1u) << id;
  EXPECT_EQ(replies_to(first_id).size(), 1u);
}

TEST_F(BridgeTest, ARestartAnswersWhatCameMeanwhileOnceAndKeepsTheConversation) {
  write_config();
  auto bridge = start_bridge();
  json first = mm_.post(alice_, channel_, "@copilot where is retryWithBackoff?");
  std::string first_id = first["id"];
  ASSERT_TRUE(wait_for([&] { return answered(first_id, "src/retry.ts"); })) << bridge->log();
  json status = mm_.post(alice_, channel_, "@copilot /status");
  std::string status_id = status["id"];
  ASSERT_TRUE(wait_for([&] { return answered(status_id, "conversation"); }));
  std::string before = replies_to(status_id)[0]["message"];
  EXPECT_EQ(bridge->stop(), 0);
  json meanwhile = mm_.post(alice_, channel_, "@copilot where is the README?");
  std::string meanwhile_id = meanwhile["id"];
  bridge = start_bridge();
  ASSERT_TRUE(wait_for([&] { return answered(meanwhile_id, "README.md"); })) << bridge->log();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_EQ(replies_to(meanwhile_id).size(), 1u);
  EXPECT_EQ(replies_to(first_id).size(), 1u);
  // The same conversation after the restart.
  json again = mm_.post(alice_, channel_, "@copilot /status");
  std::string again_id = again["id"];
  ASSERT_TRUE(wait_for([&] { return answered(again_id, "conversation"); }));
  std::string after = replies_to(again_id)[0]["message"];
  auto conv = [](const std::string& s) { return s.substr(s.find("conversation"), 40); };
  EXPECT_EQ(conv(before), conv(after));
}

TEST_F(BridgeTest, CommandsAnswer) {
  write_config();
  auto bridge = start_bridge();
  auto ask = [&](const std::string& text, const std::string& fragment) {
    std::string message = "@copilot ";
    message += text;
    std::string id = mm_.post(alice_, channel_, message)["id"];
    EXPECT_TRUE(wait_for([&] { return answered(id, fragment); })) << text << "\n" << bridge->log();
  };
  ask("/help", "/new");
  ask("/help all", "/resume");
  ask("/new", "New conversation");
  ask("/resume", "Conversations in this channel");
  ask("/resume zzzz", "No conversation");
  ask("/verbose on", "Verbose mode is on");
  ask("/config", "verbose | on | channel preference");
  ask("/context", "tokens");
  ask("/models", "No chat models are configured");
  ask("/stop", "Nothing is running");
  ask("/reload", "read afresh");
}

TEST_F(BridgeTest, AModelOutageFallsBackWithANotice) {
  test::ScriptedModelServer model(R"([{"status": 503, "body": {"error": {"message": "overloaded"}}},
                                      {"chat": {"text": ["retryWithBackoff is in ", "src/retry.ts:2"]}}])");
  json providers = {{"a", {{"type", "openai"}, {"baseUrl", model.base_url()},
                           {"models", {{{"id", "big"}}, {{"id", "small"}}}}}}};
  write_config(providers, "a:big", {{"fallbackModels", {"a:small"}}});
  auto bridge = start_bridge();
  std::string id = mm_.post(alice_, channel_, "@copilot where is retryWithBackoff?")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "src/retry.ts:2"); })) << bridge->log();
  ASSERT_TRUE(wait_for([&] { return answered(id, "Model a:big is unavailable, switched to a:small"); }))
      << bridge->log();
  std::string status = mm_.post(alice_, channel_, "@copilot /status")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(status, "a:small"); }));
}

TEST_F(BridgeTest, ALoopingModelIsWarnedThenStopped) {
  json calls = json::array();
  for (int i = 0; i < 10; ++i)
    calls.push_back({{"id", std::to_string(i)}, {"name", "read_file"},
                     {"arguments", R"({"filePath": "README.md"})"}});
  json script = json::array({{{"chat", {{"tool_calls", calls}, {"finish", "tool_calls"}}}}});
  test::ScriptedModelServer model(script.dump());
  json providers = {{"a", {{"type", "openai"}, {"baseUrl", model.base_url()},
                           {"models", {{{"id", "m"}}}}}}};
  write_config(providers, "a:m");
  auto bridge = start_bridge();
  std::string id = mm_.post(alice_, channel_, "@copilot read the README")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "same arguments 5 times"); })) << bridge->log();
  ASSERT_TRUE(wait_for([&] { return answered(id, "Loop detected"); })) << bridge->log();
  int warnings = 0;
  for (const json& p : replies_to(id))
    warnings += p["message"].get<std::string>().find("same arguments") != std::string::npos;
  EXPECT_EQ(warnings, 1);
}

}  // namespace
}  // namespace pf
