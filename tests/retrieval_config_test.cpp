// The "retrieval" section (src/search/retrieval_config.cpp): its rules, and that it reaches every
// front end: `pilotfish search` fuses as it says (a flag still wins), and `pilotfish ask`, `serve`
// and the chat bridge rewrite the question into a search query first when it says so.
#include "search/retrieval_config.h"

#include <gtest/gtest.h>

#include "chat_bridge_fixture.h"
#include "core/error.h"

namespace pf {
namespace {

using nlohmann::json;

TEST(RetrievalConfig, TheSectionAndItsErrors) {
  Config empty = parse_config("{}", "c.json");
  const RetrievalConfig& none = retrieval_config(empty);
  EXPECT_FALSE(none.rewrite);
  EXPECT_EQ(none.fusion, FusionMode::kRrf);
  Config c = parse_config(R"({"retrieval": {"rewrite": true, "fusion": "weighted",
                                            "weights": {"vector": 0.6, "text": 0.4}}})", "c.json");
  const RetrievalConfig& r = retrieval_config(c);
  EXPECT_TRUE(r.rewrite);
  HybridOptions opt;
  apply_retrieval(r, opt);
  EXPECT_EQ(opt.fusion, FusionMode::kWeighted);
  EXPECT_DOUBLE_EQ(opt.vector_weight, 0.6);
  EXPECT_DOUBLE_EQ(opt.text_weight, 0.4);
  for (const char* bad : {R"({"retrieval": []})", R"({"retrieval": {"rewrite": 1}})",
                          R"({"retrieval": {"fusion": "sum"}})",
                          R"({"retrieval": {"weights": {"vector": 1}}})",
                          R"({"retrieval": {"fusion": "weighted", "weights": {"vector": 2}}})",
                          R"({"retrieval": {"fusion": "weighted", "weights": {"vector": 0, "text": 0}}})",
                          R"({"retrieval": {"fuse": "rrf"}})"})
    EXPECT_THROW(parse_config(bad, "c.json"), ConfigError) << bad;
}

class RetrievalEverywhere : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_file(repo / "src/retry.ts", "// Retries a request with exponential backoff.\n"
                                            "export function retryWithBackoff() { return 1; }\n");
    test::write_file(repo / "docs/retry.md", "# Retrying\n\nRequests are retried with backoff.\n");
  }
  // Providers: the scripted server as the chat model and the embedding model.
  void write_config(const test::ScriptedModelServer& model, const json& retrieval) {
    json cfg = {{"providers", {{"m", {{"type", "openai"}, {"baseUrl", model.base_url()},
                                      {"models", {{{"id", "x"}}, {{"id", "embed-small"}}}}}}}},
                {"defaults", {{"chatModel", "m:x"}, {"embeddingModel", "m:embed-small"}}}};
    if (!retrieval.is_null()) cfg["retrieval"] = retrieval;
    test::write_file(dir / "c.json", cfg.dump());
  }
  test::CommandResult pf(std::vector<std::string> args) {
    args.insert(args.begin(), test::pilotfish_bin());
    args.insert(args.end(), {"--db", dir / "i.db", "--config", dir / "c.json"});
    return test::run(args);
  }
  test::TempDir dir, repo;
};

TEST_F(RetrievalEverywhere, SearchFusesAsConfiguredAndAFlagWins) {
  test::ScriptedModelServer model;
  write_config(model, json());
  ASSERT_EQ(pf({"index", repo.path(), "-q"}).exit_code, 0);
  auto top = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"search", "retried with backoff", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = pf(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out)["results"].at(0)["score"].get<double>();
  };
  double rrf = top({});
  EXPECT_LT(rrf, 0.05);  // 1/61 + 1/61 at most
  write_config(model, {{"fusion", "weighted"}, {"weights", {{"vector", 0.5}, {"text", 0.5}}}});
  double weighted = top({});
  EXPECT_GT(weighted, 0.2);  // 0.5 x cosine + 0.5 x the best text score's share
  EXPECT_DOUBLE_EQ(top({"--fusion", "rrf"}), rrf);
}

TEST_F(RetrievalEverywhere, AskAndServeRewriteWhenConfigured) {
  const std::string q = "how are requests retried?";
  test::ScriptedModelServer model(json::array({test::scripted_text("retryWithBackoff", q),
                                               test::scripted_text("Answered.", q),
                                               test::scripted_text("retryWithBackoff", q),
                                               test::scripted_text("Served.", q)}).dump(),
                                  "", {"--models", "x,embed-small"});
  write_config(model, {{"rewrite", true}});
  ASSERT_EQ(pf({"index", repo.path(), "-q"}).exit_code, 0);
  auto r = pf({"ask", "how are requests retried?", "--max-steps", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Answered.\n");
  std::vector<json> chats;
  for (const json& q : model.requests())
    if (q["path"] == "/v1/chat/completions") chats.push_back(q["body"]);
  ASSERT_EQ(chats.size(), 2u);
  EXPECT_NE(chats[0]["messages"][0]["content"].get<std::string>().find("search query"), std::string::npos);
  test::ServeProcess serve({"--db", dir / "i.db", "--config", dir / "c.json", "--repo", repo.path(), "--no-auth"});
  HttpRequest req;
  req.method = "POST";
  req.url = serve.url() + "/v1/platform-copilot/chat";
  req.headers = {{"Content-Type", "application/json"}};
  req.body = json{{"message", "how are requests retried?"}}.dump();
  HttpResponse res = http_request(req);
  EXPECT_EQ(res.status, 200) << res.body;
  chats.clear();
  for (const json& q : model.requests())
    if (q["path"] == "/v1/chat/completions") chats.push_back(q["body"]);
  ASSERT_EQ(chats.size(), 4u) << res.body;
  EXPECT_NE(chats[2]["messages"][0]["content"].get<std::string>().find("search query"), std::string::npos);
  EXPECT_NE(res.body.find("Served."), std::string::npos) << res.body;
}

}  // namespace
}  // namespace pf
