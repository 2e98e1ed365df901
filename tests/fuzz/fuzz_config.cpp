// libFuzzer entry point: the configuration loader on arbitrary text (a config file, and a
// workspace's mcp-config.json, which anyone who can commit to the repository writes). Either
// it loads or it is a ConfigError naming the key; any other exception or a crash is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "bridge/bridge_config.h"
#include "core/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    pf::Config config = pf::parse_config(text, "fuzz.json");
    const pf::BridgeConfig& bridge = pf::bridge_config(config);
    for (const auto& channel : bridge.channels) (void)pf::channel_actions(bridge, channel);
  } catch (const pf::ConfigError&) {
  }
  try {
    (void)pf::parse_mcp_servers(text, "mcp-config.json", "mcpServers");
  } catch (const pf::ConfigError&) {
  }
  std::string why;
  if (!pf::parse_permission_spec(text, &why) && why.empty()) __builtin_trap();  // says why not
  (void)pf::split_model_id(text);
  return 0;
}
