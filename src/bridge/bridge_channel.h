// Internal to bridge/: a channel as the orchestrator and its turn runner keep it: its settings,
// its queue and the turn running in it.
#pragma once

#include <cctype>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "bridge/bridge_config.h"
#include "bridge/loop_detector.h"
#include "bridge/streaming.h"
#include "chat/channel_adapter.h"
#include "core/cancel.h"
#include "core/trace.h"

namespace pf {

// A name (a file's, a channel id) as one safe path component: its last part, letters, digits,
// '.', '-' and '_' (others become '_'), no leading dot, at most 100 characters; "file" if empty.
inline std::string safe_name(const std::string& name) {
  size_t slash = name.find_last_of("/\\");
  std::string base = name.substr(slash == std::string::npos ? 0 : slash + 1);
  std::string out;
  for (char c : base)
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ? c : '_';
  while (!out.empty() && out.front() == '.') out.erase(0, 1);
  return out.empty() ? "file" : out.substr(0, 100);
}

struct BridgeChannel {
  std::string key, id;  // key: "platform:channel id"
  ChannelAdapter* adapter = nullptr;
  ChannelConfig config;
  bool dm = false;
  std::deque<InboundMessage> queue;
  bool working = false;  // the worker coroutine runs
  bool busy = false;     // a turn runs
  CancelSignal* cancel = nullptr;
  std::vector<InboundMessage> steering;    // waiting to be taken in by the running turn
  std::vector<std::string> steered_posts;  // taken in; finished with the turn
  std::shared_ptr<PostQueue> posts;
  LoopDetector loops;
  std::string new_conversation;  // the conversation key the loop detector asked a new one for
  std::string thread_root;       // where replies go now
  std::string turn_root;         // the running turn's thread (steering joins only that)
  int64_t skipped = 0;
  bool skip_notice_pending = false;
  int64_t context_tokens = 0;
  bool quiet = false;     // the running turn is a scheduled prompt's: nobody is asked anything
  std::string turn_user;     // who asked for the running turn (their name)
  std::string turn_user_id;  // and their platform id
  bool removed = false;  // unregistered from chat (/project remove): nothing here is answered
  std::string turn_conversation;  // the running turn's conversation id
  TraceContext trace;             // the running turn's span (core/trace.h)
  std::string turn_failure;       // why the running turn's answer failed; empty: it did not
  // /implement's run: on autopilot, and (yolo) approving prompts, for that turn only.
  bool autopilot_run = false;
  bool yolo_run = false;
};

}  // namespace pf
