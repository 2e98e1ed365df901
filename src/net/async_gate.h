// An asynchronous counting semaphore for coroutines on one executor: at most `slots` holders at
// once, the others suspended in arrival order (no thread blocks). The chat routes use one to
// bound how many answers sit between retrieval and a written model request, the stretch where an
// answer holds its retrieved code and its serialised request (~16 KB) while its model connection
// is made: with a thousand chats arriving at once, the queue then holds a thousand small waiting
// coroutines instead of a thousand prepared requests. The HTTP client's ConnectionPool uses one
// per host to bound the requests in flight to it.
//
// Threads: every call on the executor's thread (the server's network thread). The gate must
// outlive its permits and waiters.
#pragma once

#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>

namespace pf {

class CancelSignal;

class AsyncGate {
 public:
  // slots 0: no bound (acquire never waits).
  AsyncGate(boost::asio::any_io_executor executor, size_t slots);

  // A held slot, given back when destroyed or released (once).
  class Permit {
   public:
    Permit() = default;
    explicit Permit(AsyncGate* gate) : gate_(gate) {}
    Permit(Permit&& o) noexcept : gate_(o.gate_) { o.gate_ = nullptr; }
    Permit& operator=(Permit&& o) noexcept;
    Permit(const Permit&) = delete;
    Permit& operator=(const Permit&) = delete;
    ~Permit() { release(); }
    void release();
    bool held() const { return gate_ != nullptr; }

   private:
    AsyncGate* gate_ = nullptr;
  };

  // Waits for a slot, first come first served.
  boost::asio::awaitable<Permit> acquire();
  // The same, but gives up when `deadline` passes or `cancel` (nullable; it must outlive the
  // call) is raised first: the Permit returned then is not held().
  boost::asio::awaitable<Permit> acquire(std::chrono::steady_clock::time_point deadline,
                                         CancelSignal* cancel);
  size_t waiting() const { return waiters_.size(); }
  size_t in_use() const { return in_use_; }

 private:
  void give_back();

  boost::asio::any_io_executor executor_;
  size_t slots_, in_use_ = 0;
  std::deque<std::shared_ptr<boost::asio::steady_timer>> waiters_;  // woken by cancel()
};

}  // namespace pf
