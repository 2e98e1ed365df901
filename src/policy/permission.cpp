// The permission engine's checks, in the order permission.h gives.
#include "policy/permission.h"

#include <algorithm>
#include <optional>
#include <set>

#include "core/text.h"
#include "policy/hard_deny.h"
#include "policy/shell_command.h"

namespace pf {
namespace {

using Action = Verdict::Action;

Verdict verdict(Action action, std::string check, std::string detail) {
  Verdict v;
  v.action = action;
  v.check = std::move(check);
  v.detail = std::move(detail);
  return v;
}

bool inside(const std::string& path, std::string root) {
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (root == "/") return !path.empty() && path[0] == '/';
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                          path[root.size()] == '/');
}

bool has_dot_dot(const std::string& path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (path.compare(start, end - start, "..") == 0 && end - start == 2) return true;
    start = end + 1;
  }
  return false;
}

// git and gh take options before their subcommand (git -C dir push): rules name the subcommand.
std::vector<std::string> canonical_words(const SimpleCommand& c) {
  std::vector<std::string> w = c.words;
  if (w.empty()) return w;
  w[0] = c.name;
  if (c.name == "git" || c.name == "gh") {
    size_t i = 1;
    while (i < w.size() && w[i].size() > 1 && w[i][0] == '-')
      i += (w[i] == "-C" || w[i] == "-c" || w[i] == "-R" || w[i] == "--repo") ? 2 : 1;
    if (i > 1 && i < w.size()) w.erase(w.begin() + 1, w.begin() + static_cast<std::ptrdiff_t>(i));
  }
  return w;
}

// shell(arg): the program, or a whole-word prefix of the command ("git status", "npm run test").
bool shell_arg_matches(const std::string& arg, const SimpleCommand& c) {
  if (c.name.empty()) return false;
  std::vector<std::string> words = canonical_words(c);
  std::string joined;
  for (const auto& w : words) {
    joined += (joined.empty() ? "" : " ") + w;
    if (joined == arg) return true;
    if (joined.size() >= arg.size()) break;
  }
  return c.words[0] == arg;  // an absolute program path written in the rule
}

bool path_spec_matches(const PermissionSpec& spec, const std::string& path,
                       const std::vector<std::string>& roots) {
  if (spec.arg.empty()) return true;
  if (spec.arg[0] == '/') return inside(path, spec.arg);
  for (const auto& root : roots)
    if (inside(path, root + "/" + spec.arg)) return true;
  return false;
}

bool host_matches(const std::string& host, const std::string& allowed) {
  std::string a = ascii_lower(allowed);
  return host == a || (host.size() > a.size() && host.compare(host.size() - a.size(), a.size(), a) == 0 &&
                       host[host.size() - a.size() - 1] == '.');
}

struct Shell {
  ShellParse parse;
  std::vector<std::string> names;  // distinct program names, in order
  bool approvable = true;          // complete, no computed program, no wrapper, writes inside
  std::string why_not;
};

Shell analyse(const std::string& command, const std::vector<std::string>& roots) {
  Shell s;
  s.parse = parse_shell(command);
  auto refuse = [&](std::string why) {
    if (s.approvable) s.why_not = std::move(why);
    s.approvable = false;
  };
  if (s.parse.incomplete) refuse("the command did not parse completely");
  if (s.parse.commands.empty()) refuse("no command found");
  for (const auto& c : s.parse.commands) {
    if (c.dynamic_name) refuse("a program name is computed at run time");
    if (!c.wrappers.empty()) refuse("`" + c.wrappers.front() + "` runs another command");
    if (!c.name.empty() && std::find(s.names.begin(), s.names.end(), c.name) == s.names.end())
      s.names.push_back(c.name);
  }
  for (const auto& target : s.parse.redirect_targets) {
    if (target == "/dev/null" || target == "/dev/stdout" || target == "/dev/stderr") continue;
    bool ok = !has_dot_dot(target) && !target.empty() && target[0] != '~' &&
              target.find('$') == std::string::npos;
    if (ok && target[0] == '/')
      ok = std::any_of(roots.begin(), roots.end(), [&](auto& r) { return inside(target, r); });
    if (!ok) refuse("it writes " + target + ", outside the workspace");
  }
  return s;
}

std::string spec_at(const char* list, size_t i, const PermissionSpec& spec) {
  return std::string("permissions.") + list + "[" + std::to_string(i) + "] " + spec.text;
}

// Check 4a for one list: the spec that matches the request, as its detail, or nullopt. For a
// shell request, deny matches when any command (or its wrapper) matches; allow only when every
// command does.
std::optional<std::string> config_match(const std::vector<PermissionSpec>& specs, const char* list,
                                        const PermissionRequest& req, const Shell* shell,
                                        const std::vector<std::string>& roots) {
  bool deny = std::string_view(list) == "deny";
  if (req.kind == ToolPermission::kShell && shell) {
    if (deny) {
      for (size_t i = 0; i < specs.size(); ++i) {
        if (specs[i].kind != "shell") continue;
        for (const auto& c : shell->parse.commands) {
          bool hit = specs[i].arg.empty() || shell_arg_matches(specs[i].arg, c) ||
                     std::find(c.wrappers.begin(), c.wrappers.end(), specs[i].arg) != c.wrappers.end();
          if (hit) return spec_at(list, i, specs[i]) + " matched `" + (c.name.empty() ? c.words[0] : c.name) + "`";
        }
      }
      return std::nullopt;
    }
    if (!shell->approvable) return std::nullopt;
    std::string matched;
    for (const auto& c : shell->parse.commands) {
      bool found = false;
      for (size_t i = 0; i < specs.size() && !found; ++i) {
        if (specs[i].kind == "shell" && (specs[i].arg.empty() || shell_arg_matches(specs[i].arg, c))) {
          found = true;
          if (matched.find(specs[i].text) == std::string::npos)
            matched += (matched.empty() ? "" : ", ") + spec_at(list, i, specs[i]);
        }
      }
      if (!found) return std::nullopt;
    }
    return matched;
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    const PermissionSpec& s = specs[i];
    bool hit = false;
    switch (req.kind) {
      case ToolPermission::kWrite:
        hit = s.kind == "write" && (deny || !has_dot_dot(req.path)) && path_spec_matches(s, req.path, roots);
        break;
      case ToolPermission::kUrl:
        hit = s.kind == "url" && (s.arg.empty() || host_matches(url_host(req.url), s.arg));
        break;
      case ToolPermission::kMcp:
        hit = s.kind == "mcp" && (s.arg.empty() || s.arg == req.mcp_server) &&
              (s.tool.empty() || s.tool == req.mcp_tool);
        break;
      default:
        break;
    }
    if (hit) return spec_at(list, i, s);
  }
  return std::nullopt;
}

std::string describe(const StoredRule& r) {
  std::string scope = r.scope == "global" ? "global" : r.scope.rfind("bot:", 0) == 0 ? r.scope : "channel " + r.scope;
  return "rule " + std::to_string(r.id) + " (" + scope + ": " + r.tool + " " + r.pattern + " " + r.action + ")";
}

// The stored rule that decides for one pattern: the first scope with a rule for it, an exact
// pattern before "*", the newest first.
const StoredRule* best_rule(const std::vector<StoredRule>& rules, const std::vector<std::string>& scopes,
                            const std::string& word) {
  for (const auto& scope : scopes) {
    const StoredRule* exact = nullptr;
    const StoredRule* any = nullptr;
    for (const auto& r : rules) {
      if (r.scope != scope) continue;
      if (r.pattern == word && word != "*" && (!exact || r.id > exact->id)) exact = &r;
      if (r.pattern == "*" && (!any || r.id > any->id)) any = &r;
    }
    if (exact) return exact;
    if (any) return any;
  }
  return nullptr;
}

std::optional<Verdict> stored_rules(const PermissionRequest& req, const PolicyContext& ctx,
                                    const Shell* shell, const std::string& key) {
  if (!ctx.rules) return std::nullopt;
  std::vector<std::string> scopes = rule_scopes(ctx);
  std::vector<StoredRule> rules;
  try {
    rules = ctx.rules->permission_rules(key, scopes);
  } catch (const std::exception&) {
    return std::nullopt;  // a database error falls through to the prompt
  }
  if (req.kind != ToolPermission::kShell || !shell) {
    const StoredRule* r = best_rule(rules, scopes, "*");
    if (!r) return std::nullopt;
    return verdict(r->action == "deny" ? Action::kDeny : Action::kApprove, "stored-rule", describe(*r));
  }
  // Deny rules see wrappers too (a deny on sudo stops `sudo ls`); allow needs every program.
  std::vector<std::string> words = shell->names;
  for (const auto& c : shell->parse.commands)
    for (const auto& w : c.wrappers)
      if (std::find(words.begin(), words.end(), w) == words.end()) words.push_back(w);
  std::string allowed;
  bool all_allowed = !shell->names.empty();
  for (const auto& w : words) {
    const StoredRule* r = best_rule(rules, scopes, w);
    if (r && r->action == "deny") return verdict(Action::kDeny, "stored-rule", describe(*r) + " matched `" + w + "`");
    bool is_name = std::find(shell->names.begin(), shell->names.end(), w) != shell->names.end();
    if (!is_name) continue;
    if (r) allowed += (allowed.empty() ? "" : ", ") + describe(*r);
    else all_allowed = false;
  }
  if (all_allowed && shell->approvable) return verdict(Action::kApprove, "stored-rule", allowed);
  return std::nullopt;
}

// Check 4c: a write inside a workspace root is approved under writeInsideWorkspace "allow"
// (under "ask" it goes on to the stored rules and the prompt); one
// outside every root is approved where allowPaths covers it.
std::optional<Verdict> path_check(const PermissionRequest& req, const PolicyContext& ctx,
                                  const PermissionsConfig& cfg) {
  if (req.kind != ToolPermission::kWrite || req.path.empty() ||
      req.path[0] != '/' || has_dot_dot(req.path))
    return std::nullopt;
  for (const auto& root : ctx.workspace_roots) {
    if (!inside(req.path, root)) continue;
    if (cfg.write_inside_workspace == "ask") return std::nullopt;
    return verdict(Action::kApprove, "workspace", req.path + " is inside " + root);
  }
  for (size_t i = 0; i < cfg.allow_paths.size(); ++i)
    if (inside(req.path, cfg.allow_paths[i]))
      return verdict(Action::kApprove, "allow-paths",
                     "permissions.allowPaths[" + std::to_string(i) + "] " + cfg.allow_paths[i]);
  return std::nullopt;
}

}  // namespace

const char* action_name(Action action) {
  switch (action) {
    case Action::kApprove: return "approve";
    case Action::kDeny: return "deny";
    default: return "ask";
  }
}

bool is_chat_tool(const std::string& tool) {
  return tool == "send_file" || tool == "show_file_in_chat" || tool == "no_reply" || tool == "schedule";
}

std::string url_host(const std::string& url) {
  size_t scheme = url.find("://");
  if (scheme == std::string::npos) return {};
  std::string s = ascii_lower(url.substr(0, scheme));
  if (s != "http" && s != "https") return {};
  std::string rest = url.substr(scheme + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (size_t at = rest.rfind('@'); at != std::string::npos) rest = rest.substr(at + 1);
  if (!rest.empty() && rest[0] == '[') return ascii_lower(rest.substr(0, rest.find(']') + 1));
  return ascii_lower(rest.substr(0, rest.find(':')));
}

std::optional<PermissionRequest> permission_request(const ToolRegistry& tools,
                                                    const std::string& tool,
                                                    const std::string& arguments,
                                                    std::string* error) {
  PermissionRequest req;
  req.tool = tool;
  const ToolEntry* entry = tools.find(tool);
  if (!entry) {
    size_t sep = tool.find("__");
    if (sep == std::string::npos || sep == 0 || sep + 2 >= tool.size()) {
      *error = "unknown tool: " + tool;
      return std::nullopt;
    }
    req.kind = ToolPermission::kMcp;
    req.mcp_server = tool.substr(0, sep);
    req.mcp_tool = tool.substr(sep + 2);
    return req;
  }
  req.kind = entry->permission;
  ToolTarget t = entry->describe ? entry->describe(arguments) : ToolTarget{};
  if (!t.error.empty()) {
    *error = t.error;
    return std::nullopt;
  }
  req.command = t.command;
  req.path = t.path;
  req.url = t.url;
  req.mcp_server = t.mcp_server;
  req.mcp_tool = t.mcp_tool;
  req.intent = t.intent;
  return req;
}

std::vector<std::string> rule_scopes(const PolicyContext& ctx) {
  std::vector<std::string> scopes;
  if (!ctx.channel.empty()) scopes.push_back(ctx.channel);
  if (!ctx.bot.empty()) scopes.push_back("bot:" + ctx.bot);
  scopes.push_back("global");
  return scopes;
}

Verdict decide_permission(const PermissionRequest& req, const PolicyContext& ctx) {
  std::optional<Shell> shell;
  if (req.kind == ToolPermission::kShell) shell = analyse(req.command, ctx.workspace_roots);
  std::string key = req.kind == ToolPermission::kMcp ? "mcp:" + req.mcp_server : req.tool;
  auto finish = [&](Verdict v) {
    v.remember_tool = key;
    if (shell) v.remember_patterns = shell->names;
    if (v.remember_patterns.empty()) v.remember_patterns = {"*"};
    return v;
  };
  // 1. Hard denies, in every mode.
  if (shell) {
    if (auto why = hard_deny(shell->parse, ctx.workspace_roots)) return finish(verdict(Action::kDeny, "hard-deny", *why));
  }
  // 2. Chat tools. 3. Yolo.
  if (is_chat_tool(req.tool)) return finish(verdict(Action::kApprove, "chat-tool", req.tool + " is a chat tool"));
  if (req.kind == ToolPermission::kNone)
    return finish(verdict(Action::kApprove, "no-permission",
                          req.tool + " only reads the workspace (never secrets or pilotfish's own files)"));
  // Admin tools: only for admin bots, and never approved by autopilot, a rule or a stored
  // decision: a person sees each call (nothing to remember).
  if (req.kind == ToolPermission::kAdmin) {
    Verdict v = ctx.admin ? verdict(Action::kAsk, "admin", "admin tools always ask")
                          : verdict(Action::kDeny, "admin", "only an admin bot has admin tools");
    v.remember_tool = key;
    return v;
  }
  if (ctx.yolo) return finish(verdict(Action::kApprove, "yolo", "autopilot approves everything but hard denies"));
  // 4. The config.
  static const PermissionsConfig kNoConfig;
  const PermissionsConfig& cfg = ctx.config ? *ctx.config : kNoConfig;
  const Shell* sh = shell ? &*shell : nullptr;
  if (auto hit = config_match(cfg.deny, "deny", req, sh, ctx.workspace_roots))
    return finish(verdict(Action::kDeny, "config-deny", *hit));
  if (auto hit = config_match(cfg.allow, "allow", req, sh, ctx.workspace_roots))
    return finish(verdict(Action::kApprove, "config-allow", *hit));
  if (shell && ctx.admin && shell->approvable) {
    static const std::set<std::string> admin{"cp", "mkdir", "curl", "launchctl", "mv", "touch", "chmod"};
    if (std::all_of(shell->names.begin(), shell->names.end(), [](auto& n) { return admin.count(n); }))
      return finish(verdict(Action::kApprove, "admin-shell", "an admin bot may run cp, mkdir, curl, launchctl, mv, touch and chmod"));
  }
  if (auto v = path_check(req, ctx, cfg)) return finish(*v);
  if (req.kind == ToolPermission::kUrl) {
    std::string host = url_host(req.url);
    for (size_t i = 0; i < cfg.allow_urls.size() && !host.empty(); ++i)
      if (host_matches(host, cfg.allow_urls[i]))
        return finish(verdict(Action::kApprove, "allow-urls", "permissions.allowUrls[" + std::to_string(i) + "] " + cfg.allow_urls[i]));
  }
  // 5. Stored rules. 6. A person.
  if (auto v = stored_rules(req, ctx, sh, key)) return finish(*v);
  std::string why = shell && !shell->approvable ? shell->why_not : "no rule decides";
  return finish(verdict(Action::kAsk, "prompt", why));
}

}  // namespace pf
