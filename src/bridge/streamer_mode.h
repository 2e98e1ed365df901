// Streamer mode (/streamer-mode, /on-air): a setting of the whole bridge, kept in the state store,
// for screen sharing and demos. While it is on, the names of preview and internal models are
// hidden in everything the bridge itself posts (command replies and notices; not the model's
// own text): each configured model whose "provider:model" id matches one of
// bridge.streamerMode.hide (regular expressions, any case; default preview, internal,
// experimental) is shown as "Hidden Model N", N its place among the hidden ones in the config.
//
// Threads: the network thread only. The state store must outlive it. The setting is read at most
// every 5 s (a replica's change shows within that).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "bridge/state_store.h"
#include "core/config.h"

namespace pf {

class StreamerMode {
 public:
  explicit StreamerMode(StateStore& state) : state_(state) {}

  bool on();
  // /streamer-mode [on|off]: the reply (no argument: says whether it is on and what it hides).
  std::string command(const Config& config, const std::string& args);
  // text with the hidden models' names replaced; unchanged while off.
  std::string mask(const Config& config, const std::string& text);

 private:
  StateStore& state_;
  std::optional<bool> cached_;
  std::chrono::steady_clock::time_point read_at_;
};

// The configured models ("provider:model") that streamer mode hides, in the config's order.
std::vector<std::string> hidden_models(const Config& config);

}  // namespace pf
