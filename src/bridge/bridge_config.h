// The chat bridge's sections of the configuration file, parsed here rather than in core:
// "bridge" (chat platforms, their bots and who may talk to them, the channels each bot answers
// in and the repository each answers about) and "memory" (MEMORY.md upkeep).
//
//   "bridge": {"platforms": {"mattermost": {"url": "https://chat.example.com",
//                "bots": {"copilot": {"tokenEnv": "MM_COPILOT_TOKEN"}},
//                "access": {"mode": "allowlist", "users": ["alice"]}}},
//              "channels": [{"id": "...", "platform": "mattermost", "bot": "copilot",
//                            "workingDirectory": "/srv/repo", "triggerMode": "mention"}],
//              "defaults": {"triggerMode": "mention", "threadedReplies": true,
//                           "actions": ["write", "shell"], "permissionMode": "interactive"}},
//   Slack: "platforms": {"slack": {"type": "slack", "bots": {"copilot": {
//            "tokenEnv": "SLACK_BOT_TOKEN", "appTokenEnv": "SLACK_APP_TOKEN"}}}},
//   "bridge": {..., "autopilot": {"maxSteps": 50, "maxMinutes": 30},
//              "attachments": {"keepMinutes": 60}},
//   "memory": {"consolidation": {"model": "openai:gpt-4o-mini", "idleMinutes": 5}}
//
// A bot names the environment variable that holds its token (tokenEnv); an inline token is
// refused. Including this header registers both sections with the loader (core/config.h), so
// every program that uses the bridge's settings can load a file that has them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"

namespace pf {

// Who may talk to a bot: usernames (case-insensitive, a leading '@' dropped). Neither the
// platform nor the bot configuring access means nobody may (deny by default).
struct AccessConfig {
  std::string mode;  // "allowlist", "blocklist", "open"; empty: not configured at this level
  std::vector<std::string> users;
};

struct BotConfig {
  std::string name;       // letters, digits, '-' and '_' (it names a workspace directory)
  std::string token_env;  // the environment variable that holds the bot's access token
  std::string app_token_env;  // Slack: the one that holds the app-level token (xapp-...)
  AccessConfig access;
  bool admin = false;
  std::optional<std::vector<std::string>> actions;  // unset: bridge.defaults.actions
  std::optional<int64_t> max_steps;                 // unset: bridge.defaults.maxSteps
  std::string agent;  // a custom agent's name (custom_agents.h); empty: bridge.defaults.agent
};

struct PlatformConfig {
  std::string name;                 // the key under bridge.platforms
  std::string type = "mattermost";  // or "slack"
  std::string url;  // the server, e.g. https://chat.example.com; Slack: https://slack.com/api
  std::vector<BotConfig> bots;
  AccessConfig access;
};

// A channel a bot answers in, and the repository it answers about. Unset optionals fall back to
// bridge.defaults.
struct ChannelConfig {
  std::string id;  // the platform's channel id
  std::string platform, bot, name;
  // The repository (indexed by pilotfish). Written as a git URL ("URL" or "URL#branch") in the
  // file, it is the URL's clone under git.cloneDir (index/git_source.h), and source the URL.
  std::string working_directory;
  std::string model;              // "provider:model"; empty: the defaults'
  std::vector<std::string> fallback_models;
  std::optional<std::string> trigger_mode;  // "mention" or "all"
  std::optional<bool> threaded_replies, verbose;
  std::optional<std::vector<std::string>> actions;  // unset: the bot's, else the defaults'
  // "channel": one conversation per channel; "thread": one per thread (a top-level message
  // starts one).
  std::optional<std::string> conversation_scope;
  std::optional<int64_t> max_steps;  // model calls a turn may make; unset: the bot's, the defaults'
  std::string agent;                 // the custom agent by default; empty: the bot's, the defaults'
  // Registered from chat by an admin bot (chat_channels.h), not read from the file: who asked
  // (empty for a configured channel) and when.
  std::string added_by;
  int64_t added_at_ms = 0;
  std::string source;  // the git URL the repository is a clone of; empty: a plain folder
};

struct BridgeDefaults {
  std::string model;  // empty: defaults.chatModel
  std::vector<std::string> fallback_models;
  std::string trigger_mode = "mention";
  bool threaded_replies = true;
  bool verbose = false;
  std::string working_directory;  // for DMs; empty: server.repository, else the bot's workspace
  std::vector<std::string> actions;  // action kinds offered in channels (see ActionsConfig)
  std::optional<std::string> permission_mode;  // unset: actions.permissionMode
  std::string conversation_scope = "channel";
  // Model calls a turn may make (the last one is offered no tools): enough for an agent that
  // reads, edits and runs commands; the HTTP route's answers keep their 5.
  int64_t max_steps = 25;
  std::string agent;  // the custom agent channels run with until /agent picks another; "": none
};

struct BridgeConfig : ConfigSection {
  std::vector<PlatformConfig> platforms;  // none: no bridge runs
  std::vector<ChannelConfig> channels;
  BridgeDefaults defaults;
  std::string state_db;        // empty: bridge.db beside the index store
  // bridge.workspacesDir (or "workspaces"): each bot's folders (its DMs' repository when none is
  // configured, the channels create_project makes) go in <this>/<bot>/; empty:
  // <data dir>/workspaces (~/.local/share/pilotfish/workspaces).
  std::string workspaces_dir;
  // Where `pilotfish bridge` serves GET /metrics (host:port); empty: nowhere (`serve` has its own).
  std::string metrics_listen;
  int64_t replay_window_seconds = 300;  // older missed posts are not answered
  int64_t edit_interval_ms = 500;       // at most one edit of a streamed reply per interval
  int64_t max_post_chars = 16000;       // longer replies are split into parts
  int64_t turn_timeout_seconds = 600;   // a turn running longer is cancelled
  // Replicas on one state store: how often a standing-by process tries a bot's lease and a
  // holder checks its own (a dead holder's bot is taken over within about this long).
  int64_t lease_check_seconds = 5;
  int64_t shutdown_grace_seconds = 10;  // on SIGTERM, running turns may finish for this long
  int64_t permission_timeout_seconds = 300;  // an unanswered permission prompt denies
  int64_t ask_user_timeout_seconds = 300;    // an unanswered ask_user question: "did not reply"
  // A channel's saved attachments are deleted once it has been idle this long (attachments.keepMinutes).
  double attachments_keep_minutes = 60;
  // Streamer mode hides the configured models whose ids match these (streamerMode.hide).
  std::vector<std::string> streamer_hide = {"preview", "internal", "experimental"};
  // An autopilot run (/autopilot, /implement) ends at these, if the model has not said done.
  int64_t autopilot_max_steps = 50;
  int64_t autopilot_max_minutes = 30;

  std::vector<std::string> own_stores(const std::string& db_path) const override;  // the state
};

// The "memory" section: MEMORY.md's consolidation after a quiet spell in its workspace.
struct MemoryConfig : ConfigSection {
  std::string consolidation_model;  // "provider:model"; empty: the channel's model
  double idle_minutes = 5;          // 0: never consolidate
};

// Where the bridge keeps its state: bridge.stateDb when set, else the PostgreSQL store itself
// when the index store is one, else bridge.db beside the index store file.
std::string bridge_state_path(const BridgeConfig& bridge, const std::string& db_path);

// The config's sections (their defaults when the file has none, or when the program did not
// include this header before parsing).
const BridgeConfig& bridge_config(const Config& config);
const MemoryConfig& memory_config(const Config& config);

// The action kinds a channel is offered: its own, else its bot's, else bridge.defaults.actions.
const std::vector<std::string>& channel_actions(const BridgeConfig& bridge,
                                                const ChannelConfig& channel);

// The model calls a channel's turn may make: its own maxSteps, else its bot's, else the defaults'.
int64_t channel_max_steps(const BridgeConfig& bridge, const ChannelConfig& channel);

// The custom agent a channel runs with by default: its own, else its bot's, else the defaults'
// (empty: none). /agent's choice, stored per channel, overrides it.
const std::string& channel_agent(const BridgeConfig& bridge, const ChannelConfig& channel);

// Registers "bridge" and "memory" with the loader; runs once per program, from the initializer
// below.
bool register_bridge_config();
inline const bool kBridgeConfigRegistered = register_bridge_config();

}  // namespace pf
