// The permission desk (bridge/permission_desk.h) on a recording adapter and an in-memory state
// store: one prompt shown per channel at a time, answers by reply, command and reaction, what
// "always" stores, the outcome written into the prompt, cancel, resolve_all and the timeout.
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include "bridge/permission_desk.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "bridge/state_store.h"
#include "recording_adapter.h"

namespace pf {
namespace {

namespace asio = boost::asio;
using Result = PermissionAnswer::Result;

PermissionRequest shell(const std::string& command) {
  PermissionRequest r;
  r.tool = "run_command";
  r.kind = ToolPermission::kShell;
  r.command = command;
  return r;
}

Verdict ask_verdict(const std::string& word) {
  Verdict v;
  v.action = Verdict::Action::kAsk;
  v.check = "prompt";
  v.remember_tool = "run_command";
  v.remember_patterns = {word};
  return v;
}

InboundReaction reaction(const std::string& post, const std::string& emoji, bool added = true) {
  return {"mm", "bot", "c1", "u1", "alice", post, emoji, added};
}

class PermissionDeskTest : public ::testing::Test {
 protected:
  // Starts an ask in the background; its answer lands in *out.
  void ask(const std::string& channel, const std::string& command,
           std::optional<PermissionAnswer>* out, CancelSignal* cancel = nullptr) {
    CancelSignal* c = cancel ? cancel : &spare_;
    asio::co_spawn(
        io_,
        [this, channel, command, out, c]() -> asio::awaitable<void> {
          PromptPlace place{channel, posts_, "root1"};  // named: see bridge_permissions.cpp
          PermissionRequest request = shell(command);
          Verdict verdict = ask_verdict(command.substr(0, command.find(' ')));
          *out = co_await desk_.ask(std::move(place), std::move(request), std::move(verdict), *c);
        },
        asio::detached);
    settle();
  }
  // Runs what is ready now (posts, edits, resumed asks).
  void settle() {
    io_.restart();
    io_.poll();
  }
  std::string text_of(const std::string& post_id) const {
    std::string text;
    for (const auto& c : adapter_.calls)
      if (c.id == post_id) text = c.text;
    return text;
  }

  asio::io_context io_;
  RecordingAdapter adapter_;
  std::shared_ptr<PostQueue> posts_ =
      std::make_shared<PostQueue>(io_.get_executor(), adapter_, "c1");
  std::unique_ptr<StateStore> state_ = open_state_store(":memory:");
  PermissionDesk desk_{io_, *state_};
  CancelSignal spare_;
};

TEST_F(PermissionDeskTest, OnlyTheHeadIsShownAndAYesAnswersItThenTheNextIsShown) {
  std::optional<PermissionAnswer> first, second, third;
  ask("mm:c1", "git push", &first);
  ask("mm:c1", "make clean", &second);
  ask("mm:c1", "make all", &third);
  ASSERT_EQ(adapter_.created().size(), 1u);
  EXPECT_NE(adapter_.created()[0].find("git push"), std::string::npos);
  EXPECT_EQ(adapter_.created()[0].find("more waiting"), std::string::npos);
  EXPECT_TRUE(desk_.waiting("mm:c1"));
  EXPECT_FALSE(desk_.waiting("mm:c2"));

  EXPECT_FALSE(desk_.answer_text("mm:c1", "maybe later", "alice"));  // not an answer
  EXPECT_FALSE(desk_.answer_text("mm:c2", "yes", "alice"));          // nothing waits there
  EXPECT_TRUE(desk_.answer_text("mm:c1", "Yes!", "alice"));
  settle();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->result, Result::kApproved);
  EXPECT_EQ(first->by, "alice");
  EXPECT_FALSE(second);
  EXPECT_NE(text_of(adapter_.created_id(0)).find("approved by @alice"), std::string::npos) << text_of(adapter_.created_id(0));
  ASSERT_EQ(adapter_.created().size(), 2u);
  EXPECT_NE(adapter_.created()[1].find("make clean"), std::string::npos);
  EXPECT_NE(adapter_.created()[1].find("1 more waiting"), std::string::npos);

  EXPECT_TRUE(desk_.answer_text("mm:c1", "no", "bob"));
  settle();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->result, Result::kRejected);
  EXPECT_NE(text_of(adapter_.created_id(1)).find("denied by @bob"), std::string::npos) << text_of(adapter_.created_id(1));
  EXPECT_FALSE(third);
  EXPECT_TRUE(desk_.answer_text("mm:c1", "y", "bob"));
  settle();
  ASSERT_TRUE(third);
  EXPECT_FALSE(desk_.waiting("mm:c1"));
  // Nothing was to be remembered.
  EXPECT_TRUE(state_->list_permission_rules("mm:c1").empty());
}

TEST_F(PermissionDeskTest, ReactionsAnswerOnlyTheHeadPromptAndTheDiskRemembers) {
  std::optional<PermissionAnswer> answer;
  ask("mm:c1", "npm test", &answer);
  EXPECT_FALSE(desk_.answer_reaction(reaction("p9", "floppy_disk")));  // not the prompt
  EXPECT_FALSE(desk_.answer_reaction(reaction("p0", "tada")));
  EXPECT_FALSE(desk_.answer_reaction(reaction("p0", "floppy_disk", false)));  // taken back
  EXPECT_TRUE(desk_.answer_reaction(reaction("p0", "floppy_disk")));
  settle();
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->result, Result::kApproved);
  std::vector<StoredRule> rules = state_->list_permission_rules("mm:c1");
  ASSERT_EQ(rules.size(), 1u);
  EXPECT_EQ(rules[0].tool, "run_command");
  EXPECT_EQ(rules[0].pattern, "npm");
  EXPECT_EQ(rules[0].action, "allow");
  EXPECT_NE(text_of(adapter_.created_id(0)).find("approved and remembered by @alice"), std::string::npos);
}

TEST_F(PermissionDeskTest, AlwaysDenyStoresADenyRuleForThatChannelOnly) {
  std::optional<PermissionAnswer> answer;
  EXPECT_FALSE(desk_.answer_head("mm:c1", false, true, "alice"));  // nothing waits yet
  ask("mm:c1", "rm -rf build", &answer);
  EXPECT_TRUE(desk_.answer_head("mm:c1", false, true, "alice"));
  settle();
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->result, Result::kRejected);
  ASSERT_EQ(state_->list_permission_rules("mm:c1").size(), 1u);
  EXPECT_EQ(state_->list_permission_rules("mm:c1")[0].action, "deny");
  EXPECT_TRUE(state_->list_permission_rules("mm:c2").empty());
}

TEST_F(PermissionDeskTest, CancelResolveAllAndTheTimeoutAnswerAsNotAvailable) {
  std::optional<PermissionAnswer> stopped, other_channel, left, timed;
  CancelSignal cancel;
  ask("mm:c1", "make a", &stopped, &cancel);
  ask("mm:c2", "make b", &other_channel);
  ask("mm:c1", "make c", &left);
  cancel.cancel();
  settle();
  ASSERT_TRUE(stopped);
  EXPECT_EQ(stopped->result, Result::kNotAvailable);
  EXPECT_EQ(stopped->why, "the answer was stopped");
  EXPECT_FALSE(left);  // shown now, still waiting

  desk_.resolve_all("mm:c1", "@bob sent another message instead");
  settle();
  ASSERT_TRUE(left);
  EXPECT_EQ(left->why, "@bob sent another message instead");
  EXPECT_FALSE(other_channel);  // another channel's prompt is left alone
  desk_.resolve_all("", "the bridge is shutting down");
  settle();
  ASSERT_TRUE(other_channel);
  EXPECT_EQ(other_channel->why, "the bridge is shutting down");

  desk_.set_timeout(std::chrono::seconds(1));
  ask("mm:c1", "make d", &timed);
  io_.restart();
  io_.run_for(std::chrono::seconds(5));
  ASSERT_TRUE(timed);
  EXPECT_EQ(timed->result, Result::kNotAvailable);
  EXPECT_EQ(timed->why, "nobody answered within 1 s");
}

TEST(PermissionAnswer, YesAndNoInTheirSpellingsOnly) {
  for (const char* s : {"yes", "Y", "approve", "no.", "N", "deny!"})
    EXPECT_TRUE(is_permission_answer(s)) << s;
  for (const char* s : {"yes please", "nope", "", "ok"}) EXPECT_FALSE(is_permission_answer(s)) << s;
}

}  // namespace
}  // namespace pf
