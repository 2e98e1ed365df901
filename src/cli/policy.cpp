// `pilotfish policy explain` (the permission engine's decision for one tool call, with the rule
// or check that made it, as `git check-ignore -v` names the ignore rule), the terminal's
// permission prompt of `pilotfish ask` (y / n / always), and `pilotfish audit` (the trail of
// side-effecting calls those decisions and the bridge's left in the bridge state).
#include <poll.h>
#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "agent/action_tools.h"
#include "agent/ask_user.h"
#include "agent/tools.h"
#include "bridge/bridge.h"
#include "bridge/service.h"
#include "bridge/state_store.h"
#include "cli/policy.h"
#include "store/store.h"

#include "cli/commands.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"
#include "core/text.h"
#include "runtime/own_paths.h"

namespace pf::cli {
namespace {

using nlohmann::json;

const char* kind_name(ToolPermission k) {
  switch (k) {
    case ToolPermission::kWrite: return "write";
    case ToolPermission::kShell: return "shell";
    case ToolPermission::kUrl: return "url";
    case ToolPermission::kMcp: return "mcp";
    case ToolPermission::kAdmin: return "admin";
    default: return "none";
  }
}

// The state store with the remembered rules, if there is one (never created here).
std::unique_ptr<StateStore> open_rules(const Config& config, const std::string& db) {
  std::string path = bridge_state_path(bridge_config(config), resolve_db(db));
  if (!is_postgres_url(path) && !std::filesystem::exists(path)) return nullptr;
  return open_state_store(path);
}

}  // namespace

namespace {

// Where a call is explained: the bot, the channel key, the workspace and the action kinds
// offered there (and which setting offered them).
struct Place {
  const BotConfig* bot = nullptr;
  std::string key, root;
  std::vector<std::string> kinds;
  std::string kinds_from = "actions.enabled";
  bool chat = false;  // a chat channel: the chat tools are offered
};

Place place_of(const Config& config, const PolicyArgs& args) {
  Place at;
  const PlatformConfig* platform = nullptr;
  for (const auto& p : bridge_config(config).platforms)
    for (const auto& b : p.bots)
      if (b.name == args.bot || (args.bot.empty() && bridge_config(config).platforms.size() == 1 && p.bots.size() == 1)) {
        platform = &p;
        at.bot = &b;
      }
  if (!args.bot.empty() && !at.bot) throw UsageError("--bot " + args.bot + ": no such bot under bridge.platforms");
  // The channel: a configured one (by id or platform:id), else taken as given.
  const ChannelConfig* channel = nullptr;
  at.key = args.channel;
  for (const auto& c : bridge_config(config).channels)
    if ((c.id == args.channel || c.platform + ":" + c.id == args.channel) && (!at.bot || c.bot == at.bot->name)) {
      channel = &c;
      at.key = c.platform + ":" + c.id;
    }
  if (!channel && !args.channel.empty() && args.channel.find(':') == std::string::npos && platform)
    at.key = platform->name + ":" + args.channel;
  at.root = !args.workspace.empty() ? args.workspace
            : channel                ? channel->working_directory
            : !bridge_config(config).defaults.working_directory.empty() ? bridge_config(config).defaults.working_directory
            : !config.server.repository.empty() ? config.server.repository
                                                : std::filesystem::current_path().string();
  std::error_code ec;
  at.root = std::filesystem::weakly_canonical(at.root, ec).string();
  at.kinds = config.actions.enabled;
  at.chat = at.bot != nullptr;
  if (at.bot) {
    at.kinds = bridge_config(config).defaults.actions;
    at.kinds_from = "bridge.defaults.actions";
    if (at.bot->actions) {
      at.kinds = *at.bot->actions;
      at.kinds_from = "the bot's actions";
    }
    if (channel && channel->actions) {
      at.kinds = *channel->actions;
      at.kinds_from = "the channel's actions";
    }
  }
  return at;
}

// Whether the tool is offered at this place, or why not (a note for people; empty when it is).
std::string not_offered(const PermissionRequest& req, const Place& at, const Config& config) {
  if (is_chat_tool(req.tool))
    return at.chat ? "" : req.tool + " is offered only in chat channels (give --bot)";
  if (req.kind == ToolPermission::kNone) return "";
  if (req.kind == ToolPermission::kMcp) {
    for (const auto& s : config.mcp_servers)
      if (s.name == req.mcp_server) return "";
    if (std::filesystem::exists(std::filesystem::path(at.root) / "mcp-config.json")) return "";
    return "no MCP server \"" + req.mcp_server + "\" is configured (mcp.servers or the workspace's mcp-config.json)";
  }
  std::string kind = kind_name(req.kind);
  if (std::find(at.kinds.begin(), at.kinds.end(), kind) != at.kinds.end()) return "";
  return req.tool + " is not offered here (" + at.kinds_from + " does not include \"" + kind + "\")";
}

}  // namespace

int run_policy_explain(const PolicyArgs& args) {
  Config config = load_config(args.config);
  Place at = place_of(config, args);
  // Every tool the agent can be offered: the repository's, the actions, the chat tools; a name
  // server__tool that is none of them is an MCP tool (its server is not started).
  std::string db = resolve_db(args.db);
  RepositoryTools repository(at.root, HybridOptions{}, nullptr, own_paths(config, db, at.root));
  ActionTools actions(at.root, config.actions, repository.own(), config.permissions);
  ToolRegistry registry = repository.registry();
  actions.add_to(registry, {"write", "shell", "url"});
  add_chat_tools(registry);
  std::string error;
  std::optional<PermissionRequest> request =
      permission_request(registry, args.tool, args.args.empty() ? "{}" : args.args, &error);
  if (!request) throw UsageError("--tool " + args.tool + " --args: " + error);

  std::unique_ptr<StateStore> rules = open_rules(config, args.db);
  PolicyContext ctx;
  ctx.channel = at.key;
  ctx.bot = at.bot ? at.bot->name : "";
  ctx.admin = at.bot && at.bot->admin;
  std::string mode = bridge_config(config).defaults.permission_mode.value_or(config.actions.permission_mode);
  ctx.yolo = mode == "autopilot";
  if (rules && !at.key.empty()) ctx.yolo = rules->prefs(at.key).yolo.value_or(ctx.yolo);
  ctx.workspace_roots = {at.root};
  ctx.config = &config.permissions;
  ctx.rules = rules.get();
  Verdict v = decide_permission(*request, ctx);

  std::string target = audit_target(*request);
  std::string note = not_offered(*request, at, config);
  if (args.json) {
    json out = {{"decision", action_name(v.action)}, {"check", v.check},
                {"detail", v.detail},                {"tool", request->tool},
                {"kind", kind_name(request->kind)},  {"target", target},
                {"offered", note.empty()},           {"offeredBy", at.kinds_from},
                {"scopes", rule_scopes(ctx)},
                {"remember", {{"tool", v.remember_tool}, {"patterns", v.remember_patterns}}}};
    if (!note.empty()) out["note"] = note;
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("%s\t%s\t%s\t%s: %s\n", action_name(v.action), v.check.c_str(), v.detail.c_str(),
                request->tool.c_str(), target.c_str());
    if (!note.empty()) std::printf("note: %s\n", note.c_str());
  }
  return 0;
}

namespace {

// A y/n question on the terminal: false when there is none, or at end of input.
bool terminal_yes_no(const std::string& question) {
  if (!::isatty(STDIN_FILENO)) return false;
  for (;;) {
    std::fputs(question.c_str(), stderr);
    std::fflush(stderr);
    std::string line;
    if (!std::getline(std::cin, line)) return false;
    std::string a = ascii_lower(trim_space(line));
    if (a == "y" || a == "yes") return true;
    if (a == "n" || a == "no") return false;
  }
}

// ask_user on the terminal: the question on stderr, one line from stdin within timeout.
json terminal_question(const std::string& arguments, std::chrono::seconds timeout) {
  std::string error;
  std::optional<UserQuestion> q = parse_user_question(arguments, &error);
  if (!q) return json{{"error", error}};
  if (!::isatty(STDIN_FILENO)) return no_user_answer("no terminal to ask");
  std::string text = question_text(*q);
  std::fprintf(stderr, "\n%s\n-- your answer: ", text.c_str());
  std::fflush(stderr);
  pollfd p{STDIN_FILENO, POLLIN, 0};
  int ready = ::poll(&p, 1, static_cast<int>(timeout.count() * 1000));
  std::string line;
  if (ready <= 0 || !std::getline(std::cin, line) || trim_space(line).empty())
    return no_user_answer(ready == 0 ? "nobody answered within " + std::to_string(timeout.count()) + " s"
                                     : "no answer was typed");
  return user_answer(chosen_answer(*q, line), "");
}

}  // namespace

std::string terminal_user() {
  if (const char* u = std::getenv("USER"); u && *u) return u;
  if (passwd* pw = ::getpwuid(::getuid())) return pw->pw_name;
  return "user";
}

std::function<boost::asio::awaitable<std::optional<nlohmann::json>>(const ToolCall&)>
terminal_permissions(const ToolRegistry& tools, const Config& config, StateStore* rules,
                     const std::string& root, const HookSet* hooks,
                     HookContext hook_context, AuditTrail* audit) {
  return [&tools, &config, rules, root, hooks, hook_context, audit](const ToolCall& call)
             -> boost::asio::awaitable<std::optional<json>> {
    const ToolEntry* entry = tools.find(call.name);
    std::string error;
    std::optional<PermissionRequest> req = permission_request(tools, call.name, call.arguments, &error);
    bool acts = req && !(entry && entry->permission == ToolPermission::kNone);
    std::string person = "@" + terminal_user();
    auto note = [&](bool approved, const std::string& by, const std::string& detail,
                    bool not_given = false) {
      if (audit && acts) audit->decided(call, *req, approved, by, detail, not_given);
    };
    bool asked = false;
    if (hooks && !hooks->of(HookEvent::kPreToolUse).empty()) {
      HookDecision d = run_pre_tool_hooks(*hooks, call.name, call.arguments, hook_context);
      if (d.action == HookDecision::Action::kDeny) {
        note(false, "hook", d.reason);
        co_return json{{"error", "denied by a hook: " + d.reason}};
      }
      if (d.action == HookDecision::Action::kAsk) {
        if (!terminal_yes_no("\n-- a hook asks about " + call.name + " " +
                             call.arguments.substr(0, 300) + ": " + d.reason +
                             "\n-- allow? [y]es / [n]o: ")) {
          note(false, person, "denied at the hook's question");
          co_return json{{"error", "permission was not given at the hook's question"}};
        }
        asked = true;
      }
    }
    if (call.name == kAskUserTool)
      co_return terminal_question(call.arguments,
                                  std::chrono::seconds(bridge_config(config).ask_user_timeout_seconds));
    if (entry && entry->permission == ToolPermission::kNone) co_return std::nullopt;
    if (!req) co_return json{{"error", error}};
    PolicyContext ctx;
    ctx.channel = "cli";  // the terminal's own scope: "always" here never approves a chat channel
    ctx.yolo = config.actions.permission_mode == "autopilot";
    ctx.workspace_roots = {root};
    ctx.config = &config.permissions;
    ctx.rules = rules;
    Verdict v = decide_permission(*req, ctx);
    if (v.action == Verdict::Action::kApprove) {
      note(true, v.check, v.detail);
      co_return std::nullopt;
    }
    if (v.action == Verdict::Action::kDeny) {
      note(false, v.check, v.detail);
      co_return json{{"error", "permission denied (" + v.check + "): " + v.detail}};
    }
    if (asked) {  // approved at the hook's question a moment ago
      note(true, person, "approved at the hook's question");
      co_return std::nullopt;
    }
    if (!::isatty(STDIN_FILENO)) {
      note(false, "prompt", "no terminal to ask", true);
      co_return json{{"error", "permission was not given (user-not-available): no terminal to ask"}};
    }
    std::string what = !req->command.empty() ? req->command : !req->path.empty() ? req->path : req->url;
    for (;;) {
      std::fprintf(stderr, "\n-- %s wants to run: %s%s\n-- allow? [y]es / [n]o / [a]lways / ne[v]er: ",
                   call.name.c_str(), what.c_str(), req->intent.empty() ? "" : (" (" + req->intent + ")").c_str());
      std::fflush(stderr);
      std::string line;
      if (!std::getline(std::cin, line)) {
        note(false, "prompt", "the terminal closed", true);
        co_return json{{"error", "permission was not given (user-not-available)"}};
      }
      std::string a = ascii_lower(trim_space(line));
      bool yes = a == "y" || a == "yes", no = a == "n" || a == "no";
      bool always = a == "a" || a == "always", never = a == "v" || a == "never";
      if (!(yes || no || always || never)) continue;
      if ((always || never) && rules) {
        for (const auto& pattern : v.remember_patterns)
          rules->add_permission_rule({0, "cli", v.remember_tool, pattern, always ? "allow" : "deny"});
      }
      std::string how = always ? " (always)" : never ? " (never)" : "";
      note(yes || always, person, (yes || always ? "approved at the terminal" : "denied at the terminal") + how);
      if (yes || always) co_return std::nullopt;
      co_return json{{"error", "permission denied by the user"}};
    }
  };
}

}  // namespace pf::cli

namespace pf::cli {

std::optional<int64_t> parse_since(const std::string& text, int64_t now_ms) {
  if (text.empty()) return 0;
  // A span back from now: 90m, 12h, 7d.
  char unit = text.back();
  std::string digits = text.substr(0, text.size() - 1);
  if ((unit == 'm' || unit == 'h' || unit == 'd') && !digits.empty() && digits.size() <= 6 &&
      digits.find_first_not_of("0123456789") == std::string::npos) {
    int64_t n = std::stoll(digits);
    int64_t ms = unit == 'm' ? 60000 : unit == 'h' ? 3600000 : 86400000;
    return now_ms - n * ms;
  }
  // A UTC date, or date and time: 2026-12-01, 2026-12-01T10:00, 2026-12-01 10:00:30.
  std::tm tm{};
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  char sep = 0;
  int got = std::sscanf(text.c_str(), "%4d-%2d-%2d%c%2d:%2d:%2d", &y, &mo, &d, &sep, &h, &mi, &s);
  bool date_only = got == 3 && text.size() == 10;
  bool with_time = (got == 6 || got == 7) && (sep == 'T' || sep == ' ');
  if (!date_only && !with_time) return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return std::nullopt;
  tm.tm_year = y - 1900, tm.tm_mon = mo - 1, tm.tm_mday = d;
  tm.tm_hour = h, tm.tm_min = mi, tm.tm_sec = s;
  return static_cast<int64_t>(::timegm(&tm)) * 1000;
}

namespace {

std::string utc_time(int64_t ms) { return format_utc(ms, "%Y-%m-%d %H:%M:%S"); }

json audit_json(const AuditRecord& a) {
  json j = {{"id", a.id},           {"at", utc_time(a.at_ms)},  {"atMs", a.at_ms},
            {"front", a.front},     {"place", a.place},         {"user", a.user},
            {"bot", a.bot},         {"tool", a.tool},           {"target", a.target},
            {"decision", a.decision}, {"decidedBy", a.decided_by}, {"detail", a.detail},
            {"exitCode", nullptr},  {"durationMs", nullptr},    {"error", a.error}};
  if (a.exit_code) j["exitCode"] = *a.exit_code;
  if (a.duration_ms >= 0) j["durationMs"] = a.duration_ms;
  return j;
}

}  // namespace

int run_audit(const AuditArgs& args) {
  Config config = load_config(args.config);
  int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  std::optional<int64_t> since = parse_since(args.since, now);
  if (!since)
    throw UsageError("--since " + args.since +
                     ": expected a span (90m, 12h, 7d) or a UTC date (2026-12-01, 2026-12-01T10:00)");
  std::unique_ptr<StateStore> state = open_rules(config, args.db);
  std::vector<AuditRecord> records;
  if (state) records = state->audit_records({*since, args.place, args.limit});
  if (args.json) {
    json out = json::array();
    for (const AuditRecord& a : records) out.push_back(audit_json(a));
    std::printf("%s\n", json{{"records", out}}.dump(2).c_str());
    return 0;
  }
  if (records.empty()) std::printf("no side-effecting tool calls recorded%s\n",
                                   args.since.empty() ? "" : (" since " + args.since).c_str());
  for (const AuditRecord& a : records) {
    std::string who = a.user.empty() ? "-" : a.user;
    if (!a.bot.empty()) who += " (" + a.bot + ")";
    std::string outcome;
    if (a.exit_code) outcome += "exit " + std::to_string(*a.exit_code) + " ";
    if (a.duration_ms >= 0) outcome += std::to_string(a.duration_ms) + " ms";
    if (!a.error.empty()) outcome += (outcome.empty() ? "" : " ") + ("error: " + a.error.substr(0, 120));
    std::printf("%s\t%s\t%s\t%s\t%s\t%s by %s\t%s\n", utc_time(a.at_ms).c_str(), a.place.c_str(),
                who.c_str(), a.tool.c_str(), a.target.substr(0, 200).c_str(), a.decision.c_str(),
                a.decided_by.c_str(), outcome.empty() ? "-" : outcome.c_str());
  }
  return 0;
}

}  // namespace pf::cli
