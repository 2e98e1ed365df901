// The bridge's metrics (src/bridge/bridge_metrics.cpp), end to end: `pilotfish bridge` with
// bridge.metricsListen serves GET /metrics in the Prometheus text format; after a turn with a
// prompt approved and two 429s met on edits, the counts say so (messages, turns and their
// durations, queue waits, prompts by outcome, posts, edits and 429s per bot); another path is a
// 404; a bad metricsListen is a config error.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "bridge_fixture.h"
#include "net/http_client.h"

namespace pf::test {
namespace {

HttpResponse get(const std::string& url) {
  HttpRequest req;
  req.method = "GET";
  req.url = url;
  req.timeout = std::chrono::milliseconds(10000);
  return http_request(req);
}

// The value of one sample line ("name{labels} value"), or -1 when there is none.
double sample(const std::string& text, const std::string& series) {
  size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

TEST_F(BridgeTest, MetricsCountTurnsPromptsPostsAndRateLimits) {
  json run = {{"id", "1"}, {"name", "run_command"}, {"arguments", json{{"command", "touch m.txt"}}.dump()}};
  ScriptedModelServer model(json::array({{{"chat", {{"tool_calls", json::array({run})}, {"finish", "tool_calls"}}}},
                                         slow_chat(12, 0.1)})
                                .dump());
  write_config(one_model(model), "a:m", {{"actions", {"shell"}}}, {{"metricsListen", "127.0.0.1:0"}});
  auto bridge = start_bridge();
  ASSERT_FALSE(bridge->url().empty()) << bridge->log();
  mm_.call("POST", "/_test/fail",
           {{"method", "PUT"}, {"path", "/posts/.*/patch"}, {"status", 429}, {"count", 2}, {"retry_after_s", 1}});
  std::string id = mm_.post(alice_, channel_, "@copilot make it")["id"];
  ASSERT_TRUE(wait_for([&] {
    for (const json& p : replies_to(id))
      if (p["message"].get<std::string>().find("Permission needed") != std::string::npos) return true;
    return false;
  })) << bridge->log();
  mm_.call("POST", "/_test/posts", {{"user_id", alice_["id"]}, {"channel_id", channel_}, {"message", "yes"}, {"root_id", id}});
  ASSERT_TRUE(wait_for([&] { return answered(id, "word11"); }, 20000)) << bridge->log();
  std::string text;
  ASSERT_TRUE(wait_for([&] {
    HttpResponse r = get(bridge->url() + "/metrics");
    text = "\n" + r.body;
    return r.status == 200 && sample(text, "pilotfish_bridge_turns_total{result=\"completed\"}") == 1;
  })) << text;
  EXPECT_GE(sample(text, "pilotfish_bridge_messages_total{outcome=\"received\"}"), 2) << text;
  EXPECT_EQ(sample(text, "pilotfish_bridge_messages_total{outcome=\"answered\"}"), 1);
  EXPECT_EQ(sample(text, "pilotfish_bridge_permission_prompts_total{outcome=\"approved\"}"), 1);
  EXPECT_EQ(sample(text, "pilotfish_bridge_permission_prompts_total{outcome=\"rejected\"}"), 0);
  EXPECT_EQ(sample(text, "pilotfish_bridge_turn_seconds_count"), 1);
  EXPECT_GE(sample(text, "pilotfish_bridge_queue_wait_seconds_count"), 1);
  EXPECT_GE(sample(text, "pilotfish_bridge_posts_total{platform=\"mm\",bot=\"copilot\"}"), 2);
  EXPECT_GE(sample(text, "pilotfish_bridge_edits_total{platform=\"mm\",bot=\"copilot\"}"), 1);
  EXPECT_EQ(sample(text, "pilotfish_bridge_rate_limited_total{platform=\"mm\",bot=\"copilot\"}"), 2);
  EXPECT_EQ(sample(text, "pilotfish_bridge_channels_busy"), 0);
  EXPECT_NE(text.find("# TYPE pilotfish_bridge_turn_seconds histogram"), std::string::npos);
  // Every sample line is name{labels} number.
  std::regex line(R"([a-z_]+(\{[^}]*\})? -?[0-9.e+-]+)");
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty() && l[0] != '#') {
      EXPECT_TRUE(std::regex_match(l, line)) << l;
    }
  EXPECT_EQ(get(bridge->url() + "/other").status, 404);
}

// `pilotfish serve` with a bridge beside the API: its /metrics carries the bridge's too.
TEST_F(BridgeTest, ServesMetricsHaveTheBridgesBesideTheApis) {
  write_config();
  ServeProcess serve({"--db", db(), "--config", dir_ / "pilotfish.json", "--no-auth"});
  std::string text;
  ASSERT_TRUE(wait_for([&] {
    HttpResponse r = get(serve.url() + "/metrics");
    text = "\n" + r.body;
    return r.status == 200 && text.find("pilotfish_bridge_posts_total{platform=\"mm\",bot=\"copilot\"}") != std::string::npos;
  })) << text << serve.log();
  EXPECT_NE(text.find("\npilotfish_index_runs_total"), std::string::npos);  // the API's own
  EXPECT_EQ(sample(text, "pilotfish_bridge_turns_total{result=\"failed\"}"), 0);
}

TEST_F(BridgeTest, ABadMetricsAddressIsAConfigError) {
  write_config(json::object(), "", json::object(), {{"metricsListen", "9464"}});
  auto r = run({pilotfish_bin(), "bridge", "--db", db(), "--config", dir_ / "pilotfish.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bridge.metricsListen: expected host:port"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pf::test
