// The chat bridge's end-to-end fixture, shared by bridge_test.cpp and mattermost_adapter_test.cpp:
// a repository indexed into a store, the Mattermost test server with a bot, two users and a
// channel, a config that lets alice talk to the bot there, and the real `pilotfish bridge`.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "net/http_client.h"
#include "test_util.h"

namespace pf::test {

using nlohmann::json;

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
  // How many sockets the user has opened so far, and whether one is open and authenticated.
  std::pair<size_t, bool> sockets_of(const json& user) {
    json ws = call("GET", "/_test/ws");
    size_t opened = 0;
    bool open = false;
    for (const json& c : ws["history"]) opened += c["user_id"] == user["id"];
    for (const json& c : ws["connections"])
      open = open || (c["user_id"] == user["id"] && c["authenticated"] == true);
    return {opened, open};
  }
  // Every row of the channel (history rows too), oldest first.
  std::vector<json> posts(const std::string& channel) {
    json j = call("GET", "/_test/posts?channel_id=" + channel);
    return j["posts"].get<std::vector<json>>();
  }

 private:
  PythonServer server_;
};

// The providers of a config with one model, a:m, served by model.
inline json one_model(const test::ScriptedModelServer& model, int context_window = 0) {
  json m = {{"id", "m"}};
  if (context_window) m["contextWindow"] = context_window;
  return {{"a", {{"type", "openai"}, {"baseUrl", model.base_url()}, {"models", {m}}}}};
}

inline bool wait_for(const std::function<bool()>& done, int ms = 15000) {
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

  // The index store (the bridge state goes beside it, or into the same PostgreSQL database).
  virtual std::string db() const { return dir_ / "index.db"; }

  // The config: one bot, alice allowed, the channel answering about the repository.
  void write_config(const json& providers = json::object(), const std::string& model = "",
                    const json& extra_channel = json::object(),
                    const json& extra_bridge = json::object()) {
    json channel = {{"id", channel_},
                    {"platform", "mm"},
                    {"bot", "copilot"},
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
    cfg["bridge"].update(extra_bridge);
    if (!providers.empty()) cfg["providers"] = providers;
    if (!model.empty()) cfg["defaults"] = {{"chatModel", model}};
    test::write_file(dir_ / "pilotfish.json", cfg.dump(2));
  }

  std::unique_ptr<ServeProcess> start_bridge() {
    return std::make_unique<ServeProcess>(
        std::vector<std::string>{"--db", db(), "--config", dir_ / "pilotfish.json"}, "bridge");
  }

  // The bot's posts in a channel (current versions only), oldest first.
  std::vector<json> bot_posts(const std::string& channel = "") {
    std::vector<json> out;
    for (const json& p : mm_.posts(channel.empty() ? channel_ : channel))
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

  // Alice says "@copilot <text>" and the bot answers with something containing fragment.
  void expect_answer(ServeProcess& bridge, const std::string& text, const std::string& fragment) {
    std::string message = "@copilot ";
    message += text;
    std::string id = mm_.post(alice_, channel_, message)["id"];
    EXPECT_TRUE(wait_for([&] { return answered(id, fragment); })) << text << "\n" << bridge.log();
  }

  TempDir dir_, repo_;
  Mattermost mm_;
  json bot_, alice_, mallory_;
  std::string channel_;
};

}  // namespace pf::test
