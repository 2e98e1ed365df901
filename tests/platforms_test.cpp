// bridge/platforms.h: the adapter a bot's platform type picks, the token variables it reads
// (a missing one names its key), and the Slack scopes bridge check reports as missing.
#include "bridge/platforms.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "bridge/sqlite_state_store.h"

namespace pf {
namespace {

TEST(Platforms, MissingSlackScopesAreNamedAndGrantedOnesAreNot) {
  std::vector<std::string> none = missing_slack_scopes("");
  EXPECT_EQ(none.size(), 15u);
  std::string all;
  for (const std::string& s : none) all += s + ", ";
  EXPECT_TRUE(missing_slack_scopes(all).empty()) << all;
  std::vector<std::string> some = missing_slack_scopes("chat:write,app_mentions:read, files:read");
  EXPECT_EQ(some.size(), 12u);
  EXPECT_EQ(std::find(some.begin(), some.end(), "files:read"), some.end());
  EXPECT_NE(std::find(some.begin(), some.end(), "files:write"), some.end());
}

TEST(Platforms, TheAdapterFollowsThePlatformTypeAndMissingTokensNameTheirKey) {
  boost::asio::io_context io;
  auto state = open_sqlite_state_store(":memory:");
  BridgeConfig bridge;
  PlatformConfig slack{"team", "slack", "http://127.0.0.1:9/api", {}, {}};
  BotConfig bot;
  bot.name = "copilot";
  bot.token_env = "PF_TEST_BOT_TOKEN";
  bot.app_token_env = "PF_TEST_APP_TOKEN";
  ::unsetenv("PF_TEST_BOT_TOKEN");
  ::unsetenv("PF_TEST_APP_TOKEN");
  try {
    make_adapter(io, slack, bot, bridge, *state);
    FAIL() << "made an adapter without a token";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("bridge.platforms.team.bots.copilot.tokenEnv"),
              std::string::npos)
        << e.what();
  }
  ::setenv("PF_TEST_BOT_TOKEN", "xoxb-1", 1);
  EXPECT_THROW(
      {
        try {
          make_adapter(io, slack, bot, bridge, *state);
        } catch (const UsageError& e) {
          EXPECT_NE(std::string(e.what()).find("appTokenEnv"), std::string::npos) << e.what();
          throw;
        }
      },
      UsageError);
  ::setenv("PF_TEST_APP_TOKEN", "xapp-1", 1);
  auto s = make_adapter(io, slack, bot, bridge, *state);
  EXPECT_EQ(s->traits().markup, Markup::kMrkdwn);
  EXPECT_EQ(s->platform(), "team");
  PlatformConfig mm{"chat", "mattermost", "http://127.0.0.1:9", {}, {}};
  bridge.max_post_chars = 4000;
  auto m = make_adapter(io, mm, bot, bridge, *state);
  EXPECT_EQ(m->traits().markup, Markup::kMarkdown);
  EXPECT_EQ(m->traits().max_post_chars, 4000u);
  ::unsetenv("PF_TEST_BOT_TOKEN");
  ::unsetenv("PF_TEST_APP_TOKEN");
}

}  // namespace
}  // namespace pf
