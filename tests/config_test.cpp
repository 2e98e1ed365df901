// The configuration loader: a valid file, where it is looked for, and one clear error per kind
// of mistake, each naming the key.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <nlohmann/json.hpp>

#include "core/config.h"
#include "llm/model_registry.h"
#include "test_util.h"

namespace pf {
namespace {

const char* kValid = R"({
  "providers": {
    "openai": {"type": "openai", "baseUrl": "https://api.openai.com/v1", "apiKeyEnv": "OPENAI_API_KEY",
               "models": [{"id": "gpt-4o-mini", "contextWindow": 128000}, {"id": "gpt-4o"},
                          {"id": "text-embedding-3-small"}]},
    "local": {"type": "openai", "baseUrl": "http://127.0.0.1:11434/v1", "models": [{"id": "llama3.1:8b"}]},
    "anthropic": {"type": "anthropic", "baseUrl": "https://api.anthropic.com", "bearerTokenEnv": "ANTHROPIC_TOKEN",
                  "models": [{"id": "claude-sonnet-4-5"}, {"id": "claude-haiku-4-5"}]}
  },
  "defaults": {"chatModel": "openai:gpt-4o-mini", "fallbackModels": ["anthropic:claude-haiku-4-5"],
               "embeddingModel": "openai:text-embedding-3-small"}
})";

TEST(Config, ParsesProvidersModelsAndDefaults) {
  Config c = parse_config(kValid, "test.json");
  ASSERT_EQ(c.providers.size(), 3u);
  EXPECT_EQ(c.providers[0].name, "openai");  // file order
  EXPECT_EQ(c.providers[2].name, "anthropic");
  const ProviderConfig* openai = c.provider("openai");
  ASSERT_NE(openai, nullptr);
  EXPECT_EQ(openai->api_key_env, "OPENAI_API_KEY");
  ASSERT_EQ(openai->models.size(), 3u);
  EXPECT_EQ(openai->models[0].context_window, 128000);
  EXPECT_FALSE(openai->models[1].context_window.has_value());
  EXPECT_EQ(c.provider("anthropic")->bearer_token_env, "ANTHROPIC_TOKEN");
  EXPECT_EQ(c.defaults.chat_model, "openai:gpt-4o-mini");
  EXPECT_EQ(c.defaults.fallback_models, std::vector<std::string>{"anthropic:claude-haiku-4-5"});
  EXPECT_EQ(c.defaults.embedding_model, "openai:text-embedding-3-small");
}

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

TEST(Config, ServerSection) {
  Config c = parse_config(R"({"server": {"listen": "0.0.0.0:9000", "repository": "/srv/r",
      "apiKeys": [{"name": "ops", "hash": "sha256:)" +
                              std::string(64, 'b') + R"(", "role": "admin"}],
      "reindexSchedule": "", "limits": {"maxMessageChars": 4000}, "sendFinishReason": false}})",
                          "server.json");
  EXPECT_EQ(c.server.listen, "0.0.0.0:9000");
  EXPECT_EQ(c.server.repository, "/srv/r");
  ASSERT_EQ(c.server.api_keys.size(), 1u);
  EXPECT_EQ(c.server.api_keys[0].sha256_hex, std::string(64, 'b'));
  EXPECT_EQ(c.server.reindex_schedule, "");
  EXPECT_EQ(c.server.max_message_chars, 4000);
  EXPECT_EQ(c.server.max_history_messages, 50) << "defaults stay for keys not given";
  EXPECT_FALSE(c.server.send_finish_reason);
  Config d = parse_config("{}", "empty.json");
  EXPECT_EQ(d.server.listen, "127.0.0.1:8080");
  EXPECT_EQ(d.server.reindex_schedule, "0 3 * * 0");
  EXPECT_TRUE(d.server.send_finish_reason);
}



TEST(Config, ErrorsNameTheKeyAndWhatIsWrong) {
  expect_error("{", "not valid JSON");
  expect_error("[]", "(top level): expected an object, got an array");
  expect_error(R"({"provider": {}})",
               "provider: unknown key (expected one of: actions, defaults, logging, mcp, permissions, providers, server)");
  expect_error(R"({"server": {"listen": "8080"}})", "server.listen: expected host:port");
  expect_error(R"({"logging": {"level": "loud"}})", "logging.level: expected debug, info, warn, error or off");
  expect_error(R"({"logging": {"maxFiles": -1}})", "logging.maxFiles: expected a whole number from 0 to 100");
  expect_error(R"({"logging": {"maxSizeMb": 0}})", "logging.maxSizeMb: expected a whole number from 1 to 10240");
  expect_error(R"({"logging": {"file": ""}})", "logging.file: empty");
  expect_error(R"({"logging": {"rotate": true}})", "logging.rotate: unknown key");
  expect_error(R"({"server": {"apiKeys": [{"name": "a", "key": "plain", "role": "admin"}]}})",
               "server.apiKeys[0].key: keys do not belong in the config file");
  expect_error(R"({"server": {"apiKeys": [{"name": "a", "hash": "md5:00", "role": "admin"}]}})",
               "server.apiKeys[0].hash: expected \"sha256:\"");
  expect_error(R"({"server": {"apiKeys": [{"name": "a", "hash": "sha256:)" + std::string(64, 'a') +
                   R"(", "role": "root"}]}})",
               "server.apiKeys[0].role: expected \"user\" or \"admin\"");
  expect_error(R"({"server": {"limits": {"maxBodyBytes": 10}}})",
               "server.limits.maxBodyBytes: expected a whole number from 1024");
  expect_error(R"({"server": {"limits": {"maxHistory": 10}}})",
               "server.limits.maxHistory: unknown key");
  expect_error(R"({"server": {"sendFinishReason": "yes"}})",
               "server.sendFinishReason: expected true or false");
  expect_error(R"({"server": {"webPage": 1}})", "server.webPage: expected true or false");
  expect_error(R"({"providers": {"o": {"type": "openai", "baseUrl": "http://h/v1", "models": [{"id": "m", "temperature": 3}]}}})",
               "providers.o.models[0].temperature: expected a number from 0 to 2");
  expect_error(R"({"providers": {"o": {"type": "openai", "baseUrl": "http://h/v1", "models": [{"id": "m", "topP": 0}]}}})",
               "providers.o.models[0].topP: expected a number above 0, at most 1");
  expect_error(R"({"providers": {"o": {"type": "openai", "baseUrl": "http://h/v1", "models": [{"id": "m", "topK": 5}]}}})",
               "providers.o.models[0].topK: OpenAI's API has no top_k");
  expect_error(R"({"providers": {"a": {"type": "anthropic", "baseUrl": "http://h", "models": [{"id": "m", "seed": 1}]}}})",
               "providers.a.models[0].seed: Anthropic's API has no seed");
  expect_error(R"({"server": {"limits": {"answersInSetup": -1}}})",
               "server.limits.answersInSetup: expected a whole number from 0");
  expect_error(R"({"providers": []})", "providers: expected an object, got an array");
  expect_error(R"({"providers": {"a:b": {}}})", "providers.a:b: a provider name may not");
  expect_error(R"({"providers": {"my llm": {}}})", "may not be empty or contain ':' or whitespace");
  expect_error(R"({"providers": {"x": {"baseUrl": "http://h"}}})", "providers.x.type: missing");
  expect_error(R"({"providers": {"x": {"type": "gemini", "baseUrl": "http://h"}}})",
               "providers.x.type: expected \"openai\", \"azure\", \"anthropic\" or \"local\", got \"gemini\"");
  expect_error(R"({"providers": {"x": {"type": "openai", "baseUrl": 5}}})",
               "providers.x.baseUrl: expected a string, got a number");
  expect_error(R"({"providers": {"x": {"type": "openai", "baseUrl": "ftp://h"}}})",
               "providers.x.baseUrl: expected an http:// or https:// URL");
  expect_error(
      R"({"providers": {"x": {"type": "openai", "baseUrl": "http://h", "apiKey": "sk-123"}}})",
      "providers.x.apiKey: secrets do not belong in the config file");
  expect_error(
      R"({"providers": {"x": {"type": "openai", "baseUrl": "http://h", "apiKeyEnv": "A", "bearerTokenEnv": "B"}}})",
      "providers.x: give apiKeyEnv or bearerTokenEnv, not both");
  expect_error(
      R"({"providers": {"x": {"type": "openai", "baseUrl": "http://h", "models": [{"id": "m", "contextWindow": -1}]}}})",
      "providers.x.models[0].contextWindow: expected a positive whole number");
  expect_error(
      R"({"providers": {"x": {"type": "openai", "baseUrl": "http://h", "models": [{"name": "m"}]}}})",
      "providers.x.models[0].name: unknown key");
  expect_error(R"({"defaults": {"chatModel": "gpt-4o"}})",
               "defaults.chatModel: expected \"provider:model\"");
  expect_error(R"({"defaults": {"chatModel": "nope:gpt-4o"}})",
               "defaults.chatModel: unknown provider \"nope\"");
  expect_error(R"({"defaults": {"fallbackModels": "a:b"}})",
               "defaults.fallbackModels: expected an array");
}

// Issue 23: permissions.writeInsideWorkspace is "allow" (the default) or "ask"; anything else,
// and the read kind that no tool has, are errors that say what to write instead.
TEST(Config, PermissionsWriteInsideWorkspaceAndNoReadKind) {
  EXPECT_EQ(parse_config("{}", "t.json").permissions.write_inside_workspace, "allow");
  EXPECT_EQ(parse_config(R"({"permissions": {"writeInsideWorkspace": "ask"}})", "t.json")
                .permissions.write_inside_workspace, "ask");
  expect_error(R"({"permissions": {"writeInsideWorkspace": "never"}})",
               "permissions.writeInsideWorkspace: expected \"allow\" or \"ask\", got \"never\"");
  expect_error(R"({"permissions": {"writeInsideWorkspace": true}})", "permissions.writeInsideWorkspace: expected a string");
  expect_error(R"j({"permissions": {"allow": ["read(/srv)"]}})j", "permissions.allow[0]: there is no read permission");
  expect_error(R"({"permissions": {"allowPaths": ["/srv", "srv"]}})", "permissions.allowPaths[1]: expected an absolute path");
  expect_error(R"({"permissions": {"readPaths": ["docs"]}})", "permissions.readPaths[0]: expected an absolute path");
  Config c = parse_config(R"({"permissions": {"readPaths": ["/srv/docs/"]}})", "t.json");
  EXPECT_EQ(c.permissions.read_paths, std::vector<std::string>{"/srv/docs"});
}

TEST(Config, SearchOrderExplicitThenEnvironmentThenDefaultPlaces) {
  test::TempDir home, dir;
  test::write_file(home / ".config/pilotfish/config.json",
                   R"({"providers": {"home": {"type": "openai", "baseUrl": "http://h"}}})");
  test::write_file(dir / "env.json",
                   R"({"providers": {"env": {"type": "openai", "baseUrl": "http://h"}}})");
  test::write_file(dir / "explicit.json",
                   R"({"providers": {"explicit": {"type": "openai", "baseUrl": "http://h"}}})");
  std::string old_home = getenv("HOME") ? getenv("HOME") : "";
  setenv("HOME", home.path().c_str(), 1);
  unsetenv("XDG_CONFIG_HOME");
  unsetenv("PILOTFISH_CONFIG");
  EXPECT_NE(load_config("").provider("home"), nullptr);
  setenv("PILOTFISH_CONFIG", (dir / "env.json").c_str(), 1);
  EXPECT_NE(load_config("").provider("env"), nullptr);
  EXPECT_NE(load_config(dir / "explicit.json").provider("explicit"), nullptr);
  EXPECT_THROW(load_config(dir / "missing.json"), ConfigError);
  unsetenv("PILOTFISH_CONFIG");
  setenv("HOME", (dir / "nowhere").c_str(), 1);
  Config none = load_config("");  // no file anywhere: the built-in default
  EXPECT_TRUE(none.providers.empty());
  EXPECT_TRUE(none.source.empty());
  setenv("HOME", old_home.c_str(), 1);
}

std::vector<ModelRef> models() {
  return configured_models(parse_config(kValid, "t.json"));
}

std::string resolved(std::string_view input) {
  auto r = resolve_model(models(), input);
  return r.model ? r.model->id() : "error: " + r.error;
}

TEST(ModelResolution, ExactSubstringTokensAndProviderScope) {
  EXPECT_EQ(resolved("openai:gpt-4o"), "openai:gpt-4o");
  EXPECT_EQ(resolved("gpt-4o"), "openai:gpt-4o");            // exact bare id beats substring
  EXPECT_EQ(resolved("GPT-4O-MINI"), "openai:gpt-4o-mini");  // case-insensitive
  EXPECT_EQ(resolved("mini"), "openai:gpt-4o-mini");
  EXPECT_EQ(resolved("sonnet"), "anthropic:claude-sonnet-4-5");
  EXPECT_EQ(resolved("haiku 4.5"), "anthropic:claude-haiku-4-5");  // all tokens
  EXPECT_EQ(resolved("local:llama"), "local:llama3.1:8b");
  EXPECT_EQ(resolved("anthropic:gpt"), "error: no configured model matches \"anthropic:gpt\"");
  EXPECT_EQ(resolved("azure:gpt"), "error: no configured provider named \"azure\"");
  EXPECT_EQ(resolved("  "), "error: no model named");
  // A token need only be contained; the provider's name is part of what is matched.
  EXPECT_EQ(resolved("llama 3 8b"), "local:llama3.1:8b");
  EXPECT_EQ(resolved("LOCAL"), "local:llama3.1:8b");
  EXPECT_EQ(resolved("anthro"), "anthropic:claude-haiku-4-5");
}

TEST(ModelResolution, TiesPreferIdsEndingWithTheInputThenShorterOnesAndListTheRest) {
  auto r = resolve_model(models(), "4o");
  ASSERT_TRUE(r.model);
  EXPECT_EQ(r.model->id(), "openai:gpt-4o");
  ASSERT_EQ(r.alternatives.size(), 1u);
  EXPECT_EQ(r.alternatives[0].id(), "openai:gpt-4o-mini");
  auto c = resolve_model(models(), "claude");
  EXPECT_EQ(c.model->id(), "anthropic:claude-haiku-4-5");  // the shorter id
  EXPECT_EQ(c.alternatives.size(), 1u);
  // Equal on both counts: configuration order.
  std::vector<ModelRef> twins = {{"b", "m-one"}, {"a", "m-two"}};
  EXPECT_EQ(resolve_model(twins, "m").model->id(), "b:m-one");
}

}  // namespace
}  // namespace pf

namespace pf {
namespace {

// A component's section: its key becomes known once registered, its parser sees null when the
// file has none, and its errors are the loader's.
struct TestSection : ConfigSection {
  int64_t size = 7;
  bool absent = false;
};
std::shared_ptr<const ConfigSection> parse_test_section(const nlohmann::ordered_json& v,
                                                        const Config& config, const std::string& source) {
  auto out = std::make_shared<TestSection>();
  out->absent = v.is_null();
  if (v.is_number_integer()) out->size = v.get<int64_t>() + static_cast<int64_t>(config.providers.size());
  else if (!v.is_null()) throw ConfigError("config " + source + ": testSection: expected a number");
  return out;
}

TEST(Config, ComponentSectionsAreParsedByTheirRegisteredParser) {
  expect_error(R"({"testSection": 1})", "testSection: unknown key");
  register_config_section("testSection", parse_test_section);
  Config none = parse_config("{}", "t.json");
  ASSERT_NE(none.section<TestSection>("testSection"), nullptr);
  EXPECT_TRUE(none.section<TestSection>("testSection")->absent);
  EXPECT_EQ(none.section<TestSection>("testSection")->size, 7);
  Config set = parse_config(std::string("{") + R"("testSection": 40, )" + std::string(kValid).substr(1), "t.json");
  EXPECT_EQ(set.section<TestSection>("testSection")->size, 43);  // after the 3 providers
  struct Other : ConfigSection {};
  EXPECT_EQ(set.section<Other>("testSection"), nullptr);  // another type: none
  expect_error(R"({"testSection": "x"})", "testSection: expected a number");
  expect_error(R"({"nope": 1})", "nope: unknown key (expected one of: actions, defaults, logging, mcp, permissions, providers, server, testSection)");
}

TEST(Config, McpServersAreValidated) {
  Config ok = parse_config(R"j({"mcp": {"servers": {
      "github": {"command": "npx", "args": ["-y", "server"], "env": {"TOKEN": "${GH}"}, "timeoutSeconds": 5},
      "remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${K}"}}}}})j", "t.json");
  ASSERT_EQ(ok.mcp_servers.size(), 2u);
  EXPECT_EQ(ok.mcp_servers[0].env[0].second, "${GH}");  // expanded when the server starts
  EXPECT_EQ(ok.mcp_servers[0].timeout_seconds, 5);
  EXPECT_EQ(ok.mcp_servers[1].headers[0].first, "Authorization");
  const char* bad[] = {
      R"j({"mcp": {"servers": {"a__b": {"command": "x"}}}})j",
      R"j({"mcp": {"servers": {"a": {"command": "x", "url": "https://y"}}}})j",
      R"j({"mcp": {"servers": {"a": {}}}})j",
      R"j({"mcp": {"servers": {"a": {"url": "ftp://y"}}}})j",
      R"j({"mcp": {"servers": {"a": {"command": "x", "env": {"K": 1}}}}})j",
  };
  for (const char* text : bad) EXPECT_THROW(parse_config(text, "t.json"), ConfigError) << text;
}

// Found writing fuzz_config: a long server.corsOrigins entry overflowed the stack in std::regex
// (a segfault at about 60,000 characters). It is a clear error now, and origins still check.
TEST(Config, ALongCorsOriginIsAnErrorNotACrash) {
  auto origins = [](const std::vector<std::string>& list) {
    nlohmann::json cfg = {{"server", {{"corsOrigins", list}}}};
    return parse_config(cfg.dump(), "t.json").server.cors_origins.size();
  };
  EXPECT_THROW(origins({"http://" + std::string(200000, 'a') + "/"}), ConfigError);
  EXPECT_EQ(origins({"http://" + std::string(200000, 'a')}), 1u);  // long, but an origin
  EXPECT_EQ(origins({"http://[::1]:8080", "https://a-b.example.com:443", "http://x"}), 3u);
  for (const char* bad : {"https://", "http://a:", "http://a:123456", "http://[::1", "http://[]",
                          "http://[::1]x", "http://a_b", "http://a:8a", "HTTP://a"})
    EXPECT_THROW(origins({bad}), ConfigError) << bad;
}


TEST(Config, ANumberTooLargeIsAConfigError) {
  for (const char* text : {R"({"server": {"limits": 50e4555555}})", "[1e999]", "-1e400"}) {
    EXPECT_THROW(parse_config(text, "t.json"), ConfigError) << text;
    EXPECT_THROW(parse_mcp_servers(text, "mcp-config.json", "mcpServers"), ConfigError) << text;
  }
}

}  // namespace
}  // namespace pf
