// Conversations per thread end to end (conversationScope "thread", src/bridge/bridge.cpp's
// conversation_key_at): the real `pilotfish bridge` against the Mattermost test server and the
// echoing model server. Two threads keep separate histories (as the model's requests show), a
// third top-level message starts afresh, /new and /resume act on their thread only, and a
// restart resumes each thread's conversation. Split from bridge_test.cpp, which is full.
#include "bridge_fixture.h"

namespace pf {
namespace {

using nlohmann::json;
using test::BridgeTest;
using test::one_model;
using test::requests_asking;
using test::wait_for;

TEST_F(BridgeTest, ThreadScopedChannelsKeepAConversationPerThreadAcrossARestart) {
  test::ScriptedModelServer model("[]");  // echoes: "You said: ..."
  // threadedReplies off: a thread-scoped channel answers in threads all the same.
  write_config(one_model(model), "a:m",
               {{"conversationScope", "thread"}, {"threadedReplies", false}});
  auto bridge = start_bridge();
  auto top = [&](const std::string& text) {
    std::string id = mm_.post(alice_, channel_, "@copilot " + text)["id"];
    EXPECT_TRUE(wait_for([&] { return answered(id, "You said: " + text); })) << text << "\n"
                                                                             << bridge->log();
    return id;
  };
  auto in_thread = [&](const std::string& root, const std::string& text,
                       const std::string& fragment) {
    mm_.call("POST", "/_test/posts",
             {{"user_id", alice_["id"]},
              {"channel_id", channel_},
              {"message", "@copilot " + text},
              {"root_id", root}});
    EXPECT_TRUE(wait_for([&] { return answered(root, fragment); })) << text << "\n"
                                                                    << bridge->log();
  };
  // The answer's request for `asked` carried `kept` from earlier, and no request for it (the
  // search query's rewrite included, which sees only the last few) carried any of `left_out`.
  auto history_of = [&](const std::string& asked, const std::vector<std::string>& kept,
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
        EXPECT_EQ(body.find(l), std::string::npos) << asked << ": " << body;
  };
  std::string a = top("apricot one");
  std::string b = top("blueberry one");
  in_thread(a, "apricot two", "You said: apricot two");
  in_thread(b, "blueberry two", "You said: blueberry two");
  history_of("apricot two", {"apricot one"}, {"blueberry"});
  history_of("blueberry two", {"blueberry one"}, {"apricot"});
  // A third top-level message starts a conversation of its own.
  top("cherry one");
  history_of("cherry one", {}, {"apricot", "blueberry"});
  // /new in thread a resets a only.
  in_thread(a, "/new", "New conversation");
  in_thread(a, "apricot three", "You said: apricot three");
  in_thread(b, "blueberry three", "You said: blueberry three");
  history_of("apricot three", {}, {"apricot one", "apricot two", "blueberry"});
  history_of("blueberry three", {"blueberry one", "blueberry two"}, {"apricot"});
  in_thread(a, "/resume", "Conversations in this thread");
  std::string listing;
  for (const json& p : replies_to(a))
    if (p["message"].get<std::string>().find("Conversations in this thread") != std::string::npos)
      listing = p["message"];
  size_t entries = 0;
  for (size_t at = listing.find("\n- `"); at != std::string::npos;
       at = listing.find("\n- `", at + 1))
    ++entries;
  EXPECT_EQ(entries, 2u) << listing;  // a's two conversations, not b's or c's
  // After a restart each thread goes on with its own conversation.
  EXPECT_EQ(bridge->stop(), 0);
  bridge = start_bridge();
  in_thread(b, "blueberry four", "You said: blueberry four");
  in_thread(a, "apricot four", "You said: apricot four");
  history_of("blueberry four", {"blueberry one", "blueberry three"}, {"apricot", "cherry"});
  history_of("apricot four", {"apricot three"}, {"apricot one", "blueberry", "cherry"});
  // Every answer went into its thread: nothing at the top level.
  for (const json& p : bot_posts()) EXPECT_NE(p["root_id"], "") << p.dump();
}

}  // namespace
}  // namespace pf
