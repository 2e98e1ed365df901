// The chat platforms the bridge runs, behind one door: the adapter for a configured bot
// (chat/mattermost or chat/slack, by the platform's type) and `pilotfish bridge check`'s
// checks of a bot on its platform. Nothing else in the bridge names a platform.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "bridge/bridge_config.h"
#include "chat/channel_adapter.h"
#include "chat/cursor_store.h"

namespace pf {

// The value of the environment variable that holds a token; UsageError naming the key when it
// is not set.
std::string token_from_env(const PlatformConfig& platform, const BotConfig& bot,
                           const std::string& variable, const char* key);

// The adapter of one bot. Throws UsageError for a token variable that is not set. cursors must
// outlive the adapter; io is the bridge's network thread's context.
std::unique_ptr<ChannelAdapter> make_adapter(boost::asio::io_context& io,
                                             const PlatformConfig& platform, const BotConfig& bot,
                                             const BridgeConfig& bridge, CursorStore& cursors);

// One line of `bridge check`: whether it passed, and what was checked (or what to fix).
using CheckLine = std::function<void(bool ok, const std::string& what)>;

// Checks a bot on its platform: its tokens are set and accepted, its identity, (Slack) the
// scopes it has against those it needs, and each configured channel of the bot (it exists and
// the bot is in it). Never throws: a failure is a line.
void check_platform_bot(const PlatformConfig& platform, const BotConfig& bot,
                        const BridgeConfig& bridge, const CheckLine& line);

// For `pilotfish init`: the bot's identity from its token and the ids of the channels named
// (a leading '#' dropped; a name not found is left out of the map). Throws UsageError for a
// token variable that is not set, pf::Error when the server cannot be reached or refuses.
struct PlatformProbe {
  BotIdentity bot;
  std::map<std::string, std::string> channels;  // name -> id
};
PlatformProbe probe_platform(const PlatformConfig& platform, const BotConfig& bot,
                             const std::vector<std::string>& channel_names);

// The bot-token scopes a Slack bot needs (slack-protocol.md) that scopes (comma-separated, as
// x-oauth-scopes names them) lacks.
std::vector<std::string> missing_slack_scopes(const std::string& scopes);

}  // namespace pf
