// Plan mode, /implement and autopilot in a channel (src/bridge/bridge_plan.cpp), end to end on
// both platforms: a planning turn is offered only reads and update_plan and refuses a write even
// in yolo, /plan show and summary, /implement carries the plan out on autopilot, autopilot sends
// the model on until it says done, and /implement yolo approves for its own run only.
#include <filesystem>

#include "chat_bridge_fixture.h"

namespace pf {
namespace {

using nlohmann::json;

using test::scripted_call;
using test::scripted_text;

class PlanInChatTest : public test::ChatBridgeTest {
 protected:
  std::string say_(const std::string& text, const std::string& fragment) {
    std::optional<std::string> r = new_reply(text, fragment);
    EXPECT_TRUE(r) << text << " (wanted " << fragment << ")\n" << dump(bot_posts()) << bridge_->log();
    return r.value_or("");
  }
  // The requests whose user messages include fragment.
  std::vector<json> requests_with(const test::ScriptedModelServer& model, const std::string& fragment) {
    std::vector<json> out;
    for (const json& r : model.requests())
      if (r["body"].contains("messages"))
        for (const json& m : r["body"]["messages"])
          if (m["role"] == "user" && m["content"].dump().find(fragment) != std::string::npos) {
            out.push_back(r["body"]);
            break;
          }
    return out;
  }
  static std::string tools_of(const json& body) {
    std::string out;
    for (const json& t : body.value("tools", json::array())) out += t["function"]["name"].get<std::string>() + " ";
    return out;
  }
  bool exists(const std::string& f) { return std::filesystem::exists(repo_ / f); }
  std::unique_ptr<test::ServeProcess> bridge_;
};

TEST_P(PlanInChatTest, PlanThenImplementOnAutopilot) {
  json script = json::array({
      scripted_call("write_file", {{"path", "x.txt"}, {"content", "hi"}}, "alpha plan"),
      scripted_call("update_plan", {{"plan", "1. Add x.txt saying hi"}}, "alpha plan"),
      scripted_text("Planned.", "alpha plan"),
      scripted_text("- adds x.txt", "1. Add x.txt saying hi"),  // the summary request: the plan alone
      scripted_call("write_file", {{"path", "x.txt"}, {"content", "hi"}}, "Implement the following plan"),
      scripted_text("Wrote x.txt. AUTOPILOT: DONE", "Implement the following plan"),
  });
  test::ScriptedModelServer model(script.dump());
  write_config(test::one_model(model), "a:m", {{"actions", {"write", "shell"}}});
  bridge_ = start_bridge();
  say_("/plan on", "Plan mode on");
  say_("/yolo on", "Autopilot on");  // approves what the engine would ask; plan mode still refuses
  std::string id = ask("alpha plan please");
  ASSERT_TRUE(test::wait_for([&] { return answered(id, "Planned."); })) << dump(bot_posts()) << bridge_->log();
  EXPECT_FALSE(exists("x.txt"));
  std::vector<json> planning = requests_with(model, "alpha plan");
  ASSERT_GE(planning.size(), 3u);
  std::string offered = tools_of(planning[0]);
  EXPECT_NE(offered.find("update_plan "), std::string::npos) << offered;
  EXPECT_NE(offered.find("read_file "), std::string::npos) << offered;
  EXPECT_EQ(offered.find("write_file"), std::string::npos) << offered;
  EXPECT_EQ(offered.find("run_command"), std::string::npos) << offered;
  EXPECT_EQ(offered.find("schedule"), std::string::npos) << offered;
  EXPECT_NE(planning[1].dump().find("plan mode: only reading is allowed (write_file would act)"),
            std::string::npos);
  EXPECT_TRUE(answered(id, "1. Add x.txt saying hi")) << dump(replies_to(id));  // the plan post
  EXPECT_NE(say_("/plan show", "1. Add x.txt").find("Plan"), std::string::npos);
  EXPECT_NE(say_("/status", "| mode |").find("| mode | plan |"), std::string::npos);
  say_("/plan summary", "adds x.txt");
  say_("/implement", "Implementing the plan on autopilot");
  EXPECT_TRUE(test::wait_for([&] { return exists("x.txt"); })) << dump(bot_posts()) << bridge_->log();
  ASSERT_TRUE(test::wait_for([&] {
    for (const test::ChatPost& p : bot_posts())
      if (p.text.find("Wrote x.txt") != std::string::npos) return true;
    return false;
  })) << dump(bot_posts());
  std::vector<json> run = requests_with(model, "Implement the following plan");
  ASSERT_FALSE(run.empty());
  std::string system = run[0]["messages"][0]["content"];
  EXPECT_NE(system.find("You are on autopilot"), std::string::npos);
  EXPECT_EQ(system.find("<plan_mode>"), std::string::npos);  // plan mode is left
  EXPECT_NE(run[0].dump().find("1. Add x.txt saying hi"), std::string::npos);
  EXPECT_NE(say_("/status", "| mode |").find("| mode | interactive |"), std::string::npos);
}

TEST_P(PlanInChatTest, AutopilotGoesOnUntilDoneAndYoloOnceReverts) {
  json script = json::array({
      scripted_text("Step one done.", "beta task"),
      scripted_text("All finished. AUTOPILOT: DONE", "Continue on your own"),
      scripted_call("update_plan", {{"plan", "1. Add y.txt"}}, "gamma plan"),
      scripted_text("Planned y.", "gamma plan"),
      scripted_call("run_command", {{"command", "touch y.txt"}}, "1. Add y.txt"),
      scripted_text("Wrote y. AUTOPILOT: DONE", "1. Add y.txt"),
      scripted_call("run_command", {{"command", "touch z.txt"}}, "delta write"),
      scripted_text("Left it.", "delta write"),
  });
  test::ScriptedModelServer model(script.dump());
  // (Commands ask; writes inside the workspace would not.)
  write_config(test::one_model(model), "a:m", {{"actions", {"shell"}}});
  bridge_ = start_bridge();
  EXPECT_NE(say_("/auto", "Autopilot on").find("still ask"), std::string::npos);
  std::string id = ask("beta task");
  ASSERT_TRUE(test::wait_for([&] { return answered(id, "All finished."); })) << dump(bot_posts()) << bridge_->log();
  EXPECT_TRUE(answered(id, "Step one done."));
  std::vector<json> nudged = requests_with(model, "Continue on your own");
  ASSERT_EQ(nudged.size(), 1u);
  EXPECT_EQ(nudged[0]["messages"].back()["content"].get<std::string>().rfind("Continue on your own", 0), 0u);
  say_("/autopilot off", "Autopilot off");
  say_("/new", "New conversation");
  say_("/plan", "Plan mode on");
  std::string g = ask("gamma plan");
  ASSERT_TRUE(test::wait_for([&] { return answered(g, "Planned y."); })) << bridge_->log();
  // yolo for this run only: the write goes through without a prompt ...
  say_("/implement yolo", "approved for this run only");
  ASSERT_TRUE(test::wait_for([&] { return exists("y.txt"); })) << dump(bot_posts()) << bridge_->log();
  for (const test::ChatPost& p : bot_posts()) EXPECT_EQ(p.text.find("Permission needed"), std::string::npos) << p.text;
  ASSERT_TRUE(test::wait_for([&] {
    for (const test::ChatPost& p : bot_posts())
      if (p.text.find("Wrote y.") != std::string::npos) return true;
    return false;
  }));
  // ... and the next write asks again.
  std::string d = ask("delta write");
  test::ChatPost prompt;
  ASSERT_TRUE(wait_reply(d, "Permission needed", &prompt)) << dump(bot_posts()) << bridge_->log();
  ask("no", "alice", d);
  ASSERT_TRUE(test::wait_for([&] { return answered(d, "Left it."); })) << bridge_->log();
  EXPECT_FALSE(exists("z.txt"));
}

INSTANTIATE_TEST_SUITE_P(Platforms, PlanInChatTest, ::testing::Values("mattermost", "slack"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace pf
