// The turn runner (bridge/turn_runner.h) fed an answer's events by hand, on a recording adapter
// and an in-memory state store: each step stored with its calls and their results, one post per
// step, steering stored and answered under a fresh post, verbose mode's feed, the loop
// detector's warning and stop, and NO_REPLY or a quiet turn's silence taking the reply back.
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include "bridge/turn_runner.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "recording_adapter.h"

namespace pf {
namespace {

namespace asio = boost::asio;
using nlohmann::json;
using Kind = AnswerEvent::Kind;

AnswerEvent event(Kind kind, std::string text = {}, ToolCall call = {}, std::string model = {}) {
  return AnswerEvent{kind, std::move(text), std::move(call), std::move(model), {}, {}};
}

class TurnRunnerTest : public ::testing::Test {
 protected:
  TurnRunnerTest() {
    channel_.key = "mm:c1";
    channel_.id = "c1";
    channel_.adapter = &adapter_;
    channel_.posts = std::make_shared<PostQueue>(io_.get_executor(), adapter_, "c1");
    conversation_ = state_->create_conversation("mm:c1");
  }
  // A runner whose gate answers with gate_result_ (nullopt: run the call).
  std::unique_ptr<TurnRunner> runner(bool verbose = false) {
    StreamOptions so;
    so.interval = std::chrono::milliseconds(0);
    auto stream = std::make_unique<ReplyStream>(io_, channel_.posts, "", so);
    if (!channel_.quiet) stream->start();
    return std::make_unique<TurnRunner>(
        io_, *state_, channel_, conversation_, so, std::move(stream), verbose, cancel_,
        [this](const ToolCall& call, bool* no_reply) -> asio::awaitable<std::optional<json>> {
          gated_.push_back(call.name);
          if (call.name == "no_reply") *no_reply = true;
          co_return gate_result_;
        },
        [this](const std::string& text) { notices_.push_back(text); });
  }
  std::optional<json> gate(TurnRunner& turn, const ToolCall& call) {
    std::optional<json> out;
    asio::co_spawn(
        io_, [&]() -> asio::awaitable<void> { out = co_await turn.before_tool(call); },
        asio::detached);
    settle();
    return out;
  }
  void settle() {
    io_.restart();
    io_.run_for(std::chrono::milliseconds(50));
  }
  // The channel's posts as they read now (created, then edited), deleted ones left out.
  std::vector<std::string> posts() const {
    std::vector<std::string> ids, texts;
    for (const auto& c : adapter_.calls) {
      auto it = std::find(ids.begin(), ids.end(), c.id);
      if (c.op == "create") {
        ids.push_back(c.id);
        texts.push_back(c.text);
      } else if (c.op == "edit" && it != ids.end()) {
        texts[it - ids.begin()] = c.text;
      } else if (c.op == "delete" && it != ids.end()) {
        texts.erase(texts.begin() + (it - ids.begin()));
        ids.erase(it);
      }
    }
    return texts;
  }

  asio::io_context io_;
  RecordingAdapter adapter_{"mm", "bot"};
  std::unique_ptr<StateStore> state_ = open_state_store(":memory:");
  BridgeChannel channel_;
  std::string conversation_;
  CancelSignal cancel_;
  std::optional<json> gate_result_;
  std::vector<std::string> gated_, notices_;
};

TEST_F(TurnRunnerTest, EachStepIsStoredWithItsCallsAndResultsAndPostedApart) {
  auto turn = runner();
  ToolCall call{"call1", "grep", R"({"pattern":"Config"})"};
  turn->on_event(event(Kind::kStep));
  turn->on_event(event(Kind::kText, "Looking."));
  turn->on_event(event(Kind::kToolCall, call.arguments, call));
  turn->on_event(event(Kind::kToolResult, R"({"matches":3})", call));
  turn->on_event(event(Kind::kStep));
  turn->on_event(event(Kind::kText, "It is in config.h:12."));
  turn->on_event(event(Kind::kFinish, {}, {}, "a:m"));
  turn->end_steps();
  turn->deliver();
  settle();
  std::vector<StoredMessage> stored = state_->messages(conversation_);
  ASSERT_EQ(stored.size(), 3u);
  EXPECT_EQ(stored[0].role, "assistant");
  EXPECT_EQ(stored[0].content, "Looking.");
  json calls = json::parse(stored[0].tool_calls);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0]["name"], "grep");
  EXPECT_EQ(stored[1].role, "tool");
  EXPECT_EQ(stored[1].tool_call_id, "call1");
  EXPECT_EQ(stored[2].content, "It is in config.h:12.");
  EXPECT_EQ(stored[2].model, "a:m");
  EXPECT_EQ(turn->answered_by(), "a:m");
  EXPECT_GT(turn->completion_tokens(), 0);
  EXPECT_EQ(posts(), (std::vector<std::string>{"Looking.", "It is in config.h:12."}));
}

TEST_F(TurnRunnerTest, SteeringIsStoredAndAnsweredUnderAFreshPost) {
  auto turn = runner();
  turn->on_event(event(Kind::kStep));
  turn->on_event(event(Kind::kText, "First part."));
  EXPECT_TRUE(turn->steer().empty());  // nothing waits
  InboundMessage s;
  s.post_id = "post7";
  s.text = "only in src/ please";
  channel_.steering.push_back(s);
  EXPECT_EQ(turn->steer(), std::vector<std::string>{"only in src/ please"});
  EXPECT_TRUE(channel_.steering.empty());
  EXPECT_EQ(channel_.steered_posts, std::vector<std::string>{"post7"});
  turn->on_event(event(Kind::kStep));
  turn->on_event(event(Kind::kText, "Second part."));
  turn->end_steps();
  turn->deliver();
  settle();
  std::vector<StoredMessage> stored = state_->messages(conversation_);
  ASSERT_EQ(stored.size(), 3u);
  EXPECT_EQ(stored[0].content, "First part.");
  EXPECT_EQ(stored[1].role, "user");
  EXPECT_EQ(stored[1].post_id, "post7");
  EXPECT_EQ(stored[2].content, "Second part.");
  EXPECT_EQ(posts(), (std::vector<std::string>{"First part.", "Second part."}));
}

TEST_F(TurnRunnerTest, VerboseModeFeedsToolCallsIntoAPostOfTheirOwn) {
  auto turn = runner(true);
  ToolCall call{"c1", "read_file", R"({"path":"src/main.cpp"})"};
  turn->on_event(event(Kind::kStep));
  turn->on_event(event(Kind::kToolCall, call.arguments, call));
  turn->on_event(event(Kind::kToolResult, "{}", call));
  turn->on_event(event(Kind::kStep));
  turn->on_event(event(Kind::kText, "Done."));
  turn->end_steps();
  turn->deliver();
  settle();
  std::vector<std::string> p = posts();
  ASSERT_EQ(p.size(), 2u);
  EXPECT_NE(p[0].find("Done."), std::string::npos);
  EXPECT_NE(p[1].find("`read_file` src/main.cpp"), std::string::npos) << p[1];
}

TEST_F(TurnRunnerTest, TheGateWarnsAtFiveIdenticalCallsAndStopsTheTurnAtTen) {
  auto turn = runner();
  ToolCall call{"x", "grep", R"({"pattern":"same"})"};
  gate_result_ = json{{"error", "refused by the owner"}};
  EXPECT_EQ(*gate(*turn, call), *gate_result_);  // the owner's answer passes through
  for (int i = 2; i <= 9; ++i) gate(*turn, call);
  ASSERT_EQ(notices_.size(), 1u);
  EXPECT_NE(notices_[0].find("5 times in a minute"), std::string::npos);
  EXPECT_FALSE(cancel_.cancelled());
  std::optional<json> tenth = gate(*turn, call);
  ASSERT_TRUE(tenth);
  EXPECT_NE(tenth->dump().find("loop detected"), std::string::npos);
  EXPECT_TRUE(turn->loop_stopped());
  EXPECT_TRUE(cancel_.cancelled());
  EXPECT_EQ(gated_.size(), 9u);  // the tenth never reached the owner
}

TEST_F(TurnRunnerTest, NoReplyAndNoReplyTextTakeTheReplyBack) {
  {
    auto turn = runner();
    turn->on_event(event(Kind::kStep));
    turn->on_event(event(Kind::kText, " NO_REPLY "));
    turn->end_steps();
    turn->deliver();
  }
  {
    auto turn = runner();
    gate(*turn, ToolCall{"n", "no_reply", "{}"});
    turn->on_event(event(Kind::kText, "thanks!"));
    turn->end_steps();
    turn->deliver();
  }
  settle();
  EXPECT_TRUE(posts().empty());
}

TEST_F(TurnRunnerTest, AQuietTurnPostsOnlyAtTheEndAndNothingWhenSilent) {
  channel_.quiet = true;
  {
    auto turn = runner();
    turn->on_event(event(Kind::kStep));
    turn->on_event(event(Kind::kText, "Nightly: 3 PRs wait."));
    settle();
    EXPECT_TRUE(adapter_.calls.empty());  // no placeholder, nothing streamed
    turn->end_steps();
    turn->deliver();
  }
  {
    auto turn = runner();
    turn->on_event(event(Kind::kStep));
    turn->end_steps();
    turn->deliver();
  }
  settle();
  EXPECT_EQ(posts(), std::vector<std::string>{"Nightly: 3 PRs wait."});
}

}  // namespace
}  // namespace pf
