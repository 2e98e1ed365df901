// Every command of the bridge's table (src/bridge/bridge_commands.cpp) end to end on both
// platforms (chat_bridge_fixture.h), each answer checked for what it must say or do: the
// conversation commands, the model and settings ones, the permission ones against real prompts,
// and /mcp, /tools (/skills), /agents, /plan, /implement, /autopilot, /schedule and /project. `/help all` must list exactly the commands tested here.
#include <filesystem>
#include <set>

#include "chat_bridge_fixture.h"

namespace pf {
namespace {

using nlohmann::json;
using test::ChatBridgeTest;
using test::ChatPost;
using test::slow_chat;
using test::wait_for;

// The commands (aliases included) each test below sends; together, the whole table.
const std::vector<std::string> kConversation = {"help",    "new",  "resume", "status",
                                                "context", "stop", "cancel"};
const std::vector<std::string> kModel = {"model",   "models", "provider",  "providers",
                                         "config",  "verbose", "reload",   "status",
                                         "reasoning", "streamer-mode", "on-air"};
const std::vector<std::string> kPermissions = {"approve", "deny", "always", "remember",
                                               "rules",   "rule", "yolo"};
const std::vector<std::string> kTools = {"mcp",       "tools",     "schedule", "schedules",
                                         "tasks",     "reload",    "skills",   "agents",
                                         "agent",     "plan",      "implement", "autopilot",
                                         "auto"};
const std::vector<std::string> kProjects = {"project", "projects"};

std::set<std::string> all_tested() {
  std::set<std::string> out;
  for (const auto* list : {&kConversation, &kModel, &kPermissions, &kTools, &kProjects})
    out.insert(list->begin(), list->end());
  return out;
}

// The command names in the first cell of each row of `/help all`'s table.
std::set<std::string> names_in_help(const std::string& help) {
  std::set<std::string> out;
  size_t at = 0;
  while ((at = help.find("\n| `/", at)) != std::string::npos) {
    std::string cell = help.substr(at + 3, help.find(" | ", at + 3) - at - 3);
    for (size_t n = cell.find("`/"); n != std::string::npos; n = cell.find("`/", n + 1)) {
      size_t end = cell.find_first_not_of("abcdefghijklmnopqrstuvwxyz-", n + 2);
      out.insert(cell.substr(n + 2, end - n - 2));
    }
    ++at;
  }
  return out;
}

// The line of text containing fragment ("" when none).
std::string line_of(const std::string& text, const std::string& fragment) {
  size_t at = text.find(fragment);
  if (at == std::string::npos) return "";
  size_t begin = text.rfind('\n', at);
  begin = begin == std::string::npos ? 0 : begin + 1;
  return text.substr(begin, text.find('\n', at) - begin);
}

// What stands between the first pair of backticks after marker ("" when none).
std::string ticked_after(const std::string& text, const std::string& marker) {
  size_t at = text.find(marker);
  if (at == std::string::npos) return "";
  size_t open = text.find('`', at + marker.size());
  if (open == std::string::npos) return "";
  return text.substr(open + 1, text.find('`', open + 1) - open - 1);
}

json tool_call(const std::string& name, const json& args, const std::string& id = "1") {
  return {{"chat",
           {{"tool_calls", json::array({{{"id", id}, {"name", name}, {"arguments", args.dump()}}})},
            {"finish", "tool_calls"}}}};
}
json say(const std::string& text) {
  return {{"chat", {{"text", {text}}}}};
}
json matching(json action, const std::string& match) {
  action["match"] = match;
  return action;
}

class ChatCommandsTest : public ChatBridgeTest {
 protected:
  // alice sends text (a command is recorded as sent), in root's thread when given; the new
  // reply in the thread that contains fragment ("" after a timeout).
  std::string command(const std::string& text, const std::string& fragment,
                      const std::string& root = "") {
    if (text[0] == '/') sent_.insert(text.substr(1, text.find(' ') - 1));
    std::optional<std::string> said = new_reply(text, fragment, root);
    EXPECT_TRUE(said) << text << " (wanted " << fragment << ")\n"
                      << dump(bot_posts()) << bridge_->log();
    return said.value_or("");
  }
  // A command whose effect is not a reply of its own (it answers a prompt, stops a turn).
  void send(const std::string& text, const std::string& root) {
    sent_.insert(text.substr(1, text.find(' ') - 1));
    ask(text, "alice", root);
  }
  // The request the model got for the last user message containing fragment, as JSON text.
  std::string request_for(const test::ScriptedModelServer& model, const std::string& fragment) {
    std::string out;
    for (const json& r : model.requests()) {
      if (!r["body"].contains("messages")) continue;
      const json& last = r["body"]["messages"].back();
      if (last["role"] == "user" && last["content"].dump().find(fragment) != std::string::npos)
        out = r["body"].dump();
    }
    return out;
  }
  void expect_sent(const std::vector<std::string>& names) {
    EXPECT_EQ(sent_, std::set<std::string>(names.begin(), names.end()));
  }
  bool exists(const std::string& file) { return std::filesystem::exists(repo_ / file); }

  std::unique_ptr<test::ServeProcess> bridge_;
  std::set<std::string> sent_;
};

TEST_P(ChatCommandsTest, ConversationCommandsAnswer) {
  test::ScriptedModelServer model(json::array({slow_chat(60, 0.1, "long story")}).dump());
  write_config(test::one_model(model), "a:m");
  bridge_ = start_bridge();
  std::string help = command("/help", "/help all");
  for (const char* name : {"`/new", "`/stop", "`/resume", "`/model", "`/status", "`/context"})
    EXPECT_NE(help.find(name), std::string::npos) << name << " in " << help;
  // The full table names every command, and every one of them is tested in this file.
  std::string all = command("/help all", "/schedule");
  EXPECT_EQ(names_in_help(all), all_tested()) << all;
  command("apple question", "You said: apple question");
  // Anything else that starts with '/' is a question for the model, not a command.
  EXPECT_TRUE(new_reply("/deploy staging now", "You said: /deploy staging now")) << dump(bot_posts());
  std::string status = command("/status", "conversation");
  std::string first = ticked_after(status, "conversation");
  ASSERT_EQ(first.size(), 12u) << status;
  EXPECT_NE(line_of(status, "model").find("`a:m`"), std::string::npos) << status;
  EXPECT_NE(status.find(repo_.path()), std::string::npos) << status;
  EXPECT_NE(line_of(status, "busy").find("idle"), std::string::npos) << status;
  EXPECT_EQ(command("/context", "Context: ").find("Context: 0 of"), std::string::npos);
  std::string second = ticked_after(command("/new", "New conversation"), "New conversation");
  ASSERT_EQ(second.size(), 12u);
  EXPECT_NE(second, first);
  EXPECT_EQ(ticked_after(command("/status", "conversation"), "conversation"), second);
  command("/context", "Context: 0 of");  // the new conversation is empty
  command("banana question", "You said: banana question");
  EXPECT_EQ(request_for(model, "banana question").find("apple question"), std::string::npos);
  std::string listing = command("/resume", "Conversations in this channel");
  EXPECT_EQ(line_of(listing, first).find("(current)"), std::string::npos) << listing;
  EXPECT_NE(line_of(listing, second).find("(current)"), std::string::npos) << listing;
  std::string prefix = first.substr(0, 6);
  for (char& c : prefix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  command("/resume " + prefix, "Resumed conversation `" + first + "`");
  command("cherry question", "You said: cherry question");
  std::string cherry = request_for(model, "cherry question");
  EXPECT_NE(cherry.find("apple question"), std::string::npos) << cherry;
  EXPECT_EQ(cherry.find("banana question"), std::string::npos) << cherry;
  command("/resume zzzz", "No conversation of this channel starts with");
  command("/stop", "Nothing is running.");
  // /cancel (the alias of /stop) ends an answer being written.
  std::string story = ask("tell me a long story");
  ASSERT_TRUE(wait_for([&] { return answered(story, "word3"); })) << bridge_->log();
  send("/cancel", story);
  ASSERT_TRUE(wait_for([&] {
    for (const json& e : model.events())
      if (e["event"] == "client disconnected") return true;
    return false;
  })) << bridge_->log();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(answered(story, "word59")) << dump(replies_to(story));
  expect_sent(kConversation);
}

TEST_P(ChatCommandsTest, ModelAndSettingsCommandsAnswer) {
  test::ScriptedModelServer model("[]", "", {"--models", "m,other"});
  json providers = {{"a",
                     {{"type", "openai"},
                      {"baseUrl", model.base_url()},
                      {"models", {{{"id", "m"}},
                                  {{"id", "other"}, {"contextWindow", 32000}, {"reasoning", true}}}}}}};
  write_config(providers, "a:m");
  bridge_ = start_bridge();
  // /reasoning: refused for a model that does not reason, with the levels.
  std::string refused = command("/reasoning high", "does not reason");
  EXPECT_NE(refused.find("low, medium, high, xhigh"), std::string::npos) << refused;
  std::string models = command("/models", "a:other");
  EXPECT_NE(line_of(models, "`a:other`").find("reasons"), std::string::npos) << models;
  EXPECT_EQ(line_of(models, "`a:m`").find("reasons"), std::string::npos) << models;
  EXPECT_NE(line_of(models, "`a:m`").find("(current)"), std::string::npos) << models;
  EXPECT_EQ(line_of(models, "`a:other`").find("(current)"), std::string::npos) << models;
  EXPECT_NE(line_of(models, "`a:other`").find("32000 tokens"), std::string::npos) << models;
  command("/model", "`a:m`");
  command("/model zzz", "\u274C");
  command("/model other", "Model set to `a:other`");
  command("which model now", "You said: which model now");
  EXPECT_EQ(model.requests().back()["body"]["model"], "other");
  EXPECT_FALSE(model.requests().back()["body"].contains("reasoning_effort"));
  command("/reasoning xhigh", "Reasoning effort `xhigh` from the next request");
  command("/reasoning", "Reasoning effort: `xhigh`");
  command("think harder", "You said: think harder");
  EXPECT_EQ(model.requests().back()["body"]["reasoning_effort"], "xhigh");
  EXPECT_NE(line_of(command("/status", "conversation"), "| reasoning").find("xhigh"), std::string::npos);
  command("/reasoning extreme", "Unknown level `extreme`");
  command("/reasoning off", "the provider's default");
  EXPECT_NE(line_of(command("/status", "conversation"), "| model").find("`a:other`"),
            std::string::npos);
  std::string config = command("/config", "workingDirectory");
  EXPECT_NE(line_of(config, "| model").find("`a:other`"), std::string::npos) << config;
  EXPECT_NE(line_of(config, "| model").find("channel preference"), std::string::npos) << config;
  std::string listed = command("/provider", "2 models");
  EXPECT_NE(line_of(listed, "2 models").find("openai at " + model.base_url()), std::string::npos)
      << listed;
  command("/providers test a", "`a` answers and offers 2 models");
  command("/providers test nope", "No provider is called `nope`");
  EXPECT_NE(command("/provider add", "Providers are added in").find("/reload config"), std::string::npos);
  command("/provider remove a", "Providers are removed from");
  command("/verbose", "Verbose mode is on");
  std::string verbose = line_of(command("/config", "workingDirectory"), "| verbose");
  EXPECT_NE(verbose.find("| on | channel preference"), std::string::npos) << verbose;
  command("/verbose off", "Verbose mode is off.");
  command("/verbose maybe", "takes on or off");
  command("/reload", "read afresh");
  // /reload config applies a changed file: a third model appears.
  json cfg = json::parse(test::run({"cat", dir_ / "pilotfish.json"}).out);
  cfg["providers"]["a"]["models"].push_back({{"id", "third"}});
  cfg["providers"]["a"]["models"].push_back({{"id", "next-preview"}});
  test::write_file(dir_ / "pilotfish.json", cfg.dump(2));
  command("/reload config", "Applied: providers and models");
  command("/models", "`a:third`");
  // Streamer mode hides preview models' names in what the bridge posts, until it is off.
  command("/streamer-mode on", "Streamer mode on: the names of 1 configured model");
  std::string hidden = command("/models", "`a:third`");
  EXPECT_EQ(hidden.find("next-preview"), std::string::npos) << hidden;
  EXPECT_NE(hidden.find("`Hidden Model 1`"), std::string::npos) << hidden;
  command("/on-air off", "Streamer mode off");
  command("/models", "`a:next-preview`");
  expect_sent(kModel);
}

TEST_P(ChatCommandsTest, PermissionCommandsAnswer) {
  json script = json::array();
  for (std::string n : {"one", "two", "three", "four"}) {
    script.push_back(
        matching(tool_call("run_command", {{"command", "touch " + n + ".txt"}}), "make " + n));
    script.push_back(matching(say("Done with " + n + "."), "make " + n));
  }
  test::ScriptedModelServer model(script.dump());
  write_config(test::one_model(model), "a:m", {{"actions", {"shell"}}});
  bridge_ = start_bridge();
  command("/rules", "No stored permission rules for this channel.");
  command("/approve", "Nothing is waiting for approval.");
  // Each prompt is answered by a command in its thread; the prompt says how.
  auto prompted = [&](const std::string& text, const std::string& answer) {
    std::string id = ask(text);
    ChatPost prompt;
    EXPECT_TRUE(wait_reply(id, "Permission needed", &prompt)) << bridge_->log();
    send(answer, id);
    EXPECT_TRUE(wait_for([&] { return answered(id, "Done with "); })) << bridge_->log();
    for (const ChatPost& p : replies_to(id))
      if (p.id == prompt.id) return p.text;
    return std::string();
  };
  EXPECT_NE(prompted("make one", "/approve").find("approved by @alice"), std::string::npos);
  EXPECT_TRUE(exists("one.txt"));
  EXPECT_NE(prompted("make two", "/deny").find("denied by @alice"), std::string::npos);
  EXPECT_FALSE(exists("two.txt"));
  EXPECT_NE(prompted("make three", "/always approve").find("approved and remembered by @alice"),
            std::string::npos);
  EXPECT_TRUE(exists("three.txt"));
  std::string rules = command("/rules", "run_command");
  EXPECT_NE(line_of(rules, "run_command").find("allow"), std::string::npos) << rules;
  EXPECT_NE(line_of(rules, "run_command").find("channel"), std::string::npos) << rules;
  command("/remember list", "run_command");
  command("/remember deny", "Nothing is waiting for approval.");
  command("/rule clear", "Removed 1 rule of this channel.");
  command("/rules", "No stored permission rules for this channel.");
  command("/yolo on", "Autopilot on");
  std::string four = ask("make four");
  ASSERT_TRUE(wait_for([&] { return answered(four, "Done with four."); })) << bridge_->log();
  EXPECT_FALSE(answered(four, "Permission needed")) << dump(replies_to(four));
  EXPECT_TRUE(exists("four.txt"));
  command("/rules", "Autopilot is on in this channel.");
  command("/yolo off", "Autopilot off");
  command("/yolo", "Autopilot on");  // toggles
  command("/yolo off", "Autopilot off");
  expect_sent(kPermissions);
}

// /project on a bot that is not an admin: it lists (none here) and refuses to remove; the admin
// side, with channels added by create_project, is bridge_admin_test.cpp's.
TEST_P(ChatCommandsTest, ProjectCommandsAnswer) {
  write_config();
  bridge_ = start_bridge();
  command("/project", "No channels were added from chat for this bot.");
  command("/projects list", "No channels were added from chat for this bot.");
  command("/project remove payments", "Only an admin bot removes channels added from chat.");
  command("/project frobnicate", "Usage: `/project [list]` or `/project remove [channel]`.");
  expect_sent(kProjects);
}

TEST_P(ChatCommandsTest, ToolAndScheduleCommandsAnswer) {
  json script = json::array(
      {matching(tool_call("schedule", {{"prompt", "nightly check"}, {"cron", "0 3 * * *"}}),
                "schedule it"),
       matching(say("Scheduled."), "schedule it")});
  test::ScriptedModelServer model(script.dump());
  write_config(test::one_model(model), "a:m", {{"actions", {"shell"}}});
  json cfg = json::parse(test::run({"cat", dir_ / "pilotfish.json"}).out);
  cfg["mcp"] = {
      {"servers",
       {{"everything",
         {{"command", "node"},
          {"args",
           {test::source_dir() +
                "/tests/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
            "stdio"}}}}}}};
  test::write_file(dir_ / "pilotfish.json", cfg.dump(2));
  bridge_ = start_bridge();
  command("/mcp", "everything: not started");
  std::string tools = command("/tools", "`everything__echo` (asks permission)");
  for (const char* t : {"`read_file`\n", "`run_command` (asks permission)", "`schedule`"})
    EXPECT_NE(tools.find(t), std::string::npos) << t << " in " << tools;
  command("/mcp", "everything: running");
  command("/skills", "Tools offered here");
  command("/agents", "None here");
  command("/agent nobody", "No agent `nobody` here. There are none");
  command("/plan show", "No plan yet in this conversation.");
  command("/implement", "No plan to implement");
  command("/auto on", "Autopilot on");
  command("/autopilot off", "Autopilot off");
  command("/plan off", "Plan mode off");
  command("/reload mcp", "started afresh");
  command("/mcp", "everything: not started");
  command("/schedule", "No scheduled prompts in this channel.");
  command("schedule it every night", "Scheduled.");
  json created = json::parse(model.last_tool_result(), nullptr, false);
  ASSERT_TRUE(created.is_object() && created.contains("created")) << model.last_tool_result();
  std::string id = created["created"];
  std::string listed = command("/schedule list", id);
  EXPECT_NE(line_of(listed, id).find("nightly check"), std::string::npos) << listed;
  EXPECT_NE(line_of(listed, id).find("0 3 * * *"), std::string::npos) << listed;
  command("/schedule history", "No scheduled prompt has fired here yet.");
  command("/schedules log 5", "No scheduled prompt has fired here yet.");
  command("/schedules log many", "n is a number of runs");
  EXPECT_NE(line_of(command("/tasks", id), id).find("nightly check"), std::string::npos);
  command("/schedule pause " + id, "Schedule `" + id + "` paused.");
  EXPECT_NE(line_of(command("/schedule", id), id).find("paused"), std::string::npos);
  command("/schedule resume " + id, "Schedule `" + id + "` resumed.");
  command("/schedule REMOVE " + id, "Schedule `" + id + "` cancelled.");
  command("/schedule", "No scheduled prompts in this channel.");
  command("/schedule bogus", "Use `/schedule list|history");
  expect_sent(kTools);
}

INSTANTIATE_TEST_SUITE_P(Platforms, ChatCommandsTest, ::testing::Values("mattermost", "slack"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace pf
