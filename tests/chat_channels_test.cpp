// bridge/chat_channels.h: channels registered from chat kept per bot in the state store across a
// reopen, replaced by id, removed, merged after the configured ones without replacing one, and a
// damaged entry skipped rather than failing the rest.
#include "bridge/chat_channels.h"

#include <gtest/gtest.h>

#include "bridge/sqlite_state_store.h"
#include "test_util.h"

namespace pf {
namespace {

BridgeConfig two_bots() {
  BridgeConfig b;
  PlatformConfig p;
  p.name = "mm";
  for (const char* name : {"ops", "docs"}) {
    BotConfig bot;
    bot.name = name;
    p.bots.push_back(bot);
  }
  b.platforms.push_back(p);
  ChannelConfig configured;
  configured.id = "c-configured";
  configured.platform = "mm";
  configured.bot = "ops";
  configured.working_directory = "/srv/configured";
  b.channels.push_back(configured);
  return b;
}

ChannelConfig added(const std::string& id, const std::string& bot, const std::string& dir) {
  ChannelConfig c;
  c.id = id;
  c.platform = "mm";
  c.bot = bot;
  c.name = "n-" + id;
  c.working_directory = dir;
  c.source = "https://h/" + id + ".git";
  c.added_by = "alice";
  c.added_at_ms = 42;
  return c;
}

TEST(ChatChannelsTest, KeptAcrossAReopenReplacedAndRemoved) {
  test::TempDir dir;
  {
    auto state = open_sqlite_state_store(dir / "bridge.db");
    ChatChannels reg(*state);
    reg.add(added("c1", "ops", "/w/one"));
    reg.add(added("c2", "docs", "/w/two"));
    reg.add(added("c1", "ops", "/w/one-again"));  // same id: replaced
  }
  auto state = open_sqlite_state_store(dir / "bridge.db");
  ChatChannels reg(*state);
  std::vector<ChannelConfig> all = reg.load(two_bots());
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].id, "c1");
  EXPECT_EQ(all[0].working_directory, "/w/one-again");
  EXPECT_EQ(all[0].source, "https://h/c1.git");
  EXPECT_EQ(all[0].added_by, "alice");
  EXPECT_EQ(all[0].added_at_ms, 42);
  EXPECT_EQ(all[1].bot, "docs");
  EXPECT_EQ(all[1].platform, "mm");
  EXPECT_FALSE(reg.remove("mm", "docs", "c1"));  // another bot's
  EXPECT_TRUE(reg.remove("mm", "ops", "c1"));
  EXPECT_EQ(reg.load(two_bots()).size(), 1u);
  // A bot no longer configured: its channels are not loaded.
  BridgeConfig only_ops = two_bots();
  only_ops.platforms[0].bots.pop_back();
  EXPECT_TRUE(reg.load(only_ops).empty());
}

TEST(ChatChannelsTest, MergedAfterTheConfiguredOnesNeverReplacingOne) {
  BridgeConfig b = two_bots();
  ChannelConfig clash = added("c-configured", "docs", "/w/clash");
  merge_chat_channels(b, {added("c9", "ops", "/w/nine"), clash});
  ASSERT_EQ(b.channels.size(), 2u);
  EXPECT_EQ(b.channels[0].working_directory, "/srv/configured");
  EXPECT_TRUE(b.channels[0].added_by.empty());
  EXPECT_EQ(b.channels[1].id, "c9");
}

TEST(ChatChannelsTest, ADamagedEntryIsSkipped) {
  test::TempDir dir;
  auto state = open_sqlite_state_store(dir / "bridge.db");
  state->set_setting("chatChannels:mm:ops",
                     R"([{"id": "ok", "workingDirectory": "/w", "addedBy": "a"}, 7,
                         {"id": "", "workingDirectory": "/w", "addedBy": "a"},
                         {"id": "no-dir", "addedBy": "a"}])");
  state->set_setting("chatChannels:mm:docs", "not json");
  ChatChannels reg(*state);
  std::vector<ChannelConfig> all = reg.load(two_bots());
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].id, "ok");
}

}  // namespace
}  // namespace pf
