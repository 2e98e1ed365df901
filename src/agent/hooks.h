// Hooks: commands an operator runs at points of an answer, in the Copilot CLI's `hooks.json`
// format (version 1): per event a list of {type: "command", bash, cwd, timeoutSec (30), env}.
// The event goes to the command as JSON on standard input; a preToolUse hook answers on standard
// output with {"permissionDecision": "allow" | "deny" | "ask", "permissionDecisionReason"}.
// Across several hooks deny beats ask beats allow, and a hook that fails (a non-zero exit, a
// timeout, an answer that is not JSON) denies, saying which and why. Other events' answers are
// not read.
//
// Sources, their lists concatenated in this order: the config's "hooks" section, then
// ~/.config/pilotfish/hooks.json, then the workspace's .github/hooks/*.json, only when the config
// sets hooks.allowWorkspaceHooks. Operator hooks run as pilotfish runs (its environment, plus
// their env); workspace hooks run in run_command's sandbox (sandbox.h), the workspace their only
// writable place.
//
// Threads: parsing is pure; running blocks (call it on a worker) and is safe from several
// threads at once. Errors: parsing throws pf::Error; running never throws.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agent/custom_agents.h"
#include "agent/sandbox.h"
#include "core/config.h"

namespace pf {

enum class HookEvent {
  kPreToolUse,
  kPostToolUse,
  kUserPromptSubmitted,
  kSessionStart,
  kSessionEnd,
  kErrorOccurred,
};
inline constexpr size_t kHookEvents = 6;
const char* hook_event_name(HookEvent event);  // "preToolUse", as hooks.json names it

struct HookCommand {
  std::string bash;         // the command line, run by bash -c
  std::string cwd;          // relative to the workspace (empty: the workspace itself)
  int64_t timeout_sec = 30;
  std::vector<std::pair<std::string, std::string>> env;
  std::string source;       // the file it came from ("config" for the config's section)
  bool sandboxed = false;   // a workspace hook
};

struct HookSet {
  std::array<std::vector<HookCommand>, kHookEvents> commands;  // by HookEvent
  std::vector<DefinitionProblem> problems;                    // files that did not load
  const std::vector<HookCommand>& of(HookEvent e) const { return commands[static_cast<size_t>(e)]; }
  size_t size() const;
  // Appends other's commands after this one's.
  void append(HookSet other);
};

// The config's "hooks" section: a hooks.json document plus allowWorkspaceHooks.
struct HooksConfig : ConfigSection {
  HookSet hooks;                      // source "config"
  bool allow_workspace_hooks = false;
};
const HooksConfig& hooks_config(const Config& config);  // its defaults when absent

// Reads one hooks.json document. source names it in errors and in each command; sandboxed marks
// a workspace's. Throws pf::Error for a version other than 1, an unknown event, a command
// without bash, a type other than "command", an absolute or ".." cwd, a timeoutSec outside
// 1..600 or an env that is not strings.
HookSet parse_hooks(const nlohmann::json& document, const std::string& source, bool sandboxed);
HookSet parse_hooks_json(std::string_view text, const std::string& source, bool sandboxed);

// Every hook for a workspace: the config's, the user's file, and (when allowed) the
// workspace's files; files that do not load become problems. user_dir: the user's config
// folder (empty: user_config_dir()).
HookSet load_hooks(const Config& config, const std::string& workspace,
                   const std::string& user_dir = "");

// What the preToolUse hooks decided for one call.
struct HookDecision {
  enum class Action { kNone, kAllow, kAsk, kDeny } action = Action::kNone;
  std::string reason;  // the deciding hook's reason, or why a hook failed
};

// The outcome of one hook command.
struct HookRun {
  bool ok = false;     // exited 0 within its time
  std::string output;  // standard output (at most 1 MiB)
  std::string error;   // why it failed: the exit status, the timeout, its standard error
};

// How hooks run: where, and the sandbox of the workspace's hooks (its workspace and own paths).
struct HookContext {
  std::string workspace;
  SandboxOptions sandbox;  // workspace, own paths, network as run_command has them
};

// Runs one hook with the event on its standard input. Blocking; never throws.
HookRun run_hook(const HookCommand& hook, const nlohmann::json& event, const HookContext& context);

// Runs every preToolUse hook for a call (arguments: the model's JSON text) and combines their
// answers: deny over ask over allow; a failed hook denies, its reason naming the hook.
HookDecision run_pre_tool_hooks(const HookSet& hooks, const std::string& tool,
                                const std::string& arguments, const HookContext& context);

// Runs every hook of another event with the payload (timestamp and cwd added); their answers
// are not read, failures are logged.
void run_event_hooks(const HookSet& hooks, HookEvent event, nlohmann::json payload,
                     const HookContext& context);

// postToolUse's payload for a call and its result (the tool's JSON text): toolName, toolArgs
// and toolResult {resultType: "success" | "failure", textResultForLlm}.
nlohmann::json post_tool_payload(const std::string& tool, const std::string& arguments,
                                 const std::string& result);

// Combines one preToolUse answer (a hook's standard output) into decision. Pure: fuzzed.
void read_pre_tool_answer(const std::string& output, const std::string& hook_name,
                          HookDecision& decision);

// Registers "hooks" with the config loader; runs once per program.
bool register_hooks_config();
inline const bool kHooksConfigRegistered = register_hooks_config();

}  // namespace pf
