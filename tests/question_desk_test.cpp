// ask_user in a channel (src/bridge/question_desk.cpp), end to end on both platforms: the
// model's question is posted with its choices, a reply in its thread answers it without a
// mention and starts no turn of its own (a number picks a choice), someone the bot may not talk
// to cannot answer it, an unanswered question times out as "did not reply", /stop ends the wait.
#include "chat_bridge_fixture.h"

namespace pf {
namespace {

using nlohmann::json;
using test::scripted_call;
using test::scripted_text;

class QuestionInChatTest : public test::ChatBridgeTest {
 protected:
  // The content of the tool result the model got for its ask_user call, once it got one.
  static std::string told(const test::ScriptedModelServer& model, const std::string& fragment) {
    for (const std::string& r : test::requests_asking(model, fragment)) {
      json messages = json::parse(r);
      for (const json& m : messages)
        if (m["role"] == "tool") return m["content"];
    }
    return "";
  }
  std::unique_ptr<test::ServeProcess> bridge_;
};

TEST_P(QuestionInChatTest, AReplyInTheThreadIsTheAnswer) {
  json script = json::array({
      scripted_call("ask_user", {{"question", "Which store?"}, {"choices", {"SQLite", "PostgreSQL"}}},
                    "pick a store"),
      scripted_text("Going with the answer.", "pick a store"),
      scripted_text("A new turn.", "2"),  // taken only if the answer were a turn of its own
  });
  test::ScriptedModelServer model(script.dump());
  write_config(test::one_model(model), "a:m");
  bridge_ = start_bridge();
  std::string id = ask("pick a store");
  test::ChatPost question;
  ASSERT_TRUE(wait_reply(id, "Which store?", &question)) << dump(bot_posts()) << bridge_->log();
  EXPECT_NE(question.text.find("1. SQLite"), std::string::npos) << question.text;
  EXPECT_NE(question.text.find("2. PostgreSQL"), std::string::npos) << question.text;
  // Someone the bot does not talk to cannot answer; alice can, with no mention, by number.
  chat_->post("mallory", channel(), "1", id);
  chat_->post("alice", channel(), "2", id);
  ASSERT_TRUE(test::wait_for([&] { return answered(id, "Going with the answer."); }))
      << dump(bot_posts()) << bridge_->log();
  std::string result = told(model, "pick a store");
  EXPECT_NE(result.find("\"answer\":\"PostgreSQL\""), std::string::npos) << result;
  EXPECT_NE(result.find("alice"), std::string::npos) << result;
  // The question's post shows the answer; the answer started no turn.
  EXPECT_TRUE(test::wait_for([&] { return answered(id, "@alice: PostgreSQL"); })) << dump(bot_posts());
  EXPECT_FALSE(answered(id, "A new turn."));
  EXPECT_EQ(model.requests().size(), 2u);
}

TEST_P(QuestionInChatTest, NoAnswerInTimeAndStopEndTheWait) {
  json script = json::array({
      scripted_call("ask_user", {{"question", "Shall I go on?"}}, "first task"),
      scripted_text("Nobody said; stopped there.", "first task"),
      scripted_call("ask_user", {{"question", "Really?"}}, "second task"),
  });
  test::ScriptedModelServer model(script.dump());
  write_config(test::one_model(model), "a:m", json::object(), {{"askUserTimeoutSeconds", 1}});
  bridge_ = start_bridge();
  std::string id = ask("first task");
  ASSERT_TRUE(test::wait_for([&] { return answered(id, "Nobody said; stopped there."); }))
      << dump(bot_posts()) << bridge_->log();
  std::string result = told(model, "first task");
  EXPECT_NE(result.find("the user did not reply (nobody answered within 1 s)"), std::string::npos)
      << result;
  EXPECT_TRUE(answered(id, "No answer: nobody answered within 1 s")) << dump(bot_posts());
  // /stop while a question waits: the turn ends, the question says why.
  std::string id2 = ask("second task");
  test::ChatPost q;
  ASSERT_TRUE(wait_reply(id2, "Really?", &q)) << dump(bot_posts()) << bridge_->log();
  ask("/stop", "alice", id2);
  EXPECT_TRUE(test::wait_for([&] { return answered(id2, "No answer: the answer was stopped"); }))
      << dump(bot_posts()) << bridge_->log();
}

INSTANTIATE_TEST_SUITE_P(Platforms, QuestionInChatTest, ::testing::Values("mattermost", "slack"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace pf
