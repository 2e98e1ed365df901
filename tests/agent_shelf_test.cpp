// The agents and skills a channel runs with (src/bridge/agent_shelf.h): first the shelf itself
// over a real state store, then end to end on both platforms, where a custom agent's
// instructions, tools and model reach the model's request, and skills are listed, loaded with
// use_skill, turned off per channel and re-read by /reload skills.
#include "bridge/agent_shelf.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "bridge/sqlite_state_store.h"
#include "chat_bridge_fixture.h"

namespace pf {
namespace {

using nlohmann::json;

class AgentShelfTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_file(ws_ / "agents/reviewer.agent.md",
                     "---\ndescription: Reviews code\ntools: [read]\nmodel: b\n---\nReview.\n");
    test::write_file(ws_ / "agents/writer.agent.md", "---\ndescription: Writes\n---\nWrite.\n");
    test::write_file(ws_ / "agents/broken.agent.md", "---\nname: [x]\n---\nBody.\n");
    test::write_file(ws_ / "skills/deploy/SKILL.md", "---\ndescription: Deploys\n---\nSteps.\n");
    test::write_file(ws_ / "skills/review-pr/SKILL.md", "---\ndescription: PRs\n---\nSteps.\n");
  }
  AgentShelf::Dirs dirs(const std::string& root) { return {{root + "/agents"}, {root + "/skills"}}; }

  test::TempDir ws_, state_dir_;
  std::unique_ptr<StateStore> state_ = open_sqlite_state_store(state_dir_ / "bridge.db");
  AgentShelf shelf_{*state_, [this](const std::string& root) { return dirs(root); }};
};

TEST_F(AgentShelfTest, TheStoredChoiceOverridesTheConfiguredOne) {
  std::string missing;
  EXPECT_FALSE(shelf_.agent_of(state_->prefs("mm:c"), ws_.path(), "", &missing));
  EXPECT_EQ(shelf_.agent_of(state_->prefs("mm:c"), ws_.path(), "writer", &missing)->name, "writer");
  EXPECT_FALSE(shelf_.agent_of(state_->prefs("mm:c"), ws_.path(), "ghost", &missing));
  EXPECT_EQ(missing, "ghost");
  EXPECT_NE(shelf_.select_agent("mm:c", ws_.path(), "writer", "REVIEWER").find("Agent `reviewer` selected"),
            std::string::npos);
  EXPECT_EQ(shelf_.agent_of(state_->prefs("mm:c"), ws_.path(), "writer", &missing)->name, "reviewer");
  EXPECT_TRUE(missing.empty());
  std::string none = shelf_.select_agent("mm:c", ws_.path(), "writer", "");
  EXPECT_NE(none.find("configured `writer` is off here"), std::string::npos) << none;
  EXPECT_FALSE(shelf_.agent_of(state_->prefs("mm:c"), ws_.path(), "writer", &missing));  // deselected beats config
  std::string unknown = shelf_.select_agent("mm:c", ws_.path(), "", "nobody");
  EXPECT_NE(unknown.find("No agent `nobody` here. The agents: `reviewer`, `writer`."),
            std::string::npos)
      << unknown;
  std::string list = shelf_.list_agents("mm:d", ws_.path(), "writer");
  EXPECT_NE(list.find("- `writer` **(selected)**: Writes"), std::string::npos) << list;
  EXPECT_NE(list.find("- `reviewer`: Reviews code · tools: 1 · model `b`"), std::string::npos) << list;
  EXPECT_NE(list.find("broken.agent.md`: `name` must be a string"), std::string::npos) << list;
}

TEST_F(AgentShelfTest, SkillsAreDisabledPerChannelAndReadAgainOnReload) {
  EXPECT_EQ(shelf_.active_skills(state_->prefs("mm:c"), ws_.path()).size(), 2u);
  EXPECT_NE(shelf_.skills_command("mm:c", ws_.path(), "disable deploy nothing", "")
                .find("Disabled: `deploy`"),
            std::string::npos);
  std::vector<Skill> on = shelf_.active_skills(state_->prefs("mm:c"), ws_.path());
  ASSERT_EQ(on.size(), 1u);
  EXPECT_EQ(on[0].name, "review-pr");
  EXPECT_EQ(shelf_.active_skills(state_->prefs("mm:other"), ws_.path()).size(), 2u);  // per channel
  std::string listed = shelf_.skills_command("mm:c", ws_.path(), "", "TOOLS");
  EXPECT_NE(listed.find("**Disabled here**\n- `deploy`: Deploys"), std::string::npos) << listed;
  EXPECT_NE(listed.find("\n\nTOOLS"), std::string::npos) << listed;
  EXPECT_NE(shelf_.skills_command("mm:c", ws_.path(), "enable all", "").find("Enabled: `deploy` `review-pr`"),
            std::string::npos);
  EXPECT_EQ(shelf_.active_skills(state_->prefs("mm:c"), ws_.path()).size(), 2u);
  EXPECT_NE(shelf_.skills_command("mm:c", ws_.path(), "frobnicate x", "").find("takes `enable"),
            std::string::npos);
  EXPECT_NE(shelf_.skills_command("mm:c", ws_.path(), "disable rev", "").find("`review-pr`"),
            std::string::npos);  // a unique substring
  test::write_file(ws_ / "skills/new-one/SKILL.md", "---\ndescription: New\n---\nx\n");
  EXPECT_EQ(shelf_.skills(ws_.path())->skills.size(), 2u);  // kept until forgotten
  shelf_.forget_skills(ws_.path());
  EXPECT_EQ(shelf_.skills(ws_.path())->skills.size(), 3u);
  EXPECT_TRUE(shelf_.first_notice("mm:c", "x"));
  EXPECT_FALSE(shelf_.first_notice("mm:c", "x"));
  EXPECT_TRUE(shelf_.first_notice("mm:d", "x"));
}

// End to end, on Mattermost and Slack.
class AgentsInChatTest : public test::ChatBridgeTest {
 protected:
  void SetUp() override {
    test::ChatBridgeTest::SetUp();
    // The user-level folders of the bridge process are the test's own.
    ::setenv("XDG_CONFIG_HOME", (dir_ / "config").c_str(), 1);
    ::setenv("HOME", (dir_ / "home").c_str(), 1);
    test::write_file(repo_ / ".github/agents/reviewer.agent.md",
                     "---\nname: reviewer\ndescription: Reviews code for bugs\n"
                     "tools: ['read']\nmodel: second\n---\nYou are a strict reviewer. "
                     "REVIEWER-MARKER\n");
    test::write_file(repo_ / "agents/broken.agent.md", "---\nname: x\n");
    test::write_file(dir_ / "config/pilotfish/skills/deploy/SKILL.md",
                     "---\ndescription: Deploys the service\n---\nRun make deploy. "
                     "SKILL-MARKER\n");
  }
  json providers(const test::ScriptedModelServer& model) {
    return {{"a",
             {{"type", "openai"},
              {"baseUrl", model.base_url()},
              {"models", {{{"id", "m"}}, {{"id", "second"}}}}}}};
  }
  // The model's request for the last user message containing fragment.
  json request_for(const test::ScriptedModelServer& model, const std::string& fragment) {
    json out;
    for (const json& r : model.requests()) {
      if (!r["body"].contains("messages")) continue;
      const json& last = r["body"]["messages"].back();
      if (last["role"] == "user" && last["content"].dump().find(fragment) != std::string::npos)
        out = r["body"];
    }
    return out;
  }
  static std::vector<std::string> tool_names(const json& body) {
    std::vector<std::string> out;
    for (const json& t : body.value("tools", json::array())) out.push_back(t["function"]["name"]);
    return out;
  }
  static bool has(const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  }
  std::string say(const std::string& text, const std::string& fragment) {
    std::optional<std::string> r = new_reply(text, fragment);
    EXPECT_TRUE(r) << text << " (wanted " << fragment << ")\n" << dump(bot_posts()) << bridge_->log();
    return r.value_or("");
  }
  std::unique_ptr<test::ServeProcess> bridge_;
};

TEST_P(AgentsInChatTest, AnAgentShapesTheRequestUntilDeselected) {
  json script = json::array(
      {{{"match", "deploy please"},
        {"chat",
         {{"tool_calls", json::array({{{"id", "1"}, {"name", "use_skill"},
                                       {"arguments", json({{"name", "deploy"}}).dump()}}})},
          {"finish", "tool_calls"}}}},
       {{"match", "deploy please"}, {"chat", {{"text", {"Deployed."}}}}}});
  test::ScriptedModelServer model(script.dump());
  write_config(providers(model), "a:m");
  bridge_ = start_bridge();
  std::string listed = say("/agents", "Custom agents");
  EXPECT_NE(listed.find("`reviewer`: Reviews code for bugs"), std::string::npos) << listed;
  EXPECT_NE(listed.find("broken.agent.md`: front matter, line 2: the front matter is never closed"),
            std::string::npos)
      << listed;
  say("/agent reviewer", "Agent `reviewer` selected");
  say("first question", "You said: first question");
  json req = request_for(model, "first question");
  EXPECT_EQ(req["model"], "second");  // the agent's model, resolved as /model does
  std::string system = req["messages"][0]["content"].get<std::string>();
  EXPECT_NE(system.find("<custom_agent name=\"reviewer\">\nYou are a strict reviewer."),
            std::string::npos);
  EXPECT_NE(system.find("- deploy: Deploys the service"), std::string::npos);
  EXPECT_EQ(system.find("SKILL-MARKER"), std::string::npos);  // loaded only when asked for
  std::vector<std::string> tools = tool_names(req);
  EXPECT_TRUE(has(tools, "read_file") && has(tools, "list_directory") && has(tools, "use_skill") &&
              has(tools, "no_reply"))
      << req["tools"].dump();
  EXPECT_FALSE(has(tools, "search_code") || has(tools, "grep")) << req["tools"].dump();
  std::string status = say("/status", "| agent |");
  EXPECT_NE(status.find("| agent | `reviewer` |"), std::string::npos) << status;
  say("deploy please", "Deployed.");
  EXPECT_NE(model.last_tool_result().find("Run make deploy. SKILL-MARKER"), std::string::npos)
      << model.last_tool_result();
  say("/agent", "No agent");
  say("second question", "You said: second question");
  json plain = request_for(model, "second question");
  EXPECT_EQ(plain["model"], "m");
  EXPECT_EQ(plain["messages"][0]["content"].get<std::string>().find("REVIEWER-MARKER"),
            std::string::npos);
  EXPECT_TRUE(has(tool_names(plain), "search_code"));
}

TEST_P(AgentsInChatTest, SkillsAreTurnedOffPerChannelAndReloaded) {
  test::ScriptedModelServer model;
  write_config(providers(model), "a:m");
  bridge_ = start_bridge();
  // (Markup differs by platform: Slack's bold is *x* and its bullets are not "-".)
  std::string listed = say("/skills", "Tools offered here");
  EXPECT_NE(listed.find("`deploy`: Deploys the service"), std::string::npos) << listed;
  EXPECT_NE(listed.find("`use_skill`"), std::string::npos) << listed;
  say("/skills disable dep", "Disabled: `deploy`");
  say("after disabling", "You said: after disabling");
  json req = request_for(model, "after disabling");
  EXPECT_EQ(req["messages"][0]["content"].get<std::string>().find("<skills>"), std::string::npos);
  EXPECT_FALSE(has(tool_names(req), "use_skill"));
  listed = say("/tools", "Disabled here");
  EXPECT_LT(listed.find("Disabled here"), listed.find("`deploy`")) << listed;
  test::write_file(repo_ / ".agents/skills/release/SKILL.md",
                   "---\ndescription: Cuts a release\n---\nTag it.\n");
  EXPECT_EQ(say("/skills", "Tools offered").find("release"), std::string::npos);  // until reload
  say("/reload skills", "read afresh");
  EXPECT_NE(say("/skills", "Tools offered").find("`release`: Cuts a release"), std::string::npos);
  say("/skills enable all", "Enabled: `deploy` `release`");
}

TEST_P(AgentsInChatTest, AConfiguredAgentThatIsMissingIsSaidOnce) {
  test::ScriptedModelServer model;
  write_config(providers(model), "a:m", {{"agent", "ghost"}});
  bridge_ = start_bridge();
  std::string first = ask("one");
  std::string second = ask("two");
  ASSERT_TRUE(test::wait_for([&] { return answered(second, "You said: two"); })) << bridge_->log();
  ASSERT_TRUE(answered(first, "You said: one"));
  int notices = count_replies(first, "`ghost` is not defined") + count_replies(second, "`ghost` is not defined");
  EXPECT_EQ(notices, 1) << dump(bot_posts());
  auto check = test::run({test::pilotfish_bin(), "bridge", "check", "--config", dir_ / "pilotfish.json"});
  EXPECT_NE(check.out.find("its agent \"ghost\" is not defined"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("1 custom agents, 1 skills, 0 hooks"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("warn " + repo_.path() + "/agents/broken.agent.md: front matter"),
            std::string::npos)
      << check.out;
}

INSTANTIATE_TEST_SUITE_P(Platforms, AgentsInChatTest, ::testing::Values("mattermost", "slack"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace pf
