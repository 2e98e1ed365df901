// The bridge's sections of the configuration ("bridge" and "memory", bridge/bridge_config.h):
// parsed by the bridge through the loader's section registry, with errors that name the key.
#include "bridge/bridge_config.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace pf {
namespace {

void expect_error(const std::string& json, const std::string& fragment) {
  try {
    parse_config(json, "bad.json");
    ADD_FAILURE() << "accepted: " << json;
  } catch (const ConfigError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("config bad.json: "), std::string::npos) << msg;
    EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
  }
}

TEST(BridgeConfig, BridgeSection) {
  Config c = parse_config(R"({
    "providers": {"p": {"type": "openai", "baseUrl": "http://m/v1", "models": [{"id": "a"}]}},
    "bridge": {
      "platforms": {"chat": {"url": "https://mm.example.com/",
                             "bots": {"copilot": {"tokenEnv": "MM_TOKEN",
                                                  "access": {"mode": "allowlist",
                                                             "users": ["@Alice", "bob"]}},
                                      "helper": {"tokenEnv": "MM_HELPER"}},
                             "access": {"mode": "blocklist", "users": ["mallory"]}}},
      "channels": [{"id": "c1", "platform": "chat", "bot": "helper", "workingDirectory": "/srv/r",
                    "model": "p:a", "triggerMode": "all", "threadedReplies": false}],
      "defaults": {"triggerMode": "mention", "verbose": true, "fallbackModels": ["p:a"]},
      "replayWindowSeconds": 60, "editIntervalMs": 250}})",
                          "b.json");
  ASSERT_EQ(bridge_config(c).platforms.size(), 1u);
  const PlatformConfig& p = bridge_config(c).platforms[0];
  EXPECT_EQ(p.url, "https://mm.example.com");  // the trailing slash is dropped
  ASSERT_EQ(p.bots.size(), 2u);
  EXPECT_EQ(p.bots[0].name, "copilot");
  EXPECT_EQ(p.bots[0].token_env, "MM_TOKEN");
  EXPECT_EQ(p.bots[0].access.users, (std::vector<std::string>{"alice", "bob"}));
  EXPECT_EQ(p.access.mode, "blocklist");
  EXPECT_TRUE(p.bots[1].access.mode.empty());
  ASSERT_EQ(bridge_config(c).channels.size(), 1u);
  EXPECT_EQ(bridge_config(c).channels[0].bot, "helper");
  EXPECT_EQ(bridge_config(c).channels[0].trigger_mode.value(), "all");
  EXPECT_FALSE(bridge_config(c).channels[0].threaded_replies.value());
  EXPECT_FALSE(bridge_config(c).channels[0].verbose.has_value());
  EXPECT_TRUE(bridge_config(c).defaults.verbose);
  EXPECT_EQ(bridge_config(c).replay_window_seconds, 60);
  EXPECT_EQ(bridge_config(c).edit_interval_ms, 250);
  EXPECT_EQ(bridge_config(c).max_post_chars, 16000);
}

TEST(BridgeConfig, BridgeErrorsNameTheKey) {
  const std::string platform =
      R"("platforms": {"mm": {"url": "http://x", "bots": {"b": {"tokenEnv": "T"}}}})";
  expect_error(R"({"bridge": {"platforms": {"mm": {"url": "http://x", "bots": {"b": {"token": "s"}}}}}})",
               "bridge.platforms.mm.bots.b.token: tokens do not belong in the config file");
  expect_error(R"({"bridge": {"platforms": {"mm": {"url": "x", "bots": {"b": {"tokenEnv": "T"}}}}}})",
               "bridge.platforms.mm.url: expected an http:// or https:// URL");
  expect_error(R"({"bridge": {"platforms": {"mm": {"url": "http://x", "bots": {"../b": {"tokenEnv": "T"}}}}}})",
               "bridge.platforms.mm.bots.../b: a bot name is 1-64 letters");
  expect_error(R"({"bridge": {"platforms": {"mm": {"url": "http://x", "type": "teams", "bots": {"b": {"tokenEnv": "T"}}}}}})",
               "bridge.platforms.mm.type: expected \"mattermost\" or \"slack\", got \"teams\"");
  expect_error(R"({"bridge": {"platforms": {"s": {"type": "slack", "bots": {"b": {"tokenEnv": "T"}}}}}})",
               "bridge.platforms.s.bots.b.appTokenEnv: missing");
  expect_error(R"({"bridge": {"platforms": {"mm": {"url": "http://x", "bots": {"b": {"tokenEnv": "T", "appTokenEnv": "A"}}}}}})",
               "bridge.platforms.mm.bots.b.appTokenEnv: unknown key");
  expect_error(R"({"bridge": {)" + platform + R"(, "channels": [{"id": "c", "platform": "mm", "workingDirectory": "/r", "conversationScope": "post"}]}})",
               "bridge.channels[0].conversationScope: expected \"channel\" or \"thread\", got \"post\"");
  expect_error(R"({"bridge": {)" + platform + R"(, "channels": [{"id": "c", "platform": "xx", "workingDirectory": "/r"}]}})",
               "bridge.channels[0].platform: unknown platform \"xx\"");
  expect_error(R"({"bridge": {)" + platform + R"(, "channels": [{"id": "c", "platform": "mm"}]}})",
               "bridge.channels[0].workingDirectory: missing");
  expect_error(R"({"bridge": {)" + platform + R"(, "channels": [{"id": "c", "platform": "mm", "bot": "zz", "workingDirectory": "/r"}]}})",
               "bridge.channels[0].bot: unknown bot \"zz\"");
  expect_error(R"({"bridge": {)" + platform + R"(, "channels": [{"id": "c", "platform": "mm", "workingDirectory": "/r", "triggerMode": "always"}]}})",
               "bridge.channels[0].triggerMode: expected \"mention\" or \"all\"");
  expect_error(R"({"bridge": {)" + platform + R"(, "channels": [{"id": "c", "platform": "mm", "workingDirectory": "/r", "model": "nope:x"}]}})",
               "bridge.channels[0].model: unknown provider \"nope\"");
  expect_error(R"({"bridge": {)" + platform + R"(, "channels": [{"id": "c", "platform": "mm", "workingDirectory": "/r"}, {"id": "c", "platform": "mm", "workingDirectory": "/s"}]}})",
               "bridge.channels[1].id: channel c is configured twice");
  expect_error(R"({"bridge": {"platforms": {"mm": {"url": "http://x", "bots": {"b": {"tokenEnv": "T", "access": {"mode": "some"}}}}}}})",
               "bridge.platforms.mm.bots.b.access.mode: expected \"allowlist\"");
  expect_error(R"({"bridge": {"editIntervalMs": 1}})", "bridge.editIntervalMs: expected a whole number from 50");
  expect_error(R"({"bridge": {"platform": {}}})", "bridge.platform: unknown key");
  expect_error(R"({"bridge": {"leaseCheckSeconds": 0}})", "bridge.leaseCheckSeconds: expected a whole number from 1");
  expect_error(R"({"bridge": []})", "bridge: expected an object, got an array");
}

// Found by fuzz_config: a number too large for a double is nlohmann's out_of_range, not its
// parse_error, and escaped the loader as a bare library exception instead of a ConfigError.
// Found by fuzz_config: a platform without "bots" threw nlohmann's out_of_range ("key 'bots'
// not found") instead of a ConfigError naming the key.
// "bridge" is parsed after "git" (register_config_section's after list), though it sorts first:
// a URL's clone folder is under the file's git.cloneDir.
TEST(BridgeConfig, AChannelsWorkingDirectoryMayBeAGitUrl) {
  const char* platforms =
      R"("platforms": {"chat": {"url": "https://mm.example.com", "bots": {"b": {"tokenEnv": "T"}}}})";
  Config c = parse_config(std::string(R"({"git": {"cloneDir": "/var/clones"}, "bridge": {)") +
                              platforms + R"(, "workspacesDir": "/var/ws", "channels": [
        {"id": "c1", "platform": "chat", "workingDirectory": "https://git.example.com/team/api.git#release"},
        {"id": "c2", "platform": "chat", "workingDirectory": "/srv/plain"}]}})",
                          "t.json");
  const BridgeConfig& b = bridge_config(c);
  EXPECT_EQ(b.workspaces_dir, "/var/ws");
  ASSERT_EQ(b.channels.size(), 2u);
  EXPECT_EQ(b.channels[0].source, "https://git.example.com/team/api.git#release");
  EXPECT_EQ(b.channels[0].working_directory, "/var/clones/git.example.com/team/api@release");
  EXPECT_EQ(b.channels[1].source, "");
  EXPECT_EQ(b.channels[1].working_directory, "/srv/plain");
  expect_error(std::string(R"({"bridge": {)") + platforms + R"(, "channels": [
        {"id": "c1", "platform": "chat", "workingDirectory": "https://me:s3cret@h/r.git"}]}})",
               "bridge.channels[0].workingDirectory: ");
}

TEST(BridgeConfig, APlatformWithoutBotsIsAConfigError) {
  try {
    parse_config(R"({"bridge": {"platforms": {"chat": {"url": "https://mm.example.com"}}}})", "t.json");
    FAIL() << "a platform without bots was taken";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bridge.platforms.chat.bots"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos) << e.what();
  }
}

TEST(BridgeConfig, ASlackPlatformWithBothTokensAndThreadScopedChannels) {
  Config c = parse_config(R"({"bridge": {
      "platforms": {"team": {"type": "slack", "bots": {"copilot": {
          "tokenEnv": "SLACK_BOT_TOKEN", "appTokenEnv": "SLACK_APP_TOKEN",
          "access": {"mode": "allowlist", "users": ["U0123ABC", "alice"]}}}},
                    "local": {"type": "slack", "url": "http://127.0.0.1:9/api/",
                              "bots": {"b": {"tokenEnv": "T", "appTokenEnv": "A"}}}},
      "channels": [{"id": "C0123", "platform": "team", "workingDirectory": "/srv/r",
                    "conversationScope": "thread"},
                   {"id": "C0456", "platform": "team", "workingDirectory": "/srv/r"}],
      "defaults": {"conversationScope": "channel"}}})", "t.json");
  const BridgeConfig& b = bridge_config(c);
  ASSERT_EQ(b.platforms.size(), 2u);
  EXPECT_EQ(b.platforms[0].type, "slack");
  EXPECT_EQ(b.platforms[0].url, "https://slack.com/api");
  EXPECT_EQ(b.platforms[1].url, "http://127.0.0.1:9/api");
  EXPECT_EQ(b.platforms[0].bots[0].token_env, "SLACK_BOT_TOKEN");
  EXPECT_EQ(b.platforms[0].bots[0].app_token_env, "SLACK_APP_TOKEN");
  EXPECT_EQ(b.platforms[0].bots[0].access.users, (std::vector<std::string>{"u0123abc", "alice"}));
  EXPECT_EQ(b.channels[0].conversation_scope.value(), "thread");
  EXPECT_FALSE(b.channels[1].conversation_scope.has_value());
  EXPECT_EQ(b.defaults.conversation_scope, "channel");
}

TEST(BridgeConfig, MemorySectionIsValidated) {
  Config ok = parse_config(R"({"memory": {"consolidation": {"idleMinutes": 0.5}}})", "t.json");
  EXPECT_DOUBLE_EQ(memory_config(ok).idle_minutes, 0.5);
  EXPECT_DOUBLE_EQ(memory_config(parse_config("{}", "t.json")).idle_minutes, 5);
  expect_error(R"({"memory": {"tier": 1}})", "memory.tier: only tier 0");
  expect_error(R"({"memory": {"consolidation": {"idleMinutes": -1}}})",
               "memory.consolidation.idleMinutes: expected minutes from 0");
  expect_error(R"({"memory": {"consolidation": {"model": "nope:m"}}})",
               "memory.consolidation.model: unknown provider \"nope\"");
  expect_error(R"({"memory": 3})", "memory: expected an object, got a number");
}

// Every parse has the sections, with their defaults when the file has none; the state path and
// the own stores follow bridge.stateDb.
// A turn's model calls: the channel's maxSteps, else its bot's, else the defaults' (25, where the
// HTTP route keeps its 5); out of 1..200 is an error that names the key.
TEST(BridgeConfig, MaxStepsPerChannelThenBotThenDefaults) {
  const std::string platforms = R"("platforms": {"chat": {"url": "https://mm",
      "bots": {"copilot": {"tokenEnv": "A", "maxSteps": 40}, "helper": {"tokenEnv": "B"}}}})";
  Config c = parse_config(R"({"bridge": {)" + platforms + R"(, "channels": [
      {"id": "c1", "platform": "chat", "bot": "copilot", "workingDirectory": "/r", "maxSteps": 8},
      {"id": "c2", "platform": "chat", "bot": "copilot", "workingDirectory": "/r"},
      {"id": "c3", "platform": "chat", "bot": "helper", "workingDirectory": "/r"}]}})",
                          "s.json");
  const BridgeConfig& b = bridge_config(c);
  EXPECT_EQ(channel_max_steps(b, b.channels[0]), 8);
  EXPECT_EQ(channel_max_steps(b, b.channels[1]), 40);
  EXPECT_EQ(channel_max_steps(b, b.channels[2]), 25);
  Config d = parse_config(R"({"bridge": {)" + platforms + R"(, "defaults": {"maxSteps": 12}}})", "d.json");
  ChannelConfig dm;  // a DM of the helper bot: no channel entry
  dm.platform = "chat";
  dm.bot = "helper";
  EXPECT_EQ(channel_max_steps(bridge_config(d), dm), 12);
  expect_error(R"({"bridge": {)" + platforms + R"(, "defaults": {"maxSteps": 0}}})",
               "bridge.defaults.maxSteps");
  expect_error(R"({"bridge": {)" + platforms + R"(, "channels": [{"id": "c", "platform": "chat", "bot": "helper", "workingDirectory": "/r", "maxSteps": 500}]}})",
               "bridge.channels[0].maxSteps");
}

// The custom agent a channel runs with by default: the channel's, else its bot's, else the
// defaults'; a name that is not a string is an error naming the key.
TEST(BridgeConfig, AgentPerChannelThenBotThenDefaults) {
  const std::string platforms = R"("platforms": {"chat": {"url": "https://mm",
      "bots": {"copilot": {"tokenEnv": "A", "agent": "reviewer"}, "helper": {"tokenEnv": "B"}}}})";
  Config c = parse_config(R"({"bridge": {)" + platforms + R"(, "defaults": {"agent": "writer"},
      "channels": [
      {"id": "c1", "platform": "chat", "bot": "copilot", "workingDirectory": "/r", "agent": "ops"},
      {"id": "c2", "platform": "chat", "bot": "copilot", "workingDirectory": "/r"},
      {"id": "c3", "platform": "chat", "bot": "helper", "workingDirectory": "/r"}]}})",
                          "s.json");
  const BridgeConfig& b = bridge_config(c);
  EXPECT_EQ(channel_agent(b, b.channels[0]), "ops");
  EXPECT_EQ(channel_agent(b, b.channels[1]), "reviewer");
  EXPECT_EQ(channel_agent(b, b.channels[2]), "writer");
  EXPECT_EQ(channel_agent(bridge_config(parse_config("{}", "e.json")), ChannelConfig{}), "");
  expect_error(R"({"bridge": {)" + platforms + R"(, "defaults": {"agent": 3}}})",
               "bridge.defaults.agent");
}

TEST(BridgeConfig, AutopilotLimitsHaveDefaultsAndRanges) {
  EXPECT_EQ(bridge_config(parse_config("{}", "e.json")).autopilot_max_steps, 50);
  EXPECT_EQ(bridge_config(parse_config("{}", "e.json")).autopilot_max_minutes, 30);
  Config c = parse_config(R"({"bridge": {"autopilot": {"maxSteps": 8, "maxMinutes": 2}}})", "a.json");
  EXPECT_EQ(bridge_config(c).autopilot_max_steps, 8);
  EXPECT_EQ(bridge_config(c).autopilot_max_minutes, 2);
  expect_error(R"({"bridge": {"autopilot": {"maxSteps": 0}}})", "bridge.autopilot.maxSteps");
  expect_error(R"({"bridge": {"autopilot": {"steps": 3}}})", "bridge.autopilot");
}

TEST(BridgeConfig, AbsentSectionsHaveTheirDefaultsAndTheStateIsAnOwnStore) {
  Config none = parse_config("{}", "t.json");
  ASSERT_NE(none.section<BridgeConfig>("bridge"), nullptr);
  EXPECT_TRUE(bridge_config(none).platforms.empty());
  EXPECT_EQ(bridge_config(none).replay_window_seconds, 300);
  EXPECT_EQ(bridge_state_path(bridge_config(none), "/srv/.pilotfish/index.db"),
            "/srv/.pilotfish/bridge.db");
  EXPECT_EQ(bridge_config(none).own_stores("/srv/.pilotfish/index.db"),
            std::vector<std::string>{"/srv/.pilotfish/bridge.db"});
  Config set = parse_config(R"({"bridge": {"stateDb": "/var/lib/pf/state.db"}})", "t.json");
  EXPECT_EQ(bridge_state_path(bridge_config(set), "/srv/index.db"), "/var/lib/pf/state.db");
  EXPECT_EQ(bridge_state_path(bridge_config(none), "index.db"), "bridge.db");
  // Replicas on PostgreSQL share the bridge's state in the same database.
  EXPECT_EQ(bridge_state_path(bridge_config(none), "postgresql://u@db.internal/pf?host=/run/pg"),
            "postgresql://u@db.internal/pf?host=/run/pg");
  EXPECT_EQ(bridge_state_path(bridge_config(set), "postgres://h/db"), "/var/lib/pf/state.db");
  // A Config made without parsing has no sections: the accessors give the defaults.
  EXPECT_EQ(bridge_config(Config{}).edit_interval_ms, 500);
}

}  // namespace
}  // namespace pf
