// Scheduled prompts (spec §12): the `schedule` chat tool and `/schedule`, a timer per enabled
// schedule, and firing it: the prompt becomes a quiet message (InboundMessage::quiet) that the
// owner's fire callback puts in its channel's queue. Schedules and their history live in the
// state store, so they fire across restarts; one-off times missed while no bridge ran are
// reported once, in their channel, when the bot starts.
//
// Threads: the network thread only. Lifetime: the state store is borrowed and must outlive the
// scheduler; destroying the scheduler (or stop()) cancels every timer. Errors: bad input to the
// tool or the command is an {"error": …} result or a reply, never an exception.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "bridge/state_store.h"
#include "chat/channel_adapter.h"
#include "core/json.h"

namespace pf {

// Where a schedule is made and fires: the channel ("platform:channel id"), its bot, the thread.
struct ScheduleSite {
  std::string channel_key, bot, thread_root;
};

class Scheduler {
 public:
  // Takes a fired prompt: true when its channel queued it, false when it could not (recorded
  // as failed), nullopt when the bot runs in another process now (that one fires it).
  using Fire = std::function<std::optional<bool>(InboundMessage message)>;

  Scheduler(boost::asio::io_context& io, StateStore& state, Fire fire);
  ~Scheduler() { stop(); }
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Arms the schedules of the adapter's bot and reports missed one-offs in their channels (the
  // adapter must outlive the reports, which go out in the background).
  void start(ChannelAdapter& adapter);
  // The `schedule` tool (create, list, cancel, pause, resume) at site, asked by user.
  nlohmann::json tool(const ScheduleSite& site, const nlohmann::json& args,
                      const std::string& user);
  // `/schedule [list|history|cancel ID|pause ID|resume ID]`: the reply.
  std::string command(const ScheduleSite& site, const std::string& args);
  // Cancels every timer; nothing fires afterwards.
  void stop();

 private:
  void arm(const ScheduleRecord& schedule);
  void fire(const std::string& bot, const std::string& id);
  void forget(const std::string& id);

  boost::asio::io_context& io_;
  StateStore& state_;
  Fire fire_;
  bool stopped_ = false;
  std::map<std::string, std::shared_ptr<boost::asio::steady_timer>> timers_;  // by schedule id
};

}  // namespace pf
