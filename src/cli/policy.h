// The command line's side of the permission engine (policy.cpp): `pilotfish policy explain`, and
// the y / n / always prompt `pilotfish ask` shows on its terminal before a side-effecting call.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "agent/hooks.h"
#include "agent/tool_registry.h"
#include "core/config.h"
#include "net/awaitable.h"

namespace pf {
class StateStore;
}

namespace pf::cli {

struct PolicyArgs {
  std::string config, db;
  std::string bot, channel;  // channel: an id, or platform:id
  std::string tool, args;    // args: the call's JSON arguments
  std::string workspace;     // default: the channel's working directory
  bool json = false;
};

int run_policy_explain(const PolicyArgs& args);

// The before_tool hook of `pilotfish ask`: first the preToolUse hooks (agent/hooks.h: a deny
// refuses, an ask is a y/n question on the terminal that is never remembered), then the engine
// decides each call of tools in the terminal's own rule scope ("cli") and asks on the terminal
// when it says ask (denied when stdin is not one). ask_user's question is asked there too (one
// line is the answer; bridge.askUserTimeoutSeconds without one is "did not reply"). tools,
// config, rules and hooks (both may be null) must outlive the answer.
std::function<boost::asio::awaitable<std::optional<nlohmann::json>>(const ToolCall&)>
terminal_permissions(const ToolRegistry& tools, const Config& config, StateStore* rules,
                     const std::string& root, const HookSet* hooks = nullptr,
                     HookContext hook_context = {});

}  // namespace pf::cli
