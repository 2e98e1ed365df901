// The chat bridge end to end: the real `pilotfish bridge` binary against the Mattermost test
// server (tests/servers/mattermost_server.mjs, checked against the real @mattermost/client)
// and the scripted model server, over loopback. Posts get streamed answers that cite the
// channel's repository, edits are throttled, strangers get nothing, a dropped socket and a
// restart lose nothing and answer nothing twice, commands answer, a model outage falls back
// with a notice, and a looping model is stopped.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "net/http_client.h"
#include "test_util.h"

namespace pf {
namespace {

using nlohmann::json;
using test::PythonServer;
using test::ServeProcess;
using test::TempDir;

// The Mattermost test server and its control API.
class Mattermost {
 public:
  Mattermost() : server_("mattermost_server.mjs", {}) {}
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_.port()); }
  json call(const std::string& method, const std::string& path, const json& body = nullptr) {
    HttpRequest r;
    r.method = method;
    r.url = url() + path;
    r.timeout = std::chrono::milliseconds(10000);
    if (!body.is_null()) {
      r.headers.emplace_back("Content-Type", "application/json");
      r.body = body.dump();
    }
    HttpResponse res = http_request(r);
    return res.body.empty() ? json() : json::parse(res.body);
  }
  json user(const std::string& name, bool bot = false) {
    return call("POST", "/_test/users", {{"username", name}, {"is_bot", bot}});
  }
  json post(const json& user, const std::string& channel, const std::string& text) {
    return call("POST", "/_test/posts",
                {{"user_id", user["id"]}, {"channel_id", channel}, {"message", text}});
  }
  // Every row of the channel (history rows too), oldest first.
  std::vector<json> posts(const std::string& channel) {
    json j = call("GET", "/_test/posts?channel_id=" + channel);
    return j["posts"].get<std::vector<json>>();
  }

 private:
  PythonServer server_;
};

bool wait_for(const std::function<bool()>& done, int ms = 15000) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

class BridgeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_file(repo_ / "src/retry.ts",
                     "// Retries a request with exponential backoff.\n"
                     "export function retryWithBackoff(fn: () => Promise<void>, tries = 3) {\n"
                     "  return fn().catch(() => tries > 1 ? retryWithBackoff(fn, tries - 1) : "
                     "undefined);\n}\n");
    test::write_file(repo_ / "README.md", "# demo\n\nA demo repository for the bridge tests.\n");
    auto r = test::run({test::pilotfish_bin(), "index", repo_.path(), "--db", db(), "--quiet"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    bot_ = mm_.user("copilot", true);
    alice_ = mm_.user("alice");
    mallory_ = mm_.user("mallory");
    channel_ = mm_.call("POST", "/_test/channels",
                        {{"name", "town"},
                         {"type", "O"},
                         {"members", {bot_["id"], alice_["id"], mallory_["id"]}}})["id"];
    ::setenv("MM_BOT_TOKEN", bot_["token"].get<std::string>().c_str(), 1);
  }

  std::string db() const { return dir_ / "index.db"; }

  // The config: one bot, alice allowed, the channel answering about the repository.
  void write_config(const json& providers = json::object(), const std::string& model = "",
                    const json& extra_channel = json::object()) {
    json channel = {{"id", channel_}, {"platform", "mm"}, {"bot", "copilot"},
                    {"workingDirectory", repo_.path()}};
    channel.update(extra_channel);
    json cfg = {{"bridge",
                 {{"platforms",
                   {{"mm",
                     {{"url", mm_.url()},
                      {"bots", {{"copilot", {{"tokenEnv", "MM_BOT_TOKEN"}}}}},
                      {"access", {{"mode", "allowlist"}, {"users", {"alice"}}}}}}}},
                  {"channels", {channel}},
                  {"replayWindowSeconds", 300}}}};
    if (!providers.empty()) cfg["providers"] = providers;
    if (!model.empty()) cfg["defaults"] = {{"chatModel", model}};
    test::write_file(dir_ / "pilotfish.json", cfg.dump(2));
  }

  std::unique_ptr<ServeProcess> start_bridge() {
    return std::make_unique<ServeProcess>(
        std::vector<std::string>{"--db", db(), "--config", dir_ / "pilotfish.json"}, "bridge");
  }

  // The bot's posts in the channel (current versions only), oldest first.
  std::vector<json> bot_posts() {
    std::vector<json> out;
    for (const json& p : mm_.posts(channel_))
      if (p["user_id"] == bot_["id"] && p["delete_at"] == 0 && p["original_id"] == "")
        out.push_back(p);
    return out;
  }
  // The bot's replies in the thread of a post, finished (no placeholder left).
  std::vector<json> replies_to(const std::string& post_id) {
    std::vector<json> out;
    for (const json& p : bot_posts())
      if (p["root_id"] == post_id) out.push_back(p);
    return out;
  }
  bool answered(const std::string& post_id, const std::string& fragment) {
    for (const json& p : replies_to(post_id))
      if (p["message"].get<std::string>().find(fragment) != std::string::npos) return true;
    return false;
  }

  TempDir dir_, repo_;
  Mattermost mm_;
  json bot_, alice_, mallory_;
  std::string channel_;
};

TEST_F(BridgeTest, APostGetsAStreamedAnswerCitingTheChannelsRepository) {
  write_config();
  auto bridge = start_bridge();
  json q = mm_.post(alice_, channel_, "@copilot where is retryWithBackoff?");
  std::string id = q["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "src/retry.ts"); })) << bridge->log();
  std::vector<json> replies = replies_to(id);
  ASSERT_EQ(replies.size(), 1u);
  std::string text = replies[0]["message"];
  EXPECT_EQ(text.find("Working"), std::string::npos) << text;
  // Edits of one reply are at least one interval apart (500 ms, less scheduling slack).
  std::vector<json> edits = replies[0]["edits"].get<std::vector<json>>();
  for (size_t i = 1; i < edits.size(); ++i)
    EXPECT_GE(edits[i]["t"].get<double>() - edits[i - 1]["t"].get<double>(), 450.0);
}

TEST_F(BridgeTest, StrangersAndUnmentionedPostsGetNothing) {
  write_config();
  auto bridge = start_bridge();
  json stranger = mm_.post(mallory_, channel_, "@copilot where is retryWithBackoff?");
  json unmentioned = mm_.post(alice_, channel_, "where is retryWithBackoff?");
  json asked = mm_.post(alice_, channel_, "@copilot where is the README?");
  std::string asked_id = asked["id"];
  ASSERT_TRUE(wait_for([&] { return answered(asked_id, "README.md"); })) << bridge->log();
  EXPECT_TRUE(replies_to(stranger["id"]).empty());
  EXPECT_TRUE(replies_to(unmentioned["id"]).empty());
  EXPECT_EQ(bot_posts().size(), 1u);
}

TEST_F(BridgeTest, PostsDuringASocketDropAreAnsweredOnceEach) {
  write_config();
  auto bridge = start_bridge();
  json first = mm_.post(alice_, channel_, "@copilot where is retryWithBackoff?");
  std::string first_id = first["id"];
  ASSERT_TRUE(wait_for([&] { return answered(first_id, "src/retry.ts"); })) << bridge->log();
  // Drop the bot's socket and refuse it for a while: these posts are never sent on it.
  mm_.call("POST", "/_test/ws/drop", {{"user_id", bot_["id"]}, {"refuse_ms", 1500}});
  std::vector<std::string> gap;
  for (int i = 0; i < 3; ++i)
    gap.push_back(mm_.post(alice_, channel_, "@copilot README question")["id"]);
  for (const auto& id : gap)
    ASSERT_TRUE(wait_for([&] { return answered(id, "README.md"); }))
        << bridge->log() << "\n" << json(bot_posts()).dump() << "\n"
        << mm_.call("GET", "/_test/ws").dump();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  for (const auto& id : gap) EXPECT_EQ(replies_to(id).size(), 1u) << id;
  EXPECT_EQ(replies_to(first_id).size(), 1u);
}

TEST_F(BridgeTest, ARestartAnswersWhatCameMeanwhileOnceAndKeepsTheConversation) {
  write_config();
  auto bridge = start_bridge();
  json first = mm_.post(alice_, channel_, "@copilot where is retryWithBackoff?");
  std::string first_id = first["id"];
  ASSERT_TRUE(wait_for([&] { return answered(first_id, "src/retry.ts"); })) << bridge->log();
  json status = mm_.post(alice_, channel_, "@copilot /status");
  std::string status_id = status["id"];
  ASSERT_TRUE(wait_for([&] { return answered(status_id, "conversation"); }));
  std::string before = replies_to(status_id)[0]["message"];
  EXPECT_EQ(bridge->stop(), 0);
  json meanwhile = mm_.post(alice_, channel_, "@copilot where is the README?");
  std::string meanwhile_id = meanwhile["id"];
  bridge = start_bridge();
  ASSERT_TRUE(wait_for([&] { return answered(meanwhile_id, "README.md"); })) << bridge->log();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_EQ(replies_to(meanwhile_id).size(), 1u);
  EXPECT_EQ(replies_to(first_id).size(), 1u);
  // The same conversation after the restart.
  json again = mm_.post(alice_, channel_, "@copilot /status");
  std::string again_id = again["id"];
  ASSERT_TRUE(wait_for([&] { return answered(again_id, "conversation"); }));
  std::string after = replies_to(again_id)[0]["message"];
  auto conv = [](const std::string& s) { return s.substr(s.find("conversation"), 40); };
  EXPECT_EQ(conv(before), conv(after));
}

TEST_F(BridgeTest, CommandsAnswer) {
  write_config();
  auto bridge = start_bridge();
  auto ask = [&](const std::string& text, const std::string& fragment) {
    std::string message = "@copilot ";
    message += text;
    std::string id = mm_.post(alice_, channel_, message)["id"];
    EXPECT_TRUE(wait_for([&] { return answered(id, fragment); })) << text << "\n" << bridge->log();
  };
  ask("/help", "/new");
  ask("/help all", "/resume");
  ask("/new", "New conversation");
  ask("/resume", "Conversations in this channel");
  ask("/resume zzzz", "No conversation");
  ask("/verbose on", "Verbose mode is on");
  ask("/config", "verbose | on | channel preference");
  ask("/context", "tokens");
  ask("/models", "No chat models are configured");
  ask("/stop", "Nothing is running");
  ask("/reload", "read afresh");
}

TEST_F(BridgeTest, AModelOutageFallsBackWithANotice) {
  test::ScriptedModelServer model(R"([{"status": 503, "body": {"error": {"message": "overloaded"}}},
                                      {"chat": {"text": ["retryWithBackoff is in ", "src/retry.ts:2"]}}])");
  json providers = {{"a", {{"type", "openai"}, {"baseUrl", model.base_url()},
                           {"models", {{{"id", "big"}}, {{"id", "small"}}}}}}};
  write_config(providers, "a:big", {{"fallbackModels", {"a:small"}}});
  auto bridge = start_bridge();
  std::string id = mm_.post(alice_, channel_, "@copilot where is retryWithBackoff?")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "src/retry.ts:2"); })) << bridge->log();
  ASSERT_TRUE(wait_for([&] { return answered(id, "Model a:big is unavailable, switched to a:small"); }))
      << bridge->log();
  std::string status = mm_.post(alice_, channel_, "@copilot /status")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(status, "a:small"); }));
}

TEST_F(BridgeTest, ALoopingModelIsWarnedThenStopped) {
  json calls = json::array();
  for (int i = 0; i < 10; ++i)
    calls.push_back({{"id", std::to_string(i)}, {"name", "read_file"},
                     {"arguments", R"({"filePath": "README.md"})"}});
  json script = json::array({{{"chat", {{"tool_calls", calls}, {"finish", "tool_calls"}}}}});
  test::ScriptedModelServer model(script.dump());
  json providers = {{"a", {{"type", "openai"}, {"baseUrl", model.base_url()},
                           {"models", {{{"id", "m"}}}}}}};
  write_config(providers, "a:m");
  auto bridge = start_bridge();
  std::string id = mm_.post(alice_, channel_, "@copilot read the README")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "same arguments 5 times"); })) << bridge->log();
  ASSERT_TRUE(wait_for([&] { return answered(id, "Loop detected"); })) << bridge->log();
  int warnings = 0;
  for (const json& p : replies_to(id))
    warnings += p["message"].get<std::string>().find("same arguments") != std::string::npos;
  EXPECT_EQ(warnings, 1);
}

}  // namespace
}  // namespace pf
