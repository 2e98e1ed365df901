// The bridge's metrics (see bridge_metrics.h).
#include "bridge/bridge_metrics.h"

#include "bridge/bridge.h"

namespace pf {

void BridgeMetrics::queued(const std::string& post_id) {
  queued_at_.emplace(post_id, std::chrono::steady_clock::now());
}

void BridgeMetrics::dequeued(const std::string& post_id) {
  auto it = queued_at_.find(post_id);
  if (it == queued_at_.end()) return;
  queue_wait_.observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - it->second).count());
  queued_at_.erase(it);
}

void BridgeMetrics::turn(double seconds, bool ok) {
  turn_seconds_.observe(seconds);
  ++(ok ? turns_ok_ : turns_failed_);
}

namespace {

void counter(std::string& out, const std::string& name, const std::string& help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " counter\n";
}

std::string label_value(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

std::string BridgeMetrics::render(const BridgeStats& s, const std::vector<const ChannelAdapter*>& adapters,
                                  int64_t busy_channels, int64_t queued_messages) const {
  std::string out;
  counter(out, "pilotfish_bridge_messages_total", "Chat messages the bridge received, by outcome.");
  for (const auto& [outcome, n] :
       std::vector<std::pair<const char*, int64_t>>{{"received", s.received},
                                                    {"duplicate", s.duplicates},
                                                    {"denied", s.denied},
                                                    {"ignored", s.ignored},
                                                    {"skipped_old", s.skipped_old},
                                                    {"steered", s.steered},
                                                    {"replayed", replayed_},
                                                    {"answered", s.answered}})
    out += "pilotfish_bridge_messages_total{outcome=\"" + std::string(outcome) + "\"} " +
           std::to_string(n) + "\n";
  counter(out, "pilotfish_bridge_turns_total", "Turns (answers) run, by result.");
  out += "pilotfish_bridge_turns_total{result=\"completed\"} " + std::to_string(turns_ok_) + "\n";
  out += "pilotfish_bridge_turns_total{result=\"failed\"} " + std::to_string(turns_failed_) + "\n";
  out += "# HELP pilotfish_bridge_turn_seconds How long a turn ran.\n"
         "# TYPE pilotfish_bridge_turn_seconds histogram\n";
  turn_seconds_.render(out, "pilotfish_bridge_turn_seconds", "");
  out += "# HELP pilotfish_bridge_queue_wait_seconds How long a message waited for its turn.\n"
         "# TYPE pilotfish_bridge_queue_wait_seconds histogram\n";
  queue_wait_.render(out, "pilotfish_bridge_queue_wait_seconds", "");
  counter(out, "pilotfish_bridge_permission_prompts_total", "Permission prompts, by outcome.");
  for (const char* outcome : {"approved", "rejected", "not-available"}) {
    auto it = prompts_.find(outcome);
    out += "pilotfish_bridge_permission_prompts_total{outcome=\"" + std::string(outcome) + "\"} " +
           std::to_string(it == prompts_.end() ? 0 : it->second) + "\n";
  }
  counter(out, "pilotfish_bridge_lease_changes_total", "Bots taken over from, or lost to, another replica.");
  out += "pilotfish_bridge_lease_changes_total{change=\"takeover\"} " + std::to_string(s.takeovers) + "\n";
  out += "pilotfish_bridge_lease_changes_total{change=\"lost\"} " + std::to_string(s.leases_lost) + "\n";
  out += "# TYPE pilotfish_bridge_channels_busy gauge\npilotfish_bridge_channels_busy " +
         std::to_string(busy_channels) + "\n";
  out += "# TYPE pilotfish_bridge_queued_messages gauge\npilotfish_bridge_queued_messages " +
         std::to_string(queued_messages) + "\n";
  struct Series {
    const char* name;
    const char* help;
    int64_t AdapterCounters::*field;
  };
  for (const Series& k : {Series{"pilotfish_bridge_posts_total", "Messages posted, per bot.", &AdapterCounters::posts},
                          Series{"pilotfish_bridge_edits_total", "Messages edited, per bot.", &AdapterCounters::edits},
                          Series{"pilotfish_bridge_rate_limited_total", "HTTP 429 answers from the platform, per bot.",
                                 &AdapterCounters::rate_limited},
                          Series{"pilotfish_bridge_reconnects_total", "Event streams reopened, per bot.",
                                 &AdapterCounters::reconnects}}) {
    counter(out, k.name, k.help);
    for (const ChannelAdapter* a : adapters)
      out += std::string(k.name) + "{platform=\"" + label_value(a->platform()) + "\",bot=\"" +
             label_value(a->bot()) + "\"} " + std::to_string(a->counters().*k.field) + "\n";
  }
  return out;
}

}  // namespace pf
