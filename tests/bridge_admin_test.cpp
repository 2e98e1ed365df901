// An admin bot's tools end to end on both platforms (bridge/bridge_admin.cpp, through the real
// `pilotfish bridge` and the chat test servers): create_project asks, then makes the channel with
// the person in it, clones the repository from a git server over HTTP (tests/servers/
// git_http_server.py, a token from git.tokenEnv), writes AGENTS.md and answers there; admin
// tools ask even on autopilot; the channel survives a restart, shows in /config and /project,
// and /project remove stops the answers there; the audit trail has each call.
#include <filesystem>

#include "chat_bridge_fixture.h"
#include "core/fs.h"

namespace pf {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::ChatBridgeTest;
using test::ChatPost;
using test::wait_for;

json tool_call(const std::string& name, const json& args) {
  return {{"chat",
           {{"tool_calls", json::array({{{"id", "1"}, {"name", name}, {"arguments", args.dump()}}})},
            {"finish", "tool_calls"}}}};
}
json say(const std::string& text, const std::string& match) {
  return {{"chat", {{"text", {text}}}}, {"match", match}};
}
json call_on(const std::string& name, const json& args, const std::string& match) {
  json a = tool_call(name, args);
  a["match"] = match;
  return a;
}

std::string git(const std::string& dir, const std::string& args) {
  auto r = test::run({"bash", "-c", "cd '" + dir + "' && git -c user.email=t@example.com "
                                        "-c user.name=t -c init.defaultBranch=main " + args});
  EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
  return r.out;
}

class ChatAdminTest : public ChatBridgeTest {
 protected:
  void SetUp() override {
    ChatBridgeTest::SetUp();
    origin_ = dir_ / "origin";
    fs::create_directories(origin_);
    git(origin_, "init -q");
    test::write_file(origin_ + "/charge.ts", "export function chargeCard(amount: number) {}\n");
    git(origin_, "add -A && git -c user.email=t@example.com -c user.name=t commit -qm first");
    git(dir_.path(), "clone -q --bare origin served/payments.git");
    git_ = std::make_unique<test::PythonServer>(
        "git_http_server.py", std::vector<std::string>{dir_ / "served", "--token", "tok-9"});
    url_ = "http://127.0.0.1:" + std::to_string(git_->port()) + "/payments.git";
    ::setenv("PF_ADMIN_GIT_TOKEN", "tok-9", 1);
    fs::create_directories(dir_ / "shared");
  }
  void TearDown() override { ::unsetenv("PF_ADMIN_GIT_TOKEN"); }

  // The fixture's config with the bot an admin, clones and workspaces in the test's folder.
  void write_admin_config(const test::ScriptedModelServer& model) {
    write_config(test::one_model(model), "a:m", json::object(),
                 {{"workspacesDir", dir_ / "workspaces"}});
    json cfg = json::parse(read_file(dir_ / "pilotfish.json"));
    cfg["bridge"]["platforms"]["chat"]["bots"]["copilot"]["admin"] = true;
    cfg["git"] = {{"cloneDir", dir_ / "clones"},
                  {"tokenEnv", {{"127.0.0.1", "PF_ADMIN_GIT_TOKEN"}}}};
    test::write_file(dir_ / "pilotfish.json", cfg.dump(2));
  }
  // alice asks in the channel; the bot's prompt appears in the thread and she answers it.
  ChatPost approve(const std::string& text, const std::string& answer = "yes") {
    std::string id = ask(text);
    ChatPost prompt;
    EXPECT_TRUE(wait_reply(id, "Permission needed", &prompt)) << dump(bot_posts()) << bridge_->log();
    chat_->post("alice", channel(), answer, id);
    last_ask_ = id;
    return prompt;
  }
  // The bot's reply in a channel containing fragment, within the wait (false when none came).
  bool replied_in(const std::string& channel_id, const std::string& fragment, int ms = 15000) {
    return wait_for([&] {
      for (const ChatPost& p : chat_->bot_posts(channel_id))
        if (p.text.find(fragment) != std::string::npos) return true;
      return false;
    }, ms);
  }

  std::string origin_, url_, last_ask_;
  std::unique_ptr<test::PythonServer> git_;
  std::unique_ptr<test::ServeProcess> bridge_;
};

TEST_P(ChatAdminTest, CreateProjectMakesAChannelThatIsAnsweredUntilRemoved) {
  json script = json::array(
      {call_on("create_project",
               {{"name", "payments"}, {"repository", url_}, {"purpose", "card payments"}},
               "set up payments"),
       say("Project ready.", "set up payments"),
       call_on("grant_path_access", {{"path", dir_ / "shared"}, {"mode", "read"}}, "share it"),
       say("Shared.", "share it"),
       call_on("list_agent_access", json::object(), "who may do what"),
       say("Listed.", "who may do what"),
       call_on("get_platform_info", json::object(), "what is out there"),
       say("Looked.", "what is out there"),
       say("chargeCard is in charge.ts.", "where is chargeCard"),
       say("Still here.", "are you there"),
       say("Should not be said.", "after removal")});
  test::ScriptedModelServer model(script.dump());
  write_admin_config(model);
  bridge_ = start_bridge();

  ChatPost prompt = approve("set up payments");
  EXPECT_NE(prompt.text.find("create_project"), std::string::npos) << prompt.text;
  EXPECT_NE(prompt.text.find("create channel #payments for " + url_), std::string::npos)
      << prompt.text;
  EXPECT_NE(prompt.text.find("not remembered"), std::string::npos) << prompt.text;
  ASSERT_TRUE(wait_for([&] { return answered(last_ask_, "Project ready."); }))
      << dump(bot_posts()) << bridge_->log();

  // The channel, with alice and the bot in it; the clone, its AGENTS.md; the tool's result.
  auto made = chat_->channel_named("payments");
  ASSERT_TRUE(made) << bridge_->log();
  EXPECT_TRUE(made->second.count("alice") && made->second.count("copilot"));
  std::string clone = dir_ / ("clones/127.0.0.1_" + std::to_string(git_->port()) + "/payments");
  EXPECT_TRUE(fs::exists(clone + "/charge.ts")) << bridge_->log();
  EXPECT_NE(read_file(clone + "/AGENTS.md").find("card payments"), std::string::npos);
  std::string result;
  for (const json& r : model.requests())
    for (const json& m : r["body"].value("messages", json::array()))
      if (m["role"] == "tool") result = m["content"].dump();
  EXPECT_NE(result.find("workingDirectory"), std::string::npos) << result;
  EXPECT_EQ(result.find("tok-9"), std::string::npos);

  // Answered there, about the clone (its AGENTS.md is in the instructions).
  chat_->post("alice", made->first, chat_->mention() + "where is chargeCard?");
  ASSERT_TRUE(replied_in(made->first, "chargeCard is in charge.ts.")) << bridge_->log();
  std::string asked_there;
  for (const json& r : model.requests())
    if (r["body"].dump().find("where is chargeCard") != std::string::npos) asked_there = r["body"].dump();
  EXPECT_NE(asked_there.find("card payments"), std::string::npos);
  std::optional<std::string> cfg;
  {
    std::string id = chat_->post("alice", made->first, chat_->mention() + "/config");
    EXPECT_TRUE(wait_for([&] {
      for (const ChatPost& p : chat_->bot_posts(made->first))
        if (p.text.find("added from chat by @alice") != std::string::npos) return true;
      return false;
    })) << dump(chat_->bot_posts(made->first));
    (void)id;
  }

  // Admin tools ask even on autopilot; a read grant is kept and listed.
  EXPECT_TRUE(new_reply("/yolo on", "Autopilot on"));
  prompt = approve("share it");
  EXPECT_NE(prompt.text.find("grant this bot read access to"), std::string::npos) << prompt.text;
  ASSERT_TRUE(wait_for([&] { return answered(last_ask_, "Shared."); })) << bridge_->log();
  approve("who may do what");
  ASSERT_TRUE(wait_for([&] { return answered(last_ask_, "Listed."); })) << bridge_->log();
  std::string listing;
  for (const json& r : model.requests())
    for (const json& m : r["body"].value("messages", json::array()))
      if (m["role"] == "tool" && m["content"].dump().find("grantedPaths") != std::string::npos)
        listing = m["content"].dump();
  EXPECT_NE(listing.find(fs::canonical(dir_ / "shared").string()), std::string::npos) << listing;
  EXPECT_NE(listing.find("addedFromChatBy"), std::string::npos) << listing;
  approve("what is out there");
  ASSERT_TRUE(wait_for([&] { return answered(last_ask_, "Looked."); })) << bridge_->log();
  json info;
  for (const json& r : model.requests())
    for (const json& m : r["body"].value("messages", json::array()))
      if (m["role"] == "tool" && m["content"].get<std::string>().find("\"teams\"") != std::string::npos)
        info = json::parse(m["content"].get<std::string>());
  ASSERT_TRUE(info.is_object()) << bridge_->log();
  EXPECT_EQ(info["teams"].size(), 1u) << info;
  bool listed = false;
  for (const json& c : info["channels"])
    if (c["id"] == made->first) listed = c["answered"] == true && c["addedFromChatBy"] == "alice";
  EXPECT_TRUE(listed) << info;

  // A config reload keeps it.
  EXPECT_TRUE(new_reply("/reload config", "Applied"));

  // After a restart the channel is still answered, and listed.
  EXPECT_EQ(bridge_->stop(), 0);
  bridge_ = start_bridge();
  chat_->post("alice", made->first, chat_->mention() + "are you there?");  // after a reload and a restart
  ASSERT_TRUE(replied_in(made->first, "Still here.")) << bridge_->log();
  EXPECT_TRUE(new_reply("/project", "#payments"));
  auto check = test::run({test::pilotfish_bin(), "bridge", "check", "--db", db(), "--config",
                          dir_ / "pilotfish.json"});
  EXPECT_NE(check.out.find("channel " + made->first + " (added from chat by @alice) (a clone of " +
                           url_ + ") works in " + clone),
            std::string::npos)
      << check.out << check.err;

  // Removed: nothing there is answered any more; the audit trail kept each admin call.
  EXPECT_TRUE(new_reply("/project remove payments", "Removed #payments"));
  chat_->post("alice", made->first, chat_->mention() + "after removal?");
  EXPECT_FALSE(replied_in(made->first, "Should not be said.", 4000)) << bridge_->log();
  EXPECT_EQ(bridge_->stop(), 0);
  auto audit = test::run({test::pilotfish_bin(), "audit", "--db", db(), "--config",
                          dir_ / "pilotfish.json", "--json"});
  ASSERT_EQ(audit.exit_code, 0) << audit.err;
  std::map<std::string, std::string> decided;  // tool -> who approved it
  json records = json::parse(audit.out);  // named: a range-for over a temporary's member dangles
  for (const json& r : records["records"])
    if (r["decision"] == "approved") decided[r["tool"]] = r["decidedBy"];
  EXPECT_EQ(decided, (std::map<std::string, std::string>{{"create_project", "@alice"},
                                                         {"grant_path_access", "@alice"},
                                                         {"list_agent_access", "@alice"},
                                                         {"get_platform_info", "@alice"}}))
      << audit.out;
}

// A configured channel's workingDirectory given as a git URL: cloned when the bridge starts (the
// token from git.tokenEnv), indexed, and answered about.
TEST_P(ChatAdminTest, AConfiguredChannelsGitUrlIsClonedAtStart) {
  json script = json::array({say("Found it.", "where is chargeCard")});
  test::ScriptedModelServer model(script.dump());
  write_admin_config(model);
  json cfg = json::parse(read_file(dir_ / "pilotfish.json"));
  cfg["bridge"]["channels"][0]["workingDirectory"] = url_ + "#main";
  test::write_file(dir_ / "pilotfish.json", cfg.dump(2));
  bridge_ = start_bridge();
  std::string clone =
      dir_ / ("clones/127.0.0.1_" + std::to_string(git_->port()) + "/payments@main");
  std::string id = ask("where is chargeCard?");
  ASSERT_TRUE(wait_for([&] { return answered(id, "Found it."); })) << bridge_->log();
  EXPECT_TRUE(fs::exists(clone + "/charge.ts")) << bridge_->log();
  // The question was answered from the clone's index.
  std::string asked;
  for (const json& r : model.requests())
    if (r["body"].dump().find("where is chargeCard") != std::string::npos) asked = r["body"].dump();
  EXPECT_NE(asked.find("charge.ts"), std::string::npos) << asked;
}

INSTANTIATE_TEST_SUITE_P(Platforms, ChatAdminTest, ::testing::Values("mattermost", "slack"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace pf
