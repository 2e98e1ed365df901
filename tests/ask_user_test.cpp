// ask_user (src/agent/ask_user.cpp): the arguments' rules, the question as shown and a reply
// read against the choices; then the front ends that answer it: `pilotfish ask` on a terminal
// (and not offered without one), and HTTP with the real ai 6 client as a client-side tool for a
// client that opts in (and not offered to one that does not). The chat bridge's side is in
// question_desk_test.cpp.
#include "agent/ask_user.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace pf {
namespace {

using nlohmann::json;

TEST(AskUser, ArgumentsAreChecked) {
  std::string error;
  auto q = parse_user_question(R"({"question": "  Which?  ", "choices": ["a", " b "]})", &error);
  ASSERT_TRUE(q) << error;
  EXPECT_EQ(q->question, "Which?");
  EXPECT_EQ(q->choices, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(parse_user_question(R"({"question": "Free?", "choices": null})", &error));
  struct Bad {
    std::string args, why;
  };
  for (const Bad& b : std::vector<Bad>{{"not json", "JSON object"},
                                       {"[]", "JSON object"},
                                       {"{}", "question is required"},
                                       {R"({"question": 3})", "question is required"},
                                       {R"({"question": "   "})", "question is empty"},
                                       {R"({"question": "q", "choices": "a"})", "list of strings"},
                                       {R"({"question": "q", "choices": [1]})", "list of strings"},
                                       {R"({"question": "q", "choices": [""]})", "1 to 200"},
                                       {R"({"question": "q", "choices": ["1","2","3","4","5","6","7","8","9","10","11"]})", "at most 10"}}) {
    error.clear();
    EXPECT_FALSE(parse_user_question(b.args, &error)) << b.args;
    EXPECT_NE(error.find(b.why), std::string::npos) << b.args << ": " << error;
  }
  std::string long_q = json{{"question", std::string(2001, 'x')}}.dump();
  EXPECT_FALSE(parse_user_question(long_q, &error));
  EXPECT_NE(error.find("2,000"), std::string::npos);
}

TEST(AskUser, RepliesPickChoicesByNumberOrText) {
  UserQuestion q{"Which store?", {"SQLite", "PostgreSQL"}};
  EXPECT_EQ(chosen_answer(q, "2"), "PostgreSQL");
  EXPECT_EQ(chosen_answer(q, " #1 "), "SQLite");
  EXPECT_EQ(chosen_answer(q, "2."), "PostgreSQL");
  EXPECT_EQ(chosen_answer(q, "postgresql"), "PostgreSQL");
  EXPECT_EQ(chosen_answer(q, "3"), "3");  // no third choice: the reply itself
  EXPECT_EQ(chosen_answer(q, "  neither, use files "), "neither, use files");
  EXPECT_EQ(chosen_answer(UserQuestion{"Free?", {}}, "1"), "1");
  std::string shown = question_text(q);
  EXPECT_NE(shown.find("Which store?\n1. SQLite\n2. PostgreSQL\n"), std::string::npos) << shown;
  EXPECT_NE(shown.find("number"), std::string::npos);
  EXPECT_EQ(question_text(UserQuestion{"Free?", {}}).find("number"), std::string::npos);
  EXPECT_EQ(user_answer("x", "alice"), (json{{"answer", "x"}, {"by", "alice"}}));
  EXPECT_TRUE(no_user_answer("timeout")["answer"].is_null());
  EXPECT_NE(no_user_answer("timeout")["note"].get<std::string>().find("did not reply (timeout)"), std::string::npos);
}

class AskUserFrontEnds : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_file(repo / "README.md", "# demo\n");
    auto r = test::run({test::pilotfish_bin(), "index", repo.path(), "--db", dir / "index.db", "--quiet"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  void write_config(const test::ScriptedModelServer& model, const json& extra = json::object()) {
    json cfg = {{"providers", {{"m", {{"type", "openai"}, {"baseUrl", model.base_url()}, {"models", {{{"id", "x"}}}}}}}},
                {"defaults", {{"chatModel", "m:x"}}}};
    cfg.update(extra);
    test::write_file(dir / "c.json", cfg.dump());
  }
  static json script() {
    return json::array({test::scripted_call("ask_user", {{"question", "Which store?"}, {"choices", {"SQLite", "PostgreSQL"}}}),
                        test::scripted_text("Going with the answer.")});
  }
  // The chat requests the model got (serve also lists its models).
  static std::vector<json> chats(const test::ScriptedModelServer& model) {
    std::vector<json> out;
    for (const json& r : model.requests())
      if (r["path"] == "/v1/chat/completions") out.push_back(r);
    return out;
  }
  static bool offered(const json& request) {
    for (const json& t : request["body"].value("tools", json::array()))
      if (t["function"]["name"] == "ask_user") return true;
    return false;
  }
  test::TempDir dir, repo;
};

TEST_F(AskUserFrontEnds, TheTerminalIsAskedAndAPipeIsNot) {
  test::ScriptedModelServer model(script().dump());
  write_config(model);
  std::vector<std::string> ask = {test::pilotfish_bin(), "ask", "pick a store", "--db", dir / "index.db",
                                  "--config", dir / "c.json"};
  auto [code, out] = test::run_on_terminal(ask, "your answer:", "2\n");
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("Which store?"), std::string::npos) << out;
  EXPECT_NE(out.find("2. PostgreSQL"), std::string::npos) << out;
  EXPECT_NE(out.find("Going with the answer."), std::string::npos) << out;
  ASSERT_EQ(chats(model).size(), 2u);
  EXPECT_TRUE(offered(chats(model)[0]));
  EXPECT_NE(model.last_tool_result().find("\"answer\":\"PostgreSQL\""), std::string::npos) << model.last_tool_result();
  // No terminal: the tool is not offered at all.
  test::ScriptedModelServer quiet(json::array({test::scripted_text("Answered.")}).dump());
  write_config(quiet);
  auto piped = test::run(ask);
  EXPECT_EQ(piped.exit_code, 0) << piped.err;
  ASSERT_EQ(chats(quiet).size(), 1u);
  EXPECT_FALSE(offered(chats(quiet)[0]));
}

TEST_F(AskUserFrontEnds, AnAiSdkClientThatOptsInAnswersItAsAClientSideTool) {
  json s = script();
  s.push_back(test::scripted_text("Plain answer."));
  test::ScriptedModelServer model(s.dump());
  auto h = test::run({"sh", "-c", "printf %s k1 | " + test::pilotfish_bin() + " hash-key"});
  write_config(model, {{"server", {{"apiKeys", {{{"name", "t"}, {"hash", h.out.substr(0, h.out.find('\n'))}, {"role", "user"}}}}}}});
  test::ServeProcess serve({"--db", dir / "index.db", "--config", dir / "c.json", "--repo", repo.path()});
  auto client = [&](const std::string& mode) {
    auto r = test::run({"node", test::source_dir() + "/tests/node/ask_user.mjs", "ai-6-325", serve.url(), "k1", mode});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json j = json::parse(r.out);
    EXPECT_FALSE(j.contains("failure")) << j["failure"] << "\n" << serve.log();
    return j;
  };
  json r = client("optin");
  ASSERT_EQ(r["calls"].size(), 1u) << r;
  EXPECT_EQ(r["calls"][0]["name"], "ask_user");
  EXPECT_EQ(r["calls"][0]["input"]["question"], "Which store?");
  EXPECT_EQ(r["after"]["state"], "output-available") << r;
  EXPECT_EQ(r["after"]["output"], "PostgreSQL");
  EXPECT_EQ(r["after"]["text"], "Going with the answer.");
  EXPECT_EQ(r["after"]["messages"], 2);  // the continuation went into the same assistant message
  EXPECT_EQ(r["after"]["requests"], 2);  // and nothing was sent after it
  ASSERT_EQ(chats(model).size(), 2u);
  EXPECT_TRUE(offered(chats(model)[0]));
  EXPECT_NE(model.last_tool_result().find("\"answer\":\"PostgreSQL\""), std::string::npos) << model.last_tool_result();
  // A client that does not opt in is not offered the tool.
  json plain = client("plain");
  EXPECT_EQ(plain["after"]["text"], "Plain answer.") << plain;
  EXPECT_EQ(plain["after"]["requests"], 1);
  ASSERT_EQ(chats(model).size(), 3u);
  EXPECT_FALSE(offered(chats(model)[2]));
}

}  // namespace
}  // namespace pf
