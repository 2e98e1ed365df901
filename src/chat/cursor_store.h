// Where an adapter keeps its catch-up cursors across restarts: per channel of a bot, the newest
// message position it has seen (Mattermost: the post's server time in ms; Slack: the message ts
// in microseconds). The bridge's state store implements it; adapters know only this.
//
// Threads: called on the bridge's network thread. Errors: pf::Error naming what failed.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace pf {

class CursorStore {
 public:
  virtual ~CursorStore() = default;
  // Saves several channels' cursors (keys "platform:channel id") in one transaction; each only
  // ever moves forward.
  virtual void set_cursors(const std::string& bot,
                           const std::vector<std::pair<std::string, int64_t>>& cursors) = 0;
  virtual std::vector<std::pair<std::string, int64_t>> cursors(const std::string& bot) = 0;
};

}  // namespace pf
