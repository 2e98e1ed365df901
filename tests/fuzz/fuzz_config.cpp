// libFuzzer entry point: the configuration loader on arbitrary text (a config file, and a
// workspace's mcp-config.json, which anyone who can commit to the repository writes). Either
// it loads or it is a ConfigError naming the key; any other exception or a crash is a finding.
// The same text as ask_agent's arguments (the model writes them) against the loaded rules, and as
// a log line: masking secrets never crashes and masking twice changes nothing more.
#include <cstddef>
#include <cstdint>
#include <string>

#include "bridge/bridge_config.h"
#include "bridge/inter_agent.h"
#include "core/config.h"
#include "core/log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    pf::Config config = pf::parse_config(text, "fuzz.json");
    const pf::BridgeConfig& bridge = pf::bridge_config(config);
    for (const auto& channel : bridge.channels) (void)pf::channel_actions(bridge, channel);
    const pf::InterAgentConfig& inter = pf::inter_agent_config(config);
    for (const auto& [bot, allow] : inter.allow)
      (void)pf::agent_call_refusal(inter, pf::AgentChain{"c", {bot}}, "x");
  } catch (const pf::ConfigError&) {
  }
  std::string masked = pf::log::redact_secrets(text);
  if (pf::log::redact_secrets(masked) != masked) __builtin_trap();
  std::string error;
  pf::InterAgentConfig rules;
  auto call = pf::parse_agent_call(text, rules, &error);
  if (call && (call->target.empty() || call->message.empty() || call->timeout_seconds < 1 ||
               call->timeout_seconds > rules.max_timeout_seconds))
    __builtin_trap();
  if (!call && error.empty()) __builtin_trap();
  try {
    (void)pf::parse_mcp_servers(text, "mcp-config.json", "mcpServers");
  } catch (const pf::ConfigError&) {
  }
  std::string why;
  if (!pf::parse_permission_spec(text, &why) && why.empty()) __builtin_trap();  // says why not
  (void)pf::split_model_id(text);
  return 0;
}
