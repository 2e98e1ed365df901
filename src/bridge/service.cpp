// The bridge service (see service.h).
#include "bridge/service.h"

#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <set>

#include "agent/custom_agents.h"
#include "agent/hooks.h"
#include "agent/sandbox.h"
#include "agent/skills.h"
#include "bridge/inter_agent.h"
#include "bridge/platforms.h"
#include "bridge/bot_lease.h"
#include "bridge/chat_channels.h"
#include "core/fs.h"
#include "core/log.h"
#include "store/store.h"
#include "net/run_sync.h"

namespace pf {


BridgeService::BridgeService(boost::asio::io_context& io, AnswerRuntime& runtime,
                             const Config& config, const std::string& db_path,
                             std::string config_path)
    : io_(io), config_path_(std::move(config_path)) {
  std::string state_location = bridge_state_path(bridge_config(config), db_path);
  state_ = open_state_store(state_location);
  lease_ = open_bot_lease(state_location);
  Bridge::ConfigLoader loader;
  if (!config_path_.empty()) loader = [path = config_path_] { return load_config(path); };
  bridge_ = std::make_unique<Bridge>(io, runtime, *state_, config, loader);
  bridge_->set_lease(lease_.get(), std::chrono::seconds(bridge_config(config).lease_check_seconds));
  for (const auto& p : bridge_config(config).platforms)
    for (const auto& b : p.bots)
      bridge_->add_adapter(make_adapter(io, p, b, bridge_config(config), *state_));
}

BridgeService::~BridgeService() {
  *alive_ = false;
}

boost::asio::awaitable<void> BridgeService::start() {
  co_await bridge_->start();
  if (config_path_.empty()) co_return;
  auto alive = alive_;
  boost::asio::co_spawn(
      io_,
      [this, alive]() -> boost::asio::awaitable<void> {
        if (*alive) co_await watch_config();
      },
      boost::asio::detached);
}

boost::asio::awaitable<void> BridgeService::stop() {
  stopping_ = true;
  co_await bridge_->shutdown(std::chrono::seconds(bridge_->settings().shutdown_grace_seconds));
}

boost::asio::awaitable<void> BridgeService::watch_config() {
  auto alive = alive_;
  auto stamp = [this] {
    std::error_code ec;
    auto t = std::filesystem::last_write_time(config_path_, ec);
    auto size = std::filesystem::file_size(config_path_, ec);
    return ec ? std::string()
              : std::to_string(t.time_since_epoch().count()) + "/" + std::to_string(size);
  };
  std::string seen = stamp();
  boost::asio::steady_timer timer(io_);
  while (*alive && !stopping_) {
    timer.expires_after(std::chrono::seconds(1));
    co_await timer.async_wait(boost::asio::use_awaitable);
    if (!*alive || stopping_) co_return;
    std::string now = stamp();
    if (now == seen || now.empty()) continue;
    // Debounce: apply once the file has stopped changing.
    timer.expires_after(std::chrono::milliseconds(500));
    co_await timer.async_wait(boost::asio::use_awaitable);
    if (!*alive || stopping_) co_return;
    if (stamp() != now) continue;
    seen = now;
    try {
      log::info("bridge",
                "the config file changed: " + bridge_->apply_config(load_config(config_path_)));
    } catch (const std::exception& e) {
      log::error("bridge", std::string("the changed config was not applied: ") + e.what());
    }
  }
}

namespace {

// A channel's custom agents, skills and hooks: how many load, each file that does not (a
// warning: the bridge runs without it), and a configured agent no file defines.
void check_agent_files(const ChannelConfig& c, const Config& config, const std::string& who,
                       const std::function<void(bool, const std::string&)>& line,
                       std::set<std::string>& reported) {
  AgentCatalog agents = discover_agents(agent_dirs(c.working_directory));
  SkillCatalog skills = discover_skills(skill_dirs(c.working_directory));
  HookSet hooks = load_hooks(config, c.working_directory);
  const std::string& agent = channel_agent(bridge_config(config), c);
  bool found = agent.empty() || agents.find(agent);
  line(found, who + ": channel " + c.id + ": " + std::to_string(agents.agents.size()) +
                  " custom agents, " + std::to_string(skills.skills.size()) + " skills, " +
                  std::to_string(hooks.size()) + " hooks" +
                  (found ? (agent.empty() ? "" : ", runs as agent " + agent)
                         : "; its agent \"" + agent + "\" is not defined (answers run without it)"));
  std::vector<DefinitionProblem> problems = agents.problems;
  problems.insert(problems.end(), skills.problems.begin(), skills.problems.end());
  problems.insert(problems.end(), hooks.problems.begin(), hooks.problems.end());
  for (const DefinitionProblem& p : problems)
    if (reported.insert(p.path).second)
      std::printf("warn %s: %s (not loaded)\n", p.path.c_str(), p.message.c_str());
}

// Calls between bots: who may call whom; an allow entry naming no configured bot fails (a typo
// there silently denies).
void check_inter_agent(const Config& config,
                       const std::function<void(bool, const std::string&)>& line) {
  const InterAgentConfig& ic = inter_agent_config(config);
  if (!ic.enabled) return;
  std::vector<std::string> bots;
  for (const auto& p : bridge_config(config).platforms)
    for (const auto& b : p.bots) bots.push_back(b.name);
  auto known = [&](const std::string& n) {
    return n == "*" || std::find(bots.begin(), bots.end(), n) != bots.end();
  };
  for (const auto& [bot, allow] : ic.allow) {
    std::vector<std::string> named = allow.can_call;
    named.insert(named.end(), allow.can_be_called_by.begin(), allow.can_be_called_by.end());
    named.push_back(bot);
    for (const auto& n : named)
      if (!known(n)) line(false, "interAgent.allow." + bot + ": no bot is named " + n);
  }
  for (const auto& b : bots) {
    std::vector<std::string> targets = callable_bots(ic, b, bots);
    std::string list;
    for (const auto& t : targets) list += (list.empty() ? "" : ", ") + t;
    line(true, "interAgent: " + b + (targets.empty() ? " calls no bot" : " may call " + list));
  }
}

}  // namespace

int check_bridges(const Config& config, const std::string& db_path) {
  int failures = 0;
  auto line = [&](bool ok, const std::string& what) {
    std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
    if (!ok) ++failures;
  };
  if (bridge_config(config).platforms.empty()) {
    std::printf("no bridge is configured (add a \"bridge\" section to %s)\n",
                config.source.empty() ? "the config" : config.source.c_str());
    return 1;
  }
  BridgeConfig bridge = bridge_config(config);
  // The channels added from chat, where the state store is there already (never made here).
  std::string state = bridge_state_path(bridge, db_path);
  std::error_code exists_ec;
  if (state.rfind("postgres", 0) == 0 || std::filesystem::exists(state, exists_ec)) {
    try {
      std::unique_ptr<StateStore> store = open_state_store(state);
      ChatChannels registered(*store);
      merge_chat_channels(bridge, registered.load(bridge));
    } catch (const std::exception& e) {
      line(false, "the bridge's state " + state + ": " + e.what());
    }
  }
  std::set<std::string> reported;  // files shared by channels are reported once
  for (const auto& p : bridge.platforms)
    for (const auto& b : p.bots) {
      std::string who = p.name + "/" + b.name;
      check_platform_bot(p, b, bridge, line);
      if (p.access.mode.empty() && b.access.mode.empty())
        line(false, who + ": no access list: nobody may talk to it (set access.mode)");
      for (const auto& c : bridge.channels) {
        if (c.platform != p.name || c.bot != b.name) continue;
        std::error_code ec;
        std::string from = c.added_by.empty() ? "" : " (added from chat by @" + c.added_by + ")";
        if (!c.source.empty()) from += " (a clone of " + c.source + ")";
        bool there = std::filesystem::is_directory(c.working_directory, ec);
        // A clone not made yet is made when the bridge starts.
        line(there || !c.source.empty(),
             who + ": channel " + c.id + from + " works in " + c.working_directory +
                 (there || c.source.empty() ? "" : " (cloned at start)"));
        check_agent_files(c, config, who, line, reported);
        const std::vector<std::string>& kinds = channel_actions(bridge, c);
        if (std::find(kinds.begin(), kinds.end(), "shell") != kinds.end()) {
          std::string why;
          bool sandbox = sandbox_available("bwrap", &why);
          line(sandbox, who + ": channel " + c.id +
                            (sandbox ? ": run_command runs in the bubblewrap sandbox"
                                     : ": run_command is offered but cannot run: " + why));
        }
      }
    }
  check_inter_agent(config, line);
  return failures == 0 ? 0 : 1;
}

}  // namespace pf
