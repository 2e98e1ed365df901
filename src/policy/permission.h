// The permission engine (spec §8, with the upstream precedence bug fixed): one decision for each
// side-effecting tool call, in this order, the first match deciding:
//   1 hard denies (every mode)          2 chat tools (send_file, show_file_in_chat, no_reply,
//   3 yolo (autopilot) approves            schedule) and tools of no permission kind (the
//                                          repository's read tools) approve
//   (before 3: an admin tool asks, on an admin bot only, whatever autopilot, rules or stored
//    decisions say; elsewhere it is denied)
//   4 config: deny rules, then allow rules; an admin bot's shell allowlist; reads and writes
//     inside the workspace (writes only under writeInsideWorkspace "allow", the default) or,
//     outside it, under allowPaths; URLs whose host is in allowUrls
//   5 stored rules: channel > bot:<name> > global; within a scope an exact pattern beats "*",
//     then the newest
//   6 ask a person (or, where nobody can be asked, refuse as user-not-available)
// A shell command is decided on its parse (shell_command.h): every command must be allowed, any
// deny rejects, a wrapped command or one that did not parse is never approved by a rule.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/tool_registry.h"
#include "core/config.h"

namespace pf {

struct PermissionRequest {
  std::string tool;  // the registry name ("run_command", "github__create_issue")
  ToolPermission kind = ToolPermission::kNone;
  std::string command;     // kShell: the command line; kAdmin: what the call would do
  std::string path;        // kWrite: absolute and resolved (symlinks followed)
  std::string url;         // kUrl
  std::string mcp_server;  // kMcp
  std::string mcp_tool;    // kMcp: the server's own tool name
  std::string intent;      // the model's stated reason, shown in a prompt; may be empty
};

// A remembered decision (the state store's permission_rules).
struct StoredRule {
  int64_t id = 0;     // larger is newer
  std::string scope;  // a channel id, "bot:<name>" or "global"
  std::string tool;   // a tool name, or "mcp:<server>"
  std::string pattern = "*";  // "*" or an exact command word
  std::string action;         // "allow" or "deny"
};

// Where remembered decisions live (the bridge's StateStore implements it). Called from the
// thread that decides; an implementation may throw pf::Error, which the engine treats as "no
// stored rule" (check 5 falls through to the prompt).
class RuleStore {
 public:
  virtual ~RuleStore() = default;
  // The rules of these scopes for this tool, in any order.
  virtual std::vector<StoredRule> permission_rules(const std::string& tool,
                                                   const std::vector<std::string>& scopes) = 0;
  // Stores a rule, replacing one with the same scope, tool and pattern; returns its id.
  virtual int64_t add_permission_rule(const StoredRule& rule) = 0;
  // The rules of a scope (every scope when empty), oldest first.
  virtual std::vector<StoredRule> list_permission_rules(const std::string& scope) = 0;
  // Removes a scope's rules; tool non-empty: only that tool's (and pattern non-empty: only that
  // pattern's). Returns how many went.
  virtual int clear_permission_rules(const std::string& scope, const std::string& tool,
                                     const std::string& pattern) = 0;
};

struct PolicyContext {
  std::string channel;  // channel id; empty outside the bridge
  std::string bot;      // bot name; empty outside the bridge
  bool admin = false;   // the bot is an admin bot (check 4b)
  bool yolo = false;    // autopilot mode, from the config or /yolo
  std::vector<std::string> workspace_roots;  // absolute; reads and writes inside are approved
  const PermissionsConfig* config = nullptr;  // null: no config rules; must outlive the call
  RuleStore* rules = nullptr;                 // null: no stored rules; must outlive the call
};

struct Verdict {
  enum class Action { kApprove, kDeny, kAsk } action = Action::kAsk;
  std::string check;   // which check decided: "hard-deny", "chat-tool", "no-permission",
                       // "yolo", "config-deny",
                       // "config-allow", "admin-shell", "workspace", "allow-paths",
                       // "allow-urls", "stored-rule", "prompt"
  std::string detail;  // the rule or reason, for people ("permissions.deny[0] shell(rm) matched
                       // rm", "rule 12 (channel abc: run_command rm allow)")
  // What /always stores: the tool key ("run_command", "mcp:<server>") and one pattern per
  // command word (shell) or "*".
  std::string remember_tool;
  std::vector<std::string> remember_patterns;
};

// The request for one call of a registry entry (its describe() reads the arguments); a tool
// named "server__tool" that is not in the registry is taken as an MCP call. nullopt, with
// *error, when the arguments are unusable or the tool is unknown.
std::optional<PermissionRequest> permission_request(const ToolRegistry& tools,
                                                    const std::string& tool,
                                                    const std::string& arguments,
                                                    std::string* error);

// Decides one request. Thread-safe as far as ctx.rules is; never throws.
Verdict decide_permission(const PermissionRequest& request, const PolicyContext& ctx);

// The scopes of stored rules for a context, most specific first: channel, bot:<name>, global.
std::vector<std::string> rule_scopes(const PolicyContext& ctx);

// The chat tools, approved at check 2.
bool is_chat_tool(const std::string& tool);

// The host of an http(s) URL, lower-cased; empty when it is not one.
std::string url_host(const std::string& url);

// "approve", "deny" or "ask".
const char* action_name(Verdict::Action action);

}  // namespace pf
