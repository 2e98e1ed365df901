// The lease keeper (see lease_keeper.h): holding, checking and taking over bots' leases.
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include "bridge/lease_keeper.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "core/log.h"

namespace pf {

namespace asio = boost::asio;

LeaseKeeper::LeaseKeeper(asio::io_context& io, Hooks hooks) : io_(io), hooks_(std::move(hooks)) {}

LeaseKeeper::~LeaseKeeper() {
  *alive_ = false;
  stop();
}

void LeaseKeeper::set_lease(BotLease* lease, std::chrono::milliseconds poll) {
  lease_ = lease;
  poll_ = poll;
}

std::string LeaseKeeper::key(const ChannelAdapter& a) {
  return a.platform() + ":" + a.bot();
}

bool LeaseKeeper::try_acquire(const ChannelAdapter& adapter) {
  return !lease_ || lease_->try_acquire(key(adapter));
}

bool LeaseKeeper::still_ours(ChannelAdapter& adapter) {
  if (!holds(adapter)) return false;
  if (!lease_ || lease_->still_held(key(adapter))) return true;
  let_go(adapter);
  return false;
}

void LeaseKeeper::let_go(ChannelAdapter& a) {
  if (!held_.erase(&a)) return;
  ++lost_;
  log::warn("bridge", a.bot() + " on " + a.platform() +
                          ": the lease was lost; another pilotfish may run this bot now, so this "
                          "one stops acting for it");
  if (hooks_.lost) hooks_.lost(a);
  if (lease_) lease_->release(key(a));
}

void LeaseKeeper::watch(const std::vector<std::unique_ptr<ChannelAdapter>>& adapters) {
  if (!lease_ || stopped_) return;
  timer_ = std::make_shared<asio::steady_timer>(io_);
  asio::co_spawn(io_, watch_loop(&adapters), asio::detached);
}

void LeaseKeeper::stop() {
  stopped_ = true;
  if (timer_) timer_->cancel();
}

asio::awaitable<void> LeaseKeeper::watch_loop(
    const std::vector<std::unique_ptr<ChannelAdapter>>* adapters) {
  auto alive = alive_;
  auto timer = timer_;
  while (*alive && !stopped_) {
    timer->expires_after(poll_);
    boost::system::error_code ec;
    co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (!*alive || stopped_) co_return;
    for (auto& a : *adapters) {
      if (holds(*a)) {
        still_ours(*a);
        continue;
      }
      if (!lease_->try_acquire(key(*a))) continue;
      log::warn("bridge", "taking over " + a->bot() + " on " + a->platform() +
                              ": the process that ran it is gone");
      try {
        co_await hooks_.take_over(*a);
        if (!*alive) co_return;
        ++takeovers_;
      } catch (const std::exception& e) {
        if (!*alive) co_return;
        log::error("bridge", "could not take over " + a->bot() + ": " + e.what());
        let_go(*a);
        lease_->release(key(*a));
      }
    }
  }
}

}  // namespace pf
