// A channel as the orchestrator keeps it (internal to bridge.cpp, bridge_turn.cpp and
// bridge_commands.cpp): its settings, its queue and the turn running in it.
#pragma once

#include "bridge/bridge.h"

namespace pf {

// A tool call waiting for a person's answer (bridge_permissions.cpp).
struct PendingPermission {
  PermissionRequest request;
  Verdict verdict;                         // the engine's "ask", with what /always would store
  std::shared_ptr<PostQueue::Post> prompt;  // shown once it is the channel's head
  std::string result;                      // approve-once, reject, user-not-available; "" pending
  bool remember = false;
  std::string by;   // who answered
  std::string why;  // user-not-available: why
  std::shared_ptr<boost::asio::steady_timer> wake;  // the timeout; cancelled on an answer
};

struct Bridge::Channel {
  std::string key, id;
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
  std::string thread_root;        // where replies go now
  std::string turn_root;          // the running turn's thread (steering joins only that)
  int64_t skipped = 0;
  bool skip_notice_pending = false;
  int64_t context_tokens = 0;
  std::deque<std::shared_ptr<PendingPermission>> permissions;  // FIFO; only the head is shown
  bool quiet = false;  // the running turn is a scheduled prompt's: nobody is asked anything
  std::string turn_user;  // who asked for the running turn
};

}  // namespace pf
