// Precedence on the network thread: a turn's placeholder (cheap, and what the user is waiting
// to see) goes ahead of other turns' setup (history, retrieval, the model request: costly, and
// unseen for the 500 ms before the first edit). Every turn runs on the one network thread, whose
// ready handlers run first come, first served, so in a burst of posts (200 channels at once) the
// setups of the first turns would sit between the later posts' events and their placeholders.
// A placeholder is urgent from its creation until the server has acknowledged it; a setup gives
// way while any urgent work other than its own turn's is outstanding, up to a deadline, so a
// steady stream of placeholders delays setups by at most that deadline.
//
// Threads: every call on the executor's thread. Urgent tokens may outlive the Precedence.
#pragma once

#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <vector>

namespace pf {

class Precedence {
  struct State;

 public:
  explicit Precedence(boost::asio::any_io_executor executor);

  // Urgent work under way, from begin() until end() or destruction (once).
  class Urgent {
   public:
    explicit Urgent(std::shared_ptr<State> state) : state_(std::move(state)) {}
    ~Urgent() { end(); }
    Urgent(const Urgent&) = delete;
    Urgent& operator=(const Urgent&) = delete;
    void end();
    bool active() const { return state_ != nullptr; }

   private:
    std::shared_ptr<State> state_;
  };

  // Starts urgent work: it is outstanding until the token's end(), or until the last copy of
  // the pointer is gone (so a callback that holds it ends it when dropped).
  std::shared_ptr<Urgent> begin();
  // Resumes once no urgent work is outstanding but `own` (nullable: the caller's own, which it
  // does not wait for; it must outlive the call), or when `deadline` passes, whichever is first.
  // Does not suspend when nothing else is outstanding. Never throws.
  boost::asio::awaitable<void> give_way(const Urgent* own,
                                        std::chrono::steady_clock::time_point deadline);
  size_t outstanding() const;  // urgent work begun and not ended

 private:
  std::shared_ptr<State> state_;
};

}  // namespace pf
