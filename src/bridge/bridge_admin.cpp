// An admin bot's tools as the orchestrator runs them once a person approved the call
// (admin_tools.h): create_project, grant_path_access / revoke_path_access, list_agent_access and
// get_platform_info; the channels registered from chat merged into the configured ones
// (chat_channels.h); /project, which lists them and removes one; and the repositories channels
// work in: a bot's own folders, the clones of git URLs, each indexed when first seen.
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include <filesystem>

#include "bridge/bridge.h"
#include "bridge/bridge_channel.h"
#include "bridge/workspace_templates.h"
#include "core/clock.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/log.h"
#include "core/text.h"
#include "index/git_source.h"
#include "runtime/own_paths.h"
#include "runtime/worker_pool.h"

namespace pf {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

json error_result(const std::string& message) { return {{"error", message}}; }

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  for (char c : text + " ") {
    if (c == ' ' || c == '\t' || c == '\n') {
      if (!word.empty()) out.push_back(std::move(word));
      word.clear();
    } else {
      word += c;
    }
  }
  return out;
}

// The team a request names (by id, name or display name, case-insensitive), or the bot's only
// one; *why when none fits.
std::optional<ChatTeam> pick_team(const std::vector<ChatTeam>& teams, const std::string& wanted,
                                  std::string* why) {
  std::string names;
  for (const auto& t : teams) names += (names.empty() ? "" : ", ") + t.name;
  if (wanted.empty()) {
    if (teams.size() == 1) return teams[0];
    *why = teams.empty() ? "the bot is in no team" : "the bot is in several teams; name one of: " + names;
    return std::nullopt;
  }
  std::string w = ascii_lower(wanted);
  for (const auto& t : teams)
    if (t.id == wanted || ascii_lower(t.name) == w || ascii_lower(t.display_name) == w) return t;
  *why = "the bot is in no team \"" + wanted + "\" (its teams: " + names + ")";
  return std::nullopt;
}

}  // namespace

std::string Bridge::workspaces_of(const std::string& bot) const {
  std::string base = !settings().workspaces_dir.empty() ? settings().workspaces_dir
                                                        : default_data_dir() + "/workspaces";
  return base + "/" + bot;
}

std::string Bridge::dm_workspace(const std::string& bot) const {
  if (!settings().defaults.working_directory.empty()) return settings().defaults.working_directory;
  if (!config_.server.repository.empty()) return config_.server.repository;
  std::string dir = workspaces_of(bot);
  try {  // a new folder gets AGENTS.md and MEMORY.md from the templates (existing files stay)
    init_workspace(dir, {bot, "direct messages", dir, "", "answering " + bot + "'s direct messages"});
  } catch (const Error& e) {
    log::warn("bridge", e.what());
  }
  return dir;
}

Repository& Bridge::prepare_repository(const std::string& root, const std::string& source) {
  Repository& repo = runtime_.repository(root);
  // A clone's index runs fetch first, set before its first run (a repository whose job ran
  // already without it keeps running without).
  if (!source.empty() && !repo.index_job->running() && fetching_.insert(repo.root).second)
    repo.index_job->fetch_before_each_run(parse_git_source(source));
  // Indexed now if the store has never seen it, then on the server's re-index schedule.
  if (!repo.indexed && !repo.index_job->running() && repo.index_job->start("bridge")) {
    log::info("bridge", "indexing " + repo.root);
    first_index_.insert(repo.root);  // the first turns wait for it: an empty index answers nothing
  }
  repo.indexed = true;  // asked once; later turns search what the run has committed so far
  if (!config_.server.reindex_schedule.empty())
    repo.index_job->schedule(CronSchedule::parse(config_.server.reindex_schedule));
  return repo;
}

Repository& Bridge::repository_of(Channel& channel) {
  return prepare_repository(channel.config.working_directory, channel.config.source);
}

void Bridge::merge_registered() {
  auto bridge = std::make_shared<BridgeConfig>(settings());
  std::erase_if(bridge->channels, [](const ChannelConfig& c) { return !c.added_by.empty(); });
  try {
    merge_chat_channels(*bridge, registered_.load(*bridge));
  } catch (const std::exception& e) {
    log::error("bridge", std::string("could not read the channels added from chat: ") + e.what());
  }
  config_.sections["bridge"] = bridge;
  for (auto& [key, channel] : channels_)
    for (const auto& cc : settings().channels)
      if (cc.platform + ":" + cc.id == key && cc.bot == channel->adapter->bot()) {
        channel->config = cc;
        channel->removed = false;
      }
}

asio::awaitable<void> Bridge::clone_missing() {
  for (const auto& c : settings().channels) {
    std::error_code ec;
    if (c.source.empty() || std::filesystem::exists(c.working_directory, ec)) continue;
    GitSource source = parse_git_source(c.source);
    GitConfig git = git_config(config_);
    std::string dir = c.working_directory, error;
    log::info("bridge", "cloning " + source.url + " for channel " + c.id);
    co_await offload(runtime_.pool(), [&] {
      try {
        sync_checkout(source, dir, git);
      } catch (const std::exception& e) {
        error = e.what();
      }
    });
    if (!error.empty()) log::error("bridge", "channel " + c.id + ": " + error);
  }
}

asio::awaitable<json> Bridge::run_admin_tool(Channel& channel, const ToolCall& call) {
  const std::string& bot = channel.adapter->bot();
  std::string why;
  try {
    if (call.name == "create_project") {
      std::optional<ProjectRequest> r = parse_project_request(call.arguments, &why);
      if (!r) co_return error_result(why);
      co_return co_await create_project(channel, std::move(*r));
    }
    if (call.name == "grant_path_access" || call.name == "revoke_path_access") {
      bool grant = call.name == "grant_path_access";
      std::optional<PathAccessRequest> r = parse_path_access(call.arguments, grant, &why);
      if (!r) co_return error_result(why);
      std::string target = r->bot.empty() ? bot : r->bot;
      std::vector<std::string> bots = bot_names();
      if (std::find(bots.begin(), bots.end(), target) == bots.end())
        co_return error_result("no bot is named " + target);
      actions_.clear();  // rebuilt with the bot's new binds; running turns keep theirs
      if (!grant) {
        bool had = grants_.revoke(target, r->path);
        co_return json{{"revoked", had}, {"bot", target}, {"path", r->path}};
      }
      OwnFiles own = own_paths(config_, runtime_.db_path(), bot_workspace(target));
      std::optional<std::string> real = grantable_path(r->path, own, home_dir(), &why);
      if (!real) co_return error_result("not granted: " + why);
      grants_.grant(target, {*real, r->mode, channel.turn_user, unix_time_ms()});
      log::info("bridge", "@" + channel.turn_user + " granted " + target + " " + r->mode +
                              " access to " + *real);
      co_return json{{"granted", r->mode}, {"bot", target}, {"path", *real}};
    }
    if (call.name == "list_agent_access") {
      json args = json::parse(call.arguments.empty() ? "{}" : call.arguments, nullptr, false);
      std::string only = args.is_object() ? args.value("bot", "") : "";
      json out = json::array();
      for (const auto& b : bot_names())
        if (only.empty() || only == b) out.push_back(agent_access(b));
      if (out.empty()) co_return error_result("no bot is named " + only);
      co_return json{{"bots", out}};
    }
    if (call.name == "get_platform_info") co_return co_await platform_info(channel);
  } catch (const std::exception& e) {
    co_return error_result(e.what());
  }
  co_return error_result("unknown admin tool: " + call.name);
}

json Bridge::agent_access(const std::string& bot) {
  json out = {{"bot", bot}};
  for (const auto& p : settings().platforms)
    for (const auto& b : p.bots)
      if (b.name == bot) {
        out["platform"] = p.name;
        out["admin"] = b.admin;
        ChannelConfig probe;
        probe.platform = p.name;
        probe.bot = bot;
        out["actions"] = channel_actions(settings(), probe);
      }
  json channels = json::array();
  for (const auto& c : settings().channels) {
    if (c.bot != bot) continue;
    json j = {{"id", c.id}, {"name", c.name}, {"workingDirectory", c.working_directory},
              {"actions", channel_actions(settings(), c)}};
    if (!c.source.empty()) j["repository"] = c.source;
    if (!c.added_by.empty()) j["addedFromChatBy"] = c.added_by;
    channels.push_back(std::move(j));
  }
  out["channels"] = std::move(channels);
  json grants = json::array();
  for (const auto& g : grants_.of(bot))
    grants.push_back({{"path", g.path}, {"mode", g.mode}, {"grantedBy", g.granted_by}});
  out["grantedPaths"] = std::move(grants);
  out["allowPaths"] = config_.permissions.allow_paths;  // every bot's, from the config
  return out;
}

asio::awaitable<json> Bridge::platform_info(Channel& channel) {
  ChannelAdapter& a = *channel.adapter;
  std::vector<ChatTeam> teams = co_await a.list_teams();
  std::vector<ChatChannel> channels = co_await a.list_channels();
  json t = json::array(), c = json::array();
  for (const auto& team : teams)
    t.push_back({{"id", team.id}, {"name", team.name}, {"displayName", team.display_name}});
  for (const auto& ch : channels) {
    json j = {{"id", ch.id}, {"name", ch.name}, {"private", ch.is_private}, {"answered", false}};
    for (const auto& cc : settings().channels)
      if (cc.platform == a.platform() && cc.id == ch.id && cc.bot == a.bot()) {
        j["answered"] = true;
        j["workingDirectory"] = cc.working_directory;
        if (!cc.added_by.empty()) j["addedFromChatBy"] = cc.added_by;
      }
    c.push_back(std::move(j));
  }
  co_return json{{"platform", a.platform()}, {"bot", a.bot()}, {"teams", t}, {"channels", c}};
}

asio::awaitable<json> Bridge::create_project(Channel& channel, ProjectRequest r) {
  ChannelAdapter& a = *channel.adapter;
  std::string why;
  std::vector<ChatTeam> teams = co_await a.list_teams();
  std::optional<ChatTeam> team = pick_team(teams, r.team, &why);
  if (!team) co_return error_result(why);
  std::optional<ChatChannel> found = co_await a.find_channel(team->id, r.name);
  for (const auto& c : settings().channels)
    if (found && c.platform == a.platform() && c.id == found->id && c.added_by.empty())
      co_return error_result("#" + r.name + " is configured in the config file already (bot " +
                             c.bot + ")");
  log::info("bridge", (found ? "joining #" : "creating #") + r.name + " on " + a.platform());
  // Not a co_await inside ?: (GCC 12 mishandles it).
  ChatChannel target;
  if (found)
    target = *found;
  else
    target = co_await a.create_channel(team->id, r.name, r.display_name, r.is_private);
  co_await a.add_member(target.id, a.identity().user_id);
  if (!channel.turn_user_id.empty()) co_await a.add_member(target.id, channel.turn_user_id);

  // Its repository: a clone of the URL, else a folder of its own under the bot's workspaces.
  std::string root, commit, source;
  if (!r.repository.empty()) {
    GitSource git = parse_git_source(r.repository, r.branch);
    source = r.repository + (r.branch.empty() ? "" : "#" + r.branch);
    GitConfig settings_git = git_config(config_);
    root = clone_folder(git, settings_git.clone_dir);
    std::string error;
    GitSync sync;
    log::info("bridge", "cloning " + git.url + " into " + root);
    co_await offload(runtime_.pool(), [&] {
      try {
        sync = sync_checkout(git, root, settings_git);
      } catch (const std::exception& e) {
        error = e.what();
      }
    });
    if (!error.empty())
      co_return error_result("#" + r.name + " is there, but the repository could not be cloned (" +
                             error + "); the channel is not answered yet");
    commit = sync.commit;
  } else {
    root = workspaces_of(a.bot()) + "/" + r.name;
  }
  std::vector<std::string> written =
      init_workspace(root, {a.bot(), "#" + r.name, root, r.repository, r.purpose});

  ChannelConfig cc;
  cc.id = target.id;
  cc.platform = a.platform();
  cc.bot = a.bot();
  cc.name = r.name;
  cc.working_directory = root;
  cc.source = source;
  cc.added_by = channel.turn_user.empty() ? std::string("an admin") : channel.turn_user;
  cc.added_at_ms = unix_time_ms();
  registered_.add(cc);
  merge_registered();
  a.track_channel(target.id, unix_time_ms());
  prepare_repository(root, source);
  log::info("bridge", "@" + cc.added_by + " added #" + r.name + " (" + target.id + ") for " +
                          a.bot() + ", working in " + root);
  json out = {{"channel", {{"id", target.id}, {"name", r.name}, {"private", target.is_private}}},
              {"created", !found},
              {"workingDirectory", root},
              {"written", written},
              {"indexing", true}};
  if (!source.empty()) {
    out["repository"] = source;
    out["commit"] = commit;
  }
  co_return out;
}

asio::awaitable<void> Bridge::project_command(Channel& channel, const CommandCall& c) {
  std::vector<std::string> words = words_of(c.args);
  std::string verb = words.empty() ? "list" : ascii_lower(words[0]);
  const std::string& bot = channel.adapter->bot();
  if (verb == "list") {
    std::string out;
    for (const auto& cc : settings().channels)
      if (cc.bot == bot && cc.platform == channel.adapter->platform() && !cc.added_by.empty())
        out += "- #" + (cc.name.empty() ? cc.id : cc.name) + " \u2192 `" + cc.working_directory +
               "` (added from chat by @" + cc.added_by + ")\n";
    reply(channel, out.empty() ? "No channels were added from chat for this bot."
                               : "**Channels added from chat**\n" + out);
    co_return;
  }
  if (verb != "remove") {
    reply(channel, "Usage: `/project [list]` or `/project remove [channel]`.");
    co_return;
  }
  const BotConfig* b = bot_config(channel.adapter->platform(), bot);
  if (!b || !b->admin) {
    reply(channel, "Only an admin bot removes channels added from chat.");
    co_return;
  }
  std::string which = words.size() > 1 ? words[1] : channel.id;
  if (!which.empty() && which[0] == '#') which.erase(0, 1);
  const ChannelConfig* hit = nullptr;
  for (const auto& cc : settings().channels)
    if (cc.bot == bot && cc.platform == channel.adapter->platform() && !cc.added_by.empty() &&
        (cc.id == which || cc.name == which))
      hit = &cc;
  if (!hit) {
    reply(channel, "#" + which + " was not added from chat for this bot" +
                       " (channels in the config file are removed there).");
    co_return;
  }
  std::string id = hit->id, name = hit->name.empty() ? hit->id : hit->name;
  registered_.remove(channel.adapter->platform(), bot, id);
  merge_registered();
  auto it = channels_.find(channel.adapter->platform() + ":" + id);
  if (it != channels_.end()) it->second->removed = true;
  log::info("bridge", "#" + name + " removed from " + bot + "'s channels");
  reply(channel, "Removed #" + name + ": " + bot +
                     " no longer answers there. Its conversations are kept.");
}

}  // namespace pf
