// `pilotfish ask` (src/cli/ask.cpp) end to end: the retrieval-only answer without a model, the
// model's streamed answer with its fallback, a stream cut off mid-answer, the tool loop within
// its step cap, reasoning effort and images for the models that take them, and the query
// rewrite. Plan mode and --implement are in plan_mode_test.cpp, --agent in
// custom_agents_test.cpp, the terminal's questions in ask_user_test.cpp.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace pf {
namespace {

test::CommandResult pf(std::vector<std::string> args) {
  return test::run_pilotfish(std::move(args));
}

TEST(Ask, WithoutAModelListsTheBestPlaces) {
  test::TempDir repo, tmp, cfgdir;
  test::write_ts_repo(repo.path(), 2);
  std::string db = tmp / "a.db";
  ASSERT_EQ(pf({"index", repo.path(), "--db", db, "-q"}).exit_code, 0);
  test::write_file(cfgdir / "empty.json", "{}");
  auto r = pf({"ask", "how", "are", "requests", "dispatched?", "--db", db, "--config",
               cfgdir / "empty.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("No chat model is configured"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("`docs/guide.md:1-5`"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("answered by retrieval-only"), std::string::npos);
}

TEST(Ask, StreamsTheModelsAnswerGroundedInContextWithFallback) {
  test::TempDir repo, tmp;
  test::write_ts_repo(repo.path(), 2);
  // A chunk that holds its own fences must not break out of its context block.
  test::write_file(repo / "docs/fences.md",
                   "# Fences\n\n```js\nconst a = 1\n```\n\n````\nnested\n````\n");
  std::string db = tmp / "a.db";
  ASSERT_EQ(pf({"index", repo.path(), "--db", db, "-q"}).exit_code, 0);
  test::ScriptedModelServer busy(
      R"([{"status": 429, "body": {"error": {"message": "slow down"}}}])");
  test::ScriptedModelServer fine;
  std::string cfg = tmp / "c.json";
  test::write_file(
      cfg, "{\"providers\": {\"busy\": {\"type\": \"openai\", \"baseUrl\": \"" + busy.base_url() +
               "\", \"models\": [{\"id\": \"big-model\"}]}, \"fine\": {\"type\": \"openai\", "
               "\"baseUrl\": \"" +
               fine.base_url() +
               "\", \"models\": [{\"id\": \"small-model\"}]}}, "
               "\"defaults\": {\"chatModel\": \"busy:big-model\", \"fallbackModels\": "
               "[\"fine:small-model\"]}}");
  auto r = pf({"ask", "where", "are", "the", "fences?", "--db", db, "--config", cfg});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "You said: where are the fences?\n");
  EXPECT_NE(r.err.find("answered by fine:small-model"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("passed over busy:big-model"), std::string::npos) << r.err;
  auto sent = fine.requests().at(0);
  std::string system = sent["body"]["messages"][0]["content"];
  EXPECT_NE(system.find("File: docs/fences.md (L1-L9)\n`````markdown\n# Fences"), std::string::npos)
      << system;
  EXPECT_EQ(sent["body"]["messages"][1]["content"], "where are the fences?");
  // --model resolves fuzzily, and an unknown one is a usage error.
  r = pf({"ask", "hi", "--db", db, "--config", cfg, "--model", "small"});
  EXPECT_NE(r.err.find("answered by fine:small-model"), std::string::npos) << r.err;
  r = pf({"ask", "hi", "--db", db, "--config", cfg, "--model", "gpt"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no configured model matches"), std::string::npos) << r.err;
}

// A provider's stream cut mid-answer: the partial answer stays on stdout, ended by a line end,
// and stderr says what happened in a sentence (not "POST <url>: partial message").
TEST(Ask, ToldOfAStreamCutOffMidAnswer) {
  test::TempDir repo, tmp;
  test::write_ts_repo(repo.path(), 1);
  std::string db = tmp / "a.db";
  ASSERT_EQ(pf({"index", repo.path(), "--db", db, "-q"}).exit_code, 0);
  test::ScriptedModelServer server(
      R"([{"chat": {"text": ["Half ", "an ", "answer"], "drop_after": 2, "chunked": true}}])");
  std::string cfg = tmp / "c.json";
  test::write_file(
      cfg, "{\"providers\": {\"m\": {\"type\": \"openai\", \"baseUrl\": \"" + server.base_url() +
               "\", \"models\": [{\"id\": \"x\"}]}}, \"defaults\": {\"chatModel\": \"m:x\"}}");
  auto r = pf({"ask", "how are requests dispatched?", "--db", db, "--config", cfg});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "Half an \n");
  // The log line before it keeps the cause for whoever looks into it.
  std::string told =
      "\npilotfish: The provider's stream for model m:x ended before the answer was complete "
      "(after 8 characters); the partial answer is above.\n";
  ASSERT_GE(r.err.size(), told.size()) << r.err;
  EXPECT_EQ(r.err.substr(r.err.size() - told.size()), told) << r.err;
  EXPECT_NE(r.err.find("partial message"), std::string::npos) << r.err;  // in the log line
}

TEST(Ask, RunsTheToolLoopWithinItsStepCap) {
  test::TempDir repo, tmp;
  test::write_ts_repo(repo.path(), 2);
  std::string db = tmp / "a.db";
  ASSERT_EQ(pf({"index", repo.path(), "--db", db, "-q"}).exit_code, 0);
  // The model asks for a file, then answers; then a model that keeps calling tools is stopped.
  std::string read_call = R"({"chat": {"text": [], "finish": "tool_calls", "tool_calls":
      [{"id": "c1", "name": "read_file", "arguments": "{\"filePath\": \"docs/guide.md\"}"},
       {"id": "c2", "name": "read_file", "arguments": "{\"filePath\": \"../../etc/passwd\"}"}]}})";
  test::ScriptedModelServer server("[" + read_call +
                                   ", {\"chat\": {\"text\": [\"It is in the guide.\"]}}, " +
                                   read_call + ", " + read_call + ", " + read_call + "]");
  std::string cfg = tmp / "c.json";
  test::write_file(
      cfg, "{\"providers\": {\"m\": {\"type\": \"openai\", \"baseUrl\": \"" + server.base_url() +
               "\", \"models\": [{\"id\": \"x\"}]}}, \"defaults\": {\"chatModel\": \"m:x\"}}");
  auto r = pf({"ask", "how are requests dispatched?", "--db", db, "--config", cfg});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "It is in the guide.\n");
  EXPECT_NE(r.err.find("-- read_file {\"filePath\": \"docs/guide.md\"}"), std::string::npos)
      << r.err;
  auto second = server.requests().at(1);
  auto& msgs = second["body"]["messages"];
  ASSERT_EQ(msgs.size(), 5u);  // system, user, assistant with 2 calls, 2 tool results
  // The system prompt (dropped while the first step streamed) is back, whole, for the second.
  EXPECT_EQ(msgs[0]["content"], server.requests().at(0)["body"]["messages"][0]["content"]);
  EXPECT_NE(msgs[0]["content"].get<std::string>().find("```"), std::string::npos);
  EXPECT_EQ(msgs[2]["tool_calls"].size(), 2u);
  auto first_result = nlohmann::json::parse(msgs[3]["content"].get<std::string>());
  EXPECT_NE(first_result["content"].get<std::string>().find("How requests are dispatched."),
            std::string::npos);
  auto second_result = nlohmann::json::parse(msgs[4]["content"].get<std::string>());
  EXPECT_NE(second_result["error"].get<std::string>().find("paths may not contain '..'"),
            std::string::npos);
  EXPECT_TRUE(second["body"].contains("tools"));

  // Three steps at most: the third request is offered no tools, and the loop ends there.
  r = pf({"ask", "loop forever", "--db", db, "--config", cfg, "--max-steps", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 5u);
  EXPECT_TRUE(requests[3]["body"].contains("tools"));
  EXPECT_FALSE(requests[4]["body"].contains("tools"));
}

// --reasoning and --image go to a model that takes them, and are refused (exit 2) otherwise.
TEST(Ask, TakesAReasoningEffortAndImagesForModelsThatTakeThem) {
  test::TempDir repo, tmp;
  test::write_ts_repo(repo.path(), 1);
  std::string db = tmp / "a.db";
  ASSERT_EQ(pf({"index", repo.path(), "--db", db, "-q"}).exit_code, 0);
  test::ScriptedModelServer server(R"([{"chat": {"text": ["Thought."]}}, {"chat": {"text": ["A pixel."]}}])");
  std::string cfg = tmp / "c.json";
  test::write_file(cfg, "{\"providers\": {\"m\": {\"type\": \"openai\", \"baseUrl\": \"" + server.base_url() +
                            "\", \"models\": [{\"id\": \"o3-mini\"}, {\"id\": \"gpt-4o\"}, {\"id\": \"plain\"}]}}, "
                            "\"defaults\": {\"chatModel\": \"m:plain\"}}");
  test::write_file(tmp / "pixel.png", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16));
  std::vector<std::string> ask = {"ask", "why?", "--db", db, "--config", cfg, "--max-steps", "1"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = ask;
    a.insert(a.end(), extra.begin(), extra.end());
    return pf(a);
  };
  auto r = with({"--model", "o3-mini", "--reasoning", "high"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(server.requests().back()["body"]["reasoning_effort"], "high");
  r = with({"--model", "gpt-4o", "--image", tmp / "pixel.png"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json parts = server.requests().back()["body"]["messages"].back()["content"];
  ASSERT_TRUE(parts.is_array()) << parts;
  EXPECT_EQ(parts[1]["image_url"]["url"].get<std::string>().rfind("data:image/png;base64,iVBORw0KGgo", 0), 0u);
  size_t asked = server.requests().size();
  r = with({"--reasoning", "high"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("m:plain does not reason"), std::string::npos) << r.err;
  r = with({"--image", tmp / "pixel.png"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("m:plain does not take images"), std::string::npos) << r.err;
  r = with({"--model", "gpt-4o", "--image", cfg});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not a PNG, JPEG, GIF or WebP"), std::string::npos) << r.err;
  EXPECT_EQ(server.requests().size(), asked);  // refused before any request
}

TEST(Ask, CanRewriteTheQueryAndFallsBackToTheQuestion) {
  test::TempDir repo, tmp;
  test::write_ts_repo(repo.path(), 2);
  std::string db = tmp / "a.db";
  ASSERT_EQ(pf({"index", repo.path(), "--db", db, "-q"}).exit_code, 0);
  // First ask: the rewrite names a function; second ask: the rewrite fails (HTTP 400).
  test::ScriptedModelServer server(R"([{"chat": {"text": ["handler1_3 ", "request"]}}, {},
                                        {"status": 400}])");
  std::string cfg = tmp / "c.json";
  test::write_file(
      cfg, "{\"providers\": {\"m\": {\"type\": \"openai\", \"baseUrl\": \"" + server.base_url() +
               "\", \"models\": [{\"id\": \"x\"}]}}, \"defaults\": {\"chatModel\": \"m:x\"}}");
  auto r = pf({"ask", "which one reads header x-3?", "--db", db, "--config", cfg, "--rewrite",
               "--max-steps", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "You said: which one reads header x-3?\n");  // the model sees the question
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_NE(requests[0]["body"]["messages"][0]["content"].get<std::string>().find("search query"),
            std::string::npos);
  std::string system = requests[1]["body"]["messages"][0]["content"];
  EXPECT_NE(system.find("File: src/m0/file1.ts"), std::string::npos)
      << "retrieval used the rewrite";
  r = pf({"ask", "which one reads header x-3?", "--db", db, "--config", cfg, "--rewrite",
          "--max-steps", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("query rewrite failed, searching with the question"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "You said: which one reads header x-3?\n");
}

}  // namespace
}  // namespace pf
