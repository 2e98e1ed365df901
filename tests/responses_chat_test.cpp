// The Responses API client (src/llm/responses_chat.cpp) and Azure OpenAI (provider.cpp's URLs and
// api-key), against the scripted test server, which the real `openai` npm client proves faithful
// first (tests/node/responses_client.mjs): text and a function call streamed, the follow-up with
// its output, reasoning effort, images, an incomplete and a failed response, and a deployment's
// chat completions and Responses on Azure with its api-version and api-key; the config's rules.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <nlohmann/json.hpp>

#include "llm/chat.h"
#include "llm/model_registry.h"
#include "test_util.h"

namespace pf {
namespace {

using nlohmann::json;

// The server's root (its base_url ends in /v1): where Azure's routes are.
std::string root_of(const test::ScriptedModelServer& server) {
  std::string url = server.base_url();
  return url.substr(0, url.rfind("/v1"));
}

struct Collected {
  std::string text, finish;
  std::vector<ToolCall> calls;
};

Collected run(ChatModel& m, const ChatRequest& req) {
  Collected c;
  m.stream(req, [&](const ChatEvent& e) {
    if (e.kind == ChatEvent::Kind::kTextDelta) c.text += e.text;
    if (e.kind == ChatEvent::Kind::kToolCall) c.calls.push_back(e.call);
    if (e.kind == ChatEvent::Kind::kFinish) c.finish = e.finish_reason;
    return true;
  });
  return c;
}

ChatRequest ask(const std::string& text) {
  ChatRequest r;
  r.messages = {{"system", "You answer questions about code.", {}, {}}, {"user", text, {}, {}}};
  return r;
}

TEST(ResponsesChat, TheRealClientReadsTheTestServerAsTheApi) {
  json script = json::array({
      {{"match", "first: call a tool"}, {"chat", {{"text", {"Let me look."}}, {"finish", "tool_calls"},
          {"tool_calls", {{{"id", "call_7"}, {"name", "read_file"}, {"arguments", "{\"filePath\": \"a.js\"}"}}}}}}},
      {{"match", "first: call a tool"}, {"chat", {{"text", {"Done ", "reading."}}}}},
      {{"match", "azure chat"}, {"chat", {{"text", {"Hello ", "from Azure."}}}}},
      {{"match", "azure responses"}, {"chat", {{"text", {"Responses ", "on Azure."}}}}}});
  test::ScriptedModelServer server(script.dump(), "k1");
  auto r = test::run({"node", test::source_dir() + "/tests/node/responses_client.mjs", root_of(server), "k1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_FALSE(j.contains("failure")) << j["failure"];
  EXPECT_EQ(j["first"]["text"], "Let me look.");
  EXPECT_EQ(j["first"]["call"]["call_id"], "call_7");
  EXPECT_EQ(j["first"]["call"]["arguments"], "{\"filePath\": \"a.js\"}");
  EXPECT_EQ(j["first"]["types"].front(), "response.created");
  EXPECT_EQ(j["first"]["types"].back(), "response.completed");
  EXPECT_EQ(j["second"]["status"], "completed");
  EXPECT_EQ(j["second"]["text"], "Done reading.");
  EXPECT_EQ(j["orphan"]["status"], 400);
  EXPECT_NE(j["orphan"]["message"].get<std::string>().find("No tool call found"), std::string::npos);
  EXPECT_EQ(j["azureChat"], "Hello from Azure.");
  EXPECT_EQ(j["azureResponses"]["text"], "Responses on Azure.");
  EXPECT_EQ(j["azureWrongKey"]["status"], 401);
  // The real clients asked where the APIs are asked.
  bool deployment = false, azure_responses = false;
  for (const json& q : server.requests()) {
    std::string path = q["path"];
    deployment |= path == "/openai/deployments/prod-4o/chat/completions?api-version=2024-10-21";
    azure_responses |= path == "/openai/responses?api-version=2025-03-01-preview";
  }
  EXPECT_TRUE(deployment);
  EXPECT_TRUE(azure_responses);
}

TEST(ResponsesChat, StreamsTextAndCallsAndSendsTheConversationAsItems) {
  json script = json::array({
      {{"chat", {{"reasoning", {"thinking..."}}, {"text", {"Checking."}}, {"finish", "tool_calls"},
                 {"tool_calls", {{{"id", "call_1"}, {"name", "read_file"}, {"arguments", "{\"filePath\": \"a.js\"}"}}}}}}},
      {{"chat", {{"text", {"It ", "retries."}}}}},
      {{"chat", {{"text", {"Cut"}}, {"finish", "length"}}}},
      {{"chat", {{"error_message", "The server had an error processing your request."}}}}});
  test::ScriptedModelServer server(script.dump());
  json p = {{"type", "openai"}, {"baseUrl", server.base_url()}, {"wireApi", "responses"},
            {"models", {{{"id", "gpt-5"}, {"temperature", 0.3}}}}};
  Config c = parse_config(json{{"providers", {{"oa", p}}}}.dump(), "t");
  auto m = make_chat_model(c, "oa:gpt-5");
  ChatRequest req = ask("where?");
  req.reasoning_effort = "high";
  req.tools = std::make_shared<std::vector<ToolSpec>>(
      std::vector<ToolSpec>{{"read_file", "Read a file", {{"type", "object"}}}});
  Collected first = run(*m, req);
  EXPECT_EQ(first.text, "Checking.");  // reasoning summaries are never text
  EXPECT_EQ(first.finish, "tool_calls");
  ASSERT_EQ(first.calls.size(), 1u);
  EXPECT_EQ(first.calls[0].id, "call_1");
  EXPECT_EQ(json::parse(first.calls[0].arguments)["filePath"], "a.js");
  json body = server.requests().at(0)["body"];
  EXPECT_EQ(server.requests().at(0)["path"], "/v1/responses");
  EXPECT_EQ(body["instructions"], "You answer questions about code.");
  EXPECT_EQ(body["input"][0], (json{{"role", "user"}, {"content", "where?"}}));
  EXPECT_EQ(body["tools"][0]["name"], "read_file");
  EXPECT_EQ(body["reasoning"]["effort"], "high");
  EXPECT_EQ(body["temperature"], 0.3);
  EXPECT_EQ(body["store"], false);
  ChatRequest next = req;
  next.messages.push_back({"assistant", "Checking.", first.calls, {}});
  next.messages.push_back({"tool", "{\"content\": \"retry()\"}", {}, "call_1"});
  next.messages.push_back({"user", "and?", {}, {}});
  next.messages.back().images = {{"image/png", "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="}};
  EXPECT_EQ(run(*m, next).text, "It retries.");
  json items = server.requests().at(1)["body"]["input"];
  EXPECT_EQ(items[1], (json{{"role", "assistant"}, {"content", "Checking."}}));
  EXPECT_EQ(items[2]["type"], "function_call");
  EXPECT_EQ(items[2]["call_id"], "call_1");
  EXPECT_EQ(items[3], (json{{"type", "function_call_output"}, {"call_id", "call_1"}, {"output", "{\"content\": \"retry()\"}"}}));
  EXPECT_EQ(items[4]["content"][1]["type"], "input_image");
  EXPECT_EQ(run(*m, ask("long")).finish, "length");
  EXPECT_THROW(run(*m, ask("fail")), Error);
}

TEST(AzureOpenAi, DeploymentsApiVersionAndKey) {
  setenv("PF_TEST_AZURE", "k1", 1);
  json script = json::array({{{"chat", {{"text", {"From ", "the deployment."}}}}},
                             {{"chat", {{"text", {"From Responses."}}}}}});
  test::ScriptedModelServer server(script.dump(), "k1");
  json p = {{"type", "azure"}, {"baseUrl", root_of(server)}, {"apiVersion", "2024-10-21"},
            {"apiKeyEnv", "PF_TEST_AZURE"},
            {"models", {{{"id", "gpt-4o"}, {"deployment", "prod-4o"}},
                        {{"id", "gpt-5"}, {"wireApi", "responses"}}}}};
  Config c = parse_config(json{{"providers", {{"az", p}}}}.dump(), "t");
  EXPECT_EQ(run(*make_chat_model(c, "az:gpt-4o"), ask("hi")).text, "From the deployment.");
  json first = server.requests().at(0);
  EXPECT_EQ(first["path"], "/openai/deployments/prod-4o/chat/completions?api-version=2024-10-21");
  EXPECT_EQ(first["body"]["model"], "prod-4o");
  EXPECT_EQ(first["auth"], nullptr);  // the key goes in api-key, not Authorization
  EXPECT_EQ(run(*make_chat_model(c, "az:gpt-5"), ask("hi")).text, "From Responses.");
  EXPECT_EQ(server.requests().at(1)["path"], "/openai/responses?api-version=2024-10-21");
  EXPECT_EQ(server.requests().at(1)["body"]["model"], "gpt-5");
  // The configured deployments are what it offers; the listing proves key and version work.
  EXPECT_EQ(list_provider_models(c.providers[0], 5000), (std::vector<std::string>{"gpt-4o", "gpt-5"}));
  setenv("PF_TEST_AZURE", "wrong", 1);
  try {
    run(*make_chat_model(c, "az:gpt-4o"), ask("hi"));
    ADD_FAILURE() << "a wrong key was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("HTTP 401: Access denied"), std::string::npos) << e.what();
  }
  unsetenv("PF_TEST_AZURE");
}

TEST(AzureOpenAi, TheConfigsRules) {
  struct Bad {
    std::string provider, why;
  };
  for (const Bad& b : std::vector<Bad>{
           {R"({"type": "azure", "baseUrl": "https://x.openai.azure.com"})", "apiVersion"},
           {R"({"type": "openai", "baseUrl": "http://h", "apiVersion": "2024-10-21"})", "only an Azure"},
           {R"({"type": "openai", "baseUrl": "http://h", "wireApi": "soap"})", "wireApi"},
           {R"({"type": "anthropic", "baseUrl": "http://h", "wireApi": "responses"})", "Responses API is OpenAI"},
           {R"({"type": "openai", "baseUrl": "http://h", "models": [{"id": "m", "deployment": "d"}]})", "deployment"},
           {R"({"type": "azure", "baseUrl": "http://h", "apiVersion": "v", "models": [{"id": "m", "topK": 3}]})", "top_k"}}) {
    try {
      parse_config(R"({"providers": {"p": )" + b.provider + "}}", "c.json");
      ADD_FAILURE() << b.provider << " was accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(b.why), std::string::npos) << b.provider << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace pf
