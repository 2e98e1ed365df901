// The bot leases (src/bridge/bot_lease.h) and the failover they make: on PostgreSQL one
// session's advisory lock, lost when the session ends; on a SQLite file an flock; then two
// `pilotfish bridge` replicas on one PostgreSQL database and the Mattermost test server: only
// one holds the bot's WebSocket, the holder is killed (SIGKILL) in the middle of an answer, and
// the other takes the bot over within 15 s, answers the post that was cut off and the one made
// while nobody listened, each exactly once.
#include "bridge/bot_lease.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "bridge_fixture.h"
#include "pg_server.h"

namespace pf {
namespace {

using nlohmann::json;

TEST(BotLease, OnPostgresOneSessionHoldsABotUntilItLetsGoOrIsGone) {
  auto& server = test::PostgresServer::shared();
  std::string name;
  std::string url = server.new_database(&name);
  auto a = open_bot_lease(url);
  auto b = open_bot_lease(url);
  EXPECT_TRUE(a->try_acquire("mm:copilot"));
  EXPECT_TRUE(a->try_acquire("mm:copilot"));  // again: still a's
  EXPECT_FALSE(b->try_acquire("mm:copilot"));
  EXPECT_TRUE(b->try_acquire("mm:helper"));  // another bot is free
  EXPECT_TRUE(a->still_held("mm:copilot"));
  EXPECT_FALSE(a->still_held("mm:helper"));
  a->release("mm:copilot");
  EXPECT_FALSE(a->still_held("mm:copilot"));
  EXPECT_TRUE(b->try_acquire("mm:copilot"));
  EXPECT_FALSE(a->try_acquire("mm:copilot"));
  // b's session ends (as when its process dies or the network breaks): b learns it has lost
  // both bots, and a may take them.
  server.psql(name,
              "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND "
              "classid = 28775 AND pid <> pg_backend_pid()");
  EXPECT_FALSE(b->still_held("mm:copilot"));
  EXPECT_FALSE(b->still_held("mm:helper"));
  EXPECT_TRUE(a->try_acquire("mm:copilot"));
  EXPECT_TRUE(a->try_acquire("mm:helper"));
  EXPECT_FALSE(b->try_acquire("mm:copilot"));  // b's new session finds it taken
}

TEST(BotLease, OnASqliteFileAnFlockHoldsTheBotUntilTheProcessLetsGo) {
  test::TempDir dir;
  std::string path = dir / "state/bridge.db";
  auto a = open_bot_lease(path);
  auto b = open_bot_lease(path);
  EXPECT_TRUE(a->try_acquire("mm:copilot"));
  EXPECT_FALSE(b->try_acquire("mm:copilot"));
  EXPECT_TRUE(b->try_acquire("mm:helper"));
  EXPECT_TRUE(a->still_held("mm:copilot"));
  a.reset();  // the process ends: its descriptors close
  EXPECT_TRUE(b->try_acquire("mm:copilot"));
  auto mem1 = open_bot_lease(":memory:");
  auto mem2 = open_bot_lease(":memory:");
  EXPECT_TRUE(mem1->try_acquire("mm:copilot"));
  EXPECT_TRUE(mem2->try_acquire("mm:copilot"));  // no file: each process alone
}

// BridgeTest with the index and the bridge's state in one PostgreSQL database.
class BridgeFailoverTest : public test::BridgeTest {
 protected:
  std::string db() const override { return url_; }
  // The bot's open WebSockets on the Mattermost test server.
  int bot_sockets() {
    int n = 0;
    json ws = mm_.call("GET", "/_test/ws");
    for (const json& c : ws["connections"])
      if (c["user_id"] == bot_["id"]) ++n;
    return n;
  }
  std::string url_ = test::PostgresServer::shared().new_database();
};

TEST_F(BridgeFailoverTest, AKilledReplicasBotIsTakenOverAndNothingIsLostOrSentTwice) {
  test::ScriptedModelServer model(json::array({test::slow_chat(80, 0.1, "long story")}).dump());
  write_config(test::one_model(model), "a:m");
  ::setenv("PILOTFISH_LOG", "info", 1);  // "standing by" is news, not a warning
  auto a = start_bridge();
  ASSERT_TRUE(test::wait_for([&] { return bot_sockets() == 1; })) << a->log();
  auto b = start_bridge();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(bot_sockets(), 1) << b->log();  // b stands by
  EXPECT_NE(b->log().find("standing by"), std::string::npos) << b->log();

  std::string first = mm_.post(alice_, channel_, "@copilot where is retryWithBackoff?")["id"];
  ASSERT_TRUE(test::wait_for([&] { return answered(first, "You said"); })) << a->log();
  std::string cut = mm_.post(alice_, channel_, "@copilot tell me a long story")["id"];
  ASSERT_TRUE(test::wait_for([&] { return answered(cut, "word2"); })) << a->log();
  a->kill_now();
  auto killed = std::chrono::steady_clock::now();
  std::string meanwhile = mm_.post(alice_, channel_, "@copilot where is the README?")["id"];

  ASSERT_TRUE(test::wait_for([&] { return bot_sockets() == 1; }, 20000)) << b->log();
  double takeover_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  EXPECT_LT(takeover_s, 15.0) << b->log();
  std::printf("[ figure ] bot taken over %.1f s after its replica was killed\n", takeover_s);
  ASSERT_TRUE(test::wait_for([&] { return answered(meanwhile, "README"); })) << b->log();
  // The story's script is used up: the new holder's answer is the model's echo.
  ASSERT_TRUE(test::wait_for([&] { return answered(cut, "You said"); })) << b->log();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(replies_to(first).size(), 1u);
  std::vector<json> cut_replies = replies_to(cut);
  ASSERT_EQ(cut_replies.size(), 1u) << json(cut_replies).dump();
  EXPECT_EQ(cut_replies[0]["message"].get<std::string>().find("word"), std::string::npos)
      << "the half-written reply is still there";
  EXPECT_EQ(replies_to(meanwhile).size(), 1u);
  EXPECT_NE(b->log().find("taking over"), std::string::npos) << b->log();
  EXPECT_EQ(b->stop(), 0);
  ::unsetenv("PILOTFISH_LOG");
}

}  // namespace
}  // namespace pf
