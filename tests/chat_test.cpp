// The streaming chat client against the scripted OpenAI-compatible server: text deltas, tool
// calls assembled from fragments, the request it sends, cancellation, errors before the first
// token (fallback-able) and a stream that breaks off.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "llm/chat.h"
#include "llm/fallback.h"
#include "test_util.h"

namespace pf {
namespace {

Config config_for(const test::ScriptedModelServer& server) {
  nlohmann::json p = {
      {"type", "openai"}, {"baseUrl", server.base_url()}, {"models", {{{"id", "chat-small"}}}}};
  return parse_config(nlohmann::json{{"providers", {{"local", p}}}}.dump(), "test");
}

struct Collected {
  std::string text;
  std::vector<ToolCall> calls;
  std::string finish;
  std::string reasoning;  // kReasoning's blocks
  int events = 0;
};

Collected run(ChatModel& m, const ChatRequest& req, int stop_after = -1) {
  Collected c;
  m.stream(req, [&](const ChatEvent& e) {
    ++c.events;
    if (e.kind == ChatEvent::Kind::kTextDelta) c.text += e.text;
    if (e.kind == ChatEvent::Kind::kToolCall) c.calls.push_back(e.call);
    if (e.kind == ChatEvent::Kind::kFinish) c.finish = e.finish_reason;
    if (e.kind == ChatEvent::Kind::kReasoning) c.reasoning = e.text;
    return stop_after < 0 || c.events < stop_after;
  });
  return c;
}

ChatRequest ask(const std::string& text) {
  ChatRequest r;
  r.messages = {{"system", "You answer questions about code.", {}, {}}, {"user", text, {}, {}}};
  return r;
}

TEST(Chat, StreamsTextAndSendsTheConversation) {
  test::ScriptedModelServer server;
  auto m = make_chat_model(config_for(server), "local:chat-small");
  Collected c = run(*m, ask("where is the pool?"));
  EXPECT_EQ(c.text, "You said: where is the pool?");
  EXPECT_EQ(c.finish, "stop");
  auto sent = server.requests().at(0);
  EXPECT_EQ(sent["path"], "/v1/chat/completions");
  EXPECT_EQ(sent["body"]["model"], "chat-small");
  EXPECT_EQ(sent["body"]["stream"], true);
  EXPECT_EQ(sent["body"]["messages"][0]["role"], "system");
  EXPECT_EQ(sent["body"]["messages"][1]["content"], "where is the pool?");
}

TEST(Chat, AssemblesToolCallsAndSendsToolsAndResults) {
  test::ScriptedModelServer server(R"([{"chat": {"text": ["Let me look."], "finish": "tool_calls",
      "tool_calls": [{"id": "c1", "name": "read_file", "arguments": "{\"filePath\": \"lib/pool.js\"}"},
                     {"id": "c2", "name": "grep", "arguments": "{\"pattern\": \"kGetDispatcher\"}"}]}}])");
  auto m = make_chat_model(config_for(server), "local:chat-small");
  ChatRequest req = ask("how does the pool pick a client?");
  req.tools = std::make_shared<std::vector<ToolSpec>>(
      std::vector<ToolSpec>{{"read_file", "Read a file", {{"type", "object"}}},
                            {"grep", "Search", {{"type", "object"}}}});
  Collected c = run(*m, req);
  EXPECT_EQ(c.text, "Let me look.");
  EXPECT_EQ(c.finish, "tool_calls");
  ASSERT_EQ(c.calls.size(), 2u);
  EXPECT_EQ(c.calls[0].id, "c1");
  EXPECT_EQ(c.calls[0].name, "read_file");
  EXPECT_EQ(nlohmann::json::parse(c.calls[0].arguments)["filePath"], "lib/pool.js");
  EXPECT_EQ(c.calls[1].name, "grep");
  auto sent = server.requests().at(0);
  EXPECT_EQ(sent["body"]["tools"][0]["function"]["name"], "read_file");
  EXPECT_FALSE(sent["body"].contains("tool_choice"));  // auto: the server's default
  // The next turn carries the assistant's calls and the tool results.
  ChatRequest next = req;
  next.tool_choice = ToolChoice::kNone;
  next.messages.push_back({"assistant", "Let me look.", c.calls, {}});
  next.messages.push_back({"tool", "{\"content\": \"...\"}", {}, "c1"});
  run(*m, next);
  auto second = server.requests().at(1);
  EXPECT_EQ(second["body"]["messages"][2]["tool_calls"][0]["id"], "c1");
  EXPECT_EQ(second["body"]["messages"][3]["tool_call_id"], "c1");
  EXPECT_EQ(second["body"]["tool_choice"], "none");
  next.tool_choice = ToolChoice::kRequired;
  run(*m, next);
  EXPECT_EQ(server.requests().at(2)["body"]["tool_choice"], "required");
}

// A model's configured sampling goes into each API's own fields; nothing when none is set.
TEST(Chat, ConfiguredSamplingIsSentInEachApisTerms) {
  test::ScriptedModelServer server;
  nlohmann::json p = {{"type", "openai"},
                      {"baseUrl", server.base_url()},
                      {"models", {{{"id", "tuned"}, {"temperature", 0.2}, {"topP", 0.9}, {"seed", 42}},
                                  {{"id", "plain"}}}}};
  Config c = parse_config(nlohmann::json{{"providers", {{"o", p}}}}.dump(), "test");
  run(*make_chat_model(c, "o:tuned"), ask("hi"));
  run(*make_chat_model(c, "o:plain"), ask("hi"));
  nlohmann::json tuned = server.requests().at(0)["body"], plain = server.requests().at(1)["body"];
  EXPECT_DOUBLE_EQ(tuned["temperature"].get<double>(), 0.2);
  EXPECT_DOUBLE_EQ(tuned["top_p"].get<double>(), 0.9);
  EXPECT_EQ(tuned["seed"], 42);
  EXPECT_FALSE(tuned.contains("top_k"));
  for (const char* k : {"temperature", "top_p", "seed"}) EXPECT_FALSE(plain.contains(k)) << k;

  setenv("PF_TEST_ANTHROPIC", "sk-ant-test", 1);
  test::ScriptedModelServer anthropic;
  nlohmann::json a = {{"type", "anthropic"},
                      {"baseUrl", anthropic.base_url()},
                      {"apiKeyEnv", "PF_TEST_ANTHROPIC"},
                      {"models", {{{"id", "claude-test"}, {"temperature", 1}, {"topK", 5}}}}};
  Config ac = parse_config(nlohmann::json{{"providers", {{"anthropic", a}}}}.dump(), "test");
  run(*make_chat_model(ac, "anthropic:claude-test"), ask("hi"));
  nlohmann::json body = anthropic.requests().at(0)["body"];
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 1.0);
  EXPECT_EQ(body["top_k"], 5);
  EXPECT_FALSE(body.contains("top_p"));
}

TEST(Chat, ErrorsBeforeTheFirstTokenAllowFallback) {
  test::ScriptedModelServer server(
      R"([{"status": 429, "body": {"error": {"message": "Rate limit reached"}}},
                                        {"status": 503}, {"status": 400, "body": {"error": {"message": "bad request"}}}])");
  auto m = make_chat_model(config_for(server), "local:chat-small");
  try {
    run(*m, ask("x"));
    FAIL();
  } catch (const ModelUnavailableError& e) {
    EXPECT_EQ(std::string(e.what()), "model local:chat-small: HTTP 429: Rate limit reached");
  }
  EXPECT_THROW(run(*m, ask("x")), ModelUnavailableError);
  try {
    run(*m, ask("x"));
    FAIL();
  } catch (const ModelUnavailableError&) {
    FAIL() << "a 400 is not a capacity error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("HTTP 400: bad request"), std::string::npos);
  }
}

// Only capacity, rate-limit and availability errors fall back (the reference's isModelError): a
// 400 that says the model is not available does, a 404 that says nothing of the model does not.
TEST(Chat, OnlyCapacityAndAvailabilityErrorsAllowFallback) {
  test::ScriptedModelServer server(
      R"([{"status": 400, "body": {"error": {"message": "The requested model is not available for your account"}}},
          {"status": 404, "body": "404 page not found"},
          {"status": 400, "body": {"error": {"message": "You exceeded your current quota, please check your plan"}}},
          {"status": 404, "body": {"error": {"message": "The model `gpt-9` does not exist"}}}])");
  auto m = make_chat_model(config_for(server), "local:chat-small");
  EXPECT_THROW(run(*m, ask("x")), ModelUnavailableError);
  try {
    run(*m, ask("x"));
    FAIL() << "no error";
  } catch (const ModelUnavailableError& e) {
    FAIL() << "a plain 404 fell back: " << e.what();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("HTTP 404"), std::string::npos) << e.what();
  }
  EXPECT_THROW(run(*m, ask("x")), ModelUnavailableError);
  EXPECT_THROW(run(*m, ask("x")), ModelUnavailableError);
  EXPECT_TRUE(is_model_unavailable(429, ""));
  EXPECT_TRUE(is_model_unavailable(0, "Overloaded"));
  EXPECT_TRUE(is_model_unavailable(0, "Resource exhausted: too many requests"));
  EXPECT_TRUE(is_model_unavailable(400, "model claude-x is not supported"));
  EXPECT_FALSE(is_model_unavailable(404, "not found"));
  EXPECT_FALSE(is_model_unavailable(400, "messages: field required"));
  EXPECT_FALSE(is_model_unavailable(401, "invalid api key"));
}

TEST(Chat, ABrokenStreamAndASlowFirstToken) {
  test::ScriptedModelServer server(
      R"([{"chat": {"text": ["one ", "two ", "three"], "drop_after": 2}},
                                        {"chat": {"text": ["late"], "delay_first": 2}}])");
  ChatOptions opt;
  opt.idle_timeout_ms = 500;
  auto m = make_chat_model(config_for(server), "local:chat-small", opt);
  std::string got;
  try {
    m->stream(ask("x"), [&](const ChatEvent& e) {
      got += e.text;
      return true;
    });
    FAIL();
  } catch (const ModelUnavailableError&) {
    FAIL() << "tokens were already streamed: no fallback";
  } catch (const StreamCutError& e) {
    EXPECT_EQ(e.chars(), 8u);
    EXPECT_STREQ(e.what(),
                 "The provider's stream for model local:chat-small ended before the answer was "
                 "complete (after 8 characters); the partial answer is above.");
  }
  EXPECT_EQ(got, "one two ");
  EXPECT_THROW(run(*m, ask("x")), ModelUnavailableError);  // no first token within 500 ms
}

// A hosted API sends the stream in chunked encoding: cut mid-body, the socket layer reports a
// "partial message". The client is told what happened in a sentence, not the request and the
// socket error (which once read "the stream broke off: POST http://... partial message").
TEST(Chat, AStreamCutMidBodySaysWhatHappenedInASentence) {
  test::ScriptedModelServer server(
      R"([{"chat": {"text": ["h\u00e9llo ", "wor", "ld"], "drop_after": 2, "chunked": true}}])");
  auto m = make_chat_model(config_for(server), "local:chat-small");
  std::string got;
  try {
    m->stream(ask("x"), [&](const ChatEvent& e) {
      got += e.text;
      return true;
    });
    FAIL() << "the cut stream passed as complete";
  } catch (const StreamCutError& e) {
    std::string said = e.what();
    EXPECT_EQ(said,
              "The provider's stream for model local:chat-small ended before the answer was "
              "complete (after 9 characters); the partial answer is above.");
    EXPECT_EQ(said.find("POST"), std::string::npos);
    EXPECT_EQ(said.find("partial message"), std::string::npos);
    EXPECT_EQ(e.unshown(),
              "The provider's stream for model local:chat-small ended before the answer was "
              "complete (after 9 characters); the partial answer was dropped. Try again.");
  }
  EXPECT_EQ(got, "h\u00e9llo wor");
}

// A peer that never ends an event, or never ends a failure's body, is cut off: memory stays
// bounded (16 MiB of event, 64 KiB of error body), and the error says what happened.
TEST(Chat, AFloodingProviderIsCutOff) {
  test::ScriptedModelServer server(
      R"([{"flood": {"status": 200, "mib": 64}}, {"flood": {"status": 500, "mib": 64}}])");
  auto m = make_chat_model(config_for(server), "local:chat-small");
  try {
    run(*m, ask("x"));
    FAIL() << "a 64 MiB event was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("an event of over 16 MiB"), std::string::npos) << e.what();
  }
  try {
    run(*m, ask("x"));
    FAIL() << "an endless failure was accepted";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("HTTP 500"), std::string::npos) << what.substr(0, 300);
    EXPECT_LT(what.size(), 70u * 1024) << "only the start of the body is kept";
  }
  // Both times the client hung up long before the 64 MiB were sent (socket buffers hold a few).
  // The server notices the hang-up on its next write, after the client has moved on.
  std::vector<nlohmann::json> floods;
  for (int i = 0; i < 200 && floods.size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    floods = server.events();
  }
  ASSERT_EQ(floods.size(), 2u);
  for (const auto& f : floods) {
    EXPECT_EQ(f["event"], "client disconnected") << f.dump();
    EXPECT_LT(f["chunks_sent"].get<int>(), f["chunks_total"].get<int>() / 2) << f.dump();
  }
}

TEST(Chat, CancellingStopsTheStream) {
  test::ScriptedModelServer server(R"([{"chat": {"text": ["a", "b", "c", "d"]}}])");
  auto m = make_chat_model(config_for(server), "local:chat-small");
  Collected c = run(*m, ask("x"), 2);
  EXPECT_EQ(c.text, "ab");
  EXPECT_EQ(c.finish, "");
}

}  // namespace
}  // namespace pf

namespace pf {
namespace {

TEST(Fallback, NextModelOnCapacityErrorsBeforeTheFirstToken) {
  test::ScriptedModelServer busy(R"([{"status": 503}])");
  test::ScriptedModelServer fine;
  nlohmann::json c = {
      {"providers",
       {{"busy", {{"type", "openai"}, {"baseUrl", busy.base_url()}, {"models", {{{"id", "m"}}}}}},
        {"fine",
         {{"type", "openai"}, {"baseUrl", fine.base_url()}, {"models", {{{"id", "m"}}}}}}}}};
  Config config = parse_config(c.dump(), "t");
  std::string text;
  auto r = stream_with_fallback(config, {"busy:m", "busy:m", "nope:m", "fine:m"}, ask("hi"),
                                [&](const ChatEvent& e) {
                                  text += e.text;
                                  return true;
                                });
  EXPECT_EQ(r.model_id, "fine:m");
  ASSERT_EQ(r.skipped.size(),
            2u);  // busy (503) and nope (not configured); the duplicate is skipped
  EXPECT_NE(r.skipped[0].find("HTTP 503"), std::string::npos);
  EXPECT_EQ(text, "You said: hi");
}

TEST(Fallback, ErrorsAfterTokensOrOfOtherKindsAreFinal) {
  test::ScriptedModelServer first(R"([{"status": 400}])");
  test::ScriptedModelServer second;
  nlohmann::json c = {
      {"providers",
       {{"a", {{"type", "openai"}, {"baseUrl", first.base_url()}, {"models", {{{"id", "m"}}}}}},
        {"b", {{"type", "openai"}, {"baseUrl", second.base_url()}, {"models", {{{"id", "m"}}}}}}}}};
  Config config = parse_config(c.dump(), "t");
  EXPECT_THROW(stream_with_fallback(config, {"a:m", "b:m"}, ask("hi"),
                                    [](const ChatEvent&) { return true; }),
               Error);
  EXPECT_TRUE(second.requests().empty());
  EXPECT_THROW(stream_with_fallback(config, {}, ask("hi"), [](const ChatEvent&) { return true; }),
               Error);
}

}  // namespace
}  // namespace pf

namespace pf {
namespace {

Config anthropic_config(const test::ScriptedModelServer& server) {
  // The scripted server's root plays api.anthropic.com (base_url() ends in /v1).
  nlohmann::json p = {{"type", "anthropic"},
                      {"baseUrl", server.base_url()},
                      {"apiKeyEnv", "PF_TEST_ANTHROPIC"},
                      {"models", {{{"id", "claude-test"}}}}};
  return parse_config(nlohmann::json{{"providers", {{"anthropic", p}}}}.dump(), "test");
}

TEST(AnthropicChat, StreamsTextAndToolUseInTheMessagesFormat) {
  setenv("PF_TEST_ANTHROPIC", "sk-ant-test", 1);
  test::ScriptedModelServer server(R"([{"chat": {"text": ["Checking."], "finish": "tool_calls",
      "tool_calls": [{"id": "toolu_1", "name": "read_file", "arguments": "{\"filePath\": \"a.js\"}"}]}}])");
  auto m = make_chat_model(anthropic_config(server), "anthropic:claude-test");
  ChatRequest req = ask("where?");
  req.tools = std::make_shared<std::vector<ToolSpec>>(
      std::vector<ToolSpec>{{"read_file", "Read a file", {{"type", "object"}}}});
  Collected c = run(*m, req);
  EXPECT_EQ(c.text, "Checking.");
  EXPECT_EQ(c.finish, "tool_calls");
  ASSERT_EQ(c.calls.size(), 1u);
  EXPECT_EQ(c.calls[0].id, "toolu_1");
  EXPECT_EQ(nlohmann::json::parse(c.calls[0].arguments)["filePath"], "a.js");
  auto sent = server.requests().at(0);
  EXPECT_EQ(sent["path"], "/v1/messages");
  EXPECT_EQ(sent["body"]["system"], "You answer questions about code.");
  EXPECT_EQ(sent["body"]["messages"][0]["role"], "user");
  EXPECT_EQ(sent["body"]["tools"][0]["input_schema"]["type"], "object");
  EXPECT_FALSE(sent["body"].contains("tool_choice"));
  // The follow-up turn: tool_use blocks and a user message of tool_result blocks.
  ChatRequest next = req;
  next.tool_choice = ToolChoice::kRequired;
  next.messages.push_back({"assistant", "Checking.", c.calls, {}});
  next.messages.push_back({"tool", "{\"content\": \"x\"}", {}, "toolu_1"});
  Collected answer = run(*m, next);
  EXPECT_EQ(answer.finish, "stop");
  auto second = server.requests().at(1);
  auto& msgs = second["body"]["messages"];
  EXPECT_EQ(msgs[1]["content"][1]["type"], "tool_use");
  EXPECT_EQ(msgs[2]["content"][0]["type"], "tool_result");
  EXPECT_EQ(msgs[2]["content"][0]["tool_use_id"], "toolu_1");
  EXPECT_EQ(second["body"]["tool_choice"]["type"], "any");
  unsetenv("PF_TEST_ANTHROPIC");
}

// A reasoning effort goes only to models that reason (the config's "reasoning", else the known
// families), in each API's terms; Anthropic's signed thinking comes back as reasoning blocks,
// never as text, and goes back first in the assistant message that called tools, as the API
// requires while thinking (the test server enforces its rules).
TEST(Reasoning, OpenAiGetsTheEffortOnlyWhereTheModelReasons) {
  test::ScriptedModelServer server;
  nlohmann::json p = {{"type", "openai"},
                      {"baseUrl", server.base_url()},
                      {"models",
                       {{{"id", "o3-mini"}},
                        {{"id", "gpt-4o"}},
                        {{"id", "house-thinker"}, {"reasoning", true}},
                        {{"id", "o3-lookalike"}, {"reasoning", false}}}}};
  Config c = parse_config(nlohmann::json{{"providers", {{"oa", p}}}}.dump(), "test");
  EXPECT_TRUE(model_reasons(c, "oa:o3-mini"));
  EXPECT_FALSE(model_reasons(c, "oa:gpt-4o"));
  EXPECT_TRUE(model_reasons(c, "oa:house-thinker"));
  EXPECT_FALSE(model_reasons(c, "oa:o3-lookalike"));
  EXPECT_TRUE(model_reasons(c, "oa:gpt-5.2"));  // not listed: known by its family
  EXPECT_FALSE(model_reasons(c, "nobody:o3"));
  EXPECT_THROW(parse_config(R"({"providers": {"x": {"type": "openai", "baseUrl": "http://h",
      "models": [{"id": "m", "reasoning": "yes"}]}}})", "t"), ConfigError);
  ChatRequest req = ask("think");
  req.reasoning_effort = "high";
  // A server's reasoning deltas are never text.
  test::ScriptedModelServer thinker(R"([{"chat": {"reasoning": ["secret ", "musing"], "text": ["Answer."]}}])");
  p["baseUrl"] = thinker.base_url();
  Config tc = parse_config(nlohmann::json{{"providers", {{"oa", p}}}}.dump(), "test");
  EXPECT_EQ(run(*make_chat_model(tc, "oa:o3-mini"), req).text, "Answer.");
  run(*make_chat_model(c, "oa:o3-mini"), req);
  run(*make_chat_model(c, "oa:gpt-4o"), req);
  EXPECT_EQ(server.requests().at(0)["body"]["reasoning_effort"], "high");
  EXPECT_FALSE(server.requests().at(1)["body"].contains("reasoning_effort"));
}

TEST(Reasoning, AnthropicThinksWithABudgetAndGetsItsThinkingBack) {
  setenv("PF_TEST_ANTHROPIC", "sk-ant-test", 1);
  test::ScriptedModelServer server(R"([{"chat": {"thinking": ["Let me ", "look."], "text": ["Checking."],
      "finish": "tool_calls", "tool_calls": [{"id": "toolu_1", "name": "read_file", "arguments": "{}"}]}},
      {"chat": {"text": ["Done."]}}, {"chat": {"text": ["unused"]}}])");
  nlohmann::json p = {{"type", "anthropic"},
                      {"baseUrl", server.base_url()},
                      {"apiKeyEnv", "PF_TEST_ANTHROPIC"},
                      {"models", {{{"id", "claude-sonnet-4-5"}, {"temperature", 0.2}}}}};
  Config c = parse_config(nlohmann::json{{"providers", {{"anthropic", p}}}}.dump(), "test");
  auto m = make_chat_model(c, "anthropic:claude-sonnet-4-5");
  ChatRequest req = ask("where?");
  req.reasoning_effort = "medium";
  req.tools = std::make_shared<std::vector<ToolSpec>>(
      std::vector<ToolSpec>{{"read_file", "Read a file", {{"type", "object"}}}});
  Collected first = run(*m, req);
  EXPECT_EQ(first.text, "Checking.");  // the thinking is never text
  nlohmann::json blocks = nlohmann::json::parse(first.reasoning);
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0]["thinking"], "Let me look.");
  EXPECT_EQ(blocks[0]["signature"], "sig-2");
  nlohmann::json body = server.requests().at(0)["body"];
  EXPECT_EQ(body["thinking"]["budget_tokens"], 8192);
  EXPECT_GT(body["max_tokens"].get<int>(), 8192);
  EXPECT_FALSE(body.contains("temperature"));
  ChatRequest next = req;
  ChatMessage called{"assistant", "Checking.", first.calls, {}, first.reasoning};
  next.messages.push_back(called);
  next.messages.push_back({"tool", "{\"content\": \"x\"}", {}, "toolu_1"});
  EXPECT_EQ(run(*m, next).text, "Done.");
  EXPECT_EQ(server.requests().at(1)["body"]["messages"][1]["content"][0]["type"], "thinking");
  // Without its thinking the API refuses the follow-up: the server holds pilotfish to that.
  next.messages[2].reasoning_blocks.clear();
  EXPECT_THROW(run(*m, next), Error);
  unsetenv("PF_TEST_ANTHROPIC");
}

// Images go as each API takes them (the test server checks them as the APIs do: valid base64 of
// the type named), to models that take images: the config's "vision", else known families.
TEST(Images, EachApiGetsImagesInItsOwnShape) {
  const std::string png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
  test::ScriptedModelServer server;
  nlohmann::json p = {{"type", "openai"}, {"baseUrl", server.base_url()},
                      {"models", {{{"id", "gpt-4o"}}, {{"id", "house-eye"}, {"vision", true}},
                                  {{"id", "gpt-4o-blind"}, {"vision", false}},
                                  {{"id", "m"}, {"price", {{"input", 3}, {"output", 15}}}}}}};
  Config c = parse_config(nlohmann::json{{"providers", {{"oa", p}}}}.dump(), "test");
  EXPECT_TRUE(model_sees_images(c, "oa:gpt-4o"));
  EXPECT_TRUE(model_sees_images(c, "oa:house-eye"));
  EXPECT_FALSE(model_sees_images(c, "oa:gpt-4o-blind"));
  EXPECT_FALSE(model_sees_images(c, "oa:gpt-3.5-turbo"));
  EXPECT_TRUE(model_sees_images(c, "oa:claude-sonnet-4-5"));
  EXPECT_FALSE(model_sees_images(c, "oa:text-embedding-3-small"));
  EXPECT_EQ(c.providers[0].models[3].price_output, 15.0);
  EXPECT_THROW(parse_config(R"({"providers": {"x": {"type": "openai", "baseUrl": "http://h",
      "models": [{"id": "m", "price": {"input": -1}}]}}})", "t"), ConfigError);
  ChatRequest req = ask("what is it?");
  req.messages.back().images = {{"image/png", png}};
  run(*make_chat_model(c, "oa:gpt-4o"), req);
  nlohmann::json parts = server.requests().back()["body"]["messages"].back()["content"];
  EXPECT_EQ(parts, (nlohmann::json{{{"type", "text"}, {"text", "what is it?"}},
                                   {{"type", "image_url"}, {"image_url", {{"url", "data:image/png;base64," + png}}}}}));
  // The server refuses an image that is not what it says, as the API would.
  req.messages.back().images = {{"image/jpeg", png}};
  EXPECT_THROW(run(*make_chat_model(c, "oa:gpt-4o"), req), Error);
  setenv("PF_TEST_ANTHROPIC", "sk-ant-test", 1);
  test::ScriptedModelServer anthropic(R"([{"chat": {"text": ["A pixel."]}}])");
  auto m = make_chat_model(anthropic_config(anthropic), "anthropic:claude-test");
  req.messages.back().images = {{"image/png", png}};
  EXPECT_EQ(run(*m, req).text, "A pixel.");
  nlohmann::json content = anthropic.requests().at(0)["body"]["messages"][0]["content"];
  EXPECT_EQ(content[0]["source"], (nlohmann::json{{"type", "base64"}, {"media_type", "image/png"}, {"data", png}}));
  EXPECT_EQ(content[1]["text"], "what is it?");
  req.messages.back().images = {{"image/png", "not base64!"}};
  EXPECT_THROW(run(*m, req), Error);
  unsetenv("PF_TEST_ANTHROPIC");
}

TEST(AnthropicChat, OverloadIsUnavailableBeforeTheFirstToken) {
  setenv("PF_TEST_ANTHROPIC", "sk-ant-test", 1);
  test::ScriptedModelServer server(
      R"([{"status": 529, "body": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}},
                                        {"chat": {"error_event": "overloaded_error"}}])");
  auto m = make_chat_model(anthropic_config(server), "anthropic:claude-test");
  EXPECT_THROW(run(*m, ask("x")), ModelUnavailableError);
  EXPECT_THROW(run(*m, ask("x")), ModelUnavailableError);
  unsetenv("PF_TEST_ANTHROPIC");
}

}  // namespace
}  // namespace pf

namespace pf {
namespace {

TEST(FallbackChain, ConfiguredThenKnownSiblingsThenTheFamilyNewestFirst) {
  Config config = parse_config(R"({
    "providers": {
      "anthropic": {"type": "anthropic", "baseUrl": "https://api.anthropic.com",
        "models": [{"id": "claude-haiku-4-5"}, {"id": "claude-sonnet-4-5"}, {"id": "claude-opus-4-6"},
                   {"id": "claude-sonnet-4-6"}, {"id": "claude-sonnet-3-7"}]},
      "openai": {"type": "openai", "baseUrl": "https://api.openai.com/v1",
        "models": [{"id": "gpt-5.1-codex"}, {"id": "gpt-5.1"}, {"id": "gpt-5.2"}, {"id": "o3"},
                   {"id": "text-embedding-3-small"}]}},
    "defaults": {"chatModel": "anthropic:claude-sonnet-4-6",
                 "fallbackModels": ["openai:gpt-5.2"]}})",
                               "chain.json");
  EXPECT_EQ(fallback_chain(config, "anthropic:claude-sonnet-4-6"),
            (std::vector<std::string>{"anthropic:claude-sonnet-4-6", "openai:gpt-5.2",
                                      "anthropic:claude-sonnet-4-5", "anthropic:claude-haiku-4-5",
                                      "anthropic:claude-sonnet-3-7"}));
  // Not in the static map: its family, newest first; never the embedding model, never a model
  // the provider does not list, and codex models are a family of their own.
  EXPECT_EQ(fallback_chain(config, "openai:gpt-5.1"),
            (std::vector<std::string>{"openai:gpt-5.1", "openai:gpt-5.2"}));
  EXPECT_EQ(fallback_chain(config, "openai:gpt-5.1-codex"),
            (std::vector<std::string>{"openai:gpt-5.1-codex", "openai:gpt-5.2"}));
  EXPECT_EQ(fallback_chain(config, "openai:o3"),
            (std::vector<std::string>{"openai:o3", "openai:gpt-5.2"}))
      << "o3's known siblings (o4-mini, gpt-5.4) are not configured";
  EXPECT_EQ(fallback_chain(config, "nowhere:x"),
            (std::vector<std::string>{"nowhere:x", "openai:gpt-5.2"}));
}

TEST(FallbackChain, CodexHasItsOwnChainsBasesPrecedeVariantsAndUnlistedFallbacksGo) {
  Config config = parse_config(R"({
    "providers": {
      "openai": {"type": "openai", "baseUrl": "https://api.openai.com/v1",
        "models": [{"id": "gpt-5.1-codex-max"}, {"id": "gpt-5.3-codex"}, {"id": "gpt-5.2-codex"},
                   {"id": "gpt-5.2"}]},
      "anthropic": {"type": "anthropic", "baseUrl": "https://api.anthropic.com",
        "models": [{"id": "claude-opus-4-1"}, {"id": "claude-opus-4-1-1m"}, {"id": "claude-opus-4"}]}},
    "defaults": {"chatModel": "openai:gpt-5.2",
                 "fallbackModels": ["openai:gpt-9", "anthropic:claude-opus-4"]}})",
                               "codex.json");
  // The configured fallbacks the providers do not list are dropped.
  EXPECT_EQ(fallback_chain(config, "openai:gpt-5.2-codex"),
            (std::vector<std::string>{"openai:gpt-5.2-codex", "anthropic:claude-opus-4",
                                      "openai:gpt-5.3-codex", "openai:gpt-5.1-codex-max"}));
  EXPECT_EQ(fallback_chain(config, "openai:gpt-5.1-codex-max"),
            (std::vector<std::string>{"openai:gpt-5.1-codex-max", "anthropic:claude-opus-4",
                                      "openai:gpt-5.3-codex", "openai:gpt-5.2-codex"}));
  // Newest first, and the base model before its -1m variant (configured after it).
  EXPECT_EQ(fallback_chain(config, "anthropic:claude-opus-4"),
            (std::vector<std::string>{"anthropic:claude-opus-4", "anthropic:claude-opus-4-1",
                                      "anthropic:claude-opus-4-1-1m"}));
}

TEST(FallbackChain, TheBuiltInChainServesWhenTheConfiguredOneCannot) {
  test::ScriptedModelServer model(R"([{"status": 429, "headers": {"Retry-After": "0"}},
                                      {"status": 503}])");
  Config config = parse_config(
      R"({"providers": {"p": {"type": "openai", "baseUrl": ")" + model.base_url() +
          R"(", "models": [{"id": "gpt-5.2"}, {"id": "gpt-5.4"}, {"id": "gpt-5.1"}]}}})",
      "chain.json");
  auto chain = fallback_chain(config, "p:gpt-5.4");
  ASSERT_EQ(chain, (std::vector<std::string>{"p:gpt-5.4", "p:gpt-5.2", "p:gpt-5.1"}));
  std::string text;
  ChatRequest req;
  req.messages.push_back(ChatMessage{"user", "hi", {}, {}});
  auto r = stream_with_fallback(config, chain, req, [&](const ChatEvent& e) {
    if (e.kind == ChatEvent::Kind::kTextDelta) text += e.text;
    return true;
  });
  EXPECT_EQ(r.model_id, "p:gpt-5.1");
  EXPECT_EQ(r.skipped.size(), 2u);
  EXPECT_EQ(text, "You said: hi");
}

}  // namespace
}  // namespace pf

namespace pf {
namespace {

TEST(Fallback, ABusyChainIsTriedAgainAfterTheWaitItAskedFor) {
  auto config_for = [](const test::ScriptedModelServer& server) {
    return parse_config(R"({"providers": {"p": {"type": "openai", "baseUrl": ")" +
                            server.base_url() + R"(", "models": [{"id": "m"}]}}})",
                        "retry.json");
  };
  std::string text;
  auto collect = [&](const ChatEvent& e) {
    if (e.kind == ChatEvent::Kind::kTextDelta) text += e.text;
    return true;
  };
  // No retries: the one model is busy, so the answer fails.
  test::ScriptedModelServer once(R"([{"status": 503}])");
  ChatOptions none;
  none.chain_retries = 0;
  EXPECT_THROW(stream_with_fallback(config_for(once), {"p:m"}, ask("hi"), collect, none), Error);
  // Retries: 429 asking for 1 s, then 529 (a doubled backoff), then the model answers.
  test::ScriptedModelServer busy(R"([{"status": 429, "headers": {"Retry-After": "1"}},
                                     {"status": 529}])");
  ChatOptions retry;
  retry.chain_retries = 2;
  retry.retry_backoff_ms = 50;
  auto t0 = std::chrono::steady_clock::now();
  auto r = stream_with_fallback(config_for(busy), {"p:m"}, ask("hi"), collect, retry);
  auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(r.model_id, "p:m");
  EXPECT_EQ(r.skipped.size(), 2u);
  EXPECT_EQ(text, "You said: hi");
  EXPECT_GE(waited, std::chrono::milliseconds(1100));
  EXPECT_LT(waited, std::chrono::milliseconds(5000));
  EXPECT_EQ(busy.requests().size(), 3u);
}

}  // namespace
}  // namespace pf
