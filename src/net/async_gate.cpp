// The asynchronous counting semaphore (see async_gate.h): a waiter is a timer that never
// expires; a slot given back wakes the first waiter by cancelling its timer and passes the slot
// on without it ever becoming free, so arrival order holds. A waiter that gives up (deadline,
// cancel signal) takes itself out of the queue; one still in it was not handed a slot.
#include "net/async_gate.h"

#include "core/cancel.h"

#include <algorithm>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace pf {

namespace asio = boost::asio;

AsyncGate::AsyncGate(asio::any_io_executor executor, size_t slots)
    : executor_(std::move(executor)), slots_(slots) {}

AsyncGate::Permit& AsyncGate::Permit::operator=(Permit&& o) noexcept {
  if (this != &o) {
    release();
    gate_ = o.gate_;
    o.gate_ = nullptr;
  }
  return *this;
}

void AsyncGate::Permit::release() {
  if (!gate_) return;
  AsyncGate* g = gate_;
  gate_ = nullptr;
  g->give_back();
}

asio::awaitable<AsyncGate::Permit> AsyncGate::acquire() {
  if (slots_ == 0) co_return Permit();
  if (in_use_ < slots_ && waiters_.empty()) {
    ++in_use_;
    co_return Permit(this);
  }
  auto wake = std::make_shared<asio::steady_timer>(executor_, asio::steady_timer::time_point::max());
  waiters_.push_back(wake);
  boost::system::error_code ec;
  co_await wake->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  co_return Permit(this);  // the slot was handed over by give_back: in_use_ counts it already
}

asio::awaitable<AsyncGate::Permit> AsyncGate::acquire(
    std::chrono::steady_clock::time_point deadline, CancelSignal* cancel) {
  if (slots_ == 0) co_return Permit();
  if (in_use_ < slots_ && waiters_.empty()) {
    ++in_use_;
    co_return Permit(this);
  }
  auto wake = std::make_shared<asio::steady_timer>(executor_, deadline);
  waiters_.push_back(wake);
  {
    CancelRegistration on_cancel(cancel, [wake] { wake->cancel(); });
    boost::system::error_code ec;
    co_await wake->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  auto at = std::find(waiters_.begin(), waiters_.end(), wake);
  if (at == waiters_.end()) co_return Permit(this);  // handed over by give_back
  waiters_.erase(at);
  co_return Permit();
}

void AsyncGate::give_back() {
  if (waiters_.empty()) {
    --in_use_;
    return;
  }
  std::shared_ptr<asio::steady_timer> next = std::move(waiters_.front());
  waiters_.pop_front();
  next->cancel();
}

}  // namespace pf
