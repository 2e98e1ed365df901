// A test's way to run one adapter call to its end: the coroutine spawned on the test's
// io_context, which is pumped (in 20 ms slices, so timers and sockets of the adapter move too)
// until the call finishes or 30 s pass; its exception is rethrown. Also a cursor store that
// keeps nothing, for adapters that are asked but never replay.
#pragma once

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <exception>
#include <functional>
#include <optional>
#include <stdexcept>

#include "chat/cursor_store.h"
#include "net/awaitable.h"

namespace pf::test {

// Pumps io until done() or ms pass; whether done() held.
inline bool pump(boost::asio::io_context& io, const std::function<bool()>& done, int ms = 15000) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!done() && std::chrono::steady_clock::now() < until) {
    io.restart();
    io.run_for(std::chrono::milliseconds(20));
  }
  return done();
}

template <typename T>
T run_on(boost::asio::io_context& io, boost::asio::awaitable<T> work) {
  std::exception_ptr failure;
  std::optional<T> result;
  bool done = false;
  boost::asio::co_spawn(io, std::move(work), [&](std::exception_ptr e, T r) {
    failure = e;
    if (!e) result.emplace(std::move(r));
    done = true;
  });
  pump(io, [&] { return done; }, 30000);
  if (failure) std::rethrow_exception(failure);
  if (!result) throw std::runtime_error("the call did not finish within 30 s");
  return std::move(*result);
}

inline void run_on(boost::asio::io_context& io, boost::asio::awaitable<void> work) {
  run_on(io, [](boost::asio::awaitable<void> w) -> boost::asio::awaitable<int> {
    co_await std::move(w);
    co_return 0;
  }(std::move(work)));
}

class NoCursors : public CursorStore {
 public:
  void set_cursors(const std::string&, const std::vector<std::pair<std::string, int64_t>>&) override {}
  std::vector<std::pair<std::string, int64_t>> cursors(const std::string&) override { return {}; }
};

}  // namespace pf::test
