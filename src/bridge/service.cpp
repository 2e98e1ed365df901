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

#include "agent/sandbox.h"
#include "chat/mattermost/mattermost_adapter.h"
#include "bridge/sqlite_state_store.h"
#include "bridge/bot_lease.h"
#include "core/fs.h"
#include "core/log.h"
#include "store/store.h"
#include "net/run_sync.h"

namespace pf {

namespace {

std::string token_of(const PlatformConfig& p, const BotConfig& b) {
  const char* v = std::getenv(b.token_env.c_str());
  if (!v || !*v)
    throw UsageError("bridge.platforms." + p.name + ".bots." + b.name +
                     ": the environment "
                     "variable " +
                     b.token_env + " that should hold its token is not set");
  return v;
}

}  // namespace

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
    for (const auto& b : p.bots) {
      MattermostOptions o;
      o.platform = p.name;
      o.bot = b.name;
      o.url = p.url;
      o.token = token_of(p, b);
      o.max_post_chars = static_cast<size_t>(bridge_config(config).max_post_chars);
      bridge_->add_adapter(std::make_unique<MattermostAdapter>(io, o, *state_));
    }
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

int check_bridges(const Config& config) {
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
  for (const auto& p : bridge_config(config).platforms)
    for (const auto& b : p.bots) {
      std::string who = p.name + "/" + b.name;
      const char* token = std::getenv(b.token_env.c_str());
      if (!token || !*token) {
        line(false, who + ": $" + b.token_env + " is not set");
        continue;
      }
      try {
        boost::asio::io_context io;
        auto state = open_sqlite_state_store(":memory:");
        MattermostOptions o{p.name, b.name, p.url, token};
        o.rest_retry.max_attempts = 1;
        o.pool_connections = false;  // each call below has an io_context of its own
        MattermostAdapter adapter(io, o, *state);
        nlohmann::json me = run_sync(adapter.rest("GET", "/users/me", nullptr, false));
        line(true, who + ": " + p.url + " accepts the token (@" + me.value("username", "?") + ")");
        if (p.access.mode.empty() && b.access.mode.empty())
          line(false, who + ": no access list: nobody may talk to it (set access.mode)");
        for (const auto& c : bridge_config(config).channels) {
          if (c.platform != p.name || c.bot != b.name) continue;
          try {
            nlohmann::json ch = run_sync(adapter.rest("GET", "/channels/" + c.id, nullptr, false));
            line(true, who + ": channel " + c.id + " (" + ch.value("display_name", "") + ")");
          } catch (const std::exception& e) {
            line(false, who + ": channel " + c.id + ": " + e.what());
          }
          std::error_code ec;
          line(std::filesystem::is_directory(c.working_directory, ec),
               who + ": channel " + c.id + " works in " + c.working_directory);
          const std::vector<std::string>& kinds = channel_actions(bridge_config(config), c);
          if (std::find(kinds.begin(), kinds.end(), "shell") != kinds.end()) {
            std::string why;
            bool sandbox = sandbox_available("bwrap", &why);
            line(sandbox, who + ": channel " + c.id +
                              (sandbox ? ": run_command runs in the bubblewrap sandbox"
                                       : ": run_command is offered but cannot run: " + why));
          }
        }
      } catch (const std::exception& e) {
        line(false, who + ": " + e.what());
      }
    }
  return failures == 0 ? 0 : 1;
}

}  // namespace pf
