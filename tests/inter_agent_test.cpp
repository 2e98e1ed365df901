// The rules of calls between bots (src/bridge/inter_agent.cpp): the interAgent section and its
// errors, ask_agent's arguments (timeout defaulted and capped), deny by default with both sides'
// lists, "*", cycles and maxDepth, and what the called bot is told. The calls themselves run in
// bridge_agent_calls_test.cpp.
#include "bridge/inter_agent.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace pf {
namespace {

InterAgentConfig parsed(const std::string& section) {
  Config c = parse_config("{\"interAgent\": " + section + "}", "c.json");
  return inter_agent_config(c);
}

TEST(InterAgent, TheSectionAndItsErrors) {
  InterAgentConfig off = inter_agent_config(parse_config("{}", "c.json"));
  EXPECT_FALSE(off.enabled);
  EXPECT_EQ(off.max_depth, 3);
  EXPECT_EQ(off.default_timeout_seconds, 60);
  EXPECT_EQ(off.max_timeout_seconds, 300);
  InterAgentConfig c = parsed(R"({"enabled": true, "maxDepth": 2, "defaultTimeout": 30,
      "maxTimeout": 90, "allow": {"a": {"canCall": ["b", "*"]}, "b": {"canBeCalledBy": ["a"]}}})");
  EXPECT_TRUE(c.enabled);
  EXPECT_EQ(c.max_depth, 2);
  EXPECT_EQ(c.default_timeout_seconds, 30);
  EXPECT_EQ(c.max_timeout_seconds, 90);
  EXPECT_EQ(c.allow.at("a").can_call, (std::vector<std::string>{"b", "*"}));
  EXPECT_EQ(c.allow.at("b").can_be_called_by, (std::vector<std::string>{"a"}));
  struct Bad {
    std::string section, why;
  };
  for (const Bad& b : std::vector<Bad>{{"[]", "expected an object"},
                                       {R"({"enabled": "yes"})", "interAgent.enabled"},
                                       {R"({"maxDepth": 0})", "interAgent.maxDepth"},
                                       {R"({"defaultTimeout": 400})", "interAgent.defaultTimeout"},
                                       {R"({"allow": {"a": []}})", "interAgent.allow.a"},
                                       {R"({"allow": {"a": {"canCall": "b"}}})", "canCall"},
                                       {R"({"allow": {"a": {"canCall": [""]}}})", "canCall"},
                                       {R"({"allow": {"a": {"calls": ["b"]}}})", "unknown key"},
                                       {R"({"depth": 2})", "unknown key"}}) {
    try {
      parsed(b.section);
      ADD_FAILURE() << b.section << " was accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(b.why), std::string::npos) << b.section << ": " << e.what();
    }
  }
}

TEST(InterAgent, ArgumentsAndTimeouts) {
  InterAgentConfig c = parsed(R"({"enabled": true, "defaultTimeout": 20, "maxTimeout": 100})");
  std::string error;
  auto r = parse_agent_call(R"({"target": "@helper", "message": " hi ", "agent": "reviewer"})", c, &error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->target, "helper");
  EXPECT_EQ(r->message, "hi");
  EXPECT_EQ(r->agent, "reviewer");
  EXPECT_EQ(r->timeout_seconds, 20);
  EXPECT_EQ(parse_agent_call(R"({"target": "h", "message": "m", "timeout": 500})", c, &error)->timeout_seconds, 100);
  EXPECT_EQ(parse_agent_call(R"({"target": "h", "message": "m", "timeout": 5})", c, &error)->timeout_seconds, 5);
  for (const char* bad : {"nope", "{}", R"({"target": "h"})", R"({"message": "m"})",
                          R"({"target": "h", "message": "m", "timeout": 0})",
                          R"({"target": "h", "message": "m", "timeout": "soon"})"}) {
    error.clear();
    EXPECT_FALSE(parse_agent_call(bad, c, &error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

TEST(InterAgent, DenyByDefaultBothSidesCyclesAndDepth) {
  AgentChain from_a{"c1", {"a"}};
  EXPECT_NE(agent_call_refusal(InterAgentConfig{}, from_a, "b").find("off"), std::string::npos);
  InterAgentConfig c = parsed(R"({"enabled": true, "maxDepth": 2, "allow": {
      "a": {"canCall": ["b", "c"]}, "b": {"canCall": ["*"], "canBeCalledBy": ["*"]},
      "c": {"canBeCalledBy": ["b"]}, "d": {"canBeCalledBy": ["*"]}}})");
  EXPECT_EQ(agent_call_refusal(c, from_a, "b"), "");
  // c does not list a; a does not list d; e has no entry at all.
  EXPECT_NE(agent_call_refusal(c, from_a, "c").find("a may not call c"), std::string::npos);
  EXPECT_NE(agent_call_refusal(c, from_a, "d").find("a may not call d"), std::string::npos);
  EXPECT_NE(agent_call_refusal(c, AgentChain{"c1", {"b"}}, "e").find("may not call"), std::string::npos);
  AgentChain ab{"c1", {"a", "b"}};
  EXPECT_EQ(agent_call_refusal(c, ab, "c"), "");  // call 2 of 2
  EXPECT_NE(agent_call_refusal(c, ab, "a").find("a cycle: a \u2192 b \u2192 a"), std::string::npos);
  AgentChain abc{"c1", {"a", "b", "c"}};
  EXPECT_NE(agent_call_refusal(c, abc, "d").find("too deep"), std::string::npos);
  EXPECT_EQ(callable_bots(c, "a", {"a", "b", "c", "d"}), (std::vector<std::string>{"b"}));
  EXPECT_EQ(callable_bots(c, "b", {"a", "b", "c", "d"}), (std::vector<std::string>{"c", "d"}));
  EXPECT_TRUE(callable_bots(InterAgentConfig{}, "a", {"b"}).empty());
}

TEST(InterAgent, TheToolAndTheCalleesInstructions) {
  ToolEntry t = ask_agent_tool({"helper", "scribe"});
  EXPECT_EQ(t.spec.name, "ask_agent");
  EXPECT_NE(t.spec.description.find("helper, scribe"), std::string::npos);
  EXPECT_EQ(t.spec.parameters["properties"]["target"]["enum"], (nlohmann::json{"helper", "scribe"}));
  EXPECT_TRUE(t.run("{}", nullptr).contains("error"));
  std::string told = agent_call_instructions(AgentChain{"c", {"copilot"}}, "helper", "alice", 3);
  EXPECT_NE(told.find("You are the bot helper, called by the bot copilot on behalf of @alice (call 1 of at most 3"),
            std::string::npos) << told;
  EXPECT_NE(told.find("Nobody can be asked"), std::string::npos);
}

}  // namespace
}  // namespace pf
