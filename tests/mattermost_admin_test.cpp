// chat/mattermost/mattermost_admin.cpp: the Mattermost adapter's administration calls against
// the Mattermost test server: teams, the bot's channels, a channel by name (404 is "none"),
// creating one (a taken name is the server's error), joining an open channel and adding people.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <set>

#include "bridge_fixture.h"
#include "io_runner.h"
#include "chat/mattermost/mattermost_adapter.h"

namespace pf {
namespace {

namespace asio = boost::asio;
using nlohmann::json;


class MattermostAdminTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bot_ = mm_.user("copilot", true);
    alice_ = mm_.user("alice");
  }
  std::unique_ptr<MattermostAdapter> make(const json& user) {
    MattermostOptions o;
    o.platform = "mm";
    o.bot = user["username"];
    o.url = mm_.url();
    o.token = user["token"];
    o.rest_retry = RetryPolicy{1, 50, 100, 0.0};
    return std::make_unique<MattermostAdapter>(io_, o, cursors_);
  }
  template <typename T>
  T run(asio::awaitable<T> work) {
    return test::run_on(io_, std::move(work));
  }
  void run_void(asio::awaitable<void> work) { test::run_on(io_, std::move(work)); }
  std::set<std::string> channel_names(MattermostAdapter& a) {
    std::set<std::string> out;
    for (const ChatChannel& c : run(a.list_channels())) out.insert(c.name);
    return out;
  }

  test::Mattermost mm_;
  json bot_, alice_;
  asio::io_context io_;
  test::NoCursors cursors_;
};

TEST_F(MattermostAdminTest, ChannelsAreListedFoundCreatedJoinedAndPeopleAdded) {
  auto a = make(bot_);
  auto alice = make(alice_);
  run_void(a->connect());
  run_void(alice->connect());
  std::vector<ChatTeam> teams = run(a->list_teams());
  ASSERT_EQ(teams.size(), 1u);
  std::string team = teams[0].id;
  EXPECT_FALSE(teams[0].name.empty());

  EXPECT_FALSE(run(a->find_channel(team, "payments")));
  ChatChannel made = run(a->create_channel(team, "payments", "Payments", false));
  EXPECT_EQ(made.name, "payments");
  EXPECT_EQ(made.display_name, "Payments");
  EXPECT_EQ(made.team_id, team);
  std::optional<ChatChannel> found = run(a->find_channel("", "payments"));  // the only team
  ASSERT_TRUE(found);
  EXPECT_EQ(found->id, made.id);
  try {
    run(a->create_channel(team, "payments", "Again", false));
    ADD_FAILURE() << "a taken name was created twice";
  } catch (const MattermostError& e) {
    EXPECT_EQ(e.id(), "store.sql_channel.save_channel.exists.app_error");
  }
  EXPECT_THROW(run(a->create_channel(team, "Bad Name", "x", false)), MattermostError);

  EXPECT_FALSE(channel_names(*alice).count("payments"));
  run_void(a->add_member(made.id, alice_["id"]));
  run_void(a->add_member(made.id, alice_["id"]));  // already in: no error
  EXPECT_TRUE(channel_names(*alice).count("payments"));

  // An open channel the bot is not in: found by name and joined.
  std::string town = mm_.call("POST", "/_test/channels",
                              {{"name", "town"}, {"type", "O"}, {"members", {alice_["id"]}}})["id"];
  found = run(a->find_channel(team, "town"));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->id, town);
  EXPECT_FALSE(channel_names(*a).count("town"));
  run_void(a->add_member(town, bot_["id"]));
  EXPECT_TRUE(channel_names(*a).count("town"));
  // A private one it is not in: not found, and it cannot add itself.
  std::string secret = mm_.call("POST", "/_test/channels",
                                {{"name", "secret"}, {"type", "P"}, {"members", {alice_["id"]}}})["id"];
  EXPECT_FALSE(run(a->find_channel(team, "secret")));
  EXPECT_THROW(run_void(a->add_member(secret, bot_["id"])), MattermostError);
  ChatChannel priv = run(a->create_channel(team, "core-team", "Core", true));
  EXPECT_TRUE(priv.is_private);
  EXPECT_EQ(channel_names(*a), (std::set<std::string>{"payments", "town", "core-team"}));
}

}  // namespace
}  // namespace pf
