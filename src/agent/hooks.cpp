// Hooks (see hooks.h): hooks.json read strictly, its sources gathered, each command run with its
// event on standard input (operator hooks as a child process, workspace hooks in the sandbox)
// and preToolUse answers combined.
#include "agent/hooks.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "core/clock.h"
#include "core/config_reader.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/log.h"
#include "core/process.h"
#include "core/text.h"

namespace pf {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kEventNames[kHookEvents] = {"preToolUse",          "postToolUse",
                                                  "userPromptSubmitted", "sessionStart",
                                                  "sessionEnd",          "errorOccurred"};
constexpr size_t kMaxHookOutput = 1 << 20;

std::optional<HookEvent> event_named(const std::string& name) {
  for (size_t i = 0; i < kHookEvents; ++i)
    if (name == kEventNames[i]) return static_cast<HookEvent>(i);
  return std::nullopt;
}

HookCommand parse_command(const json& c, const std::string& at, const std::string& source,
                          bool sandboxed) {
  if (!c.is_object()) throw Error(at + ": a hook is an object {type, bash, cwd, timeoutSec, env}");
  for (auto it = c.begin(); it != c.end(); ++it)
    if (it.key() != "type" && it.key() != "bash" && it.key() != "powershell" &&
        it.key() != "cwd" && it.key() != "timeoutSec" && it.key() != "env" &&
        it.key() != "comment")
      throw Error(at + "." + it.key() + ": unknown key");
  HookCommand h;
  h.source = source;
  h.sandboxed = sandboxed;
  if (c.contains("type") && c["type"] != "command")
    throw Error(at + ".type: only \"command\" hooks run here");
  if (!c.contains("bash") || !c["bash"].is_string() || c["bash"].get<std::string>().empty())
    throw Error(at + ".bash: a hook needs a bash command (powershell hooks do not run here)");
  h.bash = c["bash"].get<std::string>();
  if (c.contains("cwd")) {
    if (!c["cwd"].is_string()) throw Error(at + ".cwd: expected a string");
    h.cwd = c["cwd"].get<std::string>();
    if (!h.cwd.empty() && h.cwd[0] == '/')
      throw Error(at + ".cwd: a path relative to the workspace, not an absolute one");
    for (const fs::path& part : fs::path(h.cwd))
      if (part == "..") throw Error(at + ".cwd: may not leave the workspace (\"..\")");
  }
  if (c.contains("timeoutSec")) {
    const json& t = c["timeoutSec"];
    if (!t.is_number_integer() || t.get<int64_t>() < 1 || t.get<int64_t>() > 600)
      throw Error(at + ".timeoutSec: a whole number of seconds from 1 to 600");
    h.timeout_sec = t.get<int64_t>();
  }
  if (c.contains("env")) {
    if (!c["env"].is_object()) throw Error(at + ".env: expected an object of strings");
    for (auto it = c["env"].begin(); it != c["env"].end(); ++it) {
      if (!it->is_string()) throw Error(at + ".env." + it.key() + ": expected a string");
      if (it.key().empty() || it.key().find('=') != std::string::npos)
        throw Error(at + ".env: \"" + it.key() + "\" is not a variable name");
      h.env.emplace_back(it.key(), it->get<std::string>());
    }
  }
  return h;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A private temporary file holding text (empty path when it cannot be made).
std::string temp_file(const std::string& text) {
  char name[] = "/tmp/pilotfish-hook-XXXXXX";
  int fd = ::mkstemp(name);
  if (fd < 0) return "";
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return name;
}

std::string read_head(const std::string& path, size_t max) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out(max, '\0');
  ssize_t n = ::read(fd, out.data(), max);
  ::close(fd);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return trim_space(out);
}

// bash -c command as this process runs, in cwd, with env added; standard input from in_path,
// standard error to err_path (core/process.h).
HookRun run_plain(const HookCommand& h, const std::string& cwd, const std::string& in_path,
                  const std::string& err_path) {
  ProcessSpec spec;
  spec.argv = {"bash", "-c", h.bash};
  spec.cwd = cwd;
  spec.env = h.env;
  spec.stdin_path = in_path;
  spec.stderr_path = err_path;
  spec.timeout_ms = h.timeout_sec * 1000;
  spec.max_output_bytes = kMaxHookOutput;
  ProcessResult p = run_process(spec);
  HookRun r;
  r.ok = p.ok;
  r.output = std::move(p.output);
  r.error = std::move(p.error);
  return r;
}

HookRun run_in_sandbox(const HookCommand& h, const HookContext& ctx, const std::string& in_path,
                       const std::string& err_path) {
  HookRun r;
  SandboxOptions o = ctx.sandbox;
  o.workspace = ctx.workspace;
  o.stdin_path = in_path;
  o.stderr_path = err_path;
  o.env = h.env;
  o.timeout_ms = h.timeout_sec * 1000;
  o.max_output_bytes = kMaxHookOutput;
  std::string command = h.cwd.empty() ? h.bash : "cd -- " + shell_quote(h.cwd) + " || exit 126\n" + h.bash;
  CommandResult c = run_sandboxed(command, o);
  r.output = c.output;
  if (!c.ran) {
    r.error = c.error;
  } else if (c.timed_out) {
    r.error = "timed out after " + std::to_string(h.timeout_sec) + " s";
  } else if (c.too_many_processes) {
    r.error = "it started too many processes";
  } else if (c.exit_code == 0) {
    r.ok = true;
  } else {
    r.error = c.signal ? "killed by signal " + std::to_string(c.signal)
                       : "exit status " + std::to_string(c.exit_code);
  }
  return r;
}

json with_common(json payload, const std::string& workspace) {
  payload["timestamp"] = unix_time_ms();
  payload["cwd"] = workspace;
  return payload;
}

std::string hook_name(const HookCommand& h, HookEvent e, size_t i) {
  return h.source + " " + hook_event_name(e) + "[" + std::to_string(i) + "]";
}

}  // namespace

const char* hook_event_name(HookEvent event) { return kEventNames[static_cast<size_t>(event)]; }

size_t HookSet::size() const {
  size_t n = 0;
  for (const auto& list : commands) n += list.size();
  return n;
}

void HookSet::append(HookSet other) {
  for (size_t i = 0; i < kHookEvents; ++i)
    for (HookCommand& h : other.commands[i]) commands[i].push_back(std::move(h));
  for (DefinitionProblem& p : other.problems) problems.push_back(std::move(p));
}

HookSet parse_hooks(const json& document, const std::string& source, bool sandboxed) {
  if (!document.is_object()) throw Error("a hooks file is a JSON object {version, hooks}");
  for (auto it = document.begin(); it != document.end(); ++it)
    if (it.key() != "version" && it.key() != "hooks" && it.key() != "comment")
      throw Error(it.key() + ": unknown key (a hooks file has version and hooks)");
  if (!document.contains("version") || document["version"] != 1)
    throw Error("version: only version 1 of hooks.json is read (\"version\": 1)");
  HookSet out;
  if (!document.contains("hooks")) return out;
  const json& hooks = document["hooks"];
  if (!hooks.is_object()) throw Error("hooks: expected an object of event names");
  for (auto it = hooks.begin(); it != hooks.end(); ++it) {
    std::optional<HookEvent> e = event_named(it.key());
    if (!e) {
      std::string known;
      for (const char* n : kEventNames) known += (known.empty() ? "" : ", ") + std::string(n);
      throw Error("hooks." + it.key() + ": unknown event (the events: " + known + ")");
    }
    if (!it->is_array()) throw Error("hooks." + it.key() + ": expected a list of hooks");
    for (size_t i = 0; i < it->size(); ++i)
      out.commands[static_cast<size_t>(*e)].push_back(parse_command(
          (*it)[i], "hooks." + it.key() + "[" + std::to_string(i) + "]", source, sandboxed));
  }
  return out;
}

HookSet parse_hooks_json(std::string_view text, const std::string& source, bool sandboxed) {
  std::string why;
  json doc = parse_json(text, &why);
  if (doc.is_discarded()) throw Error("not JSON: " + why);
  return parse_hooks(doc, source, sandboxed);
}

namespace {

std::shared_ptr<const ConfigSection> parse_hooks_section(const nlohmann::ordered_json& value,
                                                         const Config&, const std::string& source) {
  auto out = std::make_shared<HooksConfig>();
  if (value.is_null()) return out;
  if (!value.is_object()) config_detail::fail(source, "hooks", "expected an object {version, hooks}");
  json doc = json::parse(value.dump());
  if (doc.contains("allowWorkspaceHooks")) {
    if (!doc["allowWorkspaceHooks"].is_boolean())
      config_detail::fail(source, "hooks.allowWorkspaceHooks", "expected true or false");
    out->allow_workspace_hooks = doc["allowWorkspaceHooks"].get<bool>();
    doc.erase("allowWorkspaceHooks");
  }
  try {
    out->hooks = parse_hooks(doc, "config", false);
  } catch (const Error& e) {
    config_detail::fail(source, "hooks", e.what());
  }
  return out;
}

}  // namespace

const HooksConfig& hooks_config(const Config& config) {
  static const HooksConfig kNone;
  const HooksConfig* c = config.section<HooksConfig>("hooks");
  return c ? *c : kNone;
}

bool register_hooks_config() {
  static const bool once = register_config_section("hooks", parse_hooks_section);
  return once;
}

HookSet load_hooks(const Config& config, const std::string& workspace,
                   const std::string& user_dir) {
  const HooksConfig& hc = hooks_config(config);
  HookSet out = hc.hooks;
  auto load = [&](const std::string& file, bool sandboxed) {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) return;
    try {
      out.append(parse_hooks_json(read_file(file), file, sandboxed));
    } catch (const Error& e) {
      out.problems.push_back({file, e.what()});
    }
  };
  std::string dir = user_dir.empty() ? user_config_dir() : user_dir;
  if (!dir.empty()) load(dir + "/hooks.json", false);
  if (hc.allow_workspace_hooks && !workspace.empty()) {
    std::vector<std::string> files;
    std::error_code ec;
    for (fs::directory_iterator it(workspace + "/.github/hooks", ec), end; !ec && it != end;
         it.increment(ec))
      if (it->path().extension() == ".json") files.push_back(it->path().string());
    std::sort(files.begin(), files.end());
    for (const std::string& f : files) load(f, true);
  }
  return out;
}

HookRun run_hook(const HookCommand& hook, const json& event, const HookContext& context) {
  HookRun r;
  std::string in_path = temp_file(event.dump());
  std::string err_path = temp_file("");
  if (in_path.empty() || err_path.empty()) {
    r.error = std::string("cannot write its input: ") + std::strerror(errno);
  } else if (hook.sandboxed) {
    r = run_in_sandbox(hook, context, in_path, err_path);
  } else {
    std::string cwd = hook.cwd.empty() ? context.workspace : context.workspace + "/" + hook.cwd;
    r = run_plain(hook, cwd, in_path, err_path);
  }
  if (!r.ok && !err_path.empty()) {
    std::string said = read_head(err_path, 300);
    if (!said.empty()) r.error += ": " + said;
  }
  if (!in_path.empty()) ::unlink(in_path.c_str());
  if (!err_path.empty()) ::unlink(err_path.c_str());
  return r;
}

void read_pre_tool_answer(const std::string& output, const std::string& name,
                          HookDecision& decision) {
  using A = HookDecision::Action;
  auto take = [&](A action, std::string reason) {
    if (static_cast<int>(action) > static_cast<int>(decision.action)) {
      decision.action = action;
      decision.reason = std::move(reason);
    }
  };
  std::string text = trim_space(output);
  if (text.empty()) return;  // no opinion
  json answer = parse_json(text);
  if (!answer.is_object()) {
    take(A::kDeny, "hook " + name + " answered with something that is not a JSON object: " +
                       text.substr(0, 120));
    return;
  }
  std::string d = ascii_lower(json_string(answer, "permissionDecision"));
  std::string reason = json_string(answer, "permissionDecisionReason");
  if (d.empty()) return;
  if (d == "allow") return take(A::kAllow, reason);
  if (d == "ask") return take(A::kAsk, reason.empty() ? "hook " + name + " asks" : reason);
  if (d == "deny") return take(A::kDeny, reason.empty() ? "denied by hook " + name : reason);
  take(A::kDeny, "hook " + name + " answered an unknown permissionDecision \"" + d.substr(0, 40) +
                     "\" (allow, deny or ask)");
}

HookDecision run_pre_tool_hooks(const HookSet& hooks, const std::string& tool,
                                const std::string& arguments, const HookContext& context) {
  HookDecision decision;
  const auto& list = hooks.of(HookEvent::kPreToolUse);
  json event = with_common({{"toolName", tool}, {"toolArgs", arguments}}, context.workspace);
  for (size_t i = 0; i < list.size(); ++i) {
    std::string name = hook_name(list[i], HookEvent::kPreToolUse, i);
    HookRun r = run_hook(list[i], event, context);
    if (!r.ok) {
      decision.action = HookDecision::Action::kDeny;
      decision.reason = "hook " + name + " failed (" + r.error + "), so the call is denied";
    } else {
      read_pre_tool_answer(r.output, name, decision);
    }
    if (decision.action == HookDecision::Action::kDeny) break;  // nothing overrides a deny
  }
  return decision;
}

json post_tool_payload(const std::string& tool, const std::string& arguments,
                       const std::string& result) {
  json parsed = parse_json(result);
  bool failed = parsed.is_object() && parsed.contains("error");
  json payload = {{"toolName", tool}, {"toolArgs", arguments}};
  payload["toolResult"] = {{"resultType", failed ? "failure" : "success"},
                           {"textResultForLlm", result}};
  return payload;
}

void run_event_hooks(const HookSet& hooks, HookEvent event, json payload,
                     const HookContext& context) {
  const auto& list = hooks.of(event);
  if (list.empty()) return;
  json e = with_common(std::move(payload), context.workspace);
  for (size_t i = 0; i < list.size(); ++i) {
    HookRun r = run_hook(list[i], e, context);
    if (!r.ok) log::warn("hooks", "hook " + hook_name(list[i], event, i) + " failed: " + r.error);
  }
}

}  // namespace pf
