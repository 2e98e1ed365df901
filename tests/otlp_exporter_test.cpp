// net/otlp_exporter.h: the "telemetry" section, OTEL-style header lists, the OTLP/JSON encoding,
// and the exporter against tests/servers/otlp_receiver.py (a collector's receiver, proven by the
// real OpenTelemetry JS exporter): batches arrive decoded whole with the API-key header, a
// collector that refuses or is gone loses spans counted as dropped (never blocking the caller),
// and a partial success is counted.
#include "net/otlp_exporter.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "core/error.h"
#include "net/http_client.h"
#include "test_util.h"

namespace pf {
namespace {

using nlohmann::json;

json received(const test::PythonServer& rx) {
  HttpRequest r;
  r.method = "GET";
  r.url = "http://127.0.0.1:" + std::to_string(rx.port()) + "/spans";
  return json::parse(http_request(r).body);
}

SpanData span(const std::string& name, const std::string& parent = "") {
  SpanData s;
  s.context.trace_id = std::string(31, 'a') + "1";
  s.context.span_id = random_trace_hex(8);
  s.parent_span_id = parent;
  s.name = name;
  s.kind = SpanKind::kClient;
  s.start_ns = 1796000000000000000;
  s.end_ns = s.start_ns + 5000;
  s.attributes = {{"s", std::string("text")}, {"i", int64_t{-3}}, {"d", 2.5}, {"b", true}};
  return s;
}

TEST(OtlpExporterTest, TheSectionAndHeaderLists) {
  Config c = parse_config(R"({"telemetry": {"otlpEndpoint": "http://collector:4318",
      "headersEnv": "OTLP_H", "captureContent": true, "serviceName": "pf-prod"}})", "t.json");
  const TelemetryConfig& t = telemetry_config(c);
  EXPECT_EQ(t.otlp_endpoint, "http://collector:4318");
  EXPECT_EQ(t.headers_env, "OTLP_H");
  EXPECT_TRUE(t.capture_content);
  EXPECT_EQ(t.service_name, "pf-prod");
  EXPECT_EQ(telemetry_config(parse_config("{}", "t.json")).otlp_endpoint, "");
  EXPECT_THROW(parse_config(R"({"telemetry": {"otlpEndpoint": "collector:4318"}})", "t.json"), ConfigError);
  EXPECT_THROW(parse_config(R"({"telemetry": {"captureContent": "yes"}})", "t.json"), ConfigError);
  EXPECT_THROW(parse_config(R"({"telemetry": {"endpoint": "http://x"}})", "t.json"), ConfigError);
  // The variable must be set when tracing starts.
  ::unsetenv("PF_NO_SUCH_OTLP_HEADERS");
  Config missing = parse_config(R"({"telemetry": {"otlpEndpoint": "http://127.0.0.1:9",
      "headersEnv": "PF_NO_SUCH_OTLP_HEADERS"}})", "t.json");
  EXPECT_THROW(start_telemetry(missing), ConfigError);
  EXPECT_EQ(start_telemetry(parse_config("{}", "t.json")), nullptr);

  auto h = parse_otlp_headers(" x-api-key = k%3D1 ,noequals, b=2,=x");
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0], (std::pair<std::string, std::string>{"x-api-key", "k=1"}));
  EXPECT_EQ(h[1], (std::pair<std::string, std::string>{"b", "2"}));
}

TEST(OtlpExporterTest, TheEncodingIsOtlpJson) {
  SpanData s = span("tool run_command", "00f067aa0ba902b7");
  s.error = true;
  s.status_message = "exit 2";
  json j = otlp_json({s}, "pilotfish");
  const json& out = j["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
  EXPECT_EQ(j["resourceSpans"][0]["resource"]["attributes"][0]["value"]["stringValue"], "pilotfish");
  EXPECT_EQ(out["traceId"], s.context.trace_id);
  EXPECT_EQ(out["parentSpanId"], "00f067aa0ba902b7");
  EXPECT_EQ(out["kind"], 3);
  EXPECT_EQ(out["startTimeUnixNano"], "1796000000000000000");  // a string: past 2^53
  EXPECT_EQ(out["attributes"][1]["value"]["intValue"], "-3");
  EXPECT_EQ(out["status"]["code"], 2);
  EXPECT_FALSE(otlp_json({span("root")}, "x")["resourceSpans"][0]["scopeSpans"][0]["spans"][0].contains("parentSpanId"));
}

TEST(OtlpExporterTest, BatchesArriveDecodedWithTheHeader) {
  test::PythonServer rx("otlp_receiver.py", {"--header", "x-api-key=k1", "--reject-name", "bad"});
  OtlpOptions o;
  o.url = "http://127.0.0.1:" + std::to_string(rx.port()) + "/v1/traces";
  o.headers = {{"x-api-key", "k1"}};
  o.batch = 3;
  o.interval = std::chrono::milliseconds(50);
  OtlpExporter e(o);
  SpanData root = span("chat.turn");
  for (int i = 0; i < 7; ++i) e.add(span("step " + std::to_string(i), root.context.span_id));
  e.add(root);
  e.add(span("bad"));
  e.flush();
  json got = received(rx);
  ASSERT_EQ(got["spans"].size(), 8u) << got.dump();
  EXPECT_GE(got["requests"].get<int>(), 3);  // batches of at most 3
  EXPECT_EQ(e.exported(), 8);
  EXPECT_EQ(e.dropped(), 1);  // the collector's partial success
  json first = got["spans"][0];
  EXPECT_EQ(first["parentSpanId"], root.context.span_id);
  EXPECT_EQ(first["attributes"], json({{"s", "text"}, {"i", -3}, {"d", 2.5}, {"b", true}}));
  EXPECT_EQ(first["resource"]["service.name"], "pilotfish");
}

TEST(OtlpExporterTest, ACollectorThatRefusesOrIsGoneCostsSpansNotTheCaller) {
  test::PythonServer rx("otlp_receiver.py", {"--header", "x-api-key=k1"});
  OtlpOptions o;
  o.url = "http://127.0.0.1:" + std::to_string(rx.port()) + "/v1/traces";  // no header: 401
  o.interval = std::chrono::milliseconds(50);
  o.max_queue = 5;
  {
    OtlpExporter e(o);
    for (int i = 0; i < 3; ++i) e.add(span("x"));
    e.flush();
    EXPECT_EQ(e.exported(), 0);
    EXPECT_EQ(e.dropped(), 3);
  }
  o.url = "http://127.0.0.1:9/v1/traces";  // nobody listens
  o.timeout = std::chrono::milliseconds(500);
  OtlpExporter gone(o);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 100; ++i) gone.add(span("x"));  // a full queue drops, never waits
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(200));
  gone.flush(std::chrono::milliseconds(3000));
  EXPECT_EQ(gone.exported(), 0);
  EXPECT_EQ(gone.dropped(), 100);
}

TEST(OtlpExporterTest, StartTelemetryMakesTheExporterTheSpanSink) {
  test::PythonServer rx("otlp_receiver.py", {"--header", "authorization=Bearer t0k"});
  ::setenv("PF_TEST_OTLP_HEADERS", "authorization=Bearer t0k", 1);
  Config c = parse_config(R"({"telemetry": {"otlpEndpoint": "http://127.0.0.1:)" +
                              std::to_string(rx.port()) +
                              R"(/", "headersEnv": "PF_TEST_OTLP_HEADERS"}})",
                          "t.json");
  {
    std::unique_ptr<Telemetry> t = start_telemetry(c);
    ASSERT_NE(t, nullptr);
    EXPECT_TRUE(tracing_enabled());
    EXPECT_FALSE(trace_content());
    Span s("hello", nullptr);
    s.set("n", 1);
  }  // destroyed: the sink cleared and the queue sent
  EXPECT_FALSE(tracing_enabled());
  json got = received(rx);
  ASSERT_EQ(got["spans"].size(), 1u) << got.dump();
  EXPECT_EQ(got["spans"][0]["name"], "hello");
  ::unsetenv("PF_TEST_OTLP_HEADERS");
}

}  // namespace
}  // namespace pf
