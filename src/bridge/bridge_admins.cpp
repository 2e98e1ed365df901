// What the bridge tells its admins directly: "🔄 pilotfish restarted" at start, with the config
// changes the previous run could not apply (now in effect), and a config reload's changes that
// need a restart. Sent to each admin bot's direct-message channels that hold a conversation
// (someone talked to it there), never to channels.
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "bridge/bridge.h"
#include "core/log.h"

namespace pf {

namespace asio = boost::asio;

namespace {
constexpr const char* kPendingRestart = "pendingRestart";  // bridge setting: "a; b"
}  // namespace

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
