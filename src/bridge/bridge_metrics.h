// The bridge's Prometheus metrics (served at /metrics by `pilotfish serve` beside the API, and by
// `pilotfish bridge` at bridge.metricsListen): messages by outcome, turns and their durations,
// how long messages wait in their channel's queue, permission prompts by outcome, and per bot
// the posts, edits, 429s and reconnects its adapter counted.
//
// Threads: the bridge's network thread only.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "chat/channel_adapter.h"
#include "core/histogram.h"

namespace pf {

struct BridgeStats;

class BridgeMetrics {
 public:
  // A message joined its channel's queue; dequeued() observes how long it waited there.
  void queued(const std::string& post_id);
  void dequeued(const std::string& post_id);
  void forget(const std::string& post_id) { queued_at_.erase(post_id); }
  void turn(double seconds, bool ok);
  // outcome: "approved", "rejected" or "not-available".
  void prompt(const std::string& outcome) { ++prompts_[outcome]; }
  void replayed() { ++replayed_; }

  // The exposition text: stats, these, and each adapter's counters; busy and queued: gauges.
  std::string render(const BridgeStats& stats, const std::vector<const ChannelAdapter*>& adapters,
                     int64_t busy_channels, int64_t queued_messages) const;

 private:
  std::map<std::string, std::chrono::steady_clock::time_point> queued_at_;
  Histogram queue_wait_, turn_seconds_;
  int64_t turns_ok_ = 0, turns_failed_ = 0, replayed_ = 0;
  std::map<std::string, int64_t> prompts_;
};

}  // namespace pf
