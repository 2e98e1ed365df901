// Scheduled prompts end to end (src/bridge/bridge_schedule.cpp): the model schedules a prompt
// with the `schedule` tool; it fires into the channel quietly (NO_REPLY posts nothing), across a
// restart; a one-off missed while the bridge was down is reported; /schedule lists, pauses,
// resumes, cancels and shows the history; bad times are refused.
#include "bridge_fixture.h"

#include <ctime>

namespace pf::test {
namespace {

std::string iso_in(int seconds) {
  std::time_t t = std::time(nullptr) + seconds;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

json schedule_call(const json& args, const std::string& id = "1") {
  return {{"chat",
           {{"tool_calls",
             json::array({{{"id", id}, {"name", "schedule"}, {"arguments", args.dump()}}})},
            {"finish", "tool_calls"}}}};
}
json say(const std::string& text) {
  return {{"chat", {{"text", {text}}}}};
}

using BridgeScheduleTest = BridgeTest;

TEST_F(BridgeScheduleTest, AScheduledPromptFiresQuietly) {
  // The times are fixed before the bridge starts (iso_in truncates to the second): margins wide
  // enough that a slow start-up never makes them past when the model asks.
  json script =
      json::array({schedule_call({{"prompt", "post the build status"}, {"run_at", iso_in(4)}}),
                   say("Scheduled."), say("Build status: green."),
                   schedule_call({{"prompt", "check again"}, {"run_at", iso_in(10)}}, "2"),
                   say("Scheduled again."), say("NO_REPLY")});
  ScriptedModelServer model(script.dump());
  write_config(one_model(model), "a:m");
  auto bridge = start_bridge();
  std::string id =
      mm_.post(alice_, channel_, "@copilot tell me the build status in 4 seconds")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "Scheduled."); })) << bridge->log();
  EXPECT_NE(model.last_tool_result().find("\"created\""), std::string::npos)
      << model.last_tool_result();
  // It fires into the thread it was asked in.
  ASSERT_TRUE(wait_for([&] { return answered(id, "Build status: green."); })) << bridge->log();
  std::string second = mm_.post(alice_, channel_, "@copilot check again later")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(second, "Scheduled again."); })) << bridge->log();
  EXPECT_NE(model.last_tool_result().find("\"created\""), std::string::npos)
      << model.last_tool_result();
  size_t before = bot_posts().size(), asked = model.requests().size();
  // The NO_REPLY answer posts nothing, not even a placeholder for a moment.
  ASSERT_TRUE(wait_for([&] { return model.requests().size() > asked; }, 20000)) << bridge->log();
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  EXPECT_EQ(bot_posts().size(), before);
  for (const json& p : mm_.posts(channel_))
    EXPECT_EQ(p["message"].get<std::string>().find("NO_REPLY"), std::string::npos);
  std::string history = mm_.post(alice_, channel_, "@copilot /schedule history")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(history, " fired"); })) << bridge->log();
}

TEST_F(BridgeScheduleTest, SchedulesSurviveARestartAndMissedOnesAreReported) {
  // One falls due while the bridge is down (4 s), one after it is back (12 s): wide margins,
  // so a slow first turn (sanitizers, a loaded machine) still stops the bridge in time.
  auto scheduled_at = std::chrono::steady_clock::now();
  json script =
      json::array({schedule_call({{"prompt", "after the restart"}, {"run_at", iso_in(12)}}),
                   schedule_call({{"prompt", "missed one"}, {"run_at", iso_in(4)}}, "2"),
                   say("Two scheduled."), say("Fired after the restart.")});
  ScriptedModelServer model(script.dump());
  write_config(one_model(model), "a:m");
  auto bridge = start_bridge();
  std::string id = mm_.post(alice_, channel_, "@copilot schedule two things")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "Two scheduled."); })) << bridge->log();
  EXPECT_EQ(bridge->stop(), 0);
  // iso_in() truncates to the second: the "4 s" one is due 3 to 4 s after scheduled_at.
  ASSERT_LT(std::chrono::steady_clock::now() - scheduled_at, std::chrono::seconds(3))
      << "the first turn took so long that the 4 s schedule may have been due before the stop";
  std::this_thread::sleep_until(scheduled_at + std::chrono::milliseconds(4500));
  bridge = start_bridge();
  ASSERT_TRUE(wait_for([&] {
    for (const json& p : bot_posts())
      if (p["message"].get<std::string>().find("Missed 1 scheduled task") != std::string::npos)
        return true;
    return false;
  })) << bridge->log();
  ASSERT_TRUE(wait_for([&] { return answered(id, "Fired after the restart."); }, 20000))
      << bridge->log();
  std::string history = mm_.post(alice_, channel_, "@copilot /schedule history")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(history, " missed"); })) << bridge->log();
}

TEST_F(BridgeScheduleTest, CronSchedulesAreListedPausedAndCancelledAndBadTimesRefused) {
  json script = json::array(
      {schedule_call(
           {{"prompt", "daily digest"}, {"cron", "0 9 * * 1-5"}, {"timezone", "Europe/Berlin"}}),
       schedule_call({{"prompt", "x"}, {"cron", "61 * * * *"}}, "2"),
       schedule_call({{"prompt", "x"}, {"cron", "0 9 * * *"}, {"timezone", "Mars/Olympus"}}, "3"),
       schedule_call({{"prompt", "x"}, {"run_at", "2001-01-01T00:00Z"}}, "4"), say("Done.")});
  ScriptedModelServer model(script.dump());
  write_config(one_model(model), "a:m");
  auto bridge = start_bridge();
  std::string id = mm_.post(alice_, channel_, "@copilot set up the digest")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "Done."); })) << bridge->log();
  auto reqs = model.requests();
  std::vector<std::string> results;
  for (const json& m : reqs.back()["body"]["messages"])
    if (m["role"] == "tool") results.push_back(m["content"]);
  ASSERT_EQ(results.size(), 4u);
  EXPECT_NE(results[0].find("\"created\""), std::string::npos) << results[0];
  EXPECT_NE(results[0].find("T09:00+0"), std::string::npos) << results[0];  // 09:00 Berlin time
  EXPECT_NE(results[1].find("minute"), std::string::npos) << results[1];
  EXPECT_NE(results[2].find("unknown time zone"), std::string::npos) << results[2];
  EXPECT_NE(results[3].find("in the past"), std::string::npos) << results[3];
  std::string created = json::parse(results[0])["created"];
  std::string list = mm_.post(alice_, channel_, "@copilot /schedule list")["id"];
  ASSERT_TRUE(wait_for([&] {
    return answered(list, "`" + created + "` `0 9 * * 1-5` (Europe/Berlin)");
  })) << bridge->log();
  std::string pause = mm_.post(alice_, channel_, "@copilot /schedule pause " + created)["id"];
  ASSERT_TRUE(wait_for([&] { return answered(pause, "paused"); })) << bridge->log();
  std::string listed = mm_.post(alice_, channel_, "@copilot /schedule")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(listed, "**paused**"); })) << bridge->log();
  std::string cancel = mm_.post(alice_, channel_, "@copilot /schedule cancel " + created)["id"];
  ASSERT_TRUE(wait_for([&] { return answered(cancel, "cancelled"); })) << bridge->log();
  std::string none = mm_.post(alice_, channel_, "@copilot /schedule list")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(none, "No scheduled prompts"); })) << bridge->log();
}

}  // namespace
}  // namespace pf::test
