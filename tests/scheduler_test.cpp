// The scheduler (bridge/scheduler.h) on an in-memory state store: the tool's validation, a
// one-off firing once as a quiet message and then gone, a fire the bot's other process owns,
// pause/resume/cancel through the command, and missed one-offs reported once at start.
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include "bridge/scheduler.h"

#include <gtest/gtest.h>

#include "core/clock.h"
#include "recording_adapter.h"

namespace pf {
namespace {

namespace asio = boost::asio;
using nlohmann::json;

// An ISO time seconds from now, in UTC.
std::string in_seconds(int seconds) {
  std::time_t t = static_cast<std::time_t>(unix_time_ms() / 1000 + seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

class SchedulerTest : public ::testing::Test {
 protected:
  void run_for(std::chrono::milliseconds d) {
    io_.restart();
    io_.run_for(d);
  }
  std::vector<ScheduleRun> runs() { return state_->schedule_runs(site_.channel_key, 10); }

  asio::io_context io_;
  std::unique_ptr<StateStore> state_ = open_state_store(":memory:");
  std::vector<InboundMessage> fired_;
  std::optional<bool> take_ = true;  // what the fire callback answers
  Scheduler scheduler_{io_, *state_, [this](InboundMessage m) {
                         fired_.push_back(std::move(m));
                         return take_;
                       }};
  ScheduleSite site_{"mm:c1", "bot", "root9"};
};

TEST_F(SchedulerTest, TheToolRefusesWhatCannotBeScheduled) {
  auto error = [&](const json& args) {
    json r = scheduler_.tool(site_, args, "alice");
    return r.contains("error") ? r["error"].get<std::string>() : std::string();
  };
  EXPECT_NE(error({{"prompt", "x"}}).find("either cron"), std::string::npos);
  EXPECT_NE(error({{"prompt", "x"}, {"cron", "0 9 * * 1"}, {"run_at", in_seconds(60)}})
                .find("either cron"),
            std::string::npos);
  EXPECT_NE(error({{"cron", "0 9 * * 1"}}).find("prompt is required"), std::string::npos);
  EXPECT_FALSE(error({{"prompt", "x"}, {"cron", "61 9 * * 1"}}).empty());
  EXPECT_FALSE(
      error({{"prompt", "x"}, {"cron", "0 9 * * 1"}, {"timezone", "Mars/Olympus"}}).empty());
  EXPECT_NE(error({{"prompt", "x"}, {"run_at", "tomorrow-ish"}}).find("run_at must be"),
            std::string::npos);
  EXPECT_NE(error({{"prompt", "x"}, {"run_at", "2001-01-01T10:00Z"}}).find("in the past"),
            std::string::npos);
  EXPECT_NE(error({{"action", "explode"}}).find("action is"), std::string::npos);
  EXPECT_TRUE(state_->schedules("bot", "").empty());
}

TEST_F(SchedulerTest, AOneOffFiresOnceAsAQuietMessageAndIsGone) {
  json created =
      scheduler_.tool(site_, {{"prompt", "summarise the PRs"}, {"run_at", in_seconds(1)}}, "alice");
  ASSERT_TRUE(created.contains("created")) << created.dump();
  EXPECT_NE(scheduler_.command(site_, "list").find("summarise the PRs"), std::string::npos);
  run_for(std::chrono::milliseconds(2500));
  ASSERT_EQ(fired_.size(), 1u);
  const InboundMessage& m = fired_[0];
  EXPECT_TRUE(m.quiet);
  EXPECT_EQ(m.text, "summarise the PRs");
  EXPECT_EQ(m.platform, "mm");
  EXPECT_EQ(m.channel_id, "c1");
  EXPECT_EQ(m.thread_root_id, "root9");
  EXPECT_EQ(m.username, "alice");
  EXPECT_EQ(m.post_id.rfind("schedule:" + created["created"].get<std::string>() + ":", 0), 0u);
  EXPECT_TRUE(state_->schedules("bot", "").empty());
  ASSERT_EQ(runs().size(), 1u);
  EXPECT_EQ(runs()[0].outcome, "fired");
  EXPECT_NE(scheduler_.command(site_, "history").find("fired"), std::string::npos);
}

TEST_F(SchedulerTest, AFireOwnedByAnotherProcessIsNeitherRecordedNorRearmed) {
  take_ = std::nullopt;
  ASSERT_TRUE(scheduler_.tool(site_, {{"prompt", "p"}, {"run_at", in_seconds(1)}}, "a")
                  .contains("created"));
  run_for(std::chrono::milliseconds(2500));
  EXPECT_EQ(fired_.size(), 1u);
  EXPECT_TRUE(runs().empty());
  EXPECT_EQ(state_->schedules("bot", "").size(), 1u);  // that process fires and removes it
}

TEST_F(SchedulerTest, PauseResumeAndCancelByCommand) {
  json created = scheduler_.tool(site_, {{"prompt", "p"}, {"cron", "0 9 * * 1"}}, "a");
  std::string id = created["created"];
  EXPECT_EQ(scheduler_.command(site_, "pause " + id), "Schedule `" + id + "` paused.");
  EXPECT_FALSE(state_->schedules("bot", "")[0].enabled);
  EXPECT_NE(scheduler_.command(site_, "").find("**paused**"), std::string::npos);
  EXPECT_EQ(scheduler_.command(site_, "resume " + id), "Schedule `" + id + "` resumed.");
  EXPECT_TRUE(state_->schedules("bot", "")[0].enabled);
  // Another channel's site cannot touch it.
  ScheduleSite other{"mm:c2", "bot", ""};
  EXPECT_NE(scheduler_.command(other, "cancel " + id).find("no schedule"), std::string::npos);
  EXPECT_EQ(scheduler_.command(site_, "cancel " + id), "Schedule `" + id + "` cancelled.");
  EXPECT_TRUE(state_->schedules("bot", "").empty());
  EXPECT_NE(scheduler_.command(site_, "frobnicate").find("Use `/schedule"), std::string::npos);
}

TEST_F(SchedulerTest, OneOffsMissedWhileDownAreReportedOnceAtStart) {
  for (const char* id : {"s1", "s2"}) {
    ScheduleRecord s;
    s.id = id;
    s.channel_key = "mm:c1";
    s.bot = "bot";
    s.prompt = "late";
    s.run_at_ms = unix_time_ms() - 60000;
    state_->save_schedule(s);
  }
  RecordingAdapter adapter("mm", "bot");
  scheduler_.start(adapter);
  run_for(std::chrono::milliseconds(200));
  ASSERT_EQ(adapter.created().size(), 1u);
  EXPECT_NE(adapter.created()[0].find("Missed 2 scheduled tasks"), std::string::npos);
  EXPECT_TRUE(state_->schedules("bot", "").empty());
  EXPECT_EQ(runs().size(), 2u);
  EXPECT_TRUE(fired_.empty());
  scheduler_.start(adapter);  // nothing left to report
  run_for(std::chrono::milliseconds(100));
  EXPECT_EQ(adapter.created().size(), 1u);
}

}  // namespace
}  // namespace pf
