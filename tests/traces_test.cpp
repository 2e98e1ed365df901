// OpenTelemetry traces end to end (core/trace.h, net/otlp_exporter.h): `pilotfish serve` and
// `pilotfish bridge` export the spans of an answer to tests/servers/otlp_receiver.py (a
// collector's receiver, proven by the real JS exporter), decoded and checked: an HTTP request
// under the caller's traceparent, its retrieval with the lexical leg, each model request, a tool
// call with the permission decision and the rule, and the bridge's turn with its posts and
// edits; no question or command text unless captureContent is on.
#include <filesystem>

#include "bridge_fixture.h"
#include "core/fs.h"
#include "net/http_client.h"

namespace pf {
namespace {

using nlohmann::json;
using test::BridgeTest;
using test::wait_for;

json run_step(const std::string& command, const std::string& id) {
  return {{"chat",
           {{"tool_calls", json::array({{{"id", id}, {"name", "run_command"},
                                         {"arguments", json{{"command", command}}.dump()}}})},
            {"finish", "tool_calls"}}}};
}
json say(const std::string& text) { return {{"chat", {{"text", {text}}}}}; }

json spans_of(const test::PythonServer& rx) {
  HttpRequest r;
  r.method = "GET";
  r.url = "http://127.0.0.1:" + std::to_string(rx.port()) + "/spans";
  return json::parse(http_request(r).body)["spans"];
}
// The spans whose name starts with prefix.
std::vector<json> named(const json& spans, const std::string& prefix) {
  std::vector<json> out;
  for (const json& s : spans)
    if (s["name"].get<std::string>().rfind(prefix, 0) == 0) out.push_back(s);
  return out;
}

TEST(TracesTest, AServedAnswerIsTracedUnderTheCallersTraceparent) {
  test::TempDir repo, tmp;
  test::write_file(repo / "retry.ts", "export function retryWithBackoff() {}\n");
  std::string db = tmp / "a.db", cfg = tmp / "c.json";
  ASSERT_EQ(test::run({test::pilotfish_bin(), "index", repo.path(), "--db", db, "-q"}).exit_code, 0);
  test::PythonServer rx("otlp_receiver.py", {"--header", "x-api-key=k1"});
  test::ScriptedModelServer model(json::array({run_step("false", "1"), say("Done.")}).dump());
  ::setenv("PF_TRACES_HEADERS", "x-api-key=k1", 1);
  test::write_file(cfg, json{{"providers", test::one_model(model)},
                             {"defaults", {{"chatModel", "a:m"}}},
                             {"actions", {{"enabled", {"shell"}}}},
                             {"permissions", {{"allow", {"shell(false)"}}}},
                             {"telemetry",
                              {{"otlpEndpoint", "http://127.0.0.1:" + std::to_string(rx.port())},
                               {"headersEnv", "PF_TRACES_HEADERS"}}}}
                            .dump());
  const std::string caller_trace = "4bf92f3577b34da6a3ce929d0e0e4736", caller_span = "00f067aa0ba902b7";
  {
    test::ServeProcess serve({"--db", db, "--config", cfg, "--repo", repo.path(), "--no-auth"});
    HttpRequest req;
    req.method = "POST";
    req.url = serve.url() + "/v1/chat/completions";
    req.headers.emplace_back("Content-Type", "application/json");
    req.headers.emplace_back("traceparent", "00-" + caller_trace + "-" + caller_span + "-01");
    req.body = json{{"model", "pilotfish"},
                    {"messages", {{{"role", "user"}, {"content", "where is retryWithBackoff?"}}}}}
                   .dump();
    req.timeout = std::chrono::milliseconds(20000);
    HttpResponse res = http_request(req);
    ASSERT_EQ(res.status, 200) << res.body;
    EXPECT_EQ(serve.stop(), 0);  // exits with its queue sent
  }
  ::unsetenv("PF_TRACES_HEADERS");
  json spans = spans_of(rx);
  std::vector<json> http = named(spans, "HTTP POST");
  ASSERT_EQ(http.size(), 1u) << spans.dump(1);
  const json& root = http[0];
  EXPECT_EQ(root["traceId"], caller_trace);
  EXPECT_EQ(root["parentSpanId"], caller_span);
  EXPECT_EQ(root["kind"], 2);
  EXPECT_EQ(root["attributes"]["http.response.status_code"], 200);
  EXPECT_EQ(root["resource"]["service.name"], "pilotfish");
  for (const json& s : spans) EXPECT_EQ(s["traceId"], caller_trace) << s["name"];

  std::vector<json> retrieval = named(spans, "retrieval");
  ASSERT_GE(retrieval.size(), 2u) << spans.dump(1);
  const json* outer = nullptr;
  for (const json& s : retrieval)
    if (s["name"] == "retrieval") outer = &s;
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ((*outer)["parentSpanId"], root["spanId"]);
  EXPECT_GE((*outer)["attributes"]["pilotfish.results"].get<int>(), 1);
  EXPECT_FALSE((*outer)["attributes"].contains("pilotfish.query"));  // no content by default
  std::vector<json> lexical = named(spans, "retrieval.lexical");
  ASSERT_EQ(lexical.size(), 1u);
  EXPECT_EQ(lexical[0]["parentSpanId"], (*outer)["spanId"]);

  std::vector<json> chats = named(spans, "chat a:m");
  ASSERT_EQ(chats.size(), 2u) << spans.dump(1);  // the tool step and the answer
  for (const json& c : chats) {
    EXPECT_EQ(c["parentSpanId"], root["spanId"]);
    EXPECT_EQ(c["kind"], 3);
    EXPECT_EQ(c["attributes"]["gen_ai.request.model"], "a:m");
    EXPECT_EQ(c["attributes"]["gen_ai.response.model"], "a:m");
    EXPECT_TRUE(c["attributes"].contains("pilotfish.time_to_first_token_ms"));
  }
  std::vector<json> tools = named(spans, "tool run_command");
  ASSERT_EQ(tools.size(), 1u);
  const json& t = tools[0]["attributes"];
  EXPECT_EQ(tools[0]["parentSpanId"], root["spanId"]);
  EXPECT_EQ(t["pilotfish.permission.decision"], "approved");
  EXPECT_EQ(t["pilotfish.permission.by"], "config-allow");
  EXPECT_NE(t["pilotfish.permission.rule"].get<std::string>().find("shell(false)"), std::string::npos);
  EXPECT_EQ(t["pilotfish.tool.exit_code"], 1);
  EXPECT_EQ(t["pilotfish.tool.outcome"], "ran");
  EXPECT_FALSE(t.contains("pilotfish.tool.arguments"));
  EXPECT_EQ(spans.dump().find("where is retryWithBackoff"), std::string::npos);
}

TEST_F(BridgeTest, AChannelTurnIsTracedWithItsPostsAndContentWhenAsked) {
  test::PythonServer rx("otlp_receiver.py", {});
  test::ScriptedModelServer model(json::array({say("It is in src/retry.ts.")}).dump());
  write_config(test::one_model(model), "a:m");
  json cfg = json::parse(read_file(dir_ / "pilotfish.json"));
  cfg["telemetry"] = {{"otlpEndpoint", "http://127.0.0.1:" + std::to_string(rx.port()) + "/v1/traces"},
                      {"captureContent", true}};
  test::write_file(dir_ / "pilotfish.json", cfg.dump(2));
  auto bridge = start_bridge();
  expect_answer(*bridge, "where is retryWithBackoff?", "It is in src/retry.ts.");
  EXPECT_EQ(bridge->stop(), 0);
  json spans = spans_of(rx);
  std::vector<json> turns = named(spans, "chat.turn");
  ASSERT_EQ(turns.size(), 1u) << spans.dump(1);
  const json& turn = turns[0];
  EXPECT_EQ(turn["parentSpanId"], "");
  EXPECT_EQ(turn["attributes"]["pilotfish.channel"], "mm:" + channel_);
  EXPECT_EQ(turn["attributes"]["enduser.id"], "alice");
  EXPECT_NE(turn["attributes"]["pilotfish.question"].get<std::string>().find("where is retryWithBackoff"),
            std::string::npos);  // captureContent
  auto under_turn = [&](const std::string& prefix) {
    size_t n = 0;
    for (const json& s : named(spans, prefix)) {
      EXPECT_EQ(s["traceId"], turn["traceId"]) << s["name"];
      n += s["parentSpanId"] == turn["spanId"];
    }
    return n;
  };
  EXPECT_EQ(under_turn("retrieval"), 1u);
  EXPECT_EQ(under_turn("chat a:m"), 1u);
  EXPECT_GE(under_turn("chat.post"), 1u);  // the placeholder
  EXPECT_GE(under_turn("chat.edit"), 1u);  // the answer written into it
  for (const json& s : named(spans, "chat.post"))
    EXPECT_FALSE(s["attributes"]["pilotfish.post_id"].get<std::string>().empty());
  for (const json& s : named(spans, "retrieval")) {
    if (s["name"] == "retrieval") {
      EXPECT_TRUE(s["attributes"].contains("pilotfish.query"));
    }
  }
}

}  // namespace
}  // namespace pf
