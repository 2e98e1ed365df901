// The embedding pass over a store (search/embed_chunks.h) against the llama-server stand-in: a
// chunk the model refuses is recorded with its reason, the others are embedded, the refused one
// is tried again by the next run; `pilotfish index` and `pilotfish stats` say so.
#include "search/embed_chunks.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/config.h"
#include "index/indexer.h"
#include "test_util.h"

namespace pf {
namespace {

std::string config_json(int port) {
  return nlohmann::json{{"providers",
                         {{"srv",
                           {{"type", "openai"},
                            {"baseUrl", "http://127.0.0.1:" + std::to_string(port) + "/v1"},
                            {"models", {{{"id", "embed-small"}}}}}}}},
                        {"defaults", {{"embeddingModel", "srv:embed-small"}}}}
      .dump();
}

class EmbedChunksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string big = "# Long\n\n";
    for (int i = 0; i < 120; ++i) big += "word ";
    test::write_file(repo_ / "big.md", big + "\n");
    test::write_file(repo_ / "small.js", "function alpha () { return 1; }\n");
    test::write_file(repo_ / "bad.md", "# Bad\n\nThis section holds POISON for the model.\n");
    test::write_file(repo_ / "ok.md", "# Fine\n\nNothing wrong here.\n");
    store_ = open_sqlite_store(dir_ / "e.db", OpenMode::kReadWrite);
    reindex();
  }
  void reindex() {
    IndexOptions opt;
    opt.root = repo_.path();
    index_repository(*store_, opt);
  }
  EmbedOutcome run(const std::vector<std::string>& server_args) {
    std::vector<std::string> args = {"--flavor", "llama", "--ctx", "1024"};
    args.insert(args.end(), server_args.begin(), server_args.end());
    test::PythonServer server("embedding_server.py", args);
    Config config = parse_config(config_json(server.port()), "test");
    return embed_new_chunks(*store_, config);
  }
  int64_t failed() {
    auto s = store_->stats();
    auto it = s.embedding_failures_by_model.find("srv:embed-small");
    return it == s.embedding_failures_by_model.end() ? 0 : it->second;
  }
  int64_t embedded() { return store_->stats().embeddings_by_model["srv:embed-small"]; }

  test::TempDir repo_, dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(EmbedChunksTest, ARefusedChunkIsRecordedAndTheOthersAreEmbedded) {
  int64_t chunks = store_->stats().chunks;
  ASSERT_GE(chunks, 3);
  EmbedOutcome first = run({"--fail-on", "POISON", "--limit", "48"});
  EXPECT_EQ(first.error, "");
  EXPECT_EQ(first.failed, 1);
  EXPECT_EQ(first.embedded, chunks - 1);
  EXPECT_GE(first.split, 1);  // big.md's section is longer than 48 tokens
  EXPECT_EQ(failed(), 1);
  EXPECT_EQ(embedded(), chunks - 1);

  // The next run tries it again (still refused: one request's worth, not a stop).
  EmbedOutcome second = run({"--fail-on", "POISON", "--limit", "48"});
  EXPECT_EQ(second.embedded, 0);
  EXPECT_EQ(second.failed, 1);
  EXPECT_LE(second.requests, 2);  // it, and a known-good input to tell it from a server fault

  // The model is fixed: the chunk gets its vector and the record goes.
  EmbedOutcome third = run({"--limit", "48"});
  EXPECT_EQ(third.embedded, 1);
  EXPECT_EQ(third.failed, 0);
  EXPECT_EQ(failed(), 0);
  EXPECT_EQ(embedded(), chunks);
}

TEST_F(EmbedChunksTest, ADeletedChunkTakesItsRecordAlong) {
  EXPECT_EQ(run({"--fail-on", "POISON"}).failed, 1);
  std::filesystem::remove(repo_ / "bad.md");
  reindex();
  EXPECT_EQ(failed(), 0);
}

TEST_F(EmbedChunksTest, AServerThatIsDownStopsThePassWithoutRecordingRefusals) {
  Config config = parse_config(config_json(1), "test");
  EmbedOutcome out = embed_new_chunks(*store_, config);
  EXPECT_NE(out.error, "");
  EXPECT_EQ(out.embedded, 0);
  EXPECT_EQ(out.failed, 0);
  EXPECT_EQ(failed(), 0);
}

TEST_F(EmbedChunksTest, IndexAndStatsReportRefusedAndPendingChunks) {
  test::PythonServer server("embedding_server.py",
                            {"--flavor", "llama", "--fail-on", "POISON", "--limit", "48"});
  test::write_file(dir_ / "config.json", config_json(server.port()));
  std::string db = dir_ / "cli.db";
  auto idx = test::run({test::pilotfish_bin(), "index", repo_.path(), "--db", db, "--config",
                        dir_ / "config.json"});
  EXPECT_EQ(idx.exit_code, 0) << idx.err;
  EXPECT_NE(idx.out.find("1 refused (see `pilotfish stats`)"), std::string::npos) << idx.out;
  EXPECT_NE(idx.out.find("in several pieces"), std::string::npos) << idx.out;
  auto stats = test::run({test::pilotfish_bin(), "stats", "--db", db, "--json"});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  auto j = nlohmann::json::parse(stats.out);
  ASSERT_EQ(j["embeddings"].size(), 1u) << stats.out;
  EXPECT_EQ(j["embeddings"][0]["model"], "srv:embed-small");
  EXPECT_EQ(j["embeddings"][0]["failed"], 1);
  EXPECT_EQ(j["embeddings"][0]["pending"], 0);
  EXPECT_EQ(j["embeddings"][0]["embedded"], j["chunks"].get<int64_t>() - 1);
  // A configured model that has embedded nothing yet: everything pending.
  test::write_file(dir_ / "other.json",
                   R"({"providers": {"o": {"type": "openai", "baseUrl": "http://127.0.0.1:1/v1"}},
                       "defaults": {"embeddingModel": "o:next"}})");
  auto text = test::run(
      {test::pilotfish_bin(), "stats", "--db", db, "--config", dir_ / "other.json"});
  EXPECT_NE(text.out.find("o:next: 0 embedded, " + std::to_string(j["chunks"].get<int64_t>()) +
                          " pending, 0 failed"),
            std::string::npos)
      << text.out;
}

}  // namespace
}  // namespace pf
