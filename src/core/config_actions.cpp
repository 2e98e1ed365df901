// The "actions" and "permissions" sections of the configuration (see config.h): which
// side-effecting tools the agent is offered and under what limits, and the operator's
// permission rules. The rules are parsed here, at load, so a mistyped one is a config error and
// not a rule that silently never matches.
#include <cctype>

#include "core/config_reader.h"

namespace pf {
namespace {

// "\"" + text + "\"" trips GCC 12's -Wrestrict on string_view operands; this does not.
std::string quoted(std::string_view text) {
  std::string q(1, '"');
  q.append(text);
  q.push_back('"');
  return q;
}

}  // namespace

std::optional<PermissionSpec> parse_permission_spec(std::string_view text, std::string* why) {
  auto bad = [&](const std::string& w) -> std::optional<PermissionSpec> {
    if (why) *why = w;
    return std::nullopt;
  };
  PermissionSpec spec;
  spec.text = std::string(text);
  size_t open = text.find('(');
  spec.kind = std::string(text.substr(0, open));
  if (spec.kind == "read")
    return bad("there is no read permission (" + quoted(text) + "): the read tools never leave the "
               "workspace; allowPaths or write(path) open a folder to write_file, edit_file and "
               "run_command");
  if (spec.kind != "shell" && spec.kind != "write" && spec.kind != "url" && spec.kind != "mcp")
    return bad("expected shell, write, url or mcp, optionally with (argument), got " + quoted(text));
  if (open == std::string_view::npos) return spec;
  if (text.back() != ')') return bad(quoted(text) + " lacks its closing ')'");
  std::string_view arg = text.substr(open + 1, text.size() - open - 2);
  if (spec.kind == "mcp") {
    size_t inner = arg.find('(');
    if (inner != std::string_view::npos) {
      if (arg.back() != ')' || inner == 0 || inner + 2 >= arg.size())
        return bad("expected mcp(server) or mcp(server(tool)), got " + quoted(text));
      spec.tool = std::string(arg.substr(inner + 1, arg.size() - inner - 2));
      arg = arg.substr(0, inner);
    }
  }
  while (!arg.empty() && std::isspace(static_cast<unsigned char>(arg.front()))) arg.remove_prefix(1);
  while (!arg.empty() && std::isspace(static_cast<unsigned char>(arg.back()))) arg.remove_suffix(1);
  if (arg.empty()) return bad(quoted(text) + " has an empty argument");
  if (arg.find_first_of("()") != std::string_view::npos)
    return bad("unbalanced parentheses in " + quoted(text));
  spec.arg = std::string(arg);
  return spec;
}

namespace config_detail {

std::vector<std::string> strings(Reader& r, const json& parent, const std::string& at,
                                 const char* key) {
  std::vector<std::string> out;
  auto it = parent.find(key);
  if (it == parent.end()) return out;
  std::string here = Reader::join(at, key);
  if (!it->is_array()) fail(r.source(), here, std::string("expected an array, got ") + kind(*it));
  for (size_t i = 0; i < it->size(); ++i) {
    if (!(*it)[i].is_string())
      fail(r.source(), here + "[" + std::to_string(i) + "]",
           std::string("expected a string, got ") + kind((*it)[i]));
    out.push_back((*it)[i].get<std::string>());
  }
  return out;
}

std::vector<std::string> action_kinds(Reader& r, const json& parent, const std::string& at,
                                      const char* key) {
  std::vector<std::string> kinds = strings(r, parent, at, key);
  for (size_t i = 0; i < kinds.size(); ++i)
    if (kinds[i] != "write" && kinds[i] != "shell" && kinds[i] != "url")
      fail(r.source(), Reader::join(at, key) + "[" + std::to_string(i) + "]",
           "expected \"write\", \"shell\" or \"url\", got \"" + kinds[i] + "\"");
  return kinds;
}

void parse_actions(Reader& r, const json& a, ActionsConfig& out) {
  const std::string at = "actions";
  r.only_keys(a, at,
              {"enabled", "permissionMode", "network", "commandTimeoutSeconds", "maxOutputBytes",
               "allowPrivateUrls", "fetchMaxBytes", "fetchTimeoutSeconds"});
  out.enabled = action_kinds(r, a, at, "enabled");
  if (a.contains("permissionMode")) {
    out.permission_mode = r.string(a, at, "permissionMode", true);
    if (out.permission_mode != "interactive" && out.permission_mode != "autopilot")
      fail(r.source(), at + ".permissionMode",
           "expected \"interactive\" or \"autopilot\", got \"" + out.permission_mode + "\"");
  }
  for (auto [key, field] : {std::pair{"network", &out.network},
                            std::pair{"allowPrivateUrls", &out.allow_private_urls}}) {
    if (!a.contains(key)) continue;
    if (!a.at(key).is_boolean()) fail(r.source(), at + "." + key, "expected true or false");
    *field = a.at(key).get<bool>();
  }
  out.command_timeout_seconds =
      r.integer(a, at, "commandTimeoutSeconds", 1, 3600, out.command_timeout_seconds);
  out.max_output_bytes = r.integer(a, at, "maxOutputBytes", 1024, 16 << 20, out.max_output_bytes);
  out.fetch_max_bytes = r.integer(a, at, "fetchMaxBytes", 1024, 64 << 20, out.fetch_max_bytes);
  out.fetch_timeout_seconds =
      r.integer(a, at, "fetchTimeoutSeconds", 1, 600, out.fetch_timeout_seconds);
}

void parse_mcp(Reader& r, const json& servers, const std::string& at, std::vector<McpServerConfig>& out) {
  for (auto it = servers.begin(); it != servers.end(); ++it) {
    std::string here = at + "." + it.key();
    bool bad = it.key().empty() || it.key().size() > 64 || it.key().find("__") != std::string::npos;
    for (char c : it.key()) bad = bad || !(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_');
    if (bad) fail(r.source(), here, "a server name is 1-64 letters, digits, '-' or '_' (no \"__\")");
    if (!it->is_object()) fail(r.source(), here, std::string("expected an object, got ") + kind(*it));
    const json& s = *it;
    r.only_keys(s, here, {"command", "args", "env", "url", "headers", "timeoutSeconds", "type"});
    McpServerConfig c;
    c.name = it.key();
    c.command = r.string(s, here, "command", false);
    c.args = strings(r, s, here, "args");
    c.url = r.string(s, here, "url", false);
    if (c.command.empty() == c.url.empty())
      fail(r.source(), here, "give either command (a local server) or url (a remote one)");
    if (!c.url.empty() && c.url.rfind("http://", 0) != 0 && c.url.rfind("https://", 0) != 0)
      fail(r.source(), here + ".url", "expected an http:// or https:// URL");
    for (auto [key, list] : {std::pair{"env", &c.env}, std::pair{"headers", &c.headers}}) {
      if (!s.contains(key)) continue;
      const json& o = r.object(s, here, key);
      for (auto e = o.begin(); e != o.end(); ++e) {
        if (!e->is_string()) fail(r.source(), here + "." + key + "." + e.key(), "expected a string");
        list->emplace_back(e.key(), e->get<std::string>());
      }
    }
    c.timeout_seconds = r.integer(s, here, "timeoutSeconds", 1, 3600, c.timeout_seconds);
    out.push_back(std::move(c));
  }
}

void parse_permissions(Reader& r, const json& p, PermissionsConfig& out) {
  const std::string at = "permissions";
  r.only_keys(p, at, {"allow", "deny", "allowPaths", "readPaths", "allowUrls", "writeInsideWorkspace"});
  if (p.contains("writeInsideWorkspace")) {
    out.write_inside_workspace = r.string(p, at, "writeInsideWorkspace", true);
    if (out.write_inside_workspace != "allow" && out.write_inside_workspace != "ask")
      fail(r.source(), at + ".writeInsideWorkspace",
           "expected \"allow\" or \"ask\", got \"" + out.write_inside_workspace + "\"");
  }
  for (auto [key, list] : {std::pair{"allow", &out.allow}, std::pair{"deny", &out.deny}}) {
    std::vector<std::string> specs = strings(r, p, at, key);
    for (size_t i = 0; i < specs.size(); ++i) {
      std::string why;
      auto spec = parse_permission_spec(specs[i], &why);
      if (!spec) fail(r.source(), at + "." + key + "[" + std::to_string(i) + "]", why);
      list->push_back(std::move(*spec));
    }
  }
  for (auto [key, list] :
       {std::pair{"allowPaths", &out.allow_paths}, std::pair{"readPaths", &out.read_paths}}) {
    *list = strings(r, p, at, key);
    for (size_t i = 0; i < list->size(); ++i) {
      std::string& path = (*list)[i];
      if (path.empty() || path[0] != '/')
        fail(r.source(), at + "." + key + "[" + std::to_string(i) + "]",
             "expected an absolute path, got \"" + path + "\"");
      while (path.size() > 1 && path.back() == '/') path.pop_back();
    }
  }
  out.allow_urls = strings(r, p, at, "allowUrls");
  for (size_t i = 0; i < out.allow_urls.size(); ++i) {
    std::string& host = out.allow_urls[i];
    for (char& c : host) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (host.empty() || host.find_first_of("/: ") != std::string::npos)
      fail(r.source(), at + ".allowUrls[" + std::to_string(i) + "]",
           "expected a host name (e.g. github.com), got \"" + host + "\"");
  }
}

}  // namespace config_detail
}  // namespace pf

namespace pf {

std::vector<McpServerConfig> parse_mcp_servers(std::string_view text, const std::string& source,
                                               const std::string& at) {
  config_detail::json root;
  try {
    root = config_detail::json::parse(text);
  } catch (const config_detail::json::exception& e) {  // a parse error, or a number too large
    throw ConfigError("config " + source + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  config_detail::Reader r(source);
  if (!root.is_object()) config_detail::fail(source, at, "expected an object");
  std::vector<McpServerConfig> out;
  if (root.contains("mcpServers")) config_detail::parse_mcp(r, r.object(root, "", "mcpServers"), at, out);
  return out;
}

}  // namespace pf
