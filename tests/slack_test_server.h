// The Slack test server (tests/servers/slack_server.mjs) and its control API, for the tests of
// the Slack Web API client and the Slack adapter: a workspace with one app (the bot), people and
// channels made through /_test, and the server's logs (calls, envelopes, sockets) read back.
#pragma once

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "chat/slack/slack_adapter.h"
#include "net/http_client.h"
#include "test_util.h"

namespace pf::test {

class SlackServer {
 public:
  explicit SlackServer(const std::vector<std::string>& args = {})
      : server_("slack_server.mjs", args) {}
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_.port()); }
  std::string api_url() const { return url() + "/api"; }
  nlohmann::json call(const std::string& method, const std::string& path,
                      const nlohmann::json& body = nullptr) {
    HttpRequest r;
    r.method = method;
    r.url = url() + path;
    r.timeout = std::chrono::milliseconds(10000);
    if (!body.is_null()) {
      r.headers.emplace_back("Content-Type", "application/json");
      r.body = body.dump();
    }
    HttpResponse res = http_request(r);
    return res.body.empty() ? nlohmann::json() : nlohmann::json::parse(res.body);
  }
  nlohmann::json app(const std::string& name, const nlohmann::json& extra = nlohmann::json::object()) {
    nlohmann::json body = extra;
    body["name"] = name;
    return call("POST", "/_test/apps", body);
  }
  nlohmann::json user(const std::string& name) {
    return call("POST", "/_test/users", {{"name", name}});
  }
  std::string channel(const std::string& type, const std::vector<std::string>& members) {
    return call("POST", "/_test/channels", {{"type", type}, {"members", members}})["id"];
  }
  // A person's post (the events a Slack client's post makes); returns its ts.
  std::string post(const std::string& user, const std::string& channel, const std::string& text,
                   const std::string& thread_ts = "") {
    nlohmann::json body = {{"user", user}, {"channel", channel}, {"text", text}};
    if (!thread_ts.empty()) body["thread_ts"] = thread_ts;
    return call("POST", "/_test/messages", body)["ts"];
  }
  std::vector<nlohmann::json> messages(const std::string& channel) {
    return call("GET", "/_test/messages?channel=" + channel)["messages"]
        .get<std::vector<nlohmann::json>>();
  }
  std::vector<nlohmann::json> calls(const std::string& method = "") {
    return call("GET", "/_test/calls" + (method.empty() ? "" : "?method=" + method))["calls"]
        .get<std::vector<nlohmann::json>>();
  }
  // Calls of method the server answered with a 429.
  int ratelimited(const std::string& method = "") {
    int n = 0;
    for (const auto& c : calls(method)) n += c["ratelimited"].get<bool>();
    return n;
  }

 private:
  PythonServer server_;
};

// The adapter's options for the bot "copilot" of app (as SlackServer::app returns it).
inline SlackOptions adapter_options(const SlackServer& slack, const nlohmann::json& app) {
  SlackOptions o;
  o.platform = "slack";
  o.bot = "copilot";
  o.api_url = slack.api_url();
  o.bot_token = app["bot_token"];
  o.app_token = app["app_token"];
  return o;
}

inline bool wait_until(const std::function<bool()>& done, int ms = 15000) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

}  // namespace pf::test
