// Calls between bots in a channel (src/bridge/bridge_agent_calls.cpp), end to end on both
// platforms with three configured bots: ask_agent runs the target as an ephemeral answer in its
// own workspace with the action kinds both sides have, a call that would need a person is
// refused (nobody can be asked), the callee's steps show in a verbose channel's feed, and every
// call is recorded; a call neither side's list allows, a cycle, a call deeper than maxDepth and
// one past its timeout are refused or stopped, and say why.
#include <filesystem>

#include "chat_bridge_fixture.h"
#include "core/fs.h"

namespace pf {
namespace {

using nlohmann::json;
using test::scripted_call;
using test::scripted_text;

class AgentCallsTest : public test::ChatBridgeTest {
 protected:
  // copilot (the channel's bot) with helper and scribe beside it; helper's workspace holds
  // notes.md. inter: the interAgent section.
  void configure(const test::ScriptedModelServer& model, const json& inter,
                 const json& channel = json::object()) {
    write_config(test::one_model(model), "a:m", channel,
                 {{"workspaces", (dir_ / "ws").c_str()}});
    test::write_file(dir_ / "ws/helper/notes.md", "# Notes\n\nThe launch code is 4242.\n");
    json cfg = json::parse(pf::read_file(dir_ / "pilotfish.json"));
    json& bots = cfg["bridge"]["platforms"]["chat"]["bots"];
    for (const char* name : {"helper", "scribe"}) {
      bots[name] = chat_->add_bot(name);
      bots[name]["access"] = access_;
    }
    bots["helper"]["actions"] = {"shell", "write"};
    cfg["interAgent"] = inter;
    test::write_file(dir_ / "pilotfish.json", cfg.dump(2));
  }
  // The bodies of the chat requests one of whose user messages contains fragment.
  static std::vector<json> bodies(const test::ScriptedModelServer& model, const std::string& fragment) {
    std::vector<json> out;
    for (const json& r : model.requests())
      if (r["body"].contains("messages") && r["body"]["messages"].dump().find(fragment) != std::string::npos)
        out.push_back(r["body"]);
    return out;
  }
  // The tool results the model got in requests whose messages contain fragment, joined.
  static std::string results(const test::ScriptedModelServer& model, const std::string& fragment) {
    std::string out;
    for (const json& b : bodies(model, fragment))
      for (const json& m : b["messages"])
        if (m["role"] == "tool") out += m["content"].get<std::string>() + "\n";
    return out;
  }
  std::string calls_table() {
    return test::run({"sqlite3", dir_ / "bridge.db",
                      "SELECT caller_bot, target_bot, success, depth FROM agent_calls ORDER BY id"}).out;
  }
  std::unique_ptr<test::ServeProcess> bridge_;
};

TEST_P(AgentCallsTest, TheTargetAnswersFromItsWorkspaceWithinTheCallersLimits) {
  json script = json::array({
      scripted_call("ask_agent", {{"target", "helper"}, {"message", "What is the launch code?"}}, "ask the helper"),
      scripted_call("run_command", {{"command", "touch made.txt"}}, "What is the launch code?"),
      scripted_call("read_file", {{"filePath", "notes.md"}}, "What is the launch code?"),
      scripted_text("The code is 4242.", "What is the launch code?"),
      scripted_text("Helper says 4242.", "ask the helper"),
  });
  test::ScriptedModelServer model(script.dump());
  configure(model, {{"enabled", true}, {"allow", {{"copilot", {{"canCall", {"helper"}}}},
                                                  {"helper", {{"canBeCalledBy", {"*"}}}}}}},
            {{"actions", {"shell"}}, {"verbose", true}});
  bridge_ = start_bridge();
  std::string id = ask("ask the helper");
  ASSERT_TRUE(test::wait_for([&] { return answered(id, "Helper says 4242."); }))
      << dump(bot_posts()) << bridge_->log();
  // The caller was offered ask_agent naming helper (and not scribe, which allows nobody).
  json first = bodies(model, "ask the helper").at(0);
  std::string offered = first["tools"].dump();
  EXPECT_NE(offered.find("\"ask_agent\""), std::string::npos);
  EXPECT_NE(offered.find("\"helper\""), std::string::npos);
  EXPECT_EQ(offered.find("\"scribe\""), std::string::npos);
  // The callee: its own instructions and workspace, shell (both have it) but not write.
  std::vector<json> callee = bodies(model, "What is the launch code?");
  ASSERT_GE(callee.size(), 3u);
  std::string system = callee[0]["messages"][0]["content"];
  EXPECT_NE(system.find("You are the bot helper, called by the bot copilot on behalf of @alice"),
            std::string::npos) << system;
  std::string tools = callee[0]["tools"].dump();
  EXPECT_NE(tools.find("\"run_command\""), std::string::npos);
  EXPECT_EQ(tools.find("\"write_file\""), std::string::npos);
  EXPECT_EQ(tools.find("\"show_file_in_chat\""), std::string::npos);
  std::string told = results(model, "What is the launch code?");
  EXPECT_NE(told.find("cannot ask anyone"), std::string::npos) << told;
  EXPECT_NE(told.find("launch code is 4242"), std::string::npos) << told;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "ws/helper/made.txt"));
  std::string got = results(model, "ask the helper");
  EXPECT_NE(got.find("\"answer\":\"The code is 4242.\""), std::string::npos) << got;
  EXPECT_NE(got.find("\"target\":\"helper\""), std::string::npos) << got;
  // The feed shows the call and the callee's steps; the call is recorded.
  EXPECT_TRUE(test::wait_for([&] { return answered(id, "answered in"); })) << dump(bot_posts());
  EXPECT_TRUE(answered(id, "copilot \u2192 helper"));
  EXPECT_TRUE(answered(id, "helper: `read_file`"));
  EXPECT_EQ(calls_table(), "copilot|helper|1|1\n");
  // `bridge check` says who may call whom, and fails on an allow entry naming no bot.
  auto check = test::run({test::pilotfish_bin(), "bridge", "check", "--config", dir_ / "pilotfish.json"});
  EXPECT_NE(check.out.find("ok   interAgent: copilot may call helper"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("ok   interAgent: helper calls no bot"), std::string::npos) << check.out;
  json cfg = json::parse(pf::read_file(dir_ / "pilotfish.json"));
  cfg["interAgent"]["allow"]["copilot"]["canCall"] = {"helpr"};
  test::write_file(dir_ / "pilotfish.json", cfg.dump());
  check = test::run({test::pilotfish_bin(), "bridge", "check", "--config", dir_ / "pilotfish.json"});
  EXPECT_NE(check.exit_code, 0);
  EXPECT_NE(check.out.find("FAIL interAgent.allow.copilot: no bot is named helpr"), std::string::npos) << check.out;
}

TEST_P(AgentCallsTest, RefusalsCyclesDepthAndTimeoutsSayWhy) {
  json script = json::array({
      scripted_call("ask_agent", {{"target", "scribe"}, {"message", "hello scribe"}}, "try scribe"),
      scripted_text("Scribe refused.", "try scribe"),
      scripted_call("ask_agent", {{"target", "helper"}, {"message", "loop back please"}}, "try helper"),
      scripted_call("ask_agent", {{"target", "copilot"}, {"message", "x"}}, "loop back please"),
      scripted_call("ask_agent", {{"target", "scribe"}, {"message", "y"}}, "loop back please"),
      scripted_text("Could not.", "loop back please"),
      scripted_text("Helper could not.", "try helper"),
      scripted_call("ask_agent", {{"target", "helper"}, {"message", "take your time"}, {"timeout", 1}}, "slow one"),
      test::slow_chat(10, 0.4, "take your time"),
      scripted_text("Too slow.", "slow one"),
  });
  test::ScriptedModelServer model(script.dump());
  configure(model, {{"enabled", true},
                    {"maxDepth", 1},
                    {"allow", {{"copilot", {{"canCall", {"*"}}, {"canBeCalledBy", {"helper"}}}},
                               {"helper", {{"canCall", {"*"}}, {"canBeCalledBy", {"copilot"}}}},
                               {"scribe", {{"canBeCalledBy", {"helper"}}}}}}});
  bridge_ = start_bridge();
  std::string a = ask("try scribe");
  ASSERT_TRUE(test::wait_for([&] { return answered(a, "Scribe refused."); })) << bridge_->log();
  EXPECT_NE(results(model, "try scribe").find("copilot may not call scribe"), std::string::npos)
      << results(model, "try scribe");
  std::string b = ask("try helper");
  ASSERT_TRUE(test::wait_for([&] { return answered(b, "Helper could not."); })) << bridge_->log();
  std::string told = results(model, "loop back please");
  EXPECT_NE(told.find("a cycle: copilot \u2192 helper \u2192 copilot"), std::string::npos) << told;
  EXPECT_NE(told.find("too deep: this call would be number 2"), std::string::npos) << told;
  // At maxDepth the callee is not offered ask_agent at all (it called it anyway above).
  EXPECT_EQ(bodies(model, "loop back please").at(0)["tools"].dump().find("ask_agent"), std::string::npos);
  std::string c = ask("slow one");
  ASSERT_TRUE(test::wait_for([&] { return answered(c, "Too slow."); })) << bridge_->log();
  EXPECT_NE(results(model, "slow one").find("helper did not finish within 1 s"), std::string::npos)
      << results(model, "slow one");
  // Recorded as each call ends: the nested calls before the call they were made in.
  EXPECT_EQ(calls_table(),
            "copilot|scribe|0|1\nhelper|copilot|0|2\nhelper|scribe|0|2\ncopilot|helper|1|1\n"
            "copilot|helper|0|1\n");
}

INSTANTIATE_TEST_SUITE_P(Platforms, AgentCallsTest, ::testing::Values("mattermost", "slack"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace pf
