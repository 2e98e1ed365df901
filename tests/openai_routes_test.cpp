// pilotfish serve's OpenAI-compatible routes (src/api/openai_routes.cpp) with the real `openai`
// npm client (tests/node/openai_client.mjs): the model list, a completion and a streamed one
// answered by the whole pipeline (retrieval, the configured chat model, a repository tool call
// in between), OpenAI-shaped errors the client raises as its own classes, and a failure
// mid-stream.
#include <gtest/gtest.h>

#include <filesystem>

#include "test_util.h"

namespace pf {
namespace {

using nlohmann::json;

class OpenAiRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_file(repo / "README.md", "# demo\n\nThe pool lives in lib/pool.js.\n");
    test::write_file(repo / "lib/pool.js", "class Pool { dispatch () { return 1 } }\n");
    auto r = test::run({test::pilotfish_bin(), "index", repo.path(), "--db", dir / "index.db", "--quiet"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json read = {{"filePath", "README.md"}};
    json script = json::array(
        {{{"match", "TOOLS"}, {"chat", {{"text", json::array()}, {"finish", "tool_calls"},
            {"tool_calls", {{{"id", "c1"}, {"name", "read_file"}, {"arguments", read.dump()}}}}}}},
         {{"match", "TOOLS"}, {"chat", {{"text", {"It is in ", "lib/pool.js."}}}}},
         {{"match", "BREAK"}, {"chat", {{"text", {"Partial "}}, {"error_message", "the model fell over"}}}},
         {{"match", "CUT"}, {"chat", {{"text", {"Half ", "an ", "answer"}}, {"drop_after", 2}, {"chunked", true}}}},
         {{"match", "CUT"}, {"chat", {{"text", {"Half ", "an ", "answer"}}, {"drop_after", 2}, {"chunked", true}}}},
         {{"match", "FAIL"}, {"status", 400}, {"body", {{"error", {{"message", "bad request at http://10.0.0.1/v1"}}}}}}});
    model = std::make_unique<test::ScriptedModelServer>(script.dump());
    auto h = test::run({"sh", "-c", "printf %s k1 | " + test::pilotfish_bin() + " hash-key"});
    json cfg = {{"providers", {{"m", {{"type", "openai"}, {"baseUrl", model->base_url()}, {"models", {{{"id", "x"}}}}}}}},
                {"defaults", {{"chatModel", "m:x"}}},
                {"server", {{"apiKeys", {{{"name", "t"}, {"hash", h.out.substr(0, h.out.find('\n'))}, {"role", "user"}}}}}}};
    test::write_file(dir / "c.json", cfg.dump());
    serve = std::make_unique<test::ServeProcess>(
        std::vector<std::string>{"--db", dir / "index.db", "--config", dir / "c.json", "--repo", repo.path()});
  }
  json client(const std::string& mode) {
    std::string name = std::filesystem::path(repo.path()).filename().string();
    auto r = test::run({"node", test::source_dir() + "/tests/node/openai_client.mjs", serve->url(), "k1", mode, name});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json j = json::parse(r.out);
    EXPECT_FALSE(j.contains("failure")) << j["failure"] << "\n" << serve->log();
    return j;
  }
  // The model's chat requests (the server also asks it for its model list at start).
  std::vector<json> chat_requests() const {
    std::vector<json> out;
    for (const json& r : model->requests())
      if (r["path"] == "/v1/chat/completions") out.push_back(r);
    return out;
  }
  test::TempDir dir, repo;
  std::unique_ptr<test::ScriptedModelServer> model;
  std::unique_ptr<test::ServeProcess> serve;
};

TEST_F(OpenAiRoutesTest, TheOpenAiClientGetsAnswersFromThePipeline) {
  json r = client("answer");
  std::string name = std::filesystem::path(repo.path()).filename().string();
  EXPECT_EQ(r["models"], json::array({"pilotfish", "pilotfish:" + name}));
  EXPECT_EQ(r["whole"]["object"], "chat.completion");
  EXPECT_EQ(r["whole"]["model"], "pilotfish");
  EXPECT_EQ(r["whole"]["role"], "assistant");
  EXPECT_EQ(r["whole"]["text"], "You said: where is the readme?");
  EXPECT_EQ(r["whole"]["finish"], "stop");
  EXPECT_EQ(r["whole"]["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(r["streamed"]["text"], "You said: stream please");
  EXPECT_GT(r["streamed"]["deltas"].size(), 1u);  // streamed, not sent whole
  EXPECT_EQ(r["streamed"]["role"], "assistant");
  EXPECT_EQ(r["streamed"]["finish"], "stop");
  EXPECT_EQ(r["streamed"]["ids"], 1);  // every chunk of one completion shares its id
  EXPECT_EQ(r["helper"]["text"], "It is in lib/pool.js.");
  EXPECT_EQ(r["helper"]["finish"], "stop");
  // The answer was the pipeline's: retrieved context in the system prompt, the client's system
  // message not followed, and the tool ran between the two model calls.
  auto sent = chat_requests();
  ASSERT_EQ(sent.size(), 4u);
  std::string system = sent[0]["body"]["messages"][0]["content"];
  EXPECT_NE(system.find("README.md"), std::string::npos) << system;
  EXPECT_EQ(system.find("Be brief."), std::string::npos);
  EXPECT_NE(model->last_tool_result().find("The pool lives in lib/pool.js."), std::string::npos)
      << model->last_tool_result();
}

TEST_F(OpenAiRoutesTest, ErrorsComeInOpenAisShape) {
  json r = client("errors");
  EXPECT_EQ(r["wrongKey"]["status"], 401) << r;
  EXPECT_EQ(r["wrongKey"]["name"], "AuthenticationError");
  EXPECT_EQ(r["wrongKey"]["message"], "401 the API key is not valid");
  EXPECT_EQ(r["unknownModel"]["status"], 404);
  EXPECT_EQ(r["unknownModel"]["name"], "NotFoundError");
  EXPECT_EQ(r["unknownModel"]["code"], "model_not_found");
  EXPECT_NE(r["unknownModel"]["message"].get<std::string>().find("pilotfish"), std::string::npos);
  EXPECT_EQ(r["twoChoices"]["name"], "BadRequestError");
  EXPECT_EQ(r["twoChoices"]["code"], "unsupported_parameter");
  EXPECT_EQ(r["clientTools"]["status"], 400);
  EXPECT_EQ(r["notUser"]["type"], "invalid_request_error");
  EXPECT_TRUE(chat_requests().empty());  // nothing reached the model
}

TEST_F(OpenAiRoutesTest, AFailureMidStreamIsAnErrorTheClientRaises) {
  json r = client("failure");
  EXPECT_EQ(r["before"], json::array({"Partial "})) << r;
  EXPECT_EQ(r["streamFailure"]["name"], "APIError") << r;
  EXPECT_NE(r["streamFailure"]["message"].get<std::string>().find("the model fell over"), std::string::npos) << r;
  EXPECT_EQ(r["wholeFailure"]["status"], 502) << r;
  EXPECT_EQ(r["wholeFailure"]["name"], "InternalServerError");
  std::string said = r["wholeFailure"]["message"];
  EXPECT_EQ(said.find("10.0.0.1"), std::string::npos) << said;  // provider addresses stay inside
}

// A provider's stream cut mid-body (chunked, as hosted APIs send it) once reached the client as
// "the stream broke off: POST the provider partial message".
TEST_F(OpenAiRoutesTest, AStreamCutOffMidAnswerIsToldInASentence) {
  json r = client("cut");
  EXPECT_EQ(r["before"], json::array({"Half ", "an "})) << r;
  std::string streamed = r["streamFailure"]["message"];
  EXPECT_NE(streamed.find("The provider's stream for model m:x ended before the answer was "
                          "complete (after 8 characters); the partial answer is above."),
            std::string::npos)
      << r;
  EXPECT_EQ(streamed.find("POST"), std::string::npos) << streamed;
  EXPECT_EQ(streamed.find("partial message"), std::string::npos) << streamed;
  EXPECT_EQ(r["wholeFailure"]["status"], 502) << r;
  std::string whole = r["wholeFailure"]["message"];
  EXPECT_NE(whole.find("(after 8 characters); the partial answer was dropped. Try again."),
            std::string::npos)
      << whole;  // a whole reply shows nothing "above"
}

}  // namespace
}  // namespace pf
