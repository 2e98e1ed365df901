// An admin bot's tools: their schemas, the reading of their arguments and what a person is
// shown before each call (see admin_tools.h).
#include "bridge/admin_tools.h"

#include "core/json.h"
#include "index/git_source.h"

namespace pf {

using nlohmann::json;

namespace {

json schema(json properties, std::vector<std::string> required) {
  return {{"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(required)}};
}

json string_prop(const std::string& description) {
  return {{"type", "string"}, {"description", description}};
}

std::optional<json> object_of(const std::string& arguments, std::string* why) {
  json args = json::parse(arguments.empty() ? "{}" : arguments, nullptr, false);
  if (!args.is_object()) {
    *why = "the arguments must be a JSON object";
    return std::nullopt;
  }
  return args;
}

ToolEntry admin_entry(ToolSpec spec, std::function<ToolTarget(const std::string&)> describe) {
  ToolEntry e{std::move(spec), ToolPermission::kAdmin, 16 * 1024, std::move(describe),
              [](const std::string&, Store*) -> json {
                return {{"error", "admin tools run only in the chat bridge"}};
              }};
  e.acts = true;
  return e;
}

ToolTarget failed(std::string why) {
  ToolTarget t;
  t.error = std::move(why);
  return t;
}

ToolTarget target(std::string what, const json& args) {
  ToolTarget t;
  t.command = std::move(what);
  t.intent = json_string(args, "intent");
  return t;
}

}  // namespace

bool is_channel_slug(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) return false;
  return name[0] != '-' && name[0] != '_';
}

std::optional<ProjectRequest> parse_project_request(const std::string& arguments, std::string* why) {
  std::optional<json> args = object_of(arguments, why);
  if (!args) return std::nullopt;
  ProjectRequest r;
  r.name = json_string(*args, "name");
  if (!r.name.empty() && r.name[0] == '#') r.name.erase(0, 1);
  if (!is_channel_slug(r.name)) {
    *why = "name must be a channel slug: 1-64 of a-z, 0-9, '-' and '_' (got \"" + r.name + "\")";
    return std::nullopt;
  }
  r.display_name = json_string(*args, "display_name");
  r.repository = json_string(*args, "repository");
  r.branch = json_string(*args, "branch");
  r.purpose = json_string(*args, "purpose").substr(0, 2000);
  r.team = json_string(*args, "team");
  r.is_private = args->value("private", false) == true;
  if (!r.repository.empty()) {
    if (r.repository.rfind("file:", 0) == 0) {
      *why = "a repository on this machine (file://) is not cloned from chat";
      return std::nullopt;
    }
    if (!is_git_url(r.repository)) {
      *why = "repository must be a git URL (https://, ssh://, git@host:path), got \"" +
             r.repository + "\"";
      return std::nullopt;
    }
    try {
      parse_git_source(r.repository, r.branch);
    } catch (const std::exception& e) {
      *why = e.what();
      return std::nullopt;
    }
  } else if (!r.branch.empty()) {
    *why = "branch needs a repository";
    return std::nullopt;
  }
  return r;
}

std::optional<PathAccessRequest> parse_path_access(const std::string& arguments, bool grant,
                                                   std::string* why) {
  std::optional<json> args = object_of(arguments, why);
  if (!args) return std::nullopt;
  PathAccessRequest r;
  r.path = json_string(*args, "path");
  r.bot = json_string(*args, "bot");
  if (grant && args->contains("mode")) r.mode = json_string(*args, "mode");
  if (r.path.empty() || r.path[0] != '/') {
    *why = "path must be absolute (got \"" + r.path + "\")";
    return std::nullopt;
  }
  if (r.mode != "read" && r.mode != "write") {
    *why = "mode must be \"read\" or \"write\" (got \"" + r.mode + "\")";
    return std::nullopt;
  }
  return r;
}

bool is_admin_tool(const std::string& name) {
  return name == "create_project" || name == "grant_path_access" ||
         name == "revoke_path_access" || name == "list_agent_access" ||
         name == "get_platform_info";
}

void add_admin_tools(ToolRegistry& tools) {
  tools.add(admin_entry(
      {"create_project",
       "Create (or join) a channel on this chat platform for a project, add the person asking, "
       "clone its git repository (or make a folder of its own), index it and answer there.",
       schema({{"name", string_prop("the channel's slug: a-z, 0-9, '-' and '_'")},
               {"display_name", string_prop("the channel's name as people see it")},
               {"repository", string_prop("a git URL to clone (https:// or ssh); optional")},
               {"branch", string_prop("the branch to check out; optional")},
               {"purpose", string_prop("what the channel is for (goes into AGENTS.md)")},
               {"team", string_prop("the team's name (Mattermost, when the bot is in several)")},
               {"private", {{"type", "boolean"}, {"description", "a private channel"}}}},
              {"name"})},
      [](const std::string& arguments) {
        std::string why;
        std::optional<ProjectRequest> r = parse_project_request(arguments, &why);
        if (!r) return failed(why);
        json args = json::parse(arguments, nullptr, false);
        return target("create channel #" + r->name + (r->is_private ? " (private)" : "") +
                          (r->repository.empty() ? ", a folder of its own"
                                                 : " for " + r->repository +
                                                       (r->branch.empty() ? "" : " @" + r->branch)),
                      args);
      }));
  for (bool grant : {true, false})
    tools.add(admin_entry(
        {grant ? "grant_path_access" : "revoke_path_access",
         grant ? "Let a bot read (or write) a folder outside its workspaces."
               : "Take back a folder granted to a bot.",
         schema(grant ? json{{"path", string_prop("an absolute folder")},
                             {"mode", {{"type", "string"}, {"enum", {"read", "write"}}}},
                             {"bot", string_prop("the bot; default: this one")}}
                      : json{{"path", string_prop("the folder granted")},
                             {"bot", string_prop("the bot; default: this one")}},
                {"path"})},
        [grant](const std::string& arguments) {
          std::string why;
          std::optional<PathAccessRequest> r = parse_path_access(arguments, grant, &why);
          if (!r) return failed(why);
          std::string who = r->bot.empty() ? "this bot" : r->bot;
          return target(grant ? "grant " + who + " " + r->mode + " access to " + r->path
                              : "revoke " + who + "'s access to " + r->path,
                        json::parse(arguments, nullptr, false));
        }));
  tools.add(admin_entry(
      {"list_agent_access",
       "List what each bot may do: its channels and workspaces, action kinds, granted folders.",
       schema({{"bot", string_prop("one bot; default: every bot")}}, {})},
      [](const std::string& arguments) {
        json args = json::parse(arguments.empty() ? "{}" : arguments, nullptr, false);
        std::string bot = args.is_object() ? json_string(args, "bot") : "";
        return target("list the access of " + (bot.empty() ? std::string("every bot") : bot), args);
      }));
  tools.add(admin_entry(
      {"get_platform_info", "List the teams this bot is in and its channels there.", schema({}, {})},
      [](const std::string& arguments) {
        return target("list this bot's teams and channels",
                      json::parse(arguments.empty() ? "{}" : arguments, nullptr, false));
      }));
}

}  // namespace pf
