// Calls between bots (spec §16, inter-agent): the "interAgent" config section, who may call whom
// (deny by default: the caller's canCall and the target's canBeCalledBy must both name the other,
// or "*"), a chain's guards (no bot twice, at most maxDepth calls deep), the ask_agent tool's
// schema and arguments, and what the called bot is told. The bridge runs the call itself
// (bridge_agent_calls.cpp): an ephemeral answer as the target bot, in its workspace, with its
// tools and agents, never with more than the calling channel could do, recorded in the state
// store's agent_calls.
//
//   "interAgent": {"enabled": true, "maxDepth": 3, "defaultTimeout": 60, "maxTimeout": 300,
//                  "allow": {"copilot": {"canCall": ["reviewer"]},
//                            "reviewer": {"canBeCalledBy": ["*"]}}}
//
// Threads: plain values and functions. Including this header registers the section.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/tool_registry.h"
#include "core/config.h"

namespace pf {

inline constexpr const char* kAskAgentTool = "ask_agent";

struct InterAgentAllow {
  std::vector<std::string> can_call, can_be_called_by;  // bot names, or "*"
};

struct InterAgentConfig : ConfigSection {
  bool enabled = false;
  int64_t max_depth = 3;                 // calls in one chain, the first one included
  int64_t default_timeout_seconds = 60;  // a call that gives no timeout
  int64_t max_timeout_seconds = 300;     // the most a call may ask for
  std::map<std::string, InterAgentAllow> allow;  // by bot name
};

// The config's section (its defaults, disabled, when the file has none).
const InterAgentConfig& inter_agent_config(const Config& config);

// One chain of calls: its id (made by its first call) and the bots it went through, the bot of
// the channel's turn first; the next call's depth is visited.size().
struct AgentChain {
  std::string id;
  std::vector<std::string> visited;
};

struct AgentCallRequest {
  std::string target, message, agent;  // agent: "" for the target's default
  int64_t timeout_seconds = 0;          // within 1..maxTimeout
};

// ask_agent's arguments {target, message, agent?, timeout?}: nullopt with *error when the JSON is
// not an object, target or message is missing or empty, or timeout is not a whole number of
// seconds from 1; a timeout over maxTimeout is cut to it, none is defaultTimeout.
std::optional<AgentCallRequest> parse_agent_call(const std::string& arguments,
                                                 const InterAgentConfig& config,
                                                 std::string* error);

// Why the last bot of chain may not call target now: calls between bots are off, either side's
// list does not allow it, target is already in the chain (a cycle), or the call would be deeper
// than maxDepth. Empty when it may.
std::string agent_call_refusal(const InterAgentConfig& config, const AgentChain& chain,
                               const std::string& target);

// The bots of `bots` that caller may call (both sides allowing), in their order.
std::vector<std::string> callable_bots(const InterAgentConfig& config, const std::string& caller,
                                       const std::vector<std::string>& bots);

// The registry entry: the schema, naming the bots that may be called. Its run() only refuses
// (the bridge answers the call before it would run).
ToolEntry ask_agent_tool(const std::vector<std::string>& targets);

// What the called bot is told about the call (joined to its instructions): who asks, on whose
// behalf, how deep the chain is, and that nobody can be asked anything.
std::string agent_call_instructions(const AgentChain& chain, const std::string& target,
                                    const std::string& on_behalf_of, int64_t max_depth);

bool register_inter_agent_config();
inline const bool kInterAgentConfigRegistered = register_inter_agent_config();

}  // namespace pf
