// The memory keeper (bridge/memory_keeper.h) with a real answer runtime and a scripted model
// server: a compaction summary appended to MEMORY.md, a consolidation after the idle spell with
// the model that answered (or memory.consolidationModel), none when disarmed by a new turn, and
// none when the keeper was stopped.
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include "bridge/memory_keeper.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "bridge/bridge_config.h"
#include "core/fs.h"
#include "test_util.h"

namespace pf {
namespace {

namespace asio = boost::asio;
using nlohmann::json;

const char* kNotes =
    "# Notes\n\n## Compaction Summary [2026-11-30T10:00:00Z]\n- the retry helper is "
    "src/retry.ts\n- the README describes the demo\n";

class MemoryKeeperTest : public ::testing::Test {
 protected:
  MemoryKeeperTest() {
    json cfg = {
        {"providers",
         {{"a",
           {{"type", "openai"}, {"baseUrl", model_.base_url()}, {"models", {{{"id", "m"}}}}}}}},
        {"memory", {{"consolidation", {{"idleMinutes", 0.005}}}}}};  // 0.3 s
    config_ = parse_config(cfg.dump(), "test");
    test::write_file(repo_ / "README.md", "# Demo\n");
    EXPECT_EQ(test::run({test::pilotfish_bin(), "index", repo_.path(), "--db", dir_ / "index.db"})
                  .exit_code,
              0);
    runtime_ = std::make_unique<AnswerRuntime>(config_, dir_ / "index.db", 1);
    keeper_ = std::make_unique<MemoryKeeper>(io_, *runtime_, config_);
    test::write_file(repo_ / "MEMORY.md", kNotes);
  }
  std::string memory() { return read_file(repo_ / "MEMORY.md"); }
  void run_for(std::chrono::milliseconds d) {
    io_.restart();
    io_.run_for(d);
  }

  test::TempDir dir_, repo_;
  test::ScriptedModelServer model_{
      json::array(
          {{{"chat",
             {{"text", {"```markdown\n# Notes\n\n## Code\n- retries: src/retry.ts\n```"}}}}}})
          .dump()};
  Config config_;
  std::unique_ptr<AnswerRuntime> runtime_;
  asio::io_context io_;
  std::unique_ptr<MemoryKeeper> keeper_;
};

TEST_F(MemoryKeeperTest, AQuietWorkspaceIsConsolidatedWithTheModelThatAnswered) {
  keeper_->arm(repo_.path(), "a:m");
  EXPECT_FALSE(keeper_->busy());
  for (int i = 0; i < 100 && memory() == kNotes; ++i) run_for(std::chrono::milliseconds(100));
  EXPECT_EQ(memory(), "# Notes\n\n## Code\n- retries: src/retry.ts\n");
  EXPECT_FALSE(keeper_->busy());
  ASSERT_EQ(model_.requests().size(), 1u);
  EXPECT_NE(model_.requests()[0]["body"].dump().find("the retry helper"), std::string::npos);
}

TEST_F(MemoryKeeperTest, ANewTurnDisarmsItAndNoModelMeansNoConsolidation) {
  keeper_->arm(repo_.path(), "a:m");
  keeper_->disarm(repo_.path());
  keeper_->arm(repo_.path() + "/elsewhere", "");  // no model answered there
  run_for(std::chrono::milliseconds(1000));
  EXPECT_EQ(memory(), kNotes);
  EXPECT_TRUE(model_.requests().empty());
  keeper_->arm(repo_.path(), "a:m");
  keeper_->stop();
  run_for(std::chrono::milliseconds(1000));
  EXPECT_EQ(memory(), kNotes);
  EXPECT_TRUE(model_.requests().empty());
}

TEST_F(MemoryKeeperTest, ACompactionSummaryIsAppended) {
  bool done = false;
  asio::co_spawn(
      io_,
      [&]() -> asio::awaitable<void> {
        co_await keeper_->save_compaction(repo_.path(), "- the parser is src/parse.ts");
        done = true;
      },
      asio::detached);
  for (int i = 0; i < 100 && !done; ++i) run_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(done);
  std::string text = memory();
  EXPECT_EQ(text.rfind(kNotes, 0), 0u);
  EXPECT_NE(text.find("## Compaction Summary ["), text.rfind("## Compaction Summary ["));
  EXPECT_NE(text.find("- the parser is src/parse.ts"), std::string::npos);
}

}  // namespace
}  // namespace pf
