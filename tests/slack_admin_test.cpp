// chat/slack/slack_admin.cpp: the Slack adapter's administration calls against the Slack test
// server (its conversations.create/invite/list proven by the real @slack/web-api in
// tests/node/slack_client.mjs): the workspace, a channel by name, creating one (a taken or bad
// name is Slack's error), joining a public channel, inviting people, the bot's channels.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <set>

#include "chat/slack/slack_adapter.h"
#include "slack_test_server.h"
#include "io_runner.h"

namespace pf {
namespace {

namespace asio = boost::asio;
using nlohmann::json;


class SlackAdminTest : public ::testing::Test {
 protected:
  void SetUp() override {
    app_ = slack_.app("copilot");
    bot_user_ = app_["bot_user_id"];
    alice_ = slack_.user("alice")["id"];
    slack_.channel("public", {alice_, bot_user_});
  }
  std::unique_ptr<SlackAdapter> make() {
    return std::make_unique<SlackAdapter>(io_, test::adapter_options(slack_, app_), cursors_);
  }
  template <typename T>
  T run(asio::awaitable<T> work) {
    return test::run_on(io_, std::move(work));
  }
  void run_void(asio::awaitable<void> work) { test::run_on(io_, std::move(work)); }

  test::SlackServer slack_;
  json app_;
  std::string bot_user_, alice_;
  asio::io_context io_;
  test::NoCursors cursors_;
};

// The members of a channel as the server holds them.
std::set<std::string> members_of(test::SlackServer& slack, const std::string& id) {
  json state = slack.call("GET", "/_test/state");  // named: a range-for over a temporary's member dangles
  for (const json& c : state["channels"])
    if (c["id"] == id) return c["members"].get<std::set<std::string>>();
  return {};
}

TEST_F(SlackAdminTest, ChannelsAreListedFoundCreatedJoinedAndPeopleInvited) {
  auto a = make();
  run(a->whoami());  // the identity, without the event stream
  std::vector<ChatTeam> teams = run(a->list_teams());
  ASSERT_EQ(teams.size(), 1u);
  EXPECT_EQ(teams[0].id, app_["team_id"]);
  EXPECT_EQ(teams[0].name, "test-workspace");
  EXPECT_EQ(teams[0].display_name, "Test Workspace");

  EXPECT_FALSE(run(a->find_channel("", "payments")));
  ChatChannel made = run(a->create_channel("", "payments", "Payments", false));
  EXPECT_EQ(made.name, "payments");
  EXPECT_FALSE(made.is_private);
  std::optional<ChatChannel> found = run(a->find_channel("", "payments"));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->id, made.id);
  try {
    run(a->create_channel("", "payments", "", false));
    ADD_FAILURE() << "a taken name was created twice";
  } catch (const SlackError& e) {
    EXPECT_EQ(e.error(), "name_taken");
  }
  try {
    run(a->create_channel("", "Bad Name", "", false));
    ADD_FAILURE() << "a name with spaces was created";
  } catch (const SlackError& e) {
    EXPECT_EQ(e.error(), "invalid_name_specials");
  }
  run_void(a->add_member(made.id, alice_));
  run_void(a->add_member(made.id, alice_));  // already in: no error
  EXPECT_EQ(members_of(slack_, made.id), (std::set<std::string>{bot_user_, alice_}));

  // A public channel the bot is not in: found, then joined; a private one it is not in: unseen.
  std::string open_id = slack_.call("POST", "/_test/channels",
                                    {{"type", "public"}, {"name", "town"}, {"members", {alice_}}})["id"];
  slack_.call("POST", "/_test/channels", {{"type", "private"}, {"name", "secret"}, {"members", {alice_}}});
  found = run(a->find_channel("", "town"));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->id, open_id);
  EXPECT_FALSE(run(a->find_channel("", "secret")));
  run_void(a->add_member(open_id, bot_user_));
  EXPECT_TRUE(members_of(slack_, open_id).count(bot_user_));
  ChatChannel priv = run(a->create_channel("", "core-team", "", true));
  EXPECT_TRUE(priv.is_private);

  std::set<std::string> listed;
  for (const ChatChannel& c : run(a->list_channels())) listed.insert(c.name);
  // The fixture's channel, the two made and the one joined; never a DM or a channel it is not in.
  EXPECT_TRUE(listed.count("payments") && listed.count("town") && listed.count("core-team"));
  EXPECT_FALSE(listed.count("secret"));
  EXPECT_EQ(listed.size(), 4u);
}

}  // namespace
}  // namespace pf
