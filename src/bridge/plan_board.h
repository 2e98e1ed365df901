// Plan mode and autopilot as a channel keeps them (spec §3 /plan, /implement, /autopilot): the
// channel's modes (stored), each conversation's plan document (stored with it), the plan shown
// in the channel as one post per turn that the model's updates edit at most once per interval
// (the newest text wins), and the replies of /plan and /autopilot. What the modes do to a turn
// (the tools offered, the calls refused, the steps and time allowed) is the bridge's.
//
// Threads: the bridge's network thread only. The state store must outlive the board; a post
// queue given to update() is kept until forget().
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "bridge/state_store.h"
#include "bridge/streaming.h"

namespace pf {

class PlanBoard {
 public:
  explicit PlanBoard(StateStore& state,
                     std::chrono::milliseconds interval = std::chrono::seconds(3));

  bool plan_mode(const std::string& channel_key);
  bool autopilot(const std::string& channel_key);

  // update_plan: text becomes the conversation's plan and is shown in the channel (the turn's
  // plan post, made on the first update, edited after; an update within the interval of the
  // last one is held and merged).
  void update(const std::string& channel_key, const std::string& conversation,
              const std::shared_ptr<PostQueue>& posts, const std::string& thread_root,
              const std::string& text);
  // The next update makes a new post (a new turn).
  void forget(const std::string& channel_key) { shown_.erase(channel_key); }

  // /plan [on|off|show|view|clear|delete] for the channel and its conversation ("" when it has
  // none yet): the reply. summary is the caller's (it asks a model).
  std::string command(const std::string& channel_key, const std::string& conversation,
                      const std::string& args);
  // /autopilot [on|off] (no argument toggles): the reply; yolo says whether prompts are
  // approved without asking in the channel (autopilot warns when they are not).
  std::string autopilot_command(const std::string& channel_key, const std::string& args,
                                bool yolo);

  // What the system prompt says in plan mode, with the plan so far.
  static std::string instructions(const std::string& plan);

 private:
  struct Shown {
    std::shared_ptr<PostQueue> posts;
    std::shared_ptr<PostQueue::Post> post;
    std::chrono::steady_clock::time_point last;
  };
  StateStore& state_;
  std::chrono::milliseconds interval_;
  std::map<std::string, Shown> shown_;  // by channel key
};

}  // namespace pf
