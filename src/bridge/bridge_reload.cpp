// Config reloads (`/reload config`, the config file's watcher) and what the bridge tells its
// admins directly: a reload's changes that need a restart, and "🔄 pilotfish restarted" at start
// with the changes the previous run could not apply (now in effect). Sent to each admin bot's
// direct-message channels that hold a conversation (someone talked to it there), never to
// channels.
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "bridge/bridge.h"
#include "bridge/bridge_channel.h"
#include "core/log.h"

namespace pf {

namespace asio = boost::asio;

namespace {
constexpr const char* kPendingRestart = "pendingRestart";  // bridge setting: "a; b"
}  // namespace

std::string Bridge::apply_config(const Config& next) {
  std::vector<std::string> restart;
  auto platform_key = [](const Config& c) {
    std::string k;
    for (const auto& p : bridge_config(c).platforms) {
      k += p.name + "|" + p.url + "|";
      for (const auto& b : p.bots) k += b.name + "=" + b.token_env + ",";
    }
    return k;
  };
  if (platform_key(next) != platform_key(config_)) restart.push_back("platforms, bots and tokens");
  if (next.defaults.embedding_model != config_.defaults.embedding_model)
    restart.push_back("defaults.embeddingModel");
  if (next.server.listen != config_.server.listen) restart.push_back("server.listen");
  Config applied = next;
  // What needs a restart keeps its running value.
  auto bridge = std::make_shared<BridgeConfig>(bridge_config(next));
  bridge->platforms = settings().platforms;
  for (auto& p : bridge->platforms)
    for (const auto& np : bridge_config(next).platforms)
      if (np.name == p.name) {
        p.access = np.access;
        for (auto& b : p.bots)
          for (const auto& nb : np.bots)
            if (nb.name == b.name) {
              b.access = nb.access;
              b.admin = nb.admin;
              b.actions = nb.actions;
              b.max_steps = nb.max_steps;
              b.agent = nb.agent;
            }
      }
  applied.sections["bridge"] = bridge;
  config_ = applied;
  merge_registered();  // the channels added from chat stay
  grants_.forget();
  desk_.set_timeout(std::chrono::seconds(settings().permission_timeout_seconds));
  questions_.set_timeout(std::chrono::seconds(settings().ask_user_timeout_seconds));
  attachments_.set_keep(keep_of(settings()));
  actions_.clear();  // rebuilt with the new limits; running turns keep theirs
  mcp_.clear();
  hooks_.forget();
  for (auto& [key, channel] : channels_)
    for (const auto& cc : settings().channels)
      if (cc.platform + ":" + cc.id == key && cc.bot == channel->adapter->bot())
        channel->config = cc;
  // Handles in the new access lists are looked up again (meanwhile the old ids apply).
  for (auto& a : adapters_)
    if (holds(*a)) asio::co_spawn(io_, resolve_access(*a), asio::detached);
  std::string out =
      "\u2705 Applied: providers and models, defaults, channels, access lists, bridge settings.";
  restart_needed(restart);
  if (!restart.empty()) {
    out += "\n\u26A0\uFE0F Needs a restart:";
    for (const auto& r : restart) out += " " + r + ";";
    out.pop_back();
  }
  log::info("bridge", "configuration reloaded");
  return out;
}

void Bridge::tell_admins(const std::string& text) {
  for (auto& a : adapters_) {
    const BotConfig* bot = bot_config(a->platform(), a->bot());
    if (!bot || !bot->admin || !holds(*a)) continue;
    for (const DmChannel& dm : state_.dms(a->bot())) {
      if (dm.channel_key.rfind(a->platform() + ":", 0) != 0) continue;
      if (!state_.active_conversation(dm.channel_key)) continue;
      std::string channel = dm.channel_key.substr(a->platform().size() + 1);
      ChannelAdapter* adapter = a.get();
      asio::co_spawn(
          io_,
          [adapter, channel, text]() -> asio::awaitable<void> {
            try {
              co_await adapter->send_message(channel, text, "", "");
            } catch (const std::exception& e) {
              log::warn("bridge", "could not tell the admin in " + channel + ": " + e.what());
            }
          },
          asio::detached);
    }
  }
}

void Bridge::announce_restart() {
  std::string text = "\U0001F504 pilotfish restarted.";
  std::string pending = state_.setting(kPendingRestart).value_or("");
  if (!pending.empty()) {
    text += " Now in effect: " + pending + ".";
    state_.set_setting(kPendingRestart, "");
  }
  tell_admins(text);
}

void Bridge::restart_needed(const std::vector<std::string>& changes) {
  if (changes.empty()) return;
  std::string list;
  for (const auto& c : changes) list += (list.empty() ? "" : "; ") + c;
  state_.set_setting(kPendingRestart, list);
  log::warn("bridge", "the config changed; these need a restart: " + list);
  tell_admins("\u26A0\uFE0F The config changed; these need a restart of pilotfish: " + list + ".");
}

}  // namespace pf
