// The bridge's sections of the configuration (see bridge_config.h): "bridge" and "memory".
#include "bridge/bridge_config.h"

#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>

#include "core/config_reader.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/text.h"
#include "index/git_source.h"
#include "store/store.h"

namespace pf {

using namespace config_detail;

namespace {

constexpr int64_t kMaxSteps = 200;  // a turn's model calls, at most (maxSteps)

std::optional<bool> boolean(Reader& r, const json& parent, const std::string& at, const char* key) {
  auto it = parent.find(key);
  if (it == parent.end()) return std::nullopt;
  if (!it->is_boolean()) fail(r.source(), Reader::join(at, key), "expected true or false");
  return it->get<bool>();
}

std::string conversation_scope(Reader& r, const json& parent, const std::string& at) {
  std::string scope = r.string(parent, at, "conversationScope", true);
  if (scope != "channel" && scope != "thread")
    fail(r.source(), at + ".conversationScope",
         "expected \"channel\" or \"thread\", got \"" + scope + "\"");
  return scope;
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
    if (pc.type != "mattermost" && pc.type != "slack")
      fail(source, at + ".type", "expected \"mattermost\" or \"slack\", got \"" + pc.type + "\"");
    // Slack's Web API is at one address (the url is for a test server or a proxy).
    pc.url = r.string(p, at, "url", pc.type != "slack");
    if (pc.url.empty()) pc.url = "https://slack.com/api";
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
      if (pc.type == "slack")
        r.only_keys(*b, bat,
                    {"tokenEnv", "appTokenEnv", "access", "admin", "actions", "maxSteps", "agent"});
      else
        r.only_keys(*b, bat, {"tokenEnv", "access", "admin", "actions", "maxSteps", "agent"});
      BotConfig bc;
      bc.name = b.key();
      bc.token_env = r.string(*b, bat, "tokenEnv", true);
      // Socket Mode's connections are opened with the app-level token (xapp-...).
      bc.app_token_env = r.string(*b, bat, "appTokenEnv", pc.type == "slack");
      bc.access = access(r, *b, bat);
      bc.admin = boolean(r, *b, bat, "admin").value_or(false);
      if (b->contains("actions")) bc.actions = action_kinds(r, *b, bat, "actions");
      if (b->contains("maxSteps")) bc.max_steps = r.integer(*b, bat, "maxSteps", 1, kMaxSteps, 0);
      bc.agent = r.string(*b, bat, "agent", false);
      pc.bots.push_back(std::move(bc));
    }
    out.platforms.push_back(std::move(pc));
  }
}

void parse_channels(Reader& r, const json& channels, const Config& cfg, BridgeConfig& out) {
  const std::string& source = r.source();
  if (!channels.is_array())
    fail(source, "bridge.channels", std::string("expected an array, got ") + kind(channels));
  for (size_t i = 0; i < channels.size(); ++i) {
    std::string at = "bridge.channels[" + std::to_string(i) + "]";
    const json& c = channels[i];
    if (!c.is_object()) fail(source, at, std::string("expected an object, got ") + kind(c));
    r.only_keys(c, at,
                {"id", "platform", "bot", "name", "workingDirectory", "model", "fallbackModels",
                 "triggerMode", "threadedReplies", "verbose", "actions", "conversationScope",
                 "maxSteps", "agent"});
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
    if (is_git_url(cc.working_directory)) {
      // A repository by URL ("URL" or "URL#branch"): its clone under git.cloneDir works here.
      try {
        GitSource git = parse_git_source(cc.working_directory);
        cc.source = cc.working_directory;
        cc.working_directory = clone_folder(git, git_config(cfg).clone_dir);
      } catch (const UsageError& e) {
        fail(source, at + ".workingDirectory", e.what());
      }
    }
    cc.model = r.string(c, at, "model", false);
    cc.fallback_models = strings(r, c, at, "fallbackModels");
    check_models(cfg, at, cc.model, cc.fallback_models);
    if (c.contains("triggerMode")) cc.trigger_mode = trigger_mode(r, c, at);
    if (c.contains("conversationScope")) cc.conversation_scope = conversation_scope(r, c, at);
    cc.threaded_replies = boolean(r, c, at, "threadedReplies");
    cc.verbose = boolean(r, c, at, "verbose");
    if (c.contains("actions")) cc.actions = action_kinds(r, c, at, "actions");
    if (c.contains("maxSteps")) cc.max_steps = r.integer(c, at, "maxSteps", 1, kMaxSteps, 0);
    cc.agent = r.string(c, at, "agent", false);
    for (const auto& other : out.channels)
      if (other.platform == cc.platform && other.id == cc.id)
        fail(source, at + ".id", "channel " + cc.id + " is configured twice");
    out.channels.push_back(std::move(cc));
  }
}

void parse_bridge(Reader& r, const json& b, const Config& cfg, BridgeConfig& out) {
  r.only_keys(b, "bridge",
              {"platforms", "channels", "defaults", "stateDb", "workspaces", "workspacesDir", "replayWindowSeconds",
               "editIntervalMs", "maxPostChars", "turnTimeoutSeconds", "shutdownGraceSeconds",
               "permissionTimeoutSeconds", "askUserTimeoutSeconds", "leaseCheckSeconds",
               "autopilot", "attachments", "streamerMode", "metricsListen"});
  out.state_db = r.string(b, "bridge", "stateDb", false);
  out.metrics_listen = r.string(b, "bridge", "metricsListen", false);
  if (!out.metrics_listen.empty()) {
    size_t colon = out.metrics_listen.rfind(':');
    std::string port = colon == std::string::npos ? "" : out.metrics_listen.substr(colon + 1);
    if (colon == 0 || port.empty() || port.size() > 5 ||
        port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535)
      fail(r.source(), "bridge.metricsListen", "expected host:port, e.g. 127.0.0.1:9464");
  }
  out.workspaces_dir = r.string(b, "bridge", "workspacesDir", false);
  if (out.workspaces_dir.empty()) out.workspaces_dir = r.string(b, "bridge", "workspaces", false);
  if (out.workspaces_dir.rfind("~/", 0) == 0) out.workspaces_dir = home_dir() + out.workspaces_dir.substr(1);
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
  out.ask_user_timeout_seconds = r.integer(b, "bridge", "askUserTimeoutSeconds", 1, 24 * 3600,
                                           out.ask_user_timeout_seconds);
  out.lease_check_seconds =
      r.integer(b, "bridge", "leaseCheckSeconds", 1, 60, out.lease_check_seconds);
  if (b.contains("autopilot")) {
    const json& a = r.object(b, "bridge", "autopilot");
    r.only_keys(a, "bridge.autopilot", {"maxSteps", "maxMinutes"});
    out.autopilot_max_steps =
        r.integer(a, "bridge.autopilot", "maxSteps", 1, 500, out.autopilot_max_steps);
    out.autopilot_max_minutes =
        r.integer(a, "bridge.autopilot", "maxMinutes", 1, 24 * 60, out.autopilot_max_minutes);
  }
  if (b.contains("attachments")) {
    const json& a = r.object(b, "bridge", "attachments");
    r.only_keys(a, "bridge.attachments", {"keepMinutes"});
    if (a.contains("keepMinutes")) {
      const json& v = a["keepMinutes"];
      if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 7 * 24 * 60)
        fail(r.source(), "bridge.attachments.keepMinutes", "expected minutes from 0 to 10080");
      out.attachments_keep_minutes = v.get<double>();
    }
  }
  if (b.contains("streamerMode")) {
    const json& sm = r.object(b, "bridge", "streamerMode");
    r.only_keys(sm, "bridge.streamerMode", {"hide"});
    if (sm.contains("hide")) {
      if (!sm["hide"].is_array()) fail(r.source(), "bridge.streamerMode.hide", "expected a list of regular expressions");
      out.streamer_hide.clear();
      for (const json& p : sm["hide"]) {
        if (!p.is_string() || p.get<std::string>().empty())
          fail(r.source(), "bridge.streamerMode.hide", "expected a list of regular expressions");
        try {
          std::regex check(p.get<std::string>(), std::regex::ECMAScript | std::regex::icase);
        } catch (const std::regex_error& e) {
          fail(r.source(), "bridge.streamerMode.hide", "\"" + p.get<std::string>() + "\" is not a regular expression: " + e.what());
        }
        out.streamer_hide.push_back(p.get<std::string>());
      }
    }
  }
  if (b.contains("platforms")) parse_platforms(r, r.object(b, "bridge", "platforms"), out);
  if (b.contains("defaults")) {
    const json& d = r.object(b, "bridge", "defaults");
    const std::string at = "bridge.defaults";
    r.only_keys(d, at,
                {"model", "fallbackModels", "triggerMode", "threadedReplies", "verbose",
                 "workingDirectory", "actions", "permissionMode", "conversationScope",
                 "maxSteps", "agent"});
    out.defaults.agent = r.string(d, at, "agent", false);
    out.defaults.model = r.string(d, at, "model", false);
    out.defaults.fallback_models = strings(r, d, at, "fallbackModels");
    check_models(cfg, at, out.defaults.model, out.defaults.fallback_models);
    if (d.contains("triggerMode")) out.defaults.trigger_mode = trigger_mode(r, d, at);
    if (d.contains("conversationScope"))
      out.defaults.conversation_scope = conversation_scope(r, d, at);
    out.defaults.threaded_replies =
        boolean(r, d, at, "threadedReplies").value_or(out.defaults.threaded_replies);
    out.defaults.verbose = boolean(r, d, at, "verbose").value_or(out.defaults.verbose);
    out.defaults.max_steps = r.integer(d, at, "maxSteps", 1, kMaxSteps, out.defaults.max_steps);
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
  if (b.contains("channels")) parse_channels(r, b.at("channels"), cfg, out);
}

std::shared_ptr<const ConfigSection> parse_bridge_section(const json& value, const Config& config,
                                                          const std::string& source) {
  auto out = std::make_shared<BridgeConfig>();
  if (value.is_null()) return out;
  Reader r(source);
  if (!value.is_object())
    fail(source, "bridge", std::string("expected an object, got ") + kind(value));
  parse_bridge(r, value, config, *out);
  return out;
}

std::shared_ptr<const ConfigSection> parse_memory_section(const json& m, const Config& config,
                                                          const std::string& source) {
  auto out = std::make_shared<MemoryConfig>();
  if (m.is_null()) return out;
  Reader r(source);
  if (!m.is_object()) fail(source, "memory", std::string("expected an object, got ") + kind(m));
  r.only_keys(m, "memory", {"tier", "consolidation"});
  if (m.contains("tier") && (!m["tier"].is_number_integer() || m["tier"].get<int>() != 0))
    fail(source, "memory.tier", "only tier 0 (MEMORY.md in the workspace) exists");
  if (!m.contains("consolidation")) return out;
  const json& c = r.object(m, "memory", "consolidation");
  r.only_keys(c, "memory.consolidation", {"model", "idleMinutes"});
  out->consolidation_model = r.string(c, "memory.consolidation", "model", false);
  if (!out->consolidation_model.empty())
    check_model_id(config, "memory.consolidation.model", out->consolidation_model);
  if (c.contains("idleMinutes")) {
    const json& v = c["idleMinutes"];
    if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 24 * 60)
      fail(source, "memory.consolidation.idleMinutes", "expected minutes from 0 (never) to 1440");
    out->idle_minutes = v.get<double>();
  }
  return out;
}

}  // namespace

std::vector<std::string> BridgeConfig::own_stores(const std::string& db_path) const {
  return {bridge_state_path(*this, db_path)};
}

std::string bridge_state_path(const BridgeConfig& bridge, const std::string& db_path) {
  if (!bridge.state_db.empty()) return bridge.state_db;
  // Replicas on a PostgreSQL index store share the bridge's state in the same database.
  if (is_postgres_url(db_path)) return db_path;
  std::filesystem::path p(db_path);
  return (p.has_parent_path() ? p.parent_path() / "bridge.db" : std::filesystem::path("bridge.db"))
      .string();
}

const BridgeConfig& bridge_config(const Config& config) {
  static const BridgeConfig kNone;
  const BridgeConfig* b = config.section<BridgeConfig>("bridge");
  return b ? *b : kNone;
}

const MemoryConfig& memory_config(const Config& config) {
  static const MemoryConfig kNone;
  const MemoryConfig* m = config.section<MemoryConfig>("memory");
  return m ? *m : kNone;
}

namespace {

// The bot a channel is answered by, or null (a channel of no configured platform or bot).
const BotConfig* channel_bot(const BridgeConfig& bridge, const ChannelConfig& channel) {
  for (const auto& p : bridge.platforms)
    if (p.name == channel.platform)
      for (const auto& b : p.bots)
        if (b.name == channel.bot) return &b;
  return nullptr;
}

}  // namespace

const std::vector<std::string>& channel_actions(const BridgeConfig& bridge,
                                                const ChannelConfig& channel) {
  if (channel.actions) return *channel.actions;
  const BotConfig* bot = channel_bot(bridge, channel);
  return bot && bot->actions ? *bot->actions : bridge.defaults.actions;
}

int64_t channel_max_steps(const BridgeConfig& bridge, const ChannelConfig& channel) {
  if (channel.max_steps) return *channel.max_steps;
  const BotConfig* bot = channel_bot(bridge, channel);
  return bot && bot->max_steps ? *bot->max_steps : bridge.defaults.max_steps;
}

const std::string& channel_agent(const BridgeConfig& bridge, const ChannelConfig& channel) {
  if (!channel.agent.empty()) return channel.agent;
  const BotConfig* bot = channel_bot(bridge, channel);
  return bot && !bot->agent.empty() ? bot->agent : bridge.defaults.agent;
}

bool register_bridge_config() {
  static const bool once = register_config_section("bridge", parse_bridge_section, {"git"}) &&
                           register_config_section("memory", parse_memory_section);
  return once;
}

}  // namespace pf
