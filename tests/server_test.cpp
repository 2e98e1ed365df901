// `pilotfish serve` end to end: a real server process over loopback HTTP, a real SQLite store
// indexed from a small repository, and the scripted model server standing in for the provider.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "api/auth.h"
#include "net/http_client.h"
#include "test_util.h"

namespace pf {
namespace {

using json = nlohmann::json;
using test::ScriptedModelServer;
using test::ServeProcess;
using test::TempDir;

const char* kAdminKey = "test-admin-key";
const char* kUserKey = "test-user-key";
// What the model server says it offers (GET /v1/models): the server checks at start-up.
const std::vector<std::string> kOffered = {"--models", "m1,m2"};

std::string text_of(const std::vector<json>& events) {
  std::string text;
  for (const auto& e : events)
    if (e.is_object() && e["type"] == "text-delta") text += e["delta"].get<std::string>();
  return text;
}

// The chat requests the model server received (the start-up check asks for /models too).
std::vector<json> chat_requests(const ScriptedModelServer& model) {
  std::vector<json> out;
  for (const auto& r : model.requests())
    if (r["path"].get<std::string>().find("/chat/completions") != std::string::npos)
      out.push_back(r);
  return out;
}

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_file(dir_ / "repo/src/greet.ts",
                     "/** Says hello to someone. */\n"
                     "export function greetVisitor(name: string): string {\n"
                     "  return `hello ${name}`;\n"
                     "}\n");
    test::write_file(dir_ / "repo/docs/guide.md", "# Guide\n\nCall greetVisitor to say hello.\n");
    test::write_file(dir_ / "repo/.env", "SECRET=do-not-index\n");
    auto r = test::run({test::pilotfish_bin(), "index", dir_ / "repo", "--db", db(), "-q"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  std::string db() const { return dir_ / "store.db"; }

  // A config whose chat model is the scripted server's; extra is merged into "server".
  std::string write_config(const std::string& model_url, const json& extra_server = json::object(),
                           const json& defaults = json()) {
    json cfg = {
        {"providers",
         {{"test",
           {{"type", "openai"},
            {"baseUrl", model_url},
            {"models", {{{"id", "m1"}}, {{"id", "m2"}}}}}}}},
        {"defaults", defaults.is_null() ? json{{"chatModel", "test:m1"}} : defaults},
        {"server",
         {{"apiKeys",
           {{{"name", "ops"}, {"hash", "sha256:" + sha256_hex(kAdminKey)}, {"role", "admin"}},
            {{"name", "dev"}, {"hash", "sha256:" + sha256_hex(kUserKey)}, {"role", "user"}}}}}}};
    cfg["server"].update(extra_server);
    std::string path = dir_ / "config.json";
    test::write_file(path, cfg.dump());
    return path;
  }

  std::unique_ptr<ServeProcess> serve(const std::string& config,
                                      std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--db", db(), "--config", config, "--repo", dir_ / "repo"};
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<ServeProcess>(args);
  }

  static HttpResponse call(const ServeProcess& s, const std::string& method,
                           const std::string& path, const std::string& key,
                           const std::string& body = {}) {
    HttpRequest req;
    req.method = method;
    req.url = s.url() + path;
    req.body = body;
    req.timeout = std::chrono::milliseconds(20000);
    if (!body.empty()) req.headers.emplace_back("Content-Type", "application/json");
    if (!key.empty()) req.headers.emplace_back("Authorization", std::string("Bearer ") + key);
    return http_request(req);
  }

  static HttpResponse chat(const ServeProcess& s, const json& body,
                           const std::string& key = kUserKey) {
    return call(s, "POST", "/v1/platform-copilot/chat", key, body.dump());
  }

  static void expect_json_error(const HttpResponse& r, int status, const std::string& code) {
    EXPECT_EQ(r.status, status) << r.body;
    EXPECT_NE(r.header("Content-Type").find("application/json"), std::string::npos);
    json j = json::parse(r.body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r.body;
    EXPECT_EQ(j.value("error", ""), code) << r.body;
    EXPECT_FALSE(j.value("message", "").empty()) << r.body;
  }

  TempDir dir_;
};

TEST_F(ServerTest, EveryRouteButHealthzNeedsAKey) {
  ScriptedModelServer model("[]", "", kOffered);
  auto s = serve(write_config(model.base_url()));
  auto h = call(*s, "GET", "/healthz", "");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(json::parse(h.body)["status"], "ok");
  std::vector<std::pair<std::string, std::string>> routes = {
      {"POST", "/v1/platform-copilot/chat"},
      {"POST", "/v1/platform-copilot/index"},
      {"GET", "/v1/platform-copilot/index"},
      {"GET", "/v1/search?q=greet"},
      {"GET", "/metrics"},
      {"GET", "/no/such/route"},
      {"DELETE", "/v1/platform-copilot/chat"}};
  for (const auto& [method, path] : routes) {
    SCOPED_TRACE(method + " " + path);
    auto r = call(*s, method, path, "", method == "POST" ? R"({"message":"hi"})" : "");
    expect_json_error(r, 401, "unauthorized");
    EXPECT_EQ(r.header("WWW-Authenticate"), "Bearer");
    expect_json_error(call(*s, method, path, "wrong-key"), 401, "unauthorized");
    expect_json_error(call(*s, method, path, sha256_hex(kAdminKey)), 401, "unauthorized");
  }
  EXPECT_TRUE(chat_requests(model).empty()) << "no model was asked for an unauthorised request";
  expect_json_error(call(*s, "GET", "/no/such/route", kUserKey), 404, "not_found");
  expect_json_error(call(*s, "GET", "/v1/platform-copilot/chat", kUserKey), 405,
                    "method_not_allowed");
  EXPECT_EQ(s->stop(), 0);
}

TEST_F(ServerTest, ReindexingIsForAdmins) {
  ScriptedModelServer model("[]", "", kOffered);
  auto s = serve(write_config(model.base_url()));
  expect_json_error(call(*s, "POST", "/v1/platform-copilot/index", kUserKey), 403, "forbidden");
  expect_json_error(call(*s, "GET", "/v1/platform-copilot/index", kUserKey), 403, "forbidden");
  test::write_file(dir_ / "repo/src/farewell.ts", "export function waveGoodbye() { return 1; }\n");
  auto r = call(*s, "POST", "/v1/platform-copilot/index", kAdminKey);
  EXPECT_EQ(r.status, 200);
  std::string status = json::parse(r.body)["status"];
  EXPECT_TRUE(status == "indexing_started" || status == "already_running") << r.body;
  json st;
  for (int i = 0; i < 200; ++i) {
    st = json::parse(call(*s, "GET", "/v1/platform-copilot/index", kAdminKey).body);
    if (!st["running"].get<bool>() && st["last"].is_object()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(st["last"]["ok"], true) << st.dump();
  EXPECT_EQ(st["last"]["indexed"], 1) << st.dump();
  EXPECT_FALSE(st["nextScheduledRun"].is_null()) << "the weekly schedule is on by default";
  auto found = json::parse(call(*s, "GET", "/v1/search?q=waveGoodbye", kUserKey).body);
  ASSERT_FALSE(found["results"].empty());
  EXPECT_EQ(found["results"][0]["path"], "src/farewell.ts");
}

// DELETE /v1/platform-copilot/index (the reference's clearIndex): admins only, the served
// repository only; afterwards nothing is found until the next index run.
TEST_F(ServerTest, AnAdminClearsTheIndexAndTheNextRunRebuildsIt) {
  ScriptedModelServer model("[]", "", kOffered);
  auto s = serve(write_config(model.base_url()));
  ASSERT_FALSE(json::parse(call(*s, "GET", "/v1/search?q=greet", kUserKey).body)["results"].empty());
  expect_json_error(call(*s, "DELETE", "/v1/platform-copilot/index", kUserKey), 403, "forbidden");
  expect_json_error(call(*s, "DELETE", "/v1/platform-copilot/index?repo=other", kAdminKey), 404,
                    "unknown_repository");
  auto r = call(*s, "DELETE", "/v1/platform-copilot/index?repo=repo", kAdminKey);
  ASSERT_EQ(r.status, 200) << r.body;
  json cleared = json::parse(r.body);
  EXPECT_EQ(cleared["status"], "cleared");
  EXPECT_GE(cleared["files"].get<int>(), 1);
  EXPECT_TRUE(json::parse(call(*s, "GET", "/v1/search?q=greet", kUserKey).body)["results"].empty());
  ASSERT_EQ(call(*s, "POST", "/v1/platform-copilot/index", kAdminKey).status, 200);
  bool back = false;
  for (int i = 0; i < 200 && !back; ++i) {
    back = !json::parse(call(*s, "GET", "/v1/search?q=greet", kUserKey).body)["results"].empty();
    if (!back) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(back);
  EXPECT_EQ(call(*s, "PUT", "/v1/platform-copilot/index", kAdminKey).header("Allow"), "GET, POST, DELETE");
}

TEST_F(ServerTest, IndexesAnEmptyStoreAtStartupAndRefusesASecondRun) {
  ScriptedModelServer model("[]", "", kOffered);
  // A store of its own, empty, and enough files that a run takes a moment.
  for (int i = 0; i < 1500; ++i)
    test::write_file(dir_ / ("big/src/m" + std::to_string(i) + ".ts"),
                     "export function helper" + std::to_string(i) + "() { return " +
                         std::to_string(i) + "; }\n");
  std::string config = write_config(model.base_url());
  ServeProcess s({"--db", dir_ / "fresh.db", "--config", config, "--repo", dir_ / "big"});
  auto r = call(s, "POST", "/v1/platform-copilot/index", kAdminKey);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body)["status"], "already_running") << "the start-up run is going";
  json st;
  for (int i = 0; i < 600; ++i) {
    st = json::parse(call(s, "GET", "/v1/platform-copilot/index", kAdminKey).body);
    if (!st["running"].get<bool>()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(st["last"]["trigger"], "startup") << st.dump();
  EXPECT_EQ(st["last"]["indexed"], 1500) << st.dump();
  auto found = json::parse(call(s, "GET", "/v1/search?q=helper1234", kUserKey).body);
  ASSERT_FALSE(found["results"].empty());
  EXPECT_EQ(found["results"][0]["path"], "src/m1234.ts");
}

TEST_F(ServerTest, ChatStreamsTheUiMessageProtocol) {
  ScriptedModelServer model(
      R"([{"chat": {"text": ["greetVisitor ", "lives in ", "src/greet.ts"]}}])", "", kOffered);
  auto s = serve(write_config(model.base_url()));
  auto r = chat(
      *s, {{"message", "where is greetVisitor defined?"}, {"conversationHistory", json::array()}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("Content-Type"), "text/event-stream");
  EXPECT_EQ(r.header("Cache-Control"), "no-cache");
  EXPECT_EQ(r.header("x-vercel-ai-ui-message-stream"), "v1");
  EXPECT_EQ(r.header("x-accel-buffering"), "no");
  auto events = test::ui_stream_events(r.body);
  EXPECT_EQ(
      test::ui_stream_types(events),
      (std::vector<std::string>{"start", "start-step", "text-start", "text-delta", "text-delta",
                                "text-delta", "text-end", "finish-step", "finish", "[DONE]"}));
  EXPECT_EQ(events[0]["messageId"].get<std::string>().size(), 16u);
  EXPECT_EQ(events[8]["finishReason"], "stop");
  EXPECT_EQ(text_of(events), "greetVisitor lives in src/greet.ts");
  ASSERT_GE(r.body.size(), 14u);
  EXPECT_EQ(r.body.substr(r.body.size() - 14), "data: [DONE]\n\n") << "nothing after [DONE]";
  // The model saw the retrieved code, with its path and lines, in the system prompt.
  auto reqs = chat_requests(model);
  ASSERT_EQ(reqs.size(), 1u);
  std::string system = reqs[0]["body"]["messages"][0]["content"];
  EXPECT_NE(system.find("src/greet.ts"), std::string::npos);
  EXPECT_NE(system.find("export function greetVisitor"), std::string::npos);
  EXPECT_EQ(system.find("do-not-index"), std::string::npos);
}

TEST_F(ServerTest, AiSdkBodyCarriesTheConversation) {
  ScriptedModelServer model("[]", "", kOffered);
  auto s = serve(write_config(model.base_url()));
  json body = {
      {"id", "chat-1"},
      {"trigger", "submit-message"},
      {"messages",
       {{{"id", "u1"},
         {"role", "user"},
         {"parts", {{{"type", "text"}, {"text", "what is greetVisitor?"}}}}},
        {{"id", "a1"},
         {"role", "assistant"},
         {"parts", {{{"type", "step-start"}}, {{"type", "text"}, {"text", "A function."}}}}},
        {{"id", "u2"},
         {"role", "user"},
         {"parts", {{{"type", "text"}, {"text", "where is it?"}}}}}}}};
  auto r = chat(*s, body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(text_of(test::ui_stream_events(r.body)), "You said: where is it?");
  auto sent = chat_requests(model).at(0)["body"]["messages"];
  ASSERT_EQ(sent.size(), 4u) << sent.dump();
  EXPECT_EQ(sent[1]["content"], "what is greetVisitor?");
  EXPECT_EQ(sent[2]["role"], "assistant");
  EXPECT_EQ(sent[2]["content"], "A function.");
  EXPECT_EQ(sent[3]["content"], "where is it?");
}

TEST_F(ServerTest, ToolCallsAndTheirResultsStreamInsideTheirStep) {
  ScriptedModelServer model(R"([
    {"chat": {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": "{\"filePath\": \"src/greet.ts\"}"},
                             {"id": "c2", "name": "read_file", "arguments": "{\"filePath\": \"../../etc/passwd\"}"},
                             {"id": "c3", "name": "read_file", "arguments": "{\"filePath\": \".env\"}"}],
              "finish": "tool_calls"}},
    {"chat": {"text": ["It returns a greeting."]}}])",
                            "", kOffered);
  auto s = serve(write_config(model.base_url()));
  auto r = chat(*s, {{"message", "what does greetVisitor return?"}});
  ASSERT_EQ(r.status, 200) << r.body;
  auto events = test::ui_stream_events(r.body);
  EXPECT_EQ(test::ui_stream_types(events), (std::vector<std::string>{"start",
                                                                     "start-step",
                                                                     "tool-input-start",
                                                                     "tool-input-delta",
                                                                     "tool-input-available",
                                                                     "tool-output-available",
                                                                     "tool-input-start",
                                                                     "tool-input-delta",
                                                                     "tool-input-available",
                                                                     "tool-output-error",
                                                                     "tool-input-start",
                                                                     "tool-input-delta",
                                                                     "tool-input-available",
                                                                     "tool-output-error",
                                                                     "finish-step",
                                                                     "start-step",
                                                                     "text-start",
                                                                     "text-delta",
                                                                     "text-end",
                                                                     "finish-step",
                                                                     "finish",
                                                                     "[DONE]"}));
  EXPECT_EQ(events[4]["input"]["filePath"], "src/greet.ts");
  EXPECT_NE(events[5]["output"]["content"].get<std::string>().find("greetVisitor"),
            std::string::npos);
  EXPECT_EQ(events[9]["toolCallId"], "c2");
  EXPECT_FALSE(events[9]["errorText"].get<std::string>().empty());
  EXPECT_EQ(r.body.find("root:"), std::string::npos) << "nothing of /etc/passwd";
  EXPECT_EQ(r.body.find("do-not-index"), std::string::npos) << "no secret file content";
  // The second model call carried the tool results.
  auto reqs = chat_requests(model);
  ASSERT_EQ(reqs.size(), 2u);
  std::string second = reqs[1]["body"]["messages"].dump();
  EXPECT_NE(second.find("greetVisitor"), std::string::npos);
  EXPECT_NE(second.find("\"tool_call_id\":\"c1\""), std::string::npos);
}

TEST_F(ServerTest, ModelFailureMidStreamEndsTheStreamProperly) {
  ScriptedModelServer model(
      R"([{"chat": {"text": ["one ", "two ", "three ", "four"], "drop_after": 2, "chunked": true}}])",
      "", kOffered);
  auto s = serve(write_config(model.base_url()));
  auto r = chat(*s, {{"message", "count"}});
  ASSERT_EQ(r.status, 200) << r.body;
  auto events = test::ui_stream_events(r.body);
  auto types = test::ui_stream_types(events);
  ASSERT_GE(types.size(), 6u) << r.body;
  EXPECT_EQ(std::vector<std::string>(types.end() - 5, types.end()),
            (std::vector<std::string>{"text-end", "error", "finish-step", "finish", "[DONE]"}))
      << r.body;
  EXPECT_EQ(events[events.size() - 2]["finishReason"], "error");
  // Said in a sentence, not as the request and the socket error ("partial message").
  EXPECT_EQ(events[events.size() - 4]["errorText"],
            "The provider's stream for model test:m1 ended before the answer was complete (after "
            "8 characters); the partial answer is above.");
  EXPECT_EQ(events[events.size() - 4]["errorText"].get<std::string>().find("127.0.0.1"),
            std::string::npos)
      << "the provider's address stays in the server log";
  auto metrics = call(*s, "GET", "/metrics", kUserKey).body;
  EXPECT_NE(metrics.find("pilotfish_chat_streams_total{outcome=\"error\"} 1"), std::string::npos)
      << metrics;
}

// The headers and the start chunk go as soon as the request is checked; retrieval failing after
// that (here: the store lost its chunk table) is an error chunk in a 200 stream, not a 500.
TEST_F(ServerTest, RetrievalFailureAfterTheStartIsAnErrorChunk) {
  ScriptedModelServer model("[]", "", kOffered);
  auto s = serve(write_config(model.base_url()));
  ASSERT_EQ(test::shell("sqlite3 '" + db() + "' 'DROP TABLE copilot_code_chunks'"), 0);
  auto r = chat(*s, {{"message", "what does greetVisitor return?"}});
  ASSERT_EQ(r.status, 200) << r.body;
  auto types = test::ui_stream_types(test::ui_stream_events(r.body));
  ASSERT_GE(types.size(), 3u) << r.body;
  EXPECT_EQ(types.front(), "start");
  EXPECT_NE(std::find(types.begin(), types.end(), "error"), types.end()) << r.body;
  EXPECT_EQ(types.back(), "[DONE]");
  for (const auto& req : model.requests())  // the model list at start, no chat
    EXPECT_EQ(req["path"].get<std::string>().find("chat"), std::string::npos) << req.dump();
}

// A provider's error message is passed on without its addresses, whatever its length: a 200 KB
// URL in an error sent mid-stream used to overflow the stack of the regular expression that
// removed addresses, which took the whole server down.
TEST_F(ServerTest, HugeProviderErrorMidStreamIsRedactedNotFatal) {
  json script = json::array(
      {{{"chat",
         {{"text", json::array({"partial "})},
          {"error_message", "see http://" + std::string(200000, 'x') + " for details"}}}}});
  ScriptedModelServer model(script.dump(), "", kOffered);
  auto s = serve(write_config(model.base_url()));
  auto r = chat(*s, {{"message", "what does greetVisitor return?"}});
  ASSERT_EQ(r.status, 200) << r.body.substr(0, 2000);
  auto events = test::ui_stream_events(r.body);
  auto types = test::ui_stream_types(events);
  ASSERT_GE(types.size(), 5u);
  ASSERT_EQ(types[types.size() - 4], "error") << r.body.substr(0, 2000);
  std::string error_text = events[events.size() - 4]["errorText"];
  EXPECT_NE(error_text.find("see the provider for details"), std::string::npos)
      << error_text.substr(0, 500);
  EXPECT_EQ(error_text.find("xxxx"), std::string::npos);
  EXPECT_EQ(call(*s, "GET", "/healthz", "").status, 200) << "the server is still up";
}

TEST_F(ServerTest, FallsBackBeforeTheFirstToken) {
  ScriptedModelServer model(R"([{"status": 503, "body": {"error": {"message": "overloaded"}}}])",
                            "", kOffered);
  auto s = serve(write_config(model.base_url(), json::object(),
                              {{"chatModel", "test:m1"}, {"fallbackModels", {"test:m2"}}}));
  auto r = chat(*s, {{"message", "hello there"}});
  ASSERT_EQ(r.status, 200) << r.body;
  auto events = test::ui_stream_events(r.body);
  EXPECT_EQ(text_of(events), "You said: hello there");
  for (const auto& t : test::ui_stream_types(events)) EXPECT_NE(t, "error");
  // The client learns which model answered, and which was passed over.
  const json& finish = events[events.size() - 2];
  EXPECT_EQ(finish["messageMetadata"]["model"], "test:m2") << finish.dump();
  EXPECT_EQ(finish["messageMetadata"]["passedOver"].size(), 1u) << finish.dump();
  auto reqs = chat_requests(model);
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0]["body"]["model"], "m1");
  EXPECT_EQ(reqs[1]["body"]["model"], "m2");
  // The second model gets the whole system prompt (dropped once the first request was built).
  EXPECT_EQ(reqs[1]["body"]["messages"][0], reqs[0]["body"]["messages"][0]);
  EXPECT_GT(reqs[1]["body"]["messages"][0]["content"].get<std::string>().size(), 200u);
  // A client may also pick the model: fuzzy, scoped by provider.
  auto picked = chat(*s, {{"message", "again"}, {"modelId", "m2"}, {"provider", "test"}});
  EXPECT_EQ(picked.status, 200);
  EXPECT_EQ(chat_requests(model).back()["body"]["model"], "m2");
  expect_json_error(chat(*s, {{"message", "x"}, {"modelId", "no-such-model"}}), 400,
                    "unknown_model");
}

TEST_F(ServerTest, AClosedClientStopsTheModel) {
  ScriptedModelServer model(
      R"([{"chat": {"text": ["a ","b ","c ","d ","e ","f ","g ","h ","i ","j ","k ","l "], "chunk_delay": 0.25}}])",
      "", kOffered);
  auto s = serve(write_config(model.base_url()));
  HttpRequest req;
  req.url = s->url() + "/v1/platform-copilot/chat";
  req.headers = {{"Content-Type", "application/json"},
                 {"Authorization", std::string("Bearer ") + kUserKey}};
  req.body = R"({"message":"tell me the alphabet"})";
  std::string got;
  http_stream(req, [&](std::string_view bytes) {
    got += bytes;
    return got.find("text-delta") == std::string::npos;  // leave after the first token
  });
  json ended;
  for (int i = 0; i < 100 && ended.is_null(); ++i) {
    for (const auto& e : model.events()) ended = e;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(ended.is_null()) << "the model stream never ended";
  EXPECT_EQ(ended["event"], "client disconnected") << ended.dump();
  EXPECT_LT(ended["chunks_sent"].get<int>(), ended["chunks_total"].get<int>()) << ended.dump();
  std::string metrics;
  for (int i = 0; i < 40; ++i) {
    metrics = call(*s, "GET", "/metrics", kUserKey).body;
    if (metrics.find("outcome=\"cancelled\"} 1") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_NE(metrics.find("pilotfish_chat_streams_total{outcome=\"cancelled\"} 1"),
            std::string::npos)
      << metrics;
}

TEST_F(ServerTest, BadRequestsGetClearJsonErrors) {
  ScriptedModelServer model("[]", "", kOffered);
  auto s = serve(write_config(
      model.base_url(),
      {{"limits", {{"maxBodyBytes", 2048}, {"maxMessageChars", 100}, {"maxHistoryMessages", 2}}}}));
  expect_json_error(call(*s, "POST", "/v1/platform-copilot/chat", kUserKey, "{not json"), 400,
                    "invalid_json");
  expect_json_error(chat(*s, json::object()), 400, "invalid_body");
  expect_json_error(chat(*s, {{"message", "a"}, {"messages", json::array()}}), 400, "invalid_body");
  expect_json_error(chat(*s, {{"message", std::string(101, 'x')}}), 400, "message_too_long");
  json history = json::array();
  for (int i = 0; i < 3; ++i) history.push_back({{"role", "user"}, {"content", "x"}});
  expect_json_error(chat(*s, {{"message", "x"}, {"conversationHistory", history}}), 400,
                    "history_too_long");
  expect_json_error(chat(*s, {{"message", std::string(3000, 'x')}}), 413, "body_too_large");
  expect_json_error(call(*s, "GET", "/v1/search", kUserKey), 400, "missing_query");
  expect_json_error(call(*s, "GET", "/v1/search?q=x&limit=0", kUserKey), 400, "invalid_limit");
  expect_json_error(call(*s, "GET", "/v1/search?q=x&limit=ten", kUserKey), 400, "invalid_limit");
  expect_json_error(call(*s, "GET", "/v1/search?q=x&mode=psychic", kUserKey), 400, "invalid_mode");
  expect_json_error(call(*s, "GET", "/v1/search?q=x&mode=vector", kUserKey), 400,
                    "no_embedding_model");
  EXPECT_TRUE(chat_requests(model).empty());
  EXPECT_EQ(call(*s, "GET", "/healthz", "").status, 200) << "still up";
}

// Sends raw bytes and returns everything the server answers before it closes (or 5 s pass).
std::string raw_exchange(const std::string& url, const std::string& bytes) {
  ParsedUrl u = parse_url(url);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(u.port)));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return "connect failed";
  }
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  shutdown(fd, SHUT_WR);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fd);
  return out;
}

TEST_F(ServerTest, MalformedHttpIsRefusedAndTheServerStaysUp) {
  ScriptedModelServer model("[]", "", kOffered);
  auto s = serve(write_config(model.base_url()));
  EXPECT_EQ(raw_exchange(s->url(), "GARBAGE\r\n\r\n").rfind("HTTP/1.1 400", 0), 0u);
  std::string huge =
      "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n";
  EXPECT_EQ(raw_exchange(s->url(), huge).rfind("HTTP/1.1 431", 0), 0u);
  std::string lying =
      "POST /v1/platform-copilot/chat HTTP/1.1\r\nHost: x\r\nContent-Length: "
      "99999999999\r\n\r\n{}";
  EXPECT_EQ(raw_exchange(s->url(), lying).rfind("HTTP/1.1 413", 0), 0u);
  // A deterministic mutation fuzz of a valid chat request: every answer is an HTTP response or
  // a closed connection, and the server never goes down.
  std::string valid =
      "POST /v1/platform-copilot/chat HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
      std::string(kUserKey) +
      "\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n"
      "{\"message\":\"hi\"}";
  uint64_t seed = 42;
  auto rnd = [&] { return (seed = seed * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; };
  for (int i = 0; i < 150; ++i) {
    std::string m = valid;
    int edits = 1 + static_cast<int>(rnd() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t at = rnd() % m.size();
      switch (rnd() % 3) {
        case 0:
          m[at] = static_cast<char>(rnd() % 256);
          break;
        case 1:
          m.erase(at, 1 + rnd() % 8);
          break;
        default:
          m.insert(at, std::string(1 + rnd() % 4, static_cast<char>(rnd() % 256)));
      }
    }
    std::string answer = raw_exchange(s->url(), m);
    EXPECT_TRUE(answer.empty() || answer.rfind("HTTP/1.1 ", 0) == 0) << i << ": " << answer;
  }
  EXPECT_EQ(call(*s, "GET", "/healthz", "").status, 200) << s->log();
}

TEST_F(ServerTest, AnswersFromRetrievalWhenNoModelIsConfigured) {
  ScriptedModelServer model("[]", "", kOffered);
  auto s = serve(write_config(model.base_url(), json::object(), json::object()));
  auto r = chat(*s, {{"message", "greetVisitor"}});
  ASSERT_EQ(r.status, 200) << r.body;
  std::string text = text_of(test::ui_stream_events(r.body));
  EXPECT_NE(text.find("src/greet.ts:1-4"), std::string::npos) << text;
  EXPECT_TRUE(chat_requests(model).empty());
}

TEST_F(ServerTest, SearchAndMetrics) {
  ScriptedModelServer model("[]", "", kOffered);
  auto s = serve(write_config(model.base_url()));
  auto r = call(*s, "GET", "/v1/search?q=greet%20visitor&limit=1", kUserKey);
  ASSERT_EQ(r.status, 200) << r.body;
  auto results = json::parse(r.body)["results"];
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0]["path"], "src/greet.ts");
  EXPECT_EQ(results[0]["functionName"], "greetVisitor");
  chat(*s, {{"message", "hi"}});
  auto m = call(*s, "GET", "/metrics", kUserKey);
  EXPECT_EQ(m.status, 200);
  EXPECT_NE(m.header("Content-Type").find("text/plain"), std::string::npos);
  EXPECT_NE(m.body.find("pilotfish_http_requests_total{route=\"search\",status=\"200\"} 1"),
            std::string::npos)
      << m.body;
  EXPECT_NE(m.body.find("pilotfish_chat_streams_total{outcome=\"completed\"} 1"),
            std::string::npos);
  EXPECT_NE(m.body.find("pilotfish_chat_first_token_seconds_count 1"), std::string::npos);
}

TEST_F(ServerTest, ModelsTheProviderDoesNotOfferAreNotUsed) {
  ScriptedModelServer model("[]", "", {"--models", "m1"});
  auto s = serve(write_config(model.base_url()));
  expect_json_error(chat(*s, {{"message", "x"}, {"modelId", "test:m2"}}), 400, "unknown_model");
  EXPECT_EQ(chat(*s, {{"message", "x"}, {"modelId", "m1"}}).status, 200);
  EXPECT_NE(s->log().find("test:m2 is configured but its provider does not offer it"),
            std::string::npos)
      << s->log();
}

TEST_F(ServerTest, HashKeyPrintsWhatTheConfigTakes) {
  std::string bin = test::pilotfish_bin();
  ASSERT_EQ(test::shell("printf 'my-key\\n' | " + bin + " hash-key > " + dir_ / "h.txt"), 0);
  std::ifstream in(dir_ / "h.txt");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "sha256:" + sha256_hex("my-key")) << "the newline is not part of the key";
  auto gen = test::run({bin, "hash-key", "--generate"});
  ASSERT_EQ(gen.exit_code, 0);
  std::istringstream out(gen.out);
  std::string key_line, hash_line;
  std::getline(out, key_line);
  std::getline(out, hash_line);
  ASSERT_EQ(key_line.rfind("key:  pf_", 0), 0u) << gen.out;
  std::string key = key_line.substr(6);
  EXPECT_EQ(key.size(), 3u + 48u);
  EXPECT_EQ(hash_line, "hash: sha256:" + sha256_hex(key));
  EXPECT_NE(test::run({bin, "hash-key", "--generate"}).out, gen.out) << "keys are random";
  EXPECT_EQ(test::shell(bin + " hash-key < /dev/null 2>/dev/null"), 2);
  // The printed hash is what serve accepts.
  ScriptedModelServer model("[]", "", kOffered);
  std::string config = dir_ / "gen.json";
  test::write_file(
      config,
      json{{"server",
            {{"apiKeys", {{{"name", "g"}, {"hash", hash_line.substr(6)}, {"role", "user"}}}}}}}
          .dump());
  auto s = serve(config);
  EXPECT_EQ(call(*s, "GET", "/v1/search?q=greetVisitor", key).status, 200);
}

TEST_F(ServerTest, RefusesToStartUnsafely) {
  ScriptedModelServer model("[]", "", kOffered);
  std::string no_keys = dir_ / "nokeys.json";
  test::write_file(no_keys, "{}");
  auto r = test::run({test::pilotfish_bin(), "serve", "--db", db(), "--config", no_keys, "--listen",
                      "127.0.0.1:0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no API keys"), std::string::npos) << r.err;
  r = test::run({test::pilotfish_bin(), "serve", "--db", db(), "--config", no_keys, "--listen",
                 "0.0.0.0:0", "--no-auth"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("loopback"), std::string::npos) << r.err;
  std::string bad_cron = write_config(model.base_url(), {{"reindexSchedule", "0 25 * * *"}});
  r = test::run({test::pilotfish_bin(), "serve", "--db", db(), "--config", bad_cron, "--listen",
                 "127.0.0.1:0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("hour"), std::string::npos) << r.err;
  // --no-auth on loopback: everyone local is an admin.
  ServeProcess open({"--db", db(), "--config", no_keys, "--no-auth", "--repo", dir_ / "repo"});
  EXPECT_EQ(call(open, "GET", "/v1/platform-copilot/index", "").status, 200);
}

}  // namespace
}  // namespace pf
