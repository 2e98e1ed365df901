// The plan board (src/bridge/plan_board.h): the modes, the plan stored with its conversation, and
// one plan post per turn whose updates come at most once per interval with the newest text. The
// modes at work in a channel are tested in bridge_plan_test.cpp.
#include "bridge/plan_board.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "bridge/sqlite_state_store.h"
#include "recording_adapter.h"
#include "test_util.h"

namespace pf {
namespace {

namespace asio = boost::asio;
using nlohmann::json;
using std::chrono::milliseconds;

TEST(PlanBoardTest, ModesAndPlansAreKeptPerChannelAndConversation) {
  test::TempDir dir;
  auto state = open_sqlite_state_store(dir / "b.db");
  PlanBoard board(*state);
  EXPECT_FALSE(board.plan_mode("mm:c"));
  EXPECT_NE(board.command("mm:c", "", "").find("Plan mode on"), std::string::npos);
  EXPECT_TRUE(board.plan_mode("mm:c"));
  EXPECT_FALSE(board.plan_mode("mm:d"));
  std::string conv = state->create_conversation("mm:c");
  EXPECT_EQ(board.command("mm:c", conv, "show"), "No plan yet in this conversation.");
  state->set_plan(conv, "1. one");
  EXPECT_NE(board.command("mm:c", conv, "VIEW").find("1. one"), std::string::npos);
  EXPECT_NE(board.command("mm:c", conv, "off").find("The plan is kept"), std::string::npos);
  EXPECT_FALSE(board.plan_mode("mm:c"));
  EXPECT_NE(board.command("mm:c", conv, "delete").find("Plan cleared"), std::string::npos);
  EXPECT_EQ(state->plan(conv), "");
  EXPECT_NE(board.command("mm:c", conv, "maybe").find("takes on, off"), std::string::npos);
  EXPECT_NE(board.autopilot_command("mm:c", "", false).find("/yolo` is off"), std::string::npos);
  EXPECT_TRUE(board.autopilot("mm:c"));
  EXPECT_EQ(board.autopilot_command("mm:c", "on", true).find("/yolo"), std::string::npos);
  EXPECT_NE(board.autopilot_command("mm:c", "", true).find("Autopilot off"), std::string::npos);
  EXPECT_NE(board.autopilot_command("mm:c", "sideways", true).find("takes on or off"),
            std::string::npos);
}

TEST(PlanBoardTest, UpdatesEditOnePostAtMostOncePerInterval) {
  test::TempDir dir;
  auto state = open_sqlite_state_store(dir / "b.db");
  const milliseconds interval(300);
  PlanBoard board(*state, interval);
  std::string conv = state->create_conversation("mm:c");
  asio::io_context io;
  RecordingAdapter adapter;
  auto posts = std::make_shared<PostQueue>(io.get_executor(), adapter, "c1");
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        asio::steady_timer t(io);
        for (int i = 1; i <= 5; ++i) {
          board.update("mm:c", conv, posts, "", "plan v" + std::to_string(i));
          t.expires_after(milliseconds(40));
          co_await t.async_wait(asio::use_awaitable);
        }
        co_await posts->drained();
        board.forget("mm:c");  // the next turn
        board.update("mm:c", conv, posts, "", "plan v6");
        co_await posts->drained();
      },
      asio::detached);
  io.run();
  ASSERT_EQ(adapter.calls.size(), 3u);  // a post, one merged edit, the next turn's post
  EXPECT_EQ(adapter.calls[0].op, "create");
  EXPECT_EQ(adapter.calls[0].text, "\U0001F4CB **Plan**\nplan v1");
  EXPECT_EQ(adapter.calls[1].op, "edit");
  EXPECT_EQ(adapter.calls[1].text, "\U0001F4CB **Plan**\nplan v5");
  EXPECT_GE(adapter.calls[1].at - adapter.calls[0].at, interval - milliseconds(5));
  EXPECT_EQ(adapter.calls[2].op, "create");
  EXPECT_EQ(state->plan(conv), "plan v6");
}

}  // namespace
}  // namespace pf
