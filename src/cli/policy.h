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
#include "policy/audit.h"

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
// config, rules and hooks (both may be null) must outlive the answer. audit (may be null, must
// outlive the answer) is told every decision on a side-effecting call.
std::function<boost::asio::awaitable<std::optional<nlohmann::json>>(const ToolCall&)>
terminal_permissions(const ToolRegistry& tools, const Config& config, StateStore* rules,
                     const std::string& root, const HookSet* hooks = nullptr,
                     HookContext hook_context = {}, AuditTrail* audit = nullptr);

// Who sits at the terminal: $USER, else the account's name.
std::string terminal_user();

struct AuditArgs {
  std::string config, db;
  std::string since;  // "90m", "12h", "7d", or a UTC date or time ("2026-12-01", "...T10:00")
  std::string place;  // a channel key (platform:id), an HTTP key's name or "terminal"
  int64_t limit = 200;
  bool json = false;
};

// `pilotfish audit`: the audit trail (policy/audit.h) from the bridge state beside the store,
// oldest first. UsageError for a --since it cannot read.
int run_audit(const AuditArgs& args);

// The milliseconds since the epoch that --since names, counted back from now_ms; nullopt when
// it is none of the forms above.
std::optional<int64_t> parse_since(const std::string& text, int64_t now_ms);

}  // namespace pf::cli
