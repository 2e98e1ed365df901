// The chat bridge end to end on Slack: the real `pilotfish bridge` against the Slack test server
// (tests/servers/slack_server.mjs) and the scripted model server. The scenarios whose behaviour
// is the same on both platforms run on Mattermost too, through one ChatServer interface
// (chat_bridge_fixture.h): an answer citing the channel's repository, strangers denied,
// commands, steering and /stop, a SIGKILL mid-answer, a gap in the event stream, permission
// prompts answered by a reply and by a reaction, model fallback. Slack only: the
// message/app_mention pair answered once in mrkdwn, a file reaching the turn, and twenty busy
// channels whose edits stay inside the server's enforced tiers.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "chat_bridge_fixture.h"

namespace pf {
namespace {

using nlohmann::json;
using test::ChatBridgeTest;
using test::ChatPost;
using test::one_model;
using test::slow_chat;
using test::wait_for;

json tool_call(const std::string& name, const json& args, const std::string& id = "1") {
  return {{"id", id}, {"name", name}, {"arguments", args.dump()}};
}

// A model that calls one tool, then answers with text.
json call_then_say(const json& call, const std::string& text) {
  return json::array({{{"chat", {{"tool_calls", json::array({call})}, {"finish", "tool_calls"}}}},
                      {{"chat", {{"text", {text}}}}}});
}

TEST_P(ChatBridgeTest, AnAnswerCitesTheChannelsRepositoryInTheThreadOnce) {
  write_config();
  auto bridge = start_bridge();
  std::string id = ask("where is retryWithBackoff?");
  ASSERT_TRUE(wait_for([&] { return answered(id, "src/retry.ts"); })) << bridge->log();
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  std::vector<ChatPost> replies = replies_to(id);
  ASSERT_EQ(replies.size(), 1u) << dump(bot_posts());
  EXPECT_EQ(bot_posts().size(), 1u) << dump(bot_posts());  // nothing at top level
  EXPECT_EQ(replies[0].text.find("Working"), std::string::npos) << replies[0].text;
}

TEST_P(ChatBridgeTest, StrangersGetNothing) {
  write_config();
  auto bridge = start_bridge();
  std::string stranger = ask("where is retryWithBackoff?", "mallory");
  std::string asked = ask("where is the README?");
  ASSERT_TRUE(wait_for([&] { return answered(asked, "README.md"); })) << bridge->log();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_TRUE(replies_to(stranger).empty()) << dump(bot_posts());
  EXPECT_EQ(bot_posts().size(), 1u) << dump(bot_posts());
}

TEST_P(ChatBridgeTest, HelpAndCommandsAnswer) {
  test::ScriptedModelServer model("[]", "", {"--models", "m,other"});
  write_config(one_model(model), "a:m");
  auto bridge = start_bridge();
  expect_answer(*bridge, "/help", "/new");
  expect_answer(*bridge, "/help", "/stop");
  expect_answer(*bridge, "/status", "conversation");
  expect_answer(*bridge, "/new", "New conversation");
  expect_answer(*bridge, "/model", "(current)");
  expect_answer(*bridge, "/model zzz", "\u274C");
  expect_answer(*bridge, "/model m", "Model set to `a:m`");
  expect_answer(*bridge, "/status", "a:m");
}

TEST_P(ChatBridgeTest, AFollowUpSteersTheRunningTurn) {
  json calls = json::array(
      {{{"id", "1"}, {"name", "list_directory"}, {"arguments", R"({"dirPath": "."})"}}});
  json script = json::array(
      {{{"chat", {{"tool_calls", calls}, {"finish", "tool_calls"}, {"delay_first", 1.5}}}},
       {{"chat", {{"text", {"steered answer"}}}}}});
  test::ScriptedModelServer model(script.dump());
  write_config(one_model(model), "a:m");
  auto bridge = start_bridge();
  std::string id = ask("what is in the repository?");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  std::string follow = ask("only the src folder please", "alice", id);
  ASSERT_TRUE(wait_for([&] { return answered(id, "steered answer"); })) << bridge->log();
  std::vector<json> requests = model.requests();
  ASSERT_GE(requests.size(), 2u);
  EXPECT_NE(requests[1]["body"].dump().find("only the src folder please"), std::string::npos);
  EXPECT_TRUE(wait_for([&] { return chat_->has_reaction(channel(), follow, "zap"); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(count_replies(id, "steered answer"), 1) << dump(bot_posts());
  EXPECT_TRUE(replies_to(follow).empty());
}

TEST_P(ChatBridgeTest, StopEndsTheAnswerAndClosesTheModelRequest) {
  test::ScriptedModelServer model(json::array({slow_chat(60, 0.1)}).dump());
  write_config(one_model(model), "a:m");
  auto bridge = start_bridge();
  std::string id = ask("explain everything");
  ASSERT_TRUE(wait_for([&] { return answered(id, "word3"); })) << bridge->log();
  ask("/stop", "alice", id);
  ASSERT_TRUE(wait_for([&] {
    for (const json& e : model.events())
      if (e["event"] == "client disconnected") return true;
    return false;
  })) << bridge->log();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  std::vector<ChatPost> replies = replies_to(id);
  ASSERT_FALSE(replies.empty());
  EXPECT_EQ(replies[0].text.find("word59"), std::string::npos) << replies[0].text;
  EXPECT_EQ(replies[0].text.find("Working"), std::string::npos) << replies[0].text;
}

TEST_P(ChatBridgeTest, AKillMidAnswerIsAnsweredOnceAfterTheRestart) {
  test::ScriptedModelServer model(json::array({slow_chat(100, 0.1)}).dump());
  write_config(one_model(model), "a:m");
  auto bridge = start_bridge();
  std::string id = ask("tell me a long story");
  ASSERT_TRUE(wait_for([&] { return answered(id, "word2"); })) << bridge->log();
  bridge->kill_now();
  std::string log = bridge->log();
  bridge = start_bridge();  // the script is used up: the model now echoes
  ASSERT_TRUE(wait_for([&] { return answered(id, "You said"); }))
      << log << "\n---\n"
      << bridge->log() << dump(bot_posts());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(count_replies(id, "You said"), 1) << dump(bot_posts());
  // The interrupted reply was removed: one complete answer remains.
  EXPECT_EQ(replies_to(id).size(), 1u) << dump(bot_posts());
  // The same message is not answered a third time by a later turn either.
  expect_answer(*bridge, "where is the README?", "You said");
  EXPECT_EQ(count_replies(id, "You said"), 1) << dump(bot_posts());
}

TEST_P(ChatBridgeTest, MessagesDuringAGapInTheEventStreamAreAnsweredOnceEach) {
  write_config();
  auto bridge = start_bridge();
  std::string first = ask("where is retryWithBackoff?");
  ASSERT_TRUE(wait_for([&] { return answered(first, "src/retry.ts"); })) << bridge->log();
  chat_->begin_gap();
  std::vector<std::string> gap;
  for (int i = 0; i < 3; ++i) gap.push_back(ask("README question " + std::to_string(i)));
  chat_->end_gap();
  for (const auto& id : gap)
    ASSERT_TRUE(wait_for([&] { return answered(id, "README.md"); })) << bridge->log() << "\n"
                                                                     << dump(bot_posts());
  std::this_thread::sleep_for(std::chrono::seconds(1));
  for (const auto& id : gap) EXPECT_EQ(replies_to(id).size(), 1u) << id << dump(bot_posts());
  EXPECT_EQ(replies_to(first).size(), 1u);
  EXPECT_EQ(bot_posts().size(), 4u) << dump(bot_posts());
}

TEST_P(ChatBridgeTest, APermissionPromptIsApprovedByAReply) {
  test::ScriptedModelServer model(
      call_then_say(tool_call("run_command",
                              {{"command", "echo made > approved.txt"}, {"intent", "make a file"}}),
                    "All done.")
          .dump());
  write_config(one_model(model), "a:m", {{"actions", {"shell"}}});
  auto bridge = start_bridge();
  std::string id = ask("please do it");
  ChatPost prompt;
  ASSERT_TRUE(wait_reply(id, "Permission needed", &prompt)) << bridge->log() << dump(bot_posts());
  EXPECT_NE(prompt.text.find("make a file"), std::string::npos) << prompt.text;
  EXPECT_FALSE(std::filesystem::exists(repo_ / "approved.txt"));
  chat_->post("alice", channel(), "yes", id);
  ASSERT_TRUE(wait_for([&] { return answered(id, "All done."); })) << bridge->log();
  EXPECT_TRUE(std::filesystem::exists(repo_ / "approved.txt"));
  EXPECT_TRUE(wait_for([&] {
    for (const ChatPost& p : bot_posts())
      if (p.id == prompt.id) return p.text.find("approved by @alice") != std::string::npos;
    return false;
  })) << dump(bot_posts());
}

TEST_P(ChatBridgeTest, APermissionPromptIsApprovedByAReactionFromAnAllowedUser) {
  test::ScriptedModelServer model(
      call_then_say(tool_call("run_command", {{"command", "touch reacted.txt"}}), "Reacted.")
          .dump());
  write_config(one_model(model), "a:m", {{"actions", {"shell"}}});
  auto bridge = start_bridge();
  std::string id = ask("please do it");
  ChatPost prompt;
  ASSERT_TRUE(wait_reply(id, "Permission needed", &prompt)) << bridge->log() << dump(bot_posts());
  chat_->react("mallory", channel(), prompt.id, "+1");
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  EXPECT_FALSE(std::filesystem::exists(repo_ / "reacted.txt"));  // mallory may not
  chat_->react("alice", channel(), prompt.id, "+1");
  ASSERT_TRUE(wait_for([&] { return answered(id, "Reacted."); })) << bridge->log();
  EXPECT_TRUE(std::filesystem::exists(repo_ / "reacted.txt"));
}

TEST_P(ChatBridgeTest, AModelOutageFallsBackWithANotice) {
  test::ScriptedModelServer model(R"([{"status": 503, "body": {"error": {"message": "overloaded"}}},
                                      {"chat": {"text": ["retryWithBackoff is in ", "src/retry.ts:2"]}}])");
  json providers = {{"a",
                     {{"type", "openai"},
                      {"baseUrl", model.base_url()},
                      {"models", {{{"id", "big"}}, {{"id", "small"}}}}}}};
  write_config(providers, "a:big", {{"fallbackModels", {"a:small"}}});
  auto bridge = start_bridge();
  std::string id = ask("where is retryWithBackoff?");
  ASSERT_TRUE(wait_for([&] { return answered(id, "src/retry.ts:2"); })) << bridge->log();
  ASSERT_TRUE(wait_for([&] {
    return answered(id, "Model a:big is unavailable, switched to a:small");
  })) << bridge->log()
      << dump(bot_posts());
  expect_answer(*bridge, "/status", "a:small");
}

INSTANTIATE_TEST_SUITE_P(Platforms, ChatBridgeTest, ::testing::Values("mattermost", "slack"),
                         [](const auto& info) { return info.param; });

// Slack only: what has no Mattermost counterpart in the same shape.
class SlackBridgeTest : public ChatBridgeTest {
 protected:
  test::SlackChat& slack() { return static_cast<test::SlackChat&>(*chat_); }
  std::vector<json> envelopes() {
    std::string app = slack().app()["app_id"];
    return slack()
        .server()
        .call("GET", "/_test/apps/" + app + "/envelopes")["envelopes"]
        .get<std::vector<json>>();
  }
};

TEST_P(SlackBridgeTest, AMentionArrivingTwiceIsAnsweredOnceInMrkdwn) {
  json script = json::array({{{"chat",
                               {{"text",
                                 {"**retryWithBackoff** is in `src/retry.ts`, see ",
                                  "[the docs](https://example.com/d) & <notes>"}}}}}});
  test::ScriptedModelServer model(script.dump());
  write_config(one_model(model), "a:m");
  slack().set_agents(false);  // no native streams: a post and edits, in mrkdwn
  auto bridge = start_bridge();
  std::string id = ask("where is retryWithBackoff?");
  ChatPost reply;
  ASSERT_TRUE(wait_reply(id, "&lt;notes&gt;", &reply)) << bridge->log() << dump(bot_posts());
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  // Both events came (and were acknowledged); one answer, in the thread.
  int mentions = 0, messages = 0;
  for (const json& e : envelopes()) {
    mentions += e["event_type"] == "app_mention";
    messages += e["event_type"] == "message" && e["retry_attempt"] == 0;
    EXPECT_EQ(e["outcome"], "acked") << e.dump();
  }
  EXPECT_EQ(mentions, 1);
  EXPECT_GE(messages, 1);
  EXPECT_EQ(replies_to(id).size(), 1u) << dump(bot_posts());
  EXPECT_EQ(bot_posts().size(), 1u) << dump(bot_posts());
  // mrkdwn, not Markdown.
  EXPECT_EQ(reply.text,
            "*retryWithBackoff* is in `src/retry.ts`, see "
            "<https://example.com/d|the docs> &amp; &lt;notes&gt;");
  // The model read the mention as the bot's name, the question as written.
  std::string asked = model.requests().back()["body"].dump();
  EXPECT_NE(asked.find("where is retryWithBackoff?"), std::string::npos);
  EXPECT_EQ(asked.find("<@"), std::string::npos) << asked;
}

TEST_P(SlackBridgeTest, WithTheAgentsFeatureAThreadReplyIsANativeStreamUnderAStatusLine) {
  json script = json::array(
      {{{"chat", {{"tool_calls", {{{"name", "grep"}, {"arguments", "{\"pattern\":\"retry\"}"}}}}}}},
       {{"chat",
         {{"text", {"**retryWithBackoff** is in ", "`src/retry.ts`", " & nowhere else."}},
          {"chunk_delay", 0.3}}}}});
  test::ScriptedModelServer model(script.dump());
  write_config(one_model(model), "a:m");
  auto bridge = start_bridge();
  std::string id = ask("where is retryWithBackoff?");
  std::string want = "**retryWithBackoff** is in `src/retry.ts` & nowhere else.";
  json reply;
  ASSERT_TRUE(wait_for([&] {
    for (const json& m : slack().server().messages(channel()))
      if (m.value("thread_ts", json()) == id && m.value("streaming_state", json()) == "completed")
        reply = m;
    return !reply.is_null();
  })) << bridge->log()
      << dump(bot_posts());
  // Markdown as written (Slack renders a stream's markdown_text itself), in the thread, once.
  EXPECT_EQ(reply["text"], want) << reply.dump();
  EXPECT_EQ(replies_to(id).size(), 1u) << dump(bot_posts());
  EXPECT_GE(reply["appends"].size(), 2u) << reply.dump();
  std::map<std::string, int> calls;
  std::vector<std::string> statuses;
  for (const json& c : slack().server().calls())
    if (c.value("method", json()).is_string()) calls[c["method"]] += c.value("ok", false);
  EXPECT_EQ(calls["chat.startStream"], 1);
  EXPECT_EQ(calls["chat.stopStream"], 1);
  EXPECT_EQ(calls["chat.update"], 0);       // no edits
  EXPECT_EQ(calls["chat.postMessage"], 0);  // no placeholder
  // The status line said what it was doing before the first word (retrieval, then the tool).
  EXPECT_GE(calls["assistant.threads.setStatus"], 2);
  EXPECT_TRUE(
      slack().server().call("GET", "/_test/messages?channel=" + channel())["statuses"].empty());
}

TEST_P(SlackBridgeTest, AnAllowlistEntryMayBeAUserId) {
  std::string mallory = slack().id_of("mallory");
  access_["users"] = {"alice", mallory};
  write_config();
  auto bridge = start_bridge();
  std::string by_id = ask("where is the README?", "mallory");
  ASSERT_TRUE(wait_for([&] { return answered(by_id, "README.md"); })) << bridge->log();
  std::string by_name = ask("where is retryWithBackoff?");
  ASSERT_TRUE(wait_for([&] { return answered(by_name, "src/retry.ts"); })) << bridge->log();
}

TEST_P(SlackBridgeTest, AllowlistedHandlesAreMatchedByTheIdTheyNamedAtStartAndReload) {
  access_["users"] = {"alice", "nobody-by-that-name"};
  write_config();
  auto bridge = start_bridge();
  std::string asked = ask("where is retryWithBackoff?");
  ASSERT_TRUE(wait_for([&] { return answered(asked, "src/retry.ts"); })) << bridge->log();
  // Another person who takes the name "alice" is not alice.
  test::SlackServer& server = slack().server();
  std::string impostor = server.call("POST", "/_test/users", {{"name", "alice"}})["id"];
  server.call("POST", "/_test/channels/" + channel() + "/members", {{"user", impostor}});
  std::string faked = server.call("POST", "/_test/messages",
                                  {{"user", impostor},
                                   {"channel", channel()},
                                   {"text", chat_->mention() + "where is the README?"}})["ts"];
  std::string control = ask("and the README?");
  ASSERT_TRUE(wait_for([&] { return answered(control, "README.md"); })) << bridge->log();
  EXPECT_TRUE(replies_to(faked).empty()) << dump(bot_posts());
  EXPECT_NE(bridge->log().find("no user is called \"nobody-by-that-name\""), std::string::npos)
      << bridge->log();
  // A handle added by a reload is looked up then.
  access_["users"] = {"alice", "mallory"};
  write_config();
  std::string reload = ask("/reload config");
  ASSERT_TRUE(wait_for([&] { return answered(reload, "Applied"); })) << bridge->log();
  std::string by_mallory = ask("where is the README?", "mallory");
  ASSERT_TRUE(wait_for([&] { return answered(by_mallory, "README.md"); })) << bridge->log();
}

TEST_P(SlackBridgeTest, AFileReachesTheTurn) {
  test::ScriptedModelServer model("[]");  // echoes
  write_config(one_model(model), "a:m");
  auto bridge = start_bridge();
  json file = slack().server().call(
      "POST", "/_test/files",
      {{"user", slack().id_of("alice")},
       {"channel", channel()},
       {"name", "notes.txt"},
       {"mimetype", "text/plain"},
       {"content_base64", "cmV0cnlXaXRoQmFja29mZiBub3Rlcw=="},  // "retryWithBackoff notes"
       {"text", chat_->mention() + "what does this file say?"}});
  std::string id = file["ts"];
  ASSERT_FALSE(id.empty()) << file.dump();
  ASSERT_TRUE(wait_for([&] { return answered(id, "You said"); })) << bridge->log();
  std::string dir = repo_ / (".pilotfish/attachments/" + channel());
  bool saved = false;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::ifstream in(e.path());
    std::string content((std::istreambuf_iterator<char>(in)), {});
    saved = saved || content == "retryWithBackoff notes";
  }
  EXPECT_TRUE(saved) << dir;
  // The turn was told where the file is, to read it with read_file.
  std::string path = ".pilotfish/attachments/" + channel() + "/" +
                     file["file"]["id"].get<std::string>() + "-notes.txt";
  std::string asked = model.requests().back()["body"]["messages"].back()["content"];
  EXPECT_NE(asked.find("what does this file say?"), std::string::npos) << asked;
  EXPECT_NE(asked.find(path), std::string::npos) << asked;
  EXPECT_TRUE(std::filesystem::exists(repo_ / path));
}

TEST_P(SlackBridgeTest, TwentyBusyChannelsEditWithinTheServersTiers) {
  const int n = 20;
  json script = json::array();
  for (int i = 0; i < n; ++i) script.push_back(slow_chat(12, 0.0));
  test::ScriptedModelServer model(script.dump());
  std::vector<std::string> channels = {channel()};
  for (int i = 1; i < n; ++i) channels.push_back(chat_->new_channel("room" + std::to_string(i)));
  json list = json::array();
  for (const auto& c : channels)
    list.push_back(
        {{"id", c}, {"platform", "chat"}, {"bot", "copilot"}, {"workingDirectory", repo_.path()}});
  write_config(one_model(model), "a:m", json::object(), {{"channels", list}});
  auto bridge = start_bridge();
  auto started = std::chrono::steady_clock::now();
  std::vector<std::string> asked;
  for (const auto& c : channels)
    asked.push_back(chat_->post("alice", c, chat_->mention() + "tell me a story", ""));
  auto done = [&](size_t i) {
    for (const ChatPost& p : chat_->bot_posts(channels[i]))
      if (p.root == asked[i] && p.text.find("word11") != std::string::npos) return true;
    return false;
  };
  for (size_t i = 0; i < channels.size(); ++i)
    ASSERT_TRUE(wait_for([&] { return done(i); }, 60000)) << i << "\n" << bridge->log();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::vector<json> calls = slack().server().calls();
  int updates = 0;
  for (const json& c : calls) {
    EXPECT_FALSE(c["ratelimited"].get<bool>()) << c.dump();
    updates += c["method"] == "chat.update";
  }
  for (size_t i = 0; i < channels.size(); ++i) {
    int replies = 0;
    for (const ChatPost& p : chat_->bot_posts(channels[i])) replies += p.root == asked[i];
    EXPECT_EQ(replies, 1) << i;
  }
  RecordProperty("seconds", std::to_string(seconds));
  RecordProperty("chat_update_calls", updates);
  std::cout << n << " channels answered in " << seconds << " s with " << updates
            << " chat.update calls, none rate-limited\n";
}

// A message edited while it waits behind a running turn is answered as edited; one deleted
// while it waits is never answered (Slack's message_changed / message_deleted).
TEST_P(SlackBridgeTest, AQueuedMessageIsAnsweredAsEditedOrNotAtAllWhenDeleted) {
  json script = json::array({slow_chat(30, 0.1),
                             {{"chat", {{"text", {"answered the edit"}}}}},
                             {{"chat", {{"text", {"answered something else"}}}}}});
  test::ScriptedModelServer model(script.dump());
  write_config(one_model(model), "a:m");
  auto bridge = start_bridge();
  std::string first = ask("explain everything");
  ASSERT_TRUE(wait_for([&] { return answered(first, "word3"); })) << bridge->log();
  std::string edited = ask("the old question");
  std::string deleted = ask("delete me");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  slack().server().call(
      "POST", "/_test/messages/edit",
      {{"channel", channel()}, {"ts", edited}, {"text", slack().mention() + "the new question"}});
  slack().server().call("POST", "/_test/messages/delete",
                        {{"channel", channel()}, {"ts", deleted}});
  ASSERT_TRUE(wait_for([&] { return answered(edited, "answered the edit"); }, 20000))
      << bridge->log() << dump(bot_posts());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  std::vector<json> requests = model.requests();
  ASSERT_EQ(requests.size(), 2u) << "the deleted message reached the model";
  std::string asked = requests[1]["body"].dump();
  EXPECT_NE(asked.find("the new question"), std::string::npos) << asked;
  EXPECT_EQ(asked.find("the old question"), std::string::npos) << asked;
  EXPECT_TRUE(replies_to(deleted).empty()) << dump(bot_posts());
}

TEST_P(SlackBridgeTest, AnEditOfAQueuedMessageSurvivesACrashBeforeItsTurn) {
  json script = json::array(
      {slow_chat(100, 0.1, "explain everything"),
       slow_chat(2, 0.01, "explain everything"),
       {{"chat", {{"text", {"answered the edit"}}}}, {"match", "the new question"}},
       {{"chat", {{"text", {"answered the old one"}}}}, {"match", "the old question"}}});
  test::ScriptedModelServer model(script.dump());
  write_config(one_model(model), "a:m");
  auto bridge = start_bridge();
  std::string first = ask("explain everything");
  ASSERT_TRUE(wait_for([&] { return answered(first, "word3"); })) << bridge->log();
  std::string edited = ask("the old question");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  slack().server().call(
      "POST", "/_test/messages/edit",
      {{"channel", channel()}, {"ts", edited}, {"text", slack().mention() + "the new question"}});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  bridge->kill_now();  // the edited message has not had its turn
  bridge = start_bridge();
  ASSERT_TRUE(wait_for([&] { return answered(edited, "answered the edit"); }, 20000))
      << bridge->log() << dump(bot_posts());
  EXPECT_FALSE(answered(edited, "answered the old one")) << dump(bot_posts());
}

INSTANTIATE_TEST_SUITE_P(Slack, SlackBridgeTest, ::testing::Values("slack"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace pf
