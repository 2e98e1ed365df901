// More of the chat bridge end to end on both platforms (chat_bridge_fixture.h): a looping model
// warned, stopped and followed by a fresh conversation; thread-scoped conversations kept per
// thread, commands acting on their thread, and each thread resumed after a restart. Slack only:
// fifty busy channels whose edits stay inside the server's enforced tiers.
#include <iostream>
#include <set>

#include "chat_bridge_fixture.h"

namespace pf {
namespace {

using nlohmann::json;
using test::ChatBridgeTest;
using test::ChatPost;
using test::one_model;
using test::requests_asking;
using test::slow_chat;
using test::wait_for;

// The conversation id a /status reply names ("" when it names none).
std::string conversation_of(const std::string& status) {
  size_t at = status.find("conversation | `");
  if (at == std::string::npos) return "";
  at += std::string("conversation | `").size();
  return status.substr(at, status.find('`', at) - at);
}

class ChatScenarioTest : public ChatBridgeTest {
 protected:
  // alice asks text in channel() and the bot answers with something containing fragment; the
  // answer's text ("" after a timeout).
  // In a thread (root given), only a reply that was not there before counts.
  std::string answer(test::ServeProcess& bridge, const std::string& text,
                     const std::string& fragment, const std::string& root = "") {
    std::optional<std::string> said = new_reply(text, fragment, root);
    EXPECT_TRUE(said) << text << "\n" << dump(bot_posts()) << bridge.log();
    return said.value_or("");
  }
  // The answer's request for `asked` carried `kept` from earlier, and none carried `left_out`.
  void expect_history(const test::ScriptedModelServer& model, const std::string& asked,
                      const std::vector<std::string>& kept,
                      const std::vector<std::string>& left_out) {
    std::vector<std::string> sent = requests_asking(model, asked);
    ASSERT_FALSE(sent.empty()) << asked;
    for (const auto& k : kept) {
      bool found = false;
      for (const std::string& body : sent) found = found || body.find(k) != std::string::npos;
      EXPECT_TRUE(found) << asked << " without " << k << ": " << json(sent).dump();
    }
    for (const std::string& body : sent)
      for (const auto& l : left_out)
        EXPECT_EQ(body.find(l), std::string::npos) << asked << " with " << l << ": " << body;
  }
};

TEST_P(ChatScenarioTest, ALoopingModelIsWarnedThenStoppedAndTheNextMessageStartsAfresh) {
  json calls = json::array();
  for (int i = 0; i < 10; ++i)
    calls.push_back({{"id", std::to_string(i)},
                     {"name", "read_file"},
                     {"arguments", R"({"filePath": "README.md"})"}});
  json script = json::array(
      {{{"match", "loop please"}, {"chat", {{"tool_calls", calls}, {"finish", "tool_calls"}}}}});
  test::ScriptedModelServer model(script.dump());  // anything else is echoed
  write_config(one_model(model), "a:m");
  auto bridge = start_bridge();
  answer(*bridge, "apple first", "You said: apple first");
  std::string before = conversation_of(answer(*bridge, "/status", "conversation"));
  ASSERT_EQ(before.size(), 12u) << before;
  std::string id = ask("loop please, read the README");
  ASSERT_TRUE(wait_for([&] { return answered(id, "Loop detected"); }))
      << bridge->log() << dump(bot_posts());
  EXPECT_EQ(count_replies(id, "`read_file` with the same arguments 5 times"), 1)
      << dump(bot_posts());
  EXPECT_EQ(count_replies(id, "Loop detected"), 1) << dump(bot_posts());
  EXPECT_TRUE(answered(id, "started a new conversation")) << dump(bot_posts());
  // The looping turn was part of the first conversation; what follows is not.
  expect_history(model, "loop please", {"apple first"}, {});
  answer(*bridge, "banana after", "You said: banana after");
  expect_history(model, "banana after", {}, {"apple first", "loop please"});
  std::string after = conversation_of(answer(*bridge, "/status", "conversation"));
  EXPECT_EQ(after.size(), 12u) << after;
  EXPECT_NE(after, before);
  // Nothing else was said about the loop, and nothing left the threads.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(count_replies(id, "Loop detected"), 1) << dump(bot_posts());
  for (const ChatPost& p : bot_posts()) EXPECT_NE(p.root, "") << p.text;
}

TEST_P(ChatScenarioTest, ThreadScopedConversationsKeepTheirThreadsAcrossARestart) {
  test::ScriptedModelServer model("[]");  // echoes: "You said: ..."
  write_config(one_model(model), "a:m", {{"conversationScope", "thread"}});
  auto bridge = start_bridge();
  auto top = [&](const std::string& text) {
    std::string id = ask(text);
    EXPECT_TRUE(wait_for([&] { return answered(id, "You said: " + text); }))
        << text << "\n"
        << dump(bot_posts()) << bridge->log();
    return id;
  };
  std::string a = top("apricot one");
  std::string b = top("blueberry one");
  answer(*bridge, "apricot two", "You said: apricot two", a);
  answer(*bridge, "blueberry two", "You said: blueberry two", b);
  expect_history(model, "apricot two", {"apricot one"}, {"blueberry"});
  expect_history(model, "blueberry two", {"blueberry one"}, {"apricot"});
  // A command in a thread acts on that thread: /status names a's conversation, /new renews a's.
  std::string a_conv = conversation_of(answer(*bridge, "/status", "conversation", a));
  std::string b_conv = conversation_of(answer(*bridge, "/status", "conversation", b));
  ASSERT_EQ(a_conv.size(), 12u);
  ASSERT_EQ(b_conv.size(), 12u);
  EXPECT_NE(a_conv, b_conv);
  answer(*bridge, "/new", "New conversation", a);
  answer(*bridge, "apricot three", "You said: apricot three", a);
  answer(*bridge, "blueberry three", "You said: blueberry three", b);
  expect_history(model, "apricot three", {}, {"apricot one", "apricot two", "blueberry"});
  expect_history(model, "blueberry three", {"blueberry one", "blueberry two"}, {"apricot"});
  EXPECT_EQ(conversation_of(answer(*bridge, "/status", "conversation", b)), b_conv);
  std::string a_new = conversation_of(answer(*bridge, "/status", "conversation", a));
  EXPECT_NE(a_new, a_conv);
  std::string listing = answer(*bridge, "/resume", "Conversations in this thread", a);
  EXPECT_NE(listing.find(a_conv), std::string::npos) << listing;
  EXPECT_NE(listing.find(a_new), std::string::npos) << listing;
  EXPECT_EQ(listing.find(b_conv), std::string::npos) << listing;
  // After a restart each thread goes on with its own conversation.
  EXPECT_EQ(bridge->stop(), 0);
  bridge = start_bridge();
  answer(*bridge, "blueberry four", "You said: blueberry four", b);
  answer(*bridge, "apricot four", "You said: apricot four", a);
  expect_history(model, "blueberry four", {"blueberry one", "blueberry three"}, {"apricot"});
  expect_history(model, "apricot four", {"apricot three"}, {"apricot one", "blueberry"});
  EXPECT_EQ(conversation_of(answer(*bridge, "/status", "conversation", a)), a_new);
  // Every answer went into its thread: nothing at the top level.
  for (const ChatPost& p : bot_posts()) EXPECT_NE(p.root, "") << p.text;
}

INSTANTIATE_TEST_SUITE_P(Platforms, ChatScenarioTest, ::testing::Values("mattermost", "slack"),
                         [](const auto& info) { return info.param; });

// Slack only: its Web API's tiers, which the test server enforces.
class SlackScenarioTest : public ChatBridgeTest {
 protected:
  test::SlackChat& slack() { return static_cast<test::SlackChat&>(*chat_); }
};

// The bot's replies in a channel's thread of root, as the Slack server keeps them (with edits).
std::vector<json> slack_replies(test::SlackServer& server, const std::string& channel,
                                const std::string& bot, const std::string& root) {
  std::vector<json> out;
  for (const json& m : server.messages(channel))
    if (m.value("user", "") == bot && !m.value("deleted", false) &&
        m.value("thread_ts", "") == root)
      out.push_back(m);
  return out;
}

TEST_P(SlackScenarioTest, FiftyBusyChannelsEditWithinTheServersTiers) {
  const int n = 50, words = 12;
  json rate = slack().server().call("GET", "/_test/rate");
  ASSERT_TRUE(rate["enabled"].get<bool>()) << rate.dump();  // the server enforces its tiers
  ASSERT_EQ(rate["tiers"]["chat.update"], 3) << rate.dump();
  json script = json::array();
  std::string final_text;
  for (int w = 0; w < words; ++w) final_text += (w ? " word" : "word") + std::to_string(w);
  for (int i = 0; i < n; ++i) script.push_back(slow_chat(words, 0.0));
  test::ScriptedModelServer model(script.dump());
  std::vector<std::string> channels = {channel()};
  for (int i = 1; i < n; ++i) channels.push_back(chat_->new_channel("room" + std::to_string(i)));
  json list = json::array();
  for (const auto& c : channels)
    list.push_back(
        {{"id", c}, {"platform", "chat"}, {"bot", "copilot"}, {"workingDirectory", repo_.path()}});
  write_config(one_model(model), "a:m", json::object(), {{"channels", list}});
  slack().set_agents(false);  // no native streams: every reply is a post and chat.update edits
  auto bridge = start_bridge();
  auto started = std::chrono::steady_clock::now();
  std::vector<std::string> asked;
  for (const auto& c : channels)
    asked.push_back(chat_->post("alice", c, chat_->mention() + "tell me a story", ""));
  std::string bot = slack().id_of("copilot");
  auto done = [&](size_t i) {
    for (const json& m : slack_replies(slack().server(), channels[i], bot, asked[i]))
      if (m.value("text", "").find("word" + std::to_string(words - 1)) != std::string::npos)
        return true;
    return false;
  };
  for (size_t i = 0; i < channels.size(); ++i)  // generous: Tier 3 allows 50 edits a minute
    ASSERT_TRUE(wait_for([&] { return done(i); }, 120000)) << i << "\n" << bridge->log();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::this_thread::sleep_for(std::chrono::seconds(1));  // nothing more comes
  int updates = 0, limited = 0;
  for (const json& c : slack().server().calls()) {
    limited += c["ratelimited"].get<bool>();
    EXPECT_FALSE(c["ratelimited"].get<bool>()) << c.dump();
    updates += c["method"] == "chat.update";
  }
  for (size_t i = 0; i < channels.size(); ++i) {
    std::vector<json> replies = slack_replies(slack().server(), channels[i], bot, asked[i]);
    ASSERT_EQ(replies.size(), 1u) << i << json(replies).dump();
    // The final text, once: posted as it is, or reached by exactly one edit, the last.
    EXPECT_EQ(replies[0]["text"], final_text) << i << replies[0].dump();
    int finals = 0;
    for (const json& e : replies[0]["edits"]) finals += e["text"] == final_text;
    EXPECT_EQ(finals, replies[0]["edits"].empty() ? 0 : 1) << i << replies[0].dump();
  }
  EXPECT_EQ(limited, 0);
  RecordProperty("seconds", std::to_string(seconds));
  RecordProperty("chat_update_calls", updates);
  std::cout << n << " channels answered in " << seconds << " s with " << updates
            << " chat.update calls, " << limited << " rate-limited\n";
}

INSTANTIATE_TEST_SUITE_P(Slack, SlackScenarioTest, ::testing::Values("slack"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace pf
