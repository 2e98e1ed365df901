// The "bridge" section of the configuration (see config.h): chat platforms, their bots and who
// may talk to them, the channels each bot answers in and the repository each answers about.
#include <cctype>
#include <optional>

#include "core/config_reader.h"
#include "core/text.h"

namespace pf::config_detail {

std::vector<std::string> strings(Reader& r, const json& parent, const std::string& at,
                                 const char* key) {
  std::vector<std::string> out;
  auto it = parent.find(key);
  if (it == parent.end()) return out;
  std::string here = Reader::join(at, key);
  if (!it->is_array()) fail(r.source(), here, std::string("expected an array, got ") + kind(*it));
  for (size_t i = 0; i < it->size(); ++i) {
    if (!(*it)[i].is_string())
      fail(r.source(), here + "[" + std::to_string(i) + "]",
           std::string("expected a string, got ") + kind((*it)[i]));
    out.push_back((*it)[i].get<std::string>());
  }
  return out;
}

namespace {

std::optional<bool> boolean(Reader& r, const json& parent, const std::string& at, const char* key) {
  auto it = parent.find(key);
  if (it == parent.end()) return std::nullopt;
  if (!it->is_boolean()) fail(r.source(), Reader::join(at, key), "expected true or false");
  return it->get<bool>();
}

std::string trigger_mode(Reader& r, const json& parent, const std::string& at) {
  std::string mode = r.string(parent, at, "triggerMode", true);
  if (mode != "mention" && mode != "all")
    fail(r.source(), at + ".triggerMode", "expected \"mention\" or \"all\", got \"" + mode + "\"");
  return mode;
}

AccessConfig access(Reader& r, const json& parent, const std::string& at) {
  AccessConfig out;
  if (!parent.contains("access")) return out;
  const json& a = r.object(parent, at, "access");
  std::string here = at + ".access";
  r.only_keys(a, here, {"mode", "users"});
  out.mode = r.string(a, here, "mode", true);
  if (out.mode != "allowlist" && out.mode != "blocklist" && out.mode != "open")
    fail(r.source(), here + ".mode",
         "expected \"allowlist\", \"blocklist\" or \"open\", got \"" + out.mode + "\"");
  for (std::string user : strings(r, a, here, "users")) {
    if (!user.empty() && user.front() == '@') user.erase(0, 1);
    user = ascii_lower(user);
    if (user.empty()) fail(r.source(), here + ".users", "a user name may not be empty");
    out.users.push_back(user);
  }
  return out;
}

bool bad_bot_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return true;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return true;
  return false;
}

void check_models(const Config& cfg, const std::string& at, const std::string& model,
                  const std::vector<std::string>& fallbacks) {
  if (!model.empty()) check_model_id(cfg, at + ".model", model);
  for (size_t i = 0; i < fallbacks.size(); ++i)
    check_model_id(cfg, at + ".fallbackModels[" + std::to_string(i) + "]", fallbacks[i]);
}

void parse_platforms(Reader& r, const json& platforms, BridgeConfig& out) {
  const std::string& source = r.source();
  for (auto it = platforms.begin(); it != platforms.end(); ++it) {
    std::string at = "bridge.platforms." + it.key();
    if (bad_name(it.key()))
      fail(source, at, "a platform name may not be empty or contain ':' or whitespace");
    if (!it->is_object()) fail(source, at, std::string("expected an object, got ") + kind(*it));
    const json& p = *it;
    if (p.contains("botToken") || p.contains("token"))
      fail(source, at,
           "tokens do not belong in the config file: name the environment variable "
           "that holds it in bots.<name>.tokenEnv");
    r.only_keys(p, at, {"type", "url", "bots", "access"});
    PlatformConfig pc;
    pc.name = it.key();
    if (p.contains("type")) pc.type = r.string(p, at, "type", true);
    if (pc.type != "mattermost")
      fail(source, at + ".type",
           "expected \"mattermost\" (the only platform so far), got \"" + pc.type + "\"");
    pc.url = r.string(p, at, "url", true);
    if (pc.url.rfind("http://", 0) != 0 && pc.url.rfind("https://", 0) != 0)
      fail(source, at + ".url", "expected an http:// or https:// URL, got \"" + pc.url + "\"");
    while (!pc.url.empty() && pc.url.back() == '/') pc.url.pop_back();
    pc.access = access(r, p, at);
    const json& bots = r.object(p, at, "bots");
    if (bots.empty()) fail(source, at + ".bots", "configure at least one bot");
    for (auto b = bots.begin(); b != bots.end(); ++b) {
      std::string bat = at + ".bots." + b.key();
      if (bad_bot_name(b.key()))
        fail(source, bat, "a bot name is 1-64 letters, digits, '-' or '_'");
      if (!b->is_object()) fail(source, bat, std::string("expected an object, got ") + kind(*b));
      if (b->contains("token"))
        fail(source, bat + ".token",
             "tokens do not belong in the config file: put it in an environment variable and "
             "name it in tokenEnv");
      r.only_keys(*b, bat, {"tokenEnv", "access", "admin", "actions"});
      BotConfig bc;
      bc.name = b.key();
      bc.token_env = r.string(*b, bat, "tokenEnv", true);
      bc.access = access(r, *b, bat);
      bc.admin = boolean(r, *b, bat, "admin").value_or(false);
      if (b->contains("actions")) bc.actions = action_kinds(r, *b, bat, "actions");
      pc.bots.push_back(std::move(bc));
    }
    out.platforms.push_back(std::move(pc));
  }
}

void parse_channels(Reader& r, const json& channels, Config& cfg) {
  const std::string& source = r.source();
  BridgeConfig& out = cfg.bridge;
  if (!channels.is_array())
    fail(source, "bridge.channels", std::string("expected an array, got ") + kind(channels));
  for (size_t i = 0; i < channels.size(); ++i) {
    std::string at = "bridge.channels[" + std::to_string(i) + "]";
    const json& c = channels[i];
    if (!c.is_object()) fail(source, at, std::string("expected an object, got ") + kind(c));
    r.only_keys(c, at,
                {"id", "platform", "bot", "name", "workingDirectory", "model", "fallbackModels",
                 "triggerMode", "threadedReplies", "verbose", "actions"});
    ChannelConfig cc;
    cc.id = r.string(c, at, "id", true);
    if (cc.id.empty()) fail(source, at + ".id", "must not be empty");
    cc.platform = r.string(c, at, "platform", true);
    const PlatformConfig* platform = nullptr;
    for (const auto& p : out.platforms)
      if (p.name == cc.platform) platform = &p;
    if (!platform)
      fail(source, at + ".platform",
           "unknown platform \"" + cc.platform + "\" (configure it under bridge.platforms)");
    cc.bot = r.string(c, at, "bot", platform->bots.size() > 1);
    if (cc.bot.empty()) cc.bot = platform->bots.front().name;
    bool known_bot = false;
    for (const auto& b : platform->bots) known_bot |= b.name == cc.bot;
    if (!known_bot)
      fail(source, at + ".bot",
           "unknown bot \"" + cc.bot + "\" of platform \"" + cc.platform + "\"");
    cc.name = r.string(c, at, "name", false);
    cc.working_directory = r.string(c, at, "workingDirectory", true);
    if (cc.working_directory.empty()) fail(source, at + ".workingDirectory", "must not be empty");
    cc.model = r.string(c, at, "model", false);
    cc.fallback_models = strings(r, c, at, "fallbackModels");
    check_models(cfg, at, cc.model, cc.fallback_models);
    if (c.contains("triggerMode")) cc.trigger_mode = trigger_mode(r, c, at);
    cc.threaded_replies = boolean(r, c, at, "threadedReplies");
    cc.verbose = boolean(r, c, at, "verbose");
    if (c.contains("actions")) cc.actions = action_kinds(r, c, at, "actions");
    for (const auto& other : out.channels)
      if (other.platform == cc.platform && other.id == cc.id)
        fail(source, at + ".id", "channel " + cc.id + " is configured twice");
    out.channels.push_back(std::move(cc));
  }
}

}  // namespace

void parse_bridge(Reader& r, const json& b, Config& cfg) {
  BridgeConfig& out = cfg.bridge;
  r.only_keys(b, "bridge",
              {"platforms", "channels", "defaults", "stateDb", "workspaces", "replayWindowSeconds",
               "editIntervalMs", "maxPostChars", "turnTimeoutSeconds", "shutdownGraceSeconds",
               "permissionTimeoutSeconds", "leaseCheckSeconds"});
  out.state_db = r.string(b, "bridge", "stateDb", false);
  out.workspaces_dir = r.string(b, "bridge", "workspaces", false);
  out.replay_window_seconds =
      r.integer(b, "bridge", "replayWindowSeconds", 0, 7 * 24 * 3600, out.replay_window_seconds);
  out.edit_interval_ms = r.integer(b, "bridge", "editIntervalMs", 50, 60000, out.edit_interval_ms);
  out.max_post_chars = r.integer(b, "bridge", "maxPostChars", 1000, 16383, out.max_post_chars);
  out.turn_timeout_seconds =
      r.integer(b, "bridge", "turnTimeoutSeconds", 10, 24 * 3600, out.turn_timeout_seconds);
  out.shutdown_grace_seconds =
      r.integer(b, "bridge", "shutdownGraceSeconds", 0, 3600, out.shutdown_grace_seconds);
  out.permission_timeout_seconds = r.integer(b, "bridge", "permissionTimeoutSeconds", 1, 24 * 3600,
                                             out.permission_timeout_seconds);
  out.lease_check_seconds =
      r.integer(b, "bridge", "leaseCheckSeconds", 1, 60, out.lease_check_seconds);
  if (b.contains("platforms")) parse_platforms(r, r.object(b, "bridge", "platforms"), out);
  if (b.contains("defaults")) {
    const json& d = r.object(b, "bridge", "defaults");
    const std::string at = "bridge.defaults";
    r.only_keys(d, at,
                {"model", "fallbackModels", "triggerMode", "threadedReplies", "verbose",
                 "workingDirectory", "actions", "permissionMode"});
    out.defaults.model = r.string(d, at, "model", false);
    out.defaults.fallback_models = strings(r, d, at, "fallbackModels");
    check_models(cfg, at, out.defaults.model, out.defaults.fallback_models);
    if (d.contains("triggerMode")) out.defaults.trigger_mode = trigger_mode(r, d, at);
    out.defaults.threaded_replies =
        boolean(r, d, at, "threadedReplies").value_or(out.defaults.threaded_replies);
    out.defaults.verbose = boolean(r, d, at, "verbose").value_or(out.defaults.verbose);
    out.defaults.working_directory = r.string(d, at, "workingDirectory", false);
    out.defaults.actions = action_kinds(r, d, at, "actions");
    if (d.contains("permissionMode")) {
      std::string mode = r.string(d, at, "permissionMode", true);
      if (mode != "interactive" && mode != "autopilot")
        fail(r.source(), at + ".permissionMode",
             "expected \"interactive\" or \"autopilot\", got \"" + mode + "\"");
      out.defaults.permission_mode = mode;
    }
  }
  if (b.contains("channels")) parse_channels(r, b.at("channels"), cfg);
}

}  // namespace pf::config_detail

namespace pf {

const std::vector<std::string>& channel_actions(const Config& config, const ChannelConfig& channel) {
  if (channel.actions) return *channel.actions;
  for (const auto& p : config.bridge.platforms)
    if (p.name == channel.platform)
      for (const auto& b : p.bots)
        if (b.name == channel.bot && b.actions) return *b.actions;
  return config.bridge.defaults.actions;
}

}  // namespace pf
