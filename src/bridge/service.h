// Running the configured bridges: one Mattermost adapter per bot, one state store, one
// orchestrator, on the caller's network thread and answering runtime. `pilotfish bridge` runs
// only this; `pilotfish serve` runs it beside the HTTP API.
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>

#include "bridge/bot_lease.h"
#include "bridge/bridge.h"
#include "bridge/state_store.h"
#include "bridge/bridge_config.h"  // bridge_state_path

namespace pf {

class BridgeService {
 public:
  // db_path: the index store (the state goes beside it unless bridge.stateDb says otherwise);
  // config_path: re-read by `/reload config` (empty: no reload). Throws UsageError for a bot
  // whose token variable is not set.
  BridgeService(boost::asio::io_context& io, AnswerRuntime& runtime, const Config& config,
                const std::string& db_path, std::string config_path);
  ~BridgeService();
  // Connects the bridges, then watches the config file: a change (debounced 500 ms, so an
  // editor's save-by-rename is seen once, whole) is applied as `/reload config` would.
  boost::asio::awaitable<void> start();
  boost::asio::awaitable<void> stop();
  Bridge& bridge() { return *bridge_; }

 private:
  boost::asio::awaitable<void> watch_config();

  boost::asio::io_context& io_;
  std::string config_path_;
  bool stopping_ = false;
  std::unique_ptr<StateStore> state_;
  std::unique_ptr<BotLease> lease_;  // outlives bridge_, which is destroyed first
  std::unique_ptr<Bridge> bridge_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// `pilotfish bridge check`: for each bot, whether its token variable is set, the server answers
// and the token is accepted, and whether each channel (configured, or added from chat: read
// from the state store beside db_path when it exists) and its working directory is there.
// Prints one line per check; returns 0 when all pass, 1 otherwise.
int check_bridges(const Config& config, const std::string& db_path);

}  // namespace pf
