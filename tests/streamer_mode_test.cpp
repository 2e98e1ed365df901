// Streamer mode (src/bridge/streamer_mode.cpp): which models it hides (bridge.streamerMode.hide,
// any case, in the config's order), names masked longest first and only while it is on, the
// setting kept in the state store, and the section's errors. In a channel: chat_bridge_commands_test.
#include "bridge/streamer_mode.h"

#include <gtest/gtest.h>

#include "bridge/bridge_config.h"
#include "core/error.h"

namespace pf {
namespace {

Config config(const std::string& bridge = "") {
  std::string text = R"({"providers": {"p": {"type": "openai", "baseUrl": "http://h", "models": [
      {"id": "gpt-4o"}, {"id": "gpt-4o-Preview"}, {"id": "house-internal-7"}, {"id": "internal"}]}}})";
  if (!bridge.empty()) text = text.substr(0, text.size() - 1) + ", \"bridge\": " + bridge + "}";
  return parse_config(text, "c.json");
}

TEST(StreamerMode, HidesMatchingModelsOnlyWhileOn) {
  Config c = config();
  EXPECT_EQ(hidden_models(c),
            (std::vector<std::string>{"p:gpt-4o-Preview", "p:house-internal-7", "p:internal"}));
  std::unique_ptr<StateStore> state = open_state_store(":memory:");
  StreamerMode mode(*state);
  std::string text = "`p:gpt-4o-Preview` failed, switched to `p:gpt-4o`; also house-internal-7.";
  EXPECT_EQ(mode.mask(c, text), text);
  EXPECT_NE(mode.command(c, "on").find("3 configured models"), std::string::npos);
  EXPECT_EQ(state->setting("streamerMode").value_or(""), "on");
  EXPECT_EQ(mode.mask(c, text),
            "`Hidden Model 1` failed, switched to `p:gpt-4o`; also Hidden Model 2.");
  EXPECT_EQ(mode.mask(c, "p:internal"), "Hidden Model 3");
  EXPECT_NE(mode.command(c, "maybe").find("/streamer-mode on"), std::string::npos);
  mode.command(c, "off");
  EXPECT_EQ(mode.mask(c, text), text);
  // Another process (a replica, a restart) reads the stored setting.
  state->set_setting("streamerMode", "on");
  StreamerMode other(*state);
  EXPECT_TRUE(other.on());
}

TEST(StreamerMode, TheHideListIsConfigurableAndChecked) {
  Config c = config(R"({"streamerMode": {"hide": ["^p:gpt-4o$"]}})");
  EXPECT_EQ(hidden_models(c), (std::vector<std::string>{"p:gpt-4o"}));
  EXPECT_THROW(config(R"({"streamerMode": {"hide": ["(unclosed"]}})"), ConfigError);
  EXPECT_THROW(config(R"({"streamerMode": {"hide": "preview"}})"), ConfigError);
  EXPECT_THROW(config(R"({"streamerMode": {"show": []}})"), ConfigError);
}

}  // namespace
}  // namespace pf
