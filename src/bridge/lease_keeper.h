// The lease keeper: which of the bridge's bots this process runs when several processes share
// one state store (bot_lease.h). A bot is run here only while its lease is held; the keeper
// checks held leases every poll, lets go of a bot whose lease was lost (its owner stops acting
// for it at once) and takes over a bot whose holder is gone. Without a lease every bot is held.
//
// Threads: the network thread only. Lifetime: the lease and the adapters passed to watch() are
// borrowed and must outlive the keeper; destroying it (or stop()) ends the watch. Errors: a
// take-over that throws is logged and the bot let go, to be tried again at the next poll.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "bridge/bot_lease.h"
#include "chat/channel_adapter.h"

namespace pf {

class LeaseKeeper {
 public:
  struct Hooks {
    // Starts running a bot just taken over (connect, then answer what was left pending).
    std::function<boost::asio::awaitable<void>(ChannelAdapter&)> take_over;
    // Stops acting for a bot whose lease was lost (before the lease is released).
    std::function<void(ChannelAdapter&)> lost;
  };

  LeaseKeeper(boost::asio::io_context& io, Hooks hooks);
  ~LeaseKeeper();
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;

  // Before the first try_acquire: shares the bots through lease, checked every poll.
  void set_lease(BotLease* lease, std::chrono::milliseconds poll);
  bool shared() const { return lease_ != nullptr; }
  // Takes the adapter's bot if nobody holds it (always true without a lease); the bot counts as
  // held once hold() is called, after it connected.
  bool try_acquire(const ChannelAdapter& adapter);
  void hold(const ChannelAdapter& adapter) { held_.insert(&adapter); }
  // Whether this process runs the adapter's bot now.
  bool holds(const ChannelAdapter& adapter) const { return held_.count(&adapter) > 0; }
  // Checks the lease of a held bot now; when it was lost, lets go (hooks.lost) and says false.
  bool still_ours(ChannelAdapter& adapter);
  // Stops running the bot here and releases its lease (a no-op for a bot not held).
  void let_go(ChannelAdapter& adapter);
  // With a lease: checks every poll, taking over adapters' bots whose holder is gone.
  void watch(const std::vector<std::unique_ptr<ChannelAdapter>>& adapters);
  // Ends the watch; the leases stay held until the process ends.
  void stop();

  int64_t takeovers() const { return takeovers_; }
  int64_t lost() const { return lost_; }

 private:
  static std::string key(const ChannelAdapter& adapter);
  boost::asio::awaitable<void> watch_loop(
      const std::vector<std::unique_ptr<ChannelAdapter>>* adapters);

  boost::asio::io_context& io_;
  Hooks hooks_;
  BotLease* lease_ = nullptr;
  std::chrono::milliseconds poll_{5000};
  std::set<const ChannelAdapter*> held_;
  std::shared_ptr<boost::asio::steady_timer> timer_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  bool stopped_ = false;
  int64_t takeovers_ = 0, lost_ = 0;
};

}  // namespace pf
