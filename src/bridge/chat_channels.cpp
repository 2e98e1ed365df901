// Channels registered from chat, kept in the state store's settings (see chat_channels.h).
#include "bridge/chat_channels.h"

#include "core/json.h"
#include "core/log.h"

namespace pf {

using nlohmann::json;

namespace {

std::string key_of(const std::string& platform, const std::string& bot) {
  return "chatChannels:" + platform + ":" + bot;
}

json to_json(const ChannelConfig& c) {
  return {{"id", c.id},
          {"name", c.name},
          {"workingDirectory", c.working_directory},
          {"source", c.source},
          {"addedBy", c.added_by},
          {"addedAt", c.added_at_ms}};
}

}  // namespace

std::vector<ChannelConfig> ChatChannels::read(const std::string& platform, const std::string& bot) {
  std::vector<ChannelConfig> out;
  std::optional<std::string> text = state_.setting(key_of(platform, bot));
  if (!text || text->empty()) return out;
  json list = json::parse(*text, nullptr, false);
  if (!list.is_array()) {
    log::error("bridge", "the channels added from chat for " + bot + " do not read as a list");
    return out;
  }
  for (const json& j : list) {
    ChannelConfig c;
    c.platform = platform;
    c.bot = bot;
    if (j.is_object()) {
      c.id = j.value("id", "");
      c.name = j.value("name", "");
      c.working_directory = j.value("workingDirectory", "");
      c.source = j.value("source", "");
      c.added_by = j.value("addedBy", "");
      c.added_at_ms = j.value("addedAt", int64_t{0});
    }
    if (c.id.empty() || c.working_directory.empty() || c.added_by.empty()) {
      log::error("bridge", "skipped a channel added from chat for " + bot + ": " + j.dump());
      continue;
    }
    out.push_back(std::move(c));
  }
  return out;
}

void ChatChannels::write(const std::string& platform, const std::string& bot,
                         const std::vector<ChannelConfig>& channels) {
  json list = json::array();
  for (const auto& c : channels) list.push_back(to_json(c));
  state_.set_setting(key_of(platform, bot), list.dump());
}

std::vector<ChannelConfig> ChatChannels::load(const BridgeConfig& bridge) {
  std::vector<ChannelConfig> out;
  for (const auto& p : bridge.platforms)
    for (const auto& b : p.bots)
      for (auto& c : read(p.name, b.name)) out.push_back(std::move(c));
  return out;
}

void ChatChannels::add(const ChannelConfig& channel) {
  std::vector<ChannelConfig> list = read(channel.platform, channel.bot);
  std::erase_if(list, [&](const ChannelConfig& c) { return c.id == channel.id; });
  list.push_back(channel);
  write(channel.platform, channel.bot, list);
}

bool ChatChannels::remove(const std::string& platform, const std::string& bot,
                          const std::string& id) {
  std::vector<ChannelConfig> list = read(platform, bot);
  size_t before = list.size();
  std::erase_if(list, [&](const ChannelConfig& c) { return c.id == id; });
  if (list.size() == before) return false;
  write(platform, bot, list);
  return true;
}

void merge_chat_channels(BridgeConfig& bridge, const std::vector<ChannelConfig>& added) {
  for (const auto& a : added) {
    bool configured = false;
    for (const auto& c : bridge.channels)
      if (c.platform == a.platform && c.id == a.id) configured = true;
    if (!configured) bridge.channels.push_back(a);
  }
}

}  // namespace pf
