// The side-effecting tools (see action_tools.h): their schemas, argument checks and runners.
#include "agent/action_tools.h"

#include <arpa/inet.h>
#include <limits.h>
#include <netdb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>

#include "core/error.h"
#include "core/fs.h"
#include "core/json.h"
#include "index/file_filter.h"
#include "net/http_client.h"

namespace pf {
namespace {

using nlohmann::json;

json error(const std::string& message) { return {{"error", message}}; }

constexpr size_t kMaxWriteBytes = 1 << 20;

json object_schema(json properties, std::vector<std::string> required) {
  return {{"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(required)},
          {"additionalProperties", false}};
}

// Arguments as an object, or nullopt with *why.
std::optional<json> arguments_object(const std::string& text, std::string* why) {
  json j = parse_json(text);
  if (!j.is_object()) {
    *why = "the arguments must be a JSON object";
    return std::nullopt;
  }
  return j;
}

std::string string_arg(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool has_string(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string();
}

// A describe() that takes one required string argument into a target field, and the intent.
std::function<ToolTarget(const std::string&)> describe_field(const char* key,
                                                             std::string ToolTarget::*field) {
  return [key, field](const std::string& args) {
    ToolTarget t;
    auto j = arguments_object(args, &t.error);
    if (!j) return t;
    if (!has_string(*j, key)) t.error = std::string(key) + " is required";
    t.*field = string_arg(*j, key);
    t.intent = string_arg(*j, "intent");
    return t;
  };
}

// A write path's components ("." dropped), or nullopt with *why: "..", git internals and
// secret names are refused anywhere; outside the workspace hidden names too (~/.ssh, ~/.bashrc).
std::optional<std::vector<std::string>> write_segments(const std::string& p, bool outside,
                                                       std::string* why) {
  std::vector<std::string> segments;
  size_t start = 0;
  while (start <= p.size()) {
    size_t slash = p.find('/', start);
    std::string seg = p.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    start = slash == std::string::npos ? p.size() + 1 : slash + 1;
    if (seg.empty() || seg == ".") continue;
    if (seg == "..") {
      *why = "paths may not contain '..'";
      return std::nullopt;
    }
    if (seg == ".git" || is_secret_dir(seg) || is_secret_file(seg)) {
      *why = "git internals and secret files are not writable";
      return std::nullopt;
    }
    if (outside && seg[0] == '.') {
      *why = "hidden files and folders outside the workspace are not writable";
      return std::nullopt;
    }
    segments.push_back(seg);
  }
  return segments;
}

}  // namespace

void add_permitted_binds(const PermissionsConfig& permissions, SandboxOptions& options) {
  std::vector<std::string> wanted = permissions.allow_paths;
  for (const auto& spec : permissions.allow)
    if (spec.kind == "write" && !spec.arg.empty() && spec.arg[0] == '/') wanted.push_back(spec.arg);
  auto bind = [&](const std::string& path, std::vector<std::string>& binds) {
    std::string why;
    char buf[PATH_MAX];
    if (!::realpath(path.c_str(), buf)) return;
    std::string real = buf;
    const std::string& ws = options.workspace;
    if (real == "/" || real == ws || real.rfind(ws + "/", 0) == 0 || options.own.covers(real) ||
        !write_segments(real.substr(1), true, &why))
      return;
    if (std::find(binds.begin(), binds.end(), real) == binds.end()) binds.push_back(real);
  };
  for (const auto& path : wanted) bind(path, options.writable_binds);
  for (const auto& path : permissions.read_paths) bind(path, options.read_only_binds);
}

bool is_private_address(const std::string& ip) {
  in6_addr a6{};
  in_addr a4{};
  if (::inet_pton(AF_INET, ip.c_str(), &a4) == 1) {
    uint32_t v = ntohl(a4.s_addr);
    auto in = [&](uint32_t net, int bits) { return (v >> (32 - bits)) == (net >> (32 - bits)); };
    return in(0x00000000, 8) || in(0x0A000000, 8) || in(0x7F000000, 8) || in(0xA9FE0000, 16) ||
           in(0xAC100000, 12) || in(0xC0A80000, 16) || in(0x64400000, 10) || in(0xC0000000, 24) ||
           in(0xC6120000, 15) || v >= 0xE0000000;
  }
  if (::inet_pton(AF_INET6, ip.c_str(), &a6) == 1) {
    const uint8_t* b = a6.s6_addr;
    static const uint8_t zero[16] = {};
    if (std::memcmp(b, zero, 15) == 0 && (b[15] == 0 || b[15] == 1)) return true;  // :: and ::1
    if (std::memcmp(b, zero, 10) == 0 && b[10] == 0xff && b[11] == 0xff) {        // ::ffff:a.b.c.d
      char v4[INET_ADDRSTRLEN];
      ::inet_ntop(AF_INET, b + 12, v4, sizeof v4);
      return is_private_address(v4);
    }
    return (b[0] & 0xfe) == 0xfc || (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) || b[0] == 0xff;
  }
  return true;  // not an address: treat as unsafe
}

ActionTools::ActionTools(std::string root, ActionsConfig config, OwnFiles own,
                         PermissionsConfig permissions)
    : config_(std::move(config)), own_(std::move(own)), permissions_(std::move(permissions)) {
  char buf[PATH_MAX];
  root_ = ::realpath(root.c_str(), buf) ? std::string(buf) : root;
}

std::optional<std::string> ActionTools::resolve_for_write(const std::string& path,
                                                          std::string* why) const {
  if (path.empty() || path.find('\0') != std::string::npos) {
    *why = "give a path relative to the workspace, or an absolute one";
    return std::nullopt;
  }
  // An absolute path inside the workspace is taken as relative to it; one outside is resolved
  // from the root, and the permission engine decides on it (allowPaths, write rules, a person).
  std::string base = root_;
  std::string p = path;
  if (p[0] == '/') {
    if (p == root_ || p.rfind(root_ + "/", 0) == 0) {
      p = p.substr(std::min(p.size(), root_.size() + 1));
    } else {
      base.clear();
    }
  }
  auto segments = write_segments(p, base.empty(), why);
  if (!segments) return std::nullopt;
  if (segments->empty()) {
    *why = "name a file, not the workspace itself";
    return std::nullopt;
  }
  // Every existing ancestor's symlinks are followed; the file itself may not be a symlink.
  std::string cur = base;
  for (size_t i = 0; i < segments->size(); ++i) {
    std::string next = cur + "/" + (*segments)[i];
    struct stat st {};
    if (::lstat(next.c_str(), &st) != 0) {
      for (size_t j = i; j < segments->size(); ++j) cur += "/" + (*segments)[j];
      break;
    }
    if (S_ISLNK(st.st_mode)) {
      char buf[PATH_MAX];
      if (i + 1 == segments->size() || !::realpath(next.c_str(), buf)) {
        *why = i + 1 == segments->size() ? "the file is a symbolic link" : "a symbolic link on the way is broken";
        return std::nullopt;
      }
      next = buf;
    }
    cur = next;
  }
  // Where it really is: outside the workspace, the same names are refused again.
  bool inside = cur.rfind(root_ + "/", 0) == 0;
  if (!write_segments(inside ? cur.substr(root_.size() + 1) : cur.substr(1), !inside, why))
    return std::nullopt;
  if (own_.covers(cur)) {
    *why = "pilotfish's own files are not writable";
    return std::nullopt;
  }
  return cur;
}

std::string ActionTools::shown_path(const std::string& abs) const {
  return abs.rfind(root_ + "/", 0) == 0 ? abs.substr(root_.size() + 1) : abs;
}

json ActionTools::write_file(const std::string& path, const std::string& content) const {
  std::string why;
  auto abs = resolve_for_write(path, &why);
  if (!abs) return error("cannot write " + path + ": " + why);
  if (content.size() > kMaxWriteBytes) return error("the content is over 1 MiB; write it in parts");
  struct stat st {};
  bool existed = ::stat(abs->c_str(), &st) == 0;
  if (existed && !S_ISREG(st.st_mode)) return error(path + " is not a regular file");
  try {
    write_file_atomic(*abs, content);
    if (existed) ::chmod(abs->c_str(), st.st_mode & 07777);  // the rename made a new file
  } catch (const Error& e) {
    return error(std::string("cannot write ") + path + ": " + e.what());
  }
  return {{"path", shown_path(*abs)}, {"bytes", content.size()}, {"created", !existed}};
}

json ActionTools::edit_file(const std::string& path, const std::string& old_text,
                            const std::string& new_text, bool replace_all) const {
  std::string why;
  auto abs = resolve_for_write(path, &why);
  if (!abs) return error("cannot edit " + path + ": " + why);
  if (old_text.empty()) return error("old_string is empty; use write_file to create a file");
  std::string content;
  try {
    content = read_file(*abs);
  } catch (const Error&) {
    return error("cannot edit " + path + ": it does not exist");
  }
  size_t count = 0;
  for (size_t at = content.find(old_text); at != std::string::npos;
       at = content.find(old_text, at + old_text.size()))
    ++count;
  if (count == 0) return error("old_string was not found in " + path + "; read the file and copy the text exactly");
  if (count > 1 && !replace_all)
    return error("old_string appears " + std::to_string(count) + " times in " + path +
                 "; include more surrounding lines to make it unique, or set replace_all");
  std::string out;
  size_t from = 0;
  for (size_t at = content.find(old_text); at != std::string::npos;
       at = content.find(old_text, from)) {
    out.append(content, from, at - from);
    out += new_text;
    from = at + old_text.size();
    if (!replace_all) break;
  }
  out.append(content, from, std::string::npos);
  if (out.size() > kMaxWriteBytes) return error("the edited file would be over 1 MiB");
  try {
    struct stat st {};
    bool existed = ::stat(abs->c_str(), &st) == 0;
    write_file_atomic(*abs, out);
    if (existed) ::chmod(abs->c_str(), st.st_mode & 07777);
  } catch (const Error& e) {
    return error(std::string("cannot write ") + path + ": " + e.what());
  }
  return {{"path", shown_path(*abs)}, {"replacements", replace_all ? count : 1}};
}

json ActionTools::run_command(const std::string& command, int64_t timeout_seconds,
                              const std::string& exposed) const {
  if (command.empty()) return error("the command is empty");
  SandboxOptions o;
  o.workspace = root_;
  o.own = own_;
  if (!exposed.empty()) o.own.expose(exposed);
  add_permitted_binds(permissions_, o);
  o.network = config_.network;
  int64_t limit = config_.command_timeout_seconds;
  o.timeout_ms = 1000 * (timeout_seconds > 0 ? std::min(timeout_seconds, limit) : limit);
  o.max_output_bytes = static_cast<size_t>(config_.max_output_bytes);
  CommandResult r = run_sandboxed(command, o);
  if (!r.ran) return error(r.error);
  json out = {{"exit_code", r.exit_code}, {"output", r.output}, {"duration_ms", r.duration_ms}};
  if (r.output_bytes > r.output.size())
    out["truncated"] = "output cut at " + std::to_string(r.output.size()) + " of " +
                       std::to_string(r.output_bytes) + " bytes";
  if (r.timed_out) out["timed_out"] = "killed after " + std::to_string(o.timeout_ms / 1000) + " s";
  if (r.too_many_processes) out["killed"] = "it started more than " + std::to_string(o.max_processes) + " processes";
  if (r.signal) out["signal"] = r.signal;
  if (!r.removed.empty()) {
    std::string names;
    for (const auto& f : r.removed) names += (names.empty() ? "" : ", ") + f;
    out["removed"] = "pilotfish's own files may not be created; removed: " + names;
  }
  return out;
}

json ActionTools::fetch_url(const std::string& url) const {
  std::string current = url;
  for (int hop = 0; hop < 5; ++hop) {
    ParsedUrl u;
    try {
      u = parse_url(current);
    } catch (const Error& e) {
      return error(e.what());
    }
    if (!config_.allow_private_urls) {
      std::string host = u.host;
      if (!host.empty() && host.front() == '[') host = host.substr(1, host.size() - 2);
      addrinfo hints{}, *res = nullptr;
      hints.ai_socktype = SOCK_STREAM;
      if (::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || !res)
        return error("cannot resolve " + host);
      std::string bad;
      for (addrinfo* a = res; a; a = a->ai_next) {
        char ip[INET6_ADDRSTRLEN] = {};
        const void* addr = a->ai_family == AF_INET
                               ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr)
                               : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr);
        ::inet_ntop(a->ai_family, addr, ip, sizeof ip);
        if (is_private_address(ip)) bad = ip;
      }
      ::freeaddrinfo(res);
      if (!bad.empty())
        return error(host + " resolves to " + bad +
                     ", a loopback or private address; such URLs are refused (actions.allowPrivateUrls)");
    }
    HttpRequest req;
    req.method = "GET";
    req.url = current;
    req.headers.push_back({"Accept", "text/html,text/plain,application/json,*/*;q=0.5"});
    req.timeout = std::chrono::seconds(config_.fetch_timeout_seconds);
    std::string body;
    bool cut = false;
    size_t cap = static_cast<size_t>(config_.fetch_max_bytes);
    HttpResponse resp;
    try {
      resp = http_stream(req, [&](std::string_view piece) {
        size_t room = cap - body.size();
        body.append(piece.substr(0, room));
        if (piece.size() > room) cut = true;
        return !cut;
      });
    } catch (const Error& e) {
      return error(e.what());
    }
    if (resp.status >= 300 && resp.status < 400 && !resp.header("Location").empty()) {
      std::string loc = resp.header("Location");
      if (loc.rfind("http://", 0) != 0 && loc.rfind("https://", 0) != 0)
        loc = (u.tls ? "https://" : "http://") + u.host + ":" + u.port + (loc.empty() || loc[0] != '/' ? "/" : "") + loc;
      current = loc;
      continue;
    }
    if (resp.status < 200 || resp.status >= 300) {
      body = resp.body.substr(0, std::min<size_t>(resp.body.size(), 2000));
      return {{"url", current}, {"status", resp.status}, {"error", "HTTP " + std::to_string(resp.status)}, {"body", body}};
    }
    json out = {{"url", current}, {"status", resp.status}, {"content_type", resp.header("Content-Type")}};
    out["body"] = body;
    if (cut) out["truncated"] = "cut at " + std::to_string(cap) + " bytes";
    return out;
  }
  return error("too many redirects (5)");
}

void ActionTools::add_to(ToolRegistry& registry, const std::vector<std::string>& kinds,
                         const std::string& exposed) const {
  auto has = [&](const char* k) { return std::find(kinds.begin(), kinds.end(), k) != kinds.end(); };
  size_t cap = static_cast<size_t>(config_.max_output_bytes) + 4096;
  if (has("write")) {
    auto describe_path = [this](const std::string& args) {
      ToolTarget t;
      auto j = arguments_object(args, &t.error);
      if (!j) return t;
      if (!has_string(*j, "path")) {
        t.error = "path is required";
        return t;
      }
      auto abs = resolve_for_write(string_arg(*j, "path"), &t.error);
      if (abs) t.path = *abs;
      t.intent = string_arg(*j, "intent");
      return t;
    };
    registry.add({{"write_file",
                   "Create or overwrite a file in the workspace with the given content (a path "
                   "outside it only where the permissions allow).",
                   object_schema({{"path", {{"type", "string"}, {"description", "relative to the workspace, or absolute"}}},
                                  {"content", {{"type", "string"}}},
                                  {"intent", {{"type", "string"}, {"description", "why, in a few words"}}}},
                                 {"path", "content"})},
                  ToolPermission::kWrite, 4096, describe_path,
                  [this](const std::string& args, Store*) {
                    std::string why;
                    auto j = arguments_object(args, &why);
                    if (!j) return error(why);
                    if (!has_string(*j, "path") || !has_string(*j, "content"))
                      return error("path and content are required strings");
                    return write_file(string_arg(*j, "path"), string_arg(*j, "content"));
                  }});
    registry.add({{"edit_file",
                   "Replace an exact piece of text in a workspace file. old_string must match "
                   "exactly once (include surrounding lines), unless replace_all is true.",
                   object_schema({{"path", {{"type", "string"}}},
                                  {"old_string", {{"type", "string"}}},
                                  {"new_string", {{"type", "string"}}},
                                  {"replace_all", {{"type", "boolean"}}},
                                  {"intent", {{"type", "string"}}}},
                                 {"path", "old_string", "new_string"})},
                  ToolPermission::kWrite, 4096, describe_path,
                  [this](const std::string& args, Store*) {
                    std::string why;
                    auto j = arguments_object(args, &why);
                    if (!j) return error(why);
                    if (!has_string(*j, "path") || !has_string(*j, "old_string") || !has_string(*j, "new_string"))
                      return error("path, old_string and new_string are required strings");
                    bool all = j->contains("replace_all") && (*j)["replace_all"].is_boolean() && (*j)["replace_all"].get<bool>();
                    return edit_file(string_arg(*j, "path"), string_arg(*j, "old_string"),
                                     string_arg(*j, "new_string"), all);
                  }});
  }
  if (has("shell")) {
    registry.add({{"run_command",
                   "Run a bash command in the workspace, inside a sandbox (no network unless "
                   "allowed, only the workspace writable). Returns its exit code and output.",
                   object_schema({{"command", {{"type", "string"}}},
                                  {"intent", {{"type", "string"}, {"description", "why, in a few words"}}},
                                  {"timeout_seconds", {{"type", "integer"}, {"minimum", 1}}}},
                                 {"command"})},
                  ToolPermission::kShell, cap,
                  describe_field("command", &ToolTarget::command),
                  [this, exposed](const std::string& args, Store*) {
                    std::string why;
                    auto j = arguments_object(args, &why);
                    if (!j) return error(why);
                    if (!has_string(*j, "command")) return error("command is required");
                    int64_t timeout = 0;
                    if (j->contains("timeout_seconds") && (*j)["timeout_seconds"].is_number_integer())
                      timeout = (*j)["timeout_seconds"].get<int64_t>();
                    return run_command(string_arg(*j, "command"), timeout, exposed);
                  }});
  }
  if (has("url")) {
    registry.add({{"fetch_url", "Fetch a web page or API response over HTTP(S) GET.",
                   object_schema({{"url", {{"type", "string"}}}, {"intent", {{"type", "string"}}}}, {"url"})},
                  ToolPermission::kUrl, static_cast<size_t>(config_.fetch_max_bytes) * 2 + 4096,
                  describe_field("url", &ToolTarget::url),
                  [this](const std::string& args, Store*) {
                    std::string why;
                    auto j = arguments_object(args, &why);
                    if (!j) return error(why);
                    if (!has_string(*j, "url")) return error("url is required");
                    return fetch_url(string_arg(*j, "url"));
                  }});
  }
}

}  // namespace pf
