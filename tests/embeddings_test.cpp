// The OpenAI-compatible embeddings client against the scripted test server: success, batching,
// credentials, retries on 429/503/dropped connections, no retry on 401, timeouts, bad bodies.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/config.h"
#include "llm/embeddings.h"
#include "net/http_client.h"
#include "test_util.h"

namespace pf {
namespace {

Config config_for(const test::ScriptedModelServer& server, const std::string& key_env = "") {
  nlohmann::json p = {
      {"type", "openai"}, {"baseUrl", server.base_url()}, {"models", {{{"id", "embed-small"}}}}};
  if (!key_env.empty()) p["apiKeyEnv"] = key_env;
  nlohmann::json c = {{"providers", {{"local", p}}},
                      {"defaults", {{"embeddingModel", "local:embed-small"}}}};
  return parse_config(c.dump(), "test");
}

TEST(Embeddings, OneVectorPerInputInOrder) {
  test::ScriptedModelServer server;
  auto e = make_embedder(config_for(server), "local:embed-small");
  EXPECT_EQ(e->model_id(), "local:embed-small");
  auto v = e->embed({"retry the request", "retry a request later", "websocket close codes"});
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].size(), 64u);
  EXPECT_GT(test::cosine(v[0], v[1]), test::cosine(v[0], v[2]));
  auto log = server.requests().at(0);
  EXPECT_EQ(log["path"], "/v1/embeddings");
  EXPECT_EQ(log["body"]["model"], "embed-small");
  EXPECT_EQ(log["body"]["input"].size(), 3u);
  EXPECT_TRUE(e->embed({}).empty());
}

TEST(Embeddings, SendsTheKeyFromTheNamedVariableAndNeverRetriesA401) {
  test::ScriptedModelServer server("[]", "sk-test");
  setenv("PF_TEST_KEY", "sk-test", 1);
  EXPECT_EQ(
      make_embedder(config_for(server, "PF_TEST_KEY"), "local:embed-small")->embed({"x"}).size(),
      1u);
  setenv("PF_TEST_KEY", "wrong", 1);
  auto e = make_embedder(config_for(server, "PF_TEST_KEY"), "local:embed-small");
  try {
    e->embed({"x"});
    FAIL();
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("HTTP 401: Incorrect API key provided"),
              std::string::npos)
        << err.what();
  }
  EXPECT_EQ(server.requests().size(), 2u);  // one success, one 401: no retry
  unsetenv("PF_TEST_KEY");
  EXPECT_THROW(make_embedder(config_for(server, "PF_TEST_KEY"), "local:embed-small"), ConfigError);
}

TEST(Embeddings, RetriesRateLimitsOverloadAndDroppedConnections) {
  test::ScriptedModelServer server(
      R"([{"status": 429, "headers": {"Retry-After": "0"}}, {"drop": true}, {"status": 503}])");
  EmbedderOptions opt;
  opt.max_attempts = 4;
  opt.max_backoff_ms = 10;
  auto e = make_embedder(config_for(server), "local:embed-small", opt);
  EXPECT_EQ(e->embed({"hello"}).size(), 1u);
  EXPECT_EQ(server.requests().size(), 4u);
}

TEST(Embeddings, GivesUpAfterTheLastAttemptWithTheServersMessage) {
  test::ScriptedModelServer server(R"([{"status": 500, "body": {"error": {"message": "boom"}}},
                                        {"status": 500, "body": {"error": {"message": "boom again"}}}])");
  EmbedderOptions opt;
  opt.max_attempts = 2;
  opt.max_backoff_ms = 1;
  auto e = make_embedder(config_for(server), "local:embed-small", opt);
  try {
    e->embed({"hello"});
    FAIL();
  } catch (const Error& err) {
    EXPECT_EQ(std::string(err.what()), "embedding model local:embed-small: HTTP 500: boom again");
  }
}

TEST(Embeddings, TimeoutsAndMalformedBodiesAreClearErrors) {
  test::ScriptedModelServer server(R"([{"delay": 3}, {"garbage": true}])");
  EmbedderOptions opt;
  opt.max_attempts = 1;
  opt.timeout_ms = 300;
  auto e = make_embedder(config_for(server), "local:embed-small", opt);
  try {
    e->embed({"hello"});
    FAIL();
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("no complete answer within 300 ms"), std::string::npos)
        << err.what();
  }
  try {
    e->embed({"hello"});
    FAIL();
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("no data array"), std::string::npos) << err.what();
  }
}

TEST(Embeddings, ProvidersThatCannotEmbedAreRefused) {
  Config c = parse_config(
      R"({"providers": {"a": {"type": "anthropic", "baseUrl": "https://api.anthropic.com"}}})",
      "t");
  EXPECT_THROW(make_embedder(c, "a:claude"), ConfigError);
  EXPECT_THROW(make_embedder(c, "b:x"), ConfigError);
  EXPECT_THROW(make_embedder(c, "nocolon"), ConfigError);
}

TEST(HttpClient, ConnectionRefusedAndBadUrls) {
  HttpRequest r;
  r.url = "http://127.0.0.1:1/v1/x";  // nothing listens on port 1
  r.timeout = std::chrono::milliseconds(2000);
  EXPECT_THROW(http_request(r), NetError);
  EXPECT_THROW(parse_url("ftp://host/x"), NetError);
  EXPECT_THROW(parse_url("http:///x"), NetError);
  ParsedUrl u = parse_url("https://api.example.com/v1");
  EXPECT_TRUE(u.tls);
  EXPECT_EQ(u.port, "443");
  EXPECT_EQ(u.target, "/v1");
}

}  // namespace
}  // namespace pf
