// The Mattermost adapter's administration calls (channel_adapter.h): teams, the bot's channels,
// a channel by name, creating one and adding members, over REST (/users/{id}/teams,
// /teams/{id}/channels/name/{name}, POST /channels, POST /channels/{id}/members).
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include <set>

#include "chat/mattermost/mattermost_adapter.h"
#include "core/json.h"

namespace pf {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

ChatChannel channel_of(const json& c) {
  ChatChannel out;
  out.id = json_string(c, "id");
  out.name = json_string(c, "name");
  out.display_name = json_string(c, "display_name");
  out.team_id = json_string(c, "team_id");
  out.is_private = json_string(c, "type") == "P";
  return out;
}

}  // namespace

asio::awaitable<BotIdentity> MattermostAdapter::whoami() {
  json me = co_await rest("GET", "/users/me");
  if (!me.is_object() || json_string(me, "id").empty())
    throw MattermostError("GET /users/me: no user id in the answer", 200, "");
  identity_.user_id = json_string(me, "id");
  identity_.username = json_string(me, "username");
  co_return identity_;
}

asio::awaitable<std::vector<ChatTeam>> MattermostAdapter::list_teams() {
  std::vector<ChatTeam> out;
  json teams = co_await rest("GET", "/users/" + identity_.user_id + "/teams");
  if (!teams.is_array()) co_return out;
  for (const json& t : teams)
    if (t.is_object() && !json_string(t, "id").empty())
      out.push_back({json_string(t, "id"), json_string(t, "name"), json_string(t, "display_name")});
  co_return out;
}

asio::awaitable<std::vector<ChatChannel>> MattermostAdapter::list_channels() {
  std::vector<ChatChannel> out;
  std::set<std::string> seen;
  std::vector<ChatTeam> teams = co_await list_teams();
  for (const ChatTeam& t : teams) {
    json list = co_await rest("GET", "/users/" + identity_.user_id + "/teams/" + t.id + "/channels");
    if (!list.is_array()) continue;
    for (const json& c : list) {
      std::string type = c.is_object() ? json_string(c, "type") : "";
      if ((type == "O" || type == "P") && seen.insert(json_string(c, "id")).second)
        out.push_back(channel_of(c));
    }
  }
  co_return out;
}

asio::awaitable<std::optional<ChatChannel>> MattermostAdapter::find_channel(
    const std::string& team_id, const std::string& name) {
  std::string team = team_id;
  if (team.empty()) {
    std::vector<ChatTeam> teams = co_await list_teams();
    if (teams.size() != 1)
      throw Error("the bot is in " + std::to_string(teams.size()) + " teams: name the team");
    team = teams[0].id;
  }
  try {
    json c = co_await rest("GET", "/teams/" + team + "/channels/name/" + name);
    co_return channel_of(c);
  } catch (const MattermostError& e) {
    if (e.status() == 404) co_return std::nullopt;
    throw;
  }
}

asio::awaitable<ChatChannel> MattermostAdapter::create_channel(const std::string& team_id,
                                                               const std::string& name,
                                                               const std::string& display_name,
                                                               bool is_private) {
  json body = {{"team_id", team_id},
               {"name", name},
               {"display_name", display_name.empty() ? name : display_name},
               {"type", is_private ? "P" : "O"}};
  // Not retried: a retried create would find its own channel and fail as "exists".
  json c = co_await rest("POST", "/channels", body, false);
  co_return channel_of(c);
}

asio::awaitable<void> MattermostAdapter::add_member(const std::string& channel_id,
                                                    const std::string& user_id) {
  json body = {{"user_id", user_id}};
  co_await rest("POST", "/channels/" + channel_id + "/members", body);  // idempotent: 201 again
}

}  // namespace pf
