// Channels registered from chat: an admin bot's create_project (admin_tools.h) adds a channel
// without an edit of the config file. They are kept in the state store (one JSON list per bot
// in its settings, "chatChannels:<platform>:<bot>", so replicas holding different bots never
// write the same value), survive restarts and config reloads, and are merged into the bridge's
// channel list after the configured ones: a channel the file configures is never replaced.
// Removing one (/project remove) stops the bot answering there; its conversations stay.
//
// Threads: the bridge's network thread. Errors: the state store's pf::Error; an entry that does
// not read as a channel is skipped (and logged) rather than failing the others.
#pragma once

#include <string>
#include <vector>

#include "bridge/bridge_config.h"
#include "bridge/state_store.h"

namespace pf {

class ChatChannels {
 public:
  explicit ChatChannels(StateStore& state) : state_(state) {}

  // The channels registered for the bots that bridge configures, in the order they were added.
  std::vector<ChannelConfig> load(const BridgeConfig& bridge);
  // Registers a channel (platform, bot and id set; added_by too), replacing one of the same id.
  void add(const ChannelConfig& channel);
  // Unregisters a channel; false when the bot has no channel of that id registered from chat.
  bool remove(const std::string& platform, const std::string& bot, const std::string& id);

 private:
  std::vector<ChannelConfig> read(const std::string& platform, const std::string& bot);
  void write(const std::string& platform, const std::string& bot,
             const std::vector<ChannelConfig>& channels);

  StateStore& state_;
};

// Appends to bridge.channels the registered channels whose platform and id no configured
// channel has.
void merge_chat_channels(BridgeConfig& bridge, const std::vector<ChannelConfig>& added);

}  // namespace pf
