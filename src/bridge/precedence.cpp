// Urgent work ahead of setups (see precedence.h). A waiter is a timer set to its deadline; when
// the outstanding count drops to what a waiter may ignore (its own token), its timer is
// cancelled. Wakes happen only at counts of 0 or 1, so a burst of 200 placeholders does not wake
// 200 waiters 200 times, and one waiter at a time.
#include "bridge/precedence.h"

#include <algorithm>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace pf {

namespace asio = boost::asio;

struct Precedence::State {
  struct Waiter {
    std::shared_ptr<asio::steady_timer> timer;
    const Urgent* own;
  };
  asio::any_io_executor executor;
  size_t outstanding = 0;
  std::vector<Waiter> waiters;

  size_t others(const Urgent* own) const {
    return outstanding - (own != nullptr && own->active() ? 1 : 0);  // active: counted
  }
  // Wakes the first waiter that may go. One at a time: each passes the turn on once it runs
  // (give_way), so the setups queue behind whatever arrived meanwhile instead of 200 of them
  // running back to back ahead of the next event.
  void wake() {
    if (outstanding > 1) return;
    for (auto it = waiters.begin(); it != waiters.end(); ++it) {
      if (others(it->own) == 0) {
        it->timer->cancel();
        waiters.erase(it);
        return;
      }
    }
  }
};

Precedence::Precedence(asio::any_io_executor executor) : state_(std::make_shared<State>()) {
  state_->executor = std::move(executor);
}

void Precedence::Urgent::end() {
  if (!state_) return;
  std::shared_ptr<State> s = std::move(state_);
  state_ = nullptr;
  --s->outstanding;
  s->wake();
}

std::shared_ptr<Precedence::Urgent> Precedence::begin() {
  ++state_->outstanding;
  return std::make_shared<Urgent>(state_);
}

size_t Precedence::outstanding() const {
  return state_->outstanding;
}

asio::awaitable<void> Precedence::give_way(const Urgent* own,
                                           std::chrono::steady_clock::time_point deadline) {
  std::shared_ptr<State> s = state_;
  bool waited = false;
  // Woken, it looks again: urgent work that began while its wake-up was queued comes first,
  // and it waits at the head of the line for that.
  while (s->others(own) > 0 && std::chrono::steady_clock::now() < deadline) {
    auto timer = std::make_shared<asio::steady_timer>(s->executor, deadline);
    if (waited)
      s->waiters.insert(s->waiters.begin(), State::Waiter{timer, own});
    else
      s->waiters.push_back(State::Waiter{timer, own});
    waited = true;
    boost::system::error_code ec;
    co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    // Woken by wake() (already out of the list) or by the deadline (still in it).
    auto at = std::find_if(s->waiters.begin(), s->waiters.end(),
                           [&](const State::Waiter& w) { return w.timer == timer; });
    if (at != s->waiters.end()) s->waiters.erase(at);
  }
  if (waited) s->wake();  // the next waiter's turn comes after what this one does now
}

}  // namespace pf
