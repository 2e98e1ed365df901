// The chat platforms the bridge runs (see platforms.h).
#include "bridge/platforms.h"

#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "bridge/sqlite_state_store.h"
#include "chat/mattermost/mattermost_adapter.h"
#include "chat/slack/slack_adapter.h"
#include "core/text.h"
#include "net/run_sync.h"

#include <boost/asio/co_spawn.hpp>

namespace pf {

namespace {

// What the bridge's Slack bot calls (slack-protocol.md, "Tokens, scopes, identity").
const char* kSlackScopes[] = {"app_mentions:read", "chat:write",       "channels:history",
                              "groups:history",    "im:history",       "mpim:history",
                              "channels:read",     "groups:read",      "im:read",
                              "mpim:read",         "reactions:read",   "reactions:write",
                              "files:read",        "files:write",      "users:read"};

const char* getenv_or_null(const std::string& name) {
  const char* v = name.empty() ? nullptr : std::getenv(name.c_str());
  return v && *v ? v : nullptr;
}

void check_mattermost(const PlatformConfig& p, const BotConfig& b, const BridgeConfig& bridge,
                      const std::string& token, const CheckLine& line) {
  std::string who = p.name + "/" + b.name;
  boost::asio::io_context io;
  auto state = open_sqlite_state_store(":memory:");
  MattermostOptions o{p.name, b.name, p.url, token};
  o.rest_retry.max_attempts = 1;
  o.pool_connections = false;  // each call below has an io_context of its own
  MattermostAdapter adapter(io, o, *state);
  nlohmann::json me = run_sync(adapter.rest("GET", "/users/me", nullptr, false));
  line(true, who + ": " + p.url + " accepts the token (@" + me.value("username", "?") + ")");
  for (const auto& c : bridge.channels) {
    if (c.platform != p.name || c.bot != b.name) continue;
    try {
      nlohmann::json ch = run_sync(adapter.rest("GET", "/channels/" + c.id, nullptr, false));
      line(true, who + ": channel " + c.id + " (" + ch.value("display_name", "") + ")");
    } catch (const std::exception& e) {
      line(false, who + ": channel " + c.id + ": " + e.what());
    }
  }
}

void check_slack(const PlatformConfig& p, const BotConfig& b, const BridgeConfig& bridge,
                 const std::string& bot_token, const CheckLine& line) {
  std::string who = p.name + "/" + b.name;
  boost::asio::io_context io;
  SlackApiOptions o;
  o.base_url = p.url;
  o.bot_token = bot_token;
  o.app_token = getenv_or_null(b.app_token_env) ? getenv_or_null(b.app_token_env) : "";
  o.retry.max_attempts = 1;
  o.pool_connections = false;
  SlackWebApi api(io, o);
  nlohmann::json me = run_sync(api.call("auth.test", nlohmann::json::object(), false));
  line(true, who + ": the bot token is accepted (" + me.value("user", "?") + " in " +
                 me.value("team", "?") + ")");
  std::vector<std::string> missing = missing_slack_scopes(api.scopes());
  line(missing.empty(), who + (missing.empty() ? ": the bot has every scope it needs"
                                               : ": add these bot scopes to the app and reinstall "
                                                 "it: " + [&] {
                                                   std::string list;
                                                   for (const auto& m : missing)
                                                     list += (list.empty() ? "" : ", ") + m;
                                                   return list;
                                                 }()));
  if (o.app_token.empty()) {
    line(false, who + ": $" + b.app_token_env + " (the app-level token, xapp-...) is not set");
  } else {
    try {
      run_sync(api.call_app("apps.connections.open"));
      line(true, who + ": the app-level token opens Socket Mode connections");
    } catch (const std::exception& e) {
      line(false, who + ": the app-level token: " + e.what() +
                      " (it needs connections:write, and Socket Mode must be on)");
    }
  }
  for (const auto& c : bridge.channels) {
    if (c.platform != p.name || c.bot != b.name) continue;
    try {
      nlohmann::json info = run_sync(api.call("conversations.info", {{"channel", c.id}}, false));
      const nlohmann::json& ch = info["channel"];
      bool member = ch.value("is_member", false) || ch.value("is_im", false);
      line(member, who + ": channel " + c.id + " (#" + ch.value("name", "") + ")" +
                       (member ? "" : ": the bot is not in it; invite it with /invite @" +
                                          me.value("user", "bot")));
    } catch (const std::exception& e) {
      line(false, who + ": channel " + c.id + ": " + e.what());
    }
  }
}

}  // namespace

std::string token_from_env(const PlatformConfig& platform, const BotConfig& bot,
                           const std::string& variable, const char* key) {
  const char* v = getenv_or_null(variable);
  if (!v)
    throw UsageError("bridge.platforms." + platform.name + ".bots." + bot.name + "." + key +
                     ": the environment variable " + variable +
                     " that should hold the token is not set");
  return v;
}

std::unique_ptr<ChannelAdapter> make_adapter(boost::asio::io_context& io,
                                             const PlatformConfig& p, const BotConfig& b,
                                             const BridgeConfig& bridge, CursorStore& cursors) {
  if (p.type == "slack") {
    SlackOptions o;
    o.platform = p.name;
    o.bot = b.name;
    o.api_url = p.url;
    o.bot_token = token_from_env(p, b, b.token_env, "tokenEnv");
    o.app_token = token_from_env(p, b, b.app_token_env, "appTokenEnv");
    o.replay_window = std::chrono::seconds(bridge.replay_window_seconds);
    return std::make_unique<SlackAdapter>(io, o, cursors);
  }
  MattermostOptions o;
  o.platform = p.name;
  o.bot = b.name;
  o.url = p.url;
  o.token = token_from_env(p, b, b.token_env, "tokenEnv");
  o.max_post_chars = static_cast<size_t>(bridge.max_post_chars);
  return std::make_unique<MattermostAdapter>(io, o, cursors);
}

void check_platform_bot(const PlatformConfig& p, const BotConfig& b, const BridgeConfig& bridge,
                        const CheckLine& line) {
  std::string who = p.name + "/" + b.name;
  const char* token = getenv_or_null(b.token_env);
  if (!token) {
    line(false, who + ": $" + b.token_env + " is not set");
    return;
  }
  try {
    if (p.type == "slack")
      check_slack(p, b, bridge, token, line);
    else
      check_mattermost(p, b, bridge, token, line);
  } catch (const std::exception& e) {
    line(false, who + ": " + e.what());
  }
}

PlatformProbe probe_platform(const PlatformConfig& p, const BotConfig& b,
                             const std::vector<std::string>& channel_names) {
  boost::asio::io_context io;
  class NoCursors : public CursorStore {
   public:
    void set_cursors(const std::string&, const std::vector<std::pair<std::string, int64_t>>&) override {}
    std::vector<std::pair<std::string, int64_t>> cursors(const std::string&) override { return {}; }
  } cursors;
  BridgeConfig bridge;
  std::unique_ptr<ChannelAdapter> adapter = make_adapter(io, p, b, bridge, cursors);
  PlatformProbe out;
  auto work = [&]() -> boost::asio::awaitable<void> {
    out.bot = co_await adapter->whoami();
    for (std::string name : channel_names) {
      if (!name.empty() && name[0] == '#') name.erase(0, 1);
      std::optional<ChatChannel> c = co_await adapter->find_channel("", name);
      if (c) out.channels[name] = c->id;
    }
  };
  std::exception_ptr failure;
  boost::asio::co_spawn(io, work(), [&](std::exception_ptr e) { failure = e; });
  io.run();
  adapter.reset();  // its pending timers and connections go with the context below
  if (failure) std::rethrow_exception(failure);
  return out;
}

std::vector<std::string> missing_slack_scopes(const std::string& scopes) {
  std::vector<std::string> have, missing;
  std::stringstream in(scopes);
  for (std::string s; std::getline(in, s, ',');) have.push_back(trim_space(s));
  for (const char* need : kSlackScopes)
    if (std::find(have.begin(), have.end(), need) == have.end()) missing.push_back(need);
  return missing;
}

}  // namespace pf
