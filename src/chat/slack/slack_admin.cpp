// The Slack adapter's administration calls (channel_adapter.h) over the Web API: the workspace
// (auth.test), the bot's channels (users.conversations), a channel by name (conversations.list),
// creating one (conversations.create), and adding members (conversations.join for the bot
// itself, conversations.invite for others; already a member is no error).
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include "chat/slack/slack_adapter.h"
#include "core/json.h"

namespace pf {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

ChatChannel channel_of(const json& c, const std::string& team_id) {
  ChatChannel out;
  out.id = json_string(c, "id");
  out.name = json_string(c, "name");
  out.display_name = out.name;
  out.team_id = team_id;
  out.is_private = c.value("is_private", false);
  return out;
}

constexpr const char* kChannelTypes = "public_channel,private_channel";

}  // namespace

asio::awaitable<BotIdentity> SlackAdapter::whoami() {
  json me = co_await api_.call("auth.test");
  identity_.user_id = json_string(me, "user_id");
  identity_.username = json_string(me, "user");
  team_id_ = json_string(me, "team_id");
  co_return identity_;
}

asio::awaitable<std::vector<ChatTeam>> SlackAdapter::list_teams() {
  json me = co_await api_.call("auth.test");
  std::string url = json_string(me, "url");  // https://<domain>.slack.com/
  std::string domain = url;
  if (size_t s = domain.find("://"); s != std::string::npos) domain = domain.substr(s + 3);
  domain = domain.substr(0, domain.find('.'));
  co_return std::vector<ChatTeam>{{json_string(me, "team_id"), domain, json_string(me, "team")}};
}

asio::awaitable<std::vector<ChatChannel>> SlackAdapter::list_channels() {
  std::vector<ChatChannel> out;
  std::string cursor;
  for (int page = 0; page < 50; ++page) {
    json args = {{"types", kChannelTypes}, {"exclude_archived", true}, {"limit", 200}};
    if (!cursor.empty()) args["cursor"] = cursor;
    json r = co_await api_.call("users.conversations", args);
    for (const json& c : r.value("channels", json::array()))
      if (c.is_object() && !json_string(c, "id").empty()) out.push_back(channel_of(c, team_id_));
    cursor = json_string(r.value("response_metadata", json::object()), "next_cursor");
    if (cursor.empty()) break;
  }
  co_return out;
}

asio::awaitable<std::optional<ChatChannel>> SlackAdapter::find_channel(const std::string&,
                                                                        const std::string& name) {
  std::string cursor;
  for (int page = 0; page < 100; ++page) {
    json args = {{"types", kChannelTypes}, {"exclude_archived", true}, {"limit", 1000}};
    if (!cursor.empty()) args["cursor"] = cursor;
    json r = co_await api_.call("conversations.list", args);
    for (const json& c : r.value("channels", json::array()))
      if (c.is_object() && json_string(c, "name") == name) co_return channel_of(c, team_id_);
    cursor = json_string(r.value("response_metadata", json::object()), "next_cursor");
    if (cursor.empty()) break;
  }
  co_return std::nullopt;
}

asio::awaitable<ChatChannel> SlackAdapter::create_channel(const std::string&,
                                                          const std::string& name,
                                                          const std::string&, bool is_private) {
  json args = {{"name", name}, {"is_private", is_private}};
  // Not retried on a server error: a second create would answer name_taken.
  json r = co_await api_.call("conversations.create", args, false);
  co_return channel_of(r.value("channel", json::object()), team_id_);
}

asio::awaitable<void> SlackAdapter::add_member(const std::string& channel_id,
                                               const std::string& user_id) {
  if (user_id == identity_.user_id) {
    json args = {{"channel", channel_id}};
    co_await api_.call("conversations.join", args);  // already in: a warning, not an error
    co_return;
  }
  try {
    json args = {{"channel", channel_id}, {"users", user_id}};
    co_await api_.call("conversations.invite", args);
  } catch (const SlackError& e) {
    if (e.error() != "already_in_channel") throw;
  }
}

}  // namespace pf
