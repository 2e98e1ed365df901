// What the bridge tells its admins of config reloads and restarts (src/bridge/bridge_reload.cpp),
// end to end on the Mattermost test server: an admin bot's DMs that hold a conversation get
// "🔄 pilotfish restarted" when pilotfish starts again, and a config reload's changes that need
// a restart (then, after it, "Now in effect"); a bot that is not an admin tells nobody.
#include "bridge_fixture.h"

#include "core/fs.h"

namespace pf::test {
namespace {

class BridgeAdminsTest : public BridgeTest {
 protected:
  std::string config_path() { return dir_ / "pilotfish.json"; }
  // The config with the bot an admin or not, and server.listen as given.
  void configure(bool admin, const std::string& listen = "127.0.0.1:8080") {
    write_config(json::object(), "", json::object(), {{"defaults", {{"workingDirectory", repo_.path()}}}});
    json cfg = json::parse(read_file(config_path()));
    cfg["bridge"]["platforms"]["mm"]["bots"]["copilot"]["admin"] = admin;
    cfg["server"] = {{"listen", listen}};
    // Written whole at once: the bridge's watcher must never read half a file.
    write_file_atomic(config_path(), cfg.dump(2));
  }
  std::vector<std::string> dm_texts(const std::string& dm) {
    std::vector<std::string> out;
    for (const json& p : bot_posts(dm)) out.push_back(p["message"]);
    return out;
  }
  bool dm_says(const std::string& dm, const std::string& fragment) {
    for (const std::string& t : dm_texts(dm))
      if (t.find(fragment) != std::string::npos) return true;
    return false;
  }
};

TEST_F(BridgeAdminsTest, AdminsHearOfRestartsAndOfChangesThatNeedOne) {
  std::string dm =
      mm_.call("POST", "/_test/channels", {{"type", "D"}, {"members", {bot_["id"], alice_["id"]}}})["id"];
  configure(false);
  {
    auto bridge = start_bridge();
    std::string id = mm_.post(alice_, dm, "where is retryWithBackoff?")["id"];
    ASSERT_TRUE(wait_for([&] { return dm_says(dm, "src/retry.ts"); })) << bridge->log();
  }
  {
    auto bridge = start_bridge();  // not an admin: nothing is said
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    EXPECT_FALSE(dm_says(dm, "restarted")) << bridge->log();
  }
  configure(true);
  {
    auto bridge = start_bridge();
    ASSERT_TRUE(wait_for([&] { return dm_says(dm, "\U0001F504 pilotfish restarted."); })) << bridge->log();
    configure(true, "127.0.0.1:8181");  // seen by the config watcher, applied but for this
    ASSERT_TRUE(wait_for([&] { return dm_says(dm, "need a restart of pilotfish: server.listen."); }))
        << bridge->log();
  }
  auto bridge = start_bridge();
  ASSERT_TRUE(wait_for([&] { return dm_says(dm, "restarted. Now in effect: server.listen."); }))
      << bridge->log();
  EXPECT_TRUE(bot_posts(channel_).empty());  // never in a channel
}

}  // namespace
}  // namespace pf::test
