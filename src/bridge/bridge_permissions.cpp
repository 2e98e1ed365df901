// Permissions in the chat (spec §8), the orchestrator's side: the side-effecting tools a channel
// is offered, the engine's decision before each of their calls and, when it says ask, the
// question handed to the permission desk (permission_desk.h). Also the commands /approve /deny
// /always /remember /yolo and /rules (and /remember list|clear, which never answer a prompt).
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include "bridge/bridge.h"
#include "bridge/bridge_channel.h"
#include "core/log.h"
#include "core/text.h"
#include "runtime/own_paths.h"

namespace pf {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

// "/always approve", "/always deny", "/remember [approve|deny]": whether to approve.
std::optional<bool> always_of(const std::string& name, const std::string& args) {
  std::string a = ascii_lower(trim_space(args));
  if (name == "remember" && a.empty()) return true;
  if (a == "approve" || a == "allow" || a == "yes") return true;
  if (a == "deny" || a == "reject" || a == "no") return false;
  return std::nullopt;
}

// "/rules [clear [spec]]", "/rule …", "/remember list", "/remember clear [spec]": the /rules
// arguments ("" lists, "clear …" forgets), or nullopt for a command that answers a prompt.
std::optional<std::string> rules_args_of(const std::string& name, const std::string& args) {
  std::string a = trim_space(args);
  if (name == "rules" || name == "rule") return a;
  if (name != "remember") return std::nullopt;
  std::string first = ascii_lower(a.substr(0, a.find(' ')));
  if (first == "list") return trim_space(a.substr(4));
  if (first == "clear") return "clear" + a.substr(5);
  return std::nullopt;
}

// A /rules clear spec: "shell(git)", "write", "url", "mcp(server)", or a tool and a pattern.
std::vector<std::pair<std::string, std::string>> rule_targets(const std::string& spec) {
  std::string why;
  if (auto s = parse_permission_spec(spec, &why)) {
    if (s->kind == "shell") return {{"run_command", s->arg}};
    if (s->kind == "write") return {{"write_file", ""}, {"edit_file", ""}};
    if (s->kind == "url") return {{"fetch_url", ""}};
    if (s->kind == "mcp") return {{"mcp:" + s->arg, ""}};
    return {{s->kind, ""}};
  }
  size_t space = spec.find(' ');
  if (space == std::string::npos) return {{spec, ""}};
  return {{spec.substr(0, space), trim_space(spec.substr(space + 1))}};
}

}  // namespace

std::vector<std::string> Bridge::action_kinds_of(const Channel& channel) const {
  // A DM has no configured channel: its bot's kinds, else the defaults'.
  ChannelConfig c = channel.config;
  c.platform = channel.adapter->platform();
  c.bot = channel.adapter->bot();
  return channel_actions(settings(), c);
}

std::shared_ptr<ActionTools> Bridge::action_tools_for(const std::string& root,
                                                      const std::string& bot) {
  auto& slot = actions_[bot + "\n" + root];
  if (!slot) {
    slot = std::make_shared<ActionTools>(root, config_.actions,
                                         own_paths(config_, runtime_.db_path(), root),
                                         grants_.permissions_for(bot, config_.permissions));
  }
  return slot;
}

std::shared_ptr<McpTools> Bridge::mcp_tools_for(const std::string& root) {
  auto& slot = mcp_[root];
  if (!slot) slot = std::make_shared<McpTools>(config_.mcp_servers, root);
  return slot;
}

PolicyContext Bridge::policy_context(const Channel& channel, const std::string& root) {
  PolicyContext ctx;
  ctx.channel = channel.key;
  ctx.bot = channel.adapter->bot();
  const BotConfig* bot = bot_config(channel.adapter->platform(), channel.adapter->bot());
  ctx.admin = bot && bot->admin;
  std::string mode = settings().defaults.permission_mode.value_or(config_.actions.permission_mode);
  ctx.yolo = state_.prefs(channel.key).yolo.value_or(mode == "autopilot") || channel.yolo_run;
  ctx.workspace_roots = {root};
  ctx.config = &grants_.permissions_for(ctx.bot, config_.permissions);  // with its granted paths
  ctx.rules = &state_;
  return ctx;
}

void Bridge::count_prompt(const PermissionAnswer& answer) {
  using R = PermissionAnswer::Result;
  metrics_.prompt(answer.result == R::kApproved   ? "approved"
                  : answer.result == R::kRejected ? "rejected"
                                                  : "not-available");
}

asio::awaitable<std::optional<json>> Bridge::check_hooks(Channel& channel,
                                                         const ToolRegistry& tools,
                                                         const ToolCall& call,
                                                         const std::string& root,
                                                         CancelSignal& cancel, bool* asked,
                                                         AuditTrail* audit) {
  *asked = false;
  HookDecision d = co_await hooks_.before_tool(root, call.name, call.arguments);
  using A = HookDecision::Action;
  if (d.action == A::kNone || d.action == A::kAllow) co_return std::nullopt;
  log::info("bridge", channel.key + ": " + call.name + " " +
                          (d.action == A::kDeny ? "denied" : "asked") + " by a hook: " + d.reason);
  // The call as the engine would show it (and the audit trail keeps it, when it acts).
  std::string error;
  std::optional<PermissionRequest> request =
      permission_request(tools, call.name, call.arguments, &error);
  const ToolEntry* entry = tools.find(call.name);
  bool acts = request && entry && entry->permission != ToolPermission::kNone;
  auto refuse = [&](const std::string& message, bool not_given) {
    if (audit && acts) audit->decided(call, *request, false, "hook", message, not_given);
    return json{{"error", message}};
  };
  if (d.action == A::kDeny) co_return refuse("denied by a hook: " + d.reason, false);
  if (stopping_ || cancel.cancelled())
    co_return refuse("permission was not given: the bridge is stopping", true);
  if (channel.quiet)
    co_return refuse("permission was not given (user-not-available): a hook asks, and a "
                     "scheduled prompt cannot ask anyone", true);
  // Asked as hook:<tool>; a hook's question is never remembered (no patterns to store).
  PermissionRequest r = request.value_or(PermissionRequest{});
  r.tool = "hook:" + call.name;
  Verdict v;
  v.action = Verdict::Action::kAsk;
  v.check = "hook";
  v.detail = d.reason;
  PromptPlace place{channel.key, channel.posts, channel.thread_root};
  PermissionAnswer answer = co_await desk_.ask(std::move(place), std::move(r), std::move(v), cancel);
  using R = PermissionAnswer::Result;
  count_prompt(answer);
  if (answer.result == R::kApproved) {
    *asked = true;
    co_return std::nullopt;
  }
  if (answer.result == R::kRejected)
    co_return refuse("permission denied by " +
                         (answer.by.empty() ? std::string("the user") : "@" + answer.by),
                     false);
  co_return refuse("permission was not given (user-not-available): " + answer.why, true);
}

asio::awaitable<std::optional<json>> Bridge::check_permission(Channel& channel,
                                                              const ToolRegistry& tools,
                                                              const ToolCall& call,
                                                              const std::string& root,
                                                              CancelSignal& cancel, bool asked,
                                                              AuditTrail* audit) {
  const ToolEntry* entry = tools.find(call.name);
  if (!entry || entry->permission == ToolPermission::kNone) co_return std::nullopt;
  std::string error;
  std::optional<PermissionRequest> request =
      permission_request(tools, call.name, call.arguments, &error);
  if (!request) co_return json{{"error", error}};
  Verdict v = decide_permission(*request, policy_context(channel, root));
  log::info("bridge", channel.key + ": " + call.name + " " + action_name(v.action) + " (" +
                          v.check + (v.detail.empty() ? "" : ": " + v.detail) + ")");
  auto note = [&](bool approved, const std::string& by, const std::string& detail,
                  bool not_given = false) {
    if (audit) audit->decided(call, *request, approved, by, detail, not_given);
  };
  if (v.action == Verdict::Action::kApprove) {
    note(true, v.check, v.detail);
    co_return std::nullopt;
  }
  if (v.action == Verdict::Action::kDeny) {
    note(false, v.check, v.detail);
    co_return json{{"error", "permission denied (" + v.check + "): " + v.detail}};
  }
  if (asked) {  // approved at the hook's prompt a moment ago
    note(true, "hook", "approved at the hook's prompt");
    co_return std::nullopt;
  }
  if (stopping_ || cancel.cancelled()) {
    note(false, "prompt", "the bridge is stopping", true);
    co_return json{{"error", "permission was not given: the bridge is stopping"}};
  }
  if (channel.quiet) {
    note(false, "prompt", "a scheduled prompt cannot ask anyone", true);
    co_return json{{"error",
                    "permission was not given (user-not-available): a scheduled prompt "
                    "cannot ask anyone"}};
  }

  // Named, not a braced temporary: GCC 12 destroys such a temporary of a co_await twice.
  PromptPlace place{channel.key, channel.posts, channel.thread_root};
  PermissionRequest shown = *request;  // the desk takes one; the trail keeps the other
  PermissionAnswer answer =
      co_await desk_.ask(std::move(place), std::move(shown), std::move(v), cancel);
  using R = PermissionAnswer::Result;
  count_prompt(answer);
  std::string who = answer.by.empty() ? std::string("the user") : "@" + answer.by;
  if (answer.result == R::kApproved) {
    note(true, who, "approved at the prompt");
    co_return std::nullopt;
  }
  if (answer.result == R::kRejected) {
    note(false, who, "denied at the prompt");
    co_return json{{"error", "permission denied by " + who}};
  }
  note(false, "prompt", answer.why, true);
  co_return json{{"error", "permission was not given (user-not-available): " + answer.why}};
}

void Bridge::permission_command(Channel& channel, const InboundMessage& m, const CommandCall& c) {
  const std::string& a = c.args;
  // Listing or clearing rules never answers a waiting prompt (upstream leaves it alone too).
  if (std::optional<std::string> rules = rules_args_of(c.name, a))
    return rules_command(channel, *rules);
  if (c.name == "approve" || c.name == "deny" || c.name == "always" || c.name == "remember") {
    if (!desk_.waiting(channel.key)) return reply(channel, "Nothing is waiting for approval.");
    bool remember = c.name == "always" || c.name == "remember";
    std::optional<bool> approve = c.name == "approve";
    if (remember) approve = always_of(c.name, a);
    if (!approve) return reply(channel, "Use `/always approve` or `/always deny`.");
    desk_.answer_head(channel.key, *approve, remember, m.username);
    return;
  }
  if (c.name == "yolo") {
    ChannelPrefs prefs = state_.prefs(channel.key);
    std::string mode =
        settings().defaults.permission_mode.value_or(config_.actions.permission_mode);
    bool now = prefs.yolo.value_or(mode == "autopilot");
    std::string arg = ascii_lower(trim_space(a));
    if (arg == "on" || arg.empty()) now = arg == "on" ? true : !now;
    if (arg == "off") now = false;
    prefs.yolo = now;
    state_.set_prefs(channel.key, prefs);
    return reply(channel, now ? "\u26A0\uFE0F Autopilot on: tool calls in this channel run without "
                                "asking (hard denies still apply). `/yolo off` to stop."
                              : "Autopilot off: side-effecting tool calls ask first.");
  }
}

void Bridge::rules_command(Channel& channel, const std::string& args) {
  // /rules [clear [spec]]
  std::string arg = trim_space(args);
  if (arg.rfind("clear", 0) == 0) {
    std::string spec = trim_space(arg.substr(5));
    int removed = 0;
    if (spec.empty()) {
      removed = state_.clear_permission_rules(channel.key, "", "");
    } else {
      for (const auto& [tool, pattern] : rule_targets(spec))
        removed += state_.clear_permission_rules(channel.key, tool, pattern);
    }
    return reply(channel, "Removed " + std::to_string(removed) + " rule" +
                              (removed == 1 ? "" : "s") + " of this channel.");
  }
  std::string out =
      "**Permission rules** (channel first, then bot, then global; the first that "
      "matches decides):\n";
  size_t n = 0;
  PolicyContext ctx = policy_context(channel, channel.config.working_directory);
  for (const auto& scope : rule_scopes(ctx)) {
    for (const auto& r : state_.list_permission_rules(scope)) {
      std::string where = scope == channel.key ? "channel" : scope;
      out += "- " + where + ": `" + r.tool + "` " +
             (r.pattern == "*" ? "(any)" : "`" + r.pattern + "`") + " \u2192 " + r.action + "\n";
      ++n;
    }
  }
  if (n == 0) out = "No stored permission rules for this channel.";
  if (ctx.yolo) out += "\n\u26A0\uFE0F Autopilot is on in this channel.";
  reply(channel, out);
}

}  // namespace pf
