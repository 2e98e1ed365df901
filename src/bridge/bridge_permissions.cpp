// Permissions in the chat (spec §8): the side-effecting tools a channel is offered, the engine's
// decision before each of their calls, and, when it says ask, a prompt in the channel. Prompts
// wait in one FIFO per channel and only the head is shown; yes/no, /approve, /deny, /always and
// the reactions 👍 👎 💾 🚫 answer it; any other message answers every pending one as
// user-not-available (and is then taken as a message); /stop, shutdown and the timeout deny.
// Also /rules (and /remember list|clear, which never answer a prompt) and /yolo.
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "bridge/bridge.h"
#include "bridge/bridge_channel.h"
#include "core/log.h"
#include "core/text.h"
#include "runtime/own_paths.h"

namespace pf {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

const char* kApproveOnce = "approve-once";
const char* kReject = "reject";
const char* kNotAvailable = "user-not-available";

std::string fenced(const std::string& text, size_t max) {
  std::string t = text.size() > max ? text.substr(0, max) + "\u2026" : text;
  std::string fence = "```";
  while (t.find(fence) != std::string::npos) fence += "`";
  return fence + "\n" + t + "\n" + fence;
}

std::string prompt_text(const PendingPermission& p, size_t waiting) {
  const PermissionRequest& r = p.request;
  std::string out = "\U0001F510 **Permission needed:** `" + r.tool + "`";
  if (!r.intent.empty()) out += " \u2014 " + r.intent.substr(0, 300);
  out += "\n";
  if (!r.command.empty()) out += fenced(r.command, 500) + "\n";
  if (!r.path.empty()) out += "Path: `" + r.path + "`\n";
  if (!r.url.empty()) out += "URL: " + r.url + "\n";
  if (!r.mcp_server.empty()) out += "MCP server: `" + r.mcp_server + "`, tool `" + r.mcp_tool + "`\n";
  if (!p.verdict.detail.empty() && p.verdict.check == "prompt") out += "_(" + p.verdict.detail + ")_\n";
  out += "Reply **yes** or **no**, `/always approve` or `/always deny`, or react \U0001F44D "
         "\U0001F44E \U0001F4BE (always) \U0001F6AB (never).";
  if (waiting > 1) out += "\n" + std::to_string(waiting - 1) + " more waiting.";
  return out;
}

std::string outcome_text(const PendingPermission& p) {
  std::string what = "`" + p.request.tool + "`";
  if (p.result == kApproveOnce)
    return "\u2705 " + what + " approved" + (p.remember ? " and remembered" : "") +
           (p.by.empty() ? "" : " by @" + p.by) + ".";
  if (p.result == kReject)
    return "\u274C " + what + " denied" + (p.remember ? " and remembered" : "") +
           (p.by.empty() ? "" : " by @" + p.by) + ".";
  return "\u23ED\uFE0F " + what + " not run: " + (p.why.empty() ? "nobody answered" : p.why) + ".";
}

// A reply that answers the head prompt: yes/no and their spellings.
std::optional<std::string> yes_no(const std::string& text) {
  std::string t = ascii_lower(trim_space(text));
  while (!t.empty() && (t.back() == '.' || t.back() == '!')) t.pop_back();
  if (t == "yes" || t == "y" || t == "approve") return std::string(kApproveOnce);
  if (t == "no" || t == "n" || t == "deny") return std::string(kReject);
  return std::nullopt;
}

// "/always approve", "/always deny", "/remember [approve|deny]": the resolution to store.
std::optional<std::string> always_of(const std::string& name, const std::string& args) {
  std::string a = ascii_lower(trim_space(args));
  if (name == "remember" && a.empty()) return std::string(kApproveOnce);
  if (a == "approve" || a == "allow" || a == "yes") return std::string(kApproveOnce);
  if (a == "deny" || a == "reject" || a == "no") return std::string(kReject);
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

bool is_permission_answer(const std::string& text) { return yes_no(text).has_value(); }

std::vector<std::string> Bridge::action_kinds_of(const Channel& channel) const {
  // A DM has no configured channel: its bot's kinds, else the defaults'.
  ChannelConfig c = channel.config;
  c.platform = channel.adapter->platform();
  c.bot = channel.adapter->bot();
  return channel_actions(settings(), c);
}

std::shared_ptr<ActionTools> Bridge::action_tools_for(const std::string& root) {
  auto& slot = actions_[root];
  if (!slot) {
    slot = std::make_shared<ActionTools>(root, config_.actions, own_paths(config_, runtime_.db_path(), root),
                                         config_.permissions);
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
  ctx.yolo = state_.prefs(channel.key).yolo.value_or(mode == "autopilot");
  ctx.workspace_roots = {root};
  ctx.config = &config_.permissions;
  ctx.rules = &state_;
  return ctx;
}

asio::awaitable<std::optional<json>> Bridge::check_permission(Channel& channel,
                                                              const ToolRegistry& tools,
                                                              const ToolCall& call,
                                                              const std::string& root,
                                                              CancelSignal& cancel) {
  const ToolEntry* entry = tools.find(call.name);
  if (!entry || entry->permission == ToolPermission::kNone) co_return std::nullopt;
  std::string error;
  std::optional<PermissionRequest> request = permission_request(tools, call.name, call.arguments, &error);
  if (!request) co_return json{{"error", error}};
  auto pending = std::make_shared<PendingPermission>();
  pending->request = std::move(*request);
  pending->verdict = decide_permission(pending->request, policy_context(channel, root));
  const Verdict& v = pending->verdict;
  log::info("bridge", channel.key + ": " + call.name + " " + action_name(v.action) + " (" + v.check +
                          (v.detail.empty() ? "" : ": " + v.detail) + ")");
  if (v.action == Verdict::Action::kApprove) co_return std::nullopt;
  if (v.action == Verdict::Action::kDeny)
    co_return json{{"error", "permission denied (" + v.check + "): " + v.detail}};
  if (stopping_ || cancel.cancelled())
    co_return json{{"error", "permission was not given: the bridge is stopping"}};
  if (channel.quiet)
    co_return json{{"error", "permission was not given (user-not-available): a scheduled prompt "
                             "cannot ask anyone"}};

  pending->wake = std::make_shared<asio::steady_timer>(
      io_, std::chrono::seconds(settings().permission_timeout_seconds));
  channel.permissions.push_back(pending);
  if (channel.permissions.size() == 1) show_permission_prompt(channel);
  std::weak_ptr<PendingPermission> weak = pending;
  CancelRegistration on_cancel(&cancel, [this, &channel, weak] {
    if (auto p = weak.lock(); p && p->result.empty()) {
      p->why = "the answer was stopped";
      resolve_permission(channel, *p, kNotAvailable, false, "");
    }
  });
  boost::system::error_code ec;
  co_await pending->wake->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  if (pending->result.empty()) {
    pending->why = "nobody answered within " + std::to_string(settings().permission_timeout_seconds) + " s";
    resolve_permission(channel, *pending, kNotAvailable, false, "");
  }
  if (pending->result == kApproveOnce) co_return std::nullopt;
  if (pending->result == kReject)
    co_return json{{"error", "permission denied by " + (pending->by.empty() ? std::string("the user") : "@" + pending->by)}};
  co_return json{{"error", "permission was not given (" + std::string(kNotAvailable) + "): " + pending->why}};
}

void Bridge::show_permission_prompt(Channel& channel) {
  if (channel.permissions.empty()) return;
  PendingPermission& head = *channel.permissions.front();
  if (head.prompt) return;
  head.prompt = channel.posts->create(prompt_text(head, channel.permissions.size()), channel.thread_root);
}

void Bridge::resolve_permission(Channel& channel, PendingPermission& p, const std::string& result,
                                bool remember, const std::string& by) {
  if (!p.result.empty()) return;
  p.result = result;
  p.remember = remember && result != kNotAvailable;
  p.by = by;
  if (p.remember) {
    for (const auto& pattern : p.verdict.remember_patterns) {
      try {
        state_.add_permission_rule({0, channel.key, p.verdict.remember_tool, pattern,
                                    result == kApproveOnce ? "allow" : "deny"});
      } catch (const std::exception& e) {
        log::warn("bridge", std::string("could not store the permission rule: ") + e.what());
      }
    }
  }
  if (p.prompt) channel.posts->edit(p.prompt, outcome_text(p));
  if (p.wake) p.wake->cancel();
  bool was_head = !channel.permissions.empty() && channel.permissions.front().get() == &p;
  for (auto it = channel.permissions.begin(); it != channel.permissions.end(); ++it)
    if (it->get() == &p) {
      channel.permissions.erase(it);
      break;
    }
  if (was_head) show_permission_prompt(channel);
}

void Bridge::resolve_all_permissions(Channel& channel, const std::string& why) {
  while (!channel.permissions.empty()) {
    std::shared_ptr<PendingPermission> p = channel.permissions.front();
    p->why = why;
    resolve_permission(channel, *p, kNotAvailable, false, "");
  }
}

bool Bridge::answer_permission_text(Channel& channel, const std::string& text, const std::string& by) {
  if (channel.permissions.empty()) return false;
  auto answer = yes_no(text);
  if (!answer) return false;
  std::shared_ptr<PendingPermission> head = channel.permissions.front();
  resolve_permission(channel, *head, *answer, false, by);
  return true;
}

bool Bridge::answer_permission_reaction(const InboundReaction& r) {
  if (!r.added) return false;
  for (auto& [key, channel] : channels_) {
    if (channel->permissions.empty()) continue;
    std::shared_ptr<PendingPermission> head = channel->permissions.front();
    if (!head->prompt || head->prompt->id != r.post_id) continue;
    if (r.emoji == "+1" || r.emoji == "thumbsup") {
      resolve_permission(*channel, *head, kApproveOnce, false, r.username);
    } else if (r.emoji == "-1" || r.emoji == "thumbsdown") {
      resolve_permission(*channel, *head, kReject, false, r.username);
    } else if (r.emoji == "floppy_disk") {
      resolve_permission(*channel, *head, kApproveOnce, true, r.username);
    } else if (r.emoji == "no_entry_sign") {
      resolve_permission(*channel, *head, kReject, true, r.username);
    } else {
      return false;
    }
    return true;
  }
  return false;
}

void Bridge::permission_command(Channel& channel, const InboundMessage& m, const CommandCall& c) {
  const std::string& a = c.args;
  // Listing or clearing rules never answers a waiting prompt (upstream leaves it alone too).
  if (std::optional<std::string> rules = rules_args_of(c.name, a)) return rules_command(channel, *rules);
  if (c.name == "approve" || c.name == "deny" || c.name == "always" || c.name == "remember") {
    if (channel.permissions.empty()) return reply(channel, "Nothing is waiting for approval.");
    std::optional<std::string> result;
    bool remember = c.name == "always" || c.name == "remember";
    if (c.name == "approve") result = kApproveOnce;
    if (c.name == "deny") result = kReject;
    if (remember) result = always_of(c.name, a);
    if (!result) return reply(channel, "Use `/always approve` or `/always deny`.");
    std::shared_ptr<PendingPermission> head = channel.permissions.front();
    resolve_permission(channel, *head, *result, remember, m.username);
    return;
  }
  if (c.name == "yolo") {
    ChannelPrefs prefs = state_.prefs(channel.key);
    std::string mode = settings().defaults.permission_mode.value_or(config_.actions.permission_mode);
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
    return reply(channel, "Removed " + std::to_string(removed) + " rule" + (removed == 1 ? "" : "s") +
                              " of this channel.");
  }
  std::string out = "**Permission rules** (channel first, then bot, then global; the first that "
                    "matches decides):\n";
  size_t n = 0;
  PolicyContext ctx = policy_context(channel, channel.config.working_directory);
  for (const auto& scope : rule_scopes(ctx)) {
    for (const auto& r : state_.list_permission_rules(scope)) {
      std::string where = scope == channel.key ? "channel" : scope;
      out += "- " + where + ": `" + r.tool + "` " + (r.pattern == "*" ? "(any)" : "`" + r.pattern + "`") +
             " \u2192 " + r.action + "\n";
      ++n;
    }
  }
  if (n == 0) out = "No stored permission rules for this channel.";
  if (ctx.yolo) out += "\n\u26A0\uFE0F Autopilot is on in this channel.";
  reply(channel, out);
}

}  // namespace pf
