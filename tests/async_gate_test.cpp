// The asynchronous counting semaphore (src/net/async_gate.h): never more holders than slots,
// waiters served in arrival order, a permit given back once however it ends, no bound at 0, and
// a waiter that gives up at its deadline or cancel signal leaves the queue without a slot.
#include "net/async_gate.h"

#include <gtest/gtest.h>

#include "core/cancel.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <string>
#include <vector>

namespace pf {
namespace {

namespace asio = boost::asio;

// n coroutines each take a slot, note it, yield `hold` times (others run meanwhile), give it back.
struct Holders {
  std::vector<int> order;
  size_t peak = 0;
};

Holders run(size_t slots, int n, int hold) {
  asio::io_context io;
  AsyncGate gate(io.get_executor(), slots);
  Holders out;
  for (int i = 0; i < n; ++i)
    asio::co_spawn(io, [&, i]() -> asio::awaitable<void> {
      AsyncGate::Permit p = co_await gate.acquire();
      out.order.push_back(i);
      out.peak = std::max(out.peak, gate.in_use());
      for (int k = 0; k < hold; ++k) co_await asio::post(io, asio::use_awaitable);
    }, asio::detached);
  io.run();
  EXPECT_EQ(gate.in_use(), 0u);
  EXPECT_EQ(gate.waiting(), 0u);
  return out;
}

TEST(AsyncGate, NeverMoreHoldersThanSlotsAndFirstComeFirstServed) {
  Holders r = run(3, 20, 5);
  EXPECT_EQ(r.peak, 3u);
  ASSERT_EQ(r.order.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(r.order[i], i);
}

TEST(AsyncGate, ZeroSlotsIsNoBound) {
  Holders r = run(0, 20, 5);
  EXPECT_EQ(r.order.size(), 20u);
  EXPECT_EQ(r.peak, 0u);  // nothing is counted: every acquire passes
}

TEST(AsyncGate, APermitIsGivenBackOnceWhetherReleasedMovedOrDestroyed) {
  asio::io_context io;
  AsyncGate gate(io.get_executor(), 1);
  bool second = false;
  asio::co_spawn(io, [&]() -> asio::awaitable<void> {
    AsyncGate::Permit a = co_await gate.acquire();
    EXPECT_TRUE(a.held());
    AsyncGate::Permit b = std::move(a);
    EXPECT_FALSE(a.held());
    b.release();
    b.release();  // a second release is nothing
    EXPECT_EQ(gate.in_use(), 0u);
    AsyncGate::Permit c = co_await gate.acquire();
    asio::co_spawn(io, [&]() -> asio::awaitable<void> {
      AsyncGate::Permit d = co_await gate.acquire();  // waits for c
      second = true;
    }, asio::detached);
    co_await asio::post(io, asio::use_awaitable);
    EXPECT_FALSE(second);
    EXPECT_EQ(gate.waiting(), 1u);
  }, asio::detached);  // c destroyed here: the waiter gets its slot
  io.run();
  EXPECT_TRUE(second);
  EXPECT_EQ(gate.in_use(), 0u);
}


TEST(AsyncGate, AWaiterGivesUpAtItsDeadlineOrCancelSignalAndTheQueueGoesOn) {
  asio::io_context io;
  AsyncGate gate(io.get_executor(), 1);
  CancelSignal cancel;
  std::vector<std::string> outcome(4);
  auto now = std::chrono::steady_clock::now();
  auto later = now + std::chrono::seconds(30);
  asio::co_spawn(io, [&]() -> asio::awaitable<void> {
    AsyncGate::Permit holder = co_await gate.acquire();
    auto wait = [&](int i, std::chrono::steady_clock::time_point deadline, CancelSignal* signal) {
      asio::co_spawn(io, [&, i, deadline, signal]() -> asio::awaitable<void> {
        AsyncGate::Permit p = co_await gate.acquire(deadline, signal);
        outcome[i] = p.held() ? "held" : "gave up";
      }, asio::detached);
    };
    wait(1, now + std::chrono::milliseconds(20), nullptr);  // times out
    wait(2, later, &cancel);                                 // is cancelled
    wait(3, later, nullptr);                                 // gets the slot
    co_await asio::post(io, asio::use_awaitable);
    EXPECT_EQ(gate.waiting(), 3u);
    asio::steady_timer t(io, std::chrono::milliseconds(50));
    co_await t.async_wait(asio::use_awaitable);
    EXPECT_EQ(outcome[1], "gave up");
    EXPECT_EQ(gate.waiting(), 2u);
    cancel.cancel();
    co_await asio::post(io, asio::use_awaitable);
    EXPECT_EQ(outcome[2], "gave up");
    EXPECT_EQ(gate.waiting(), 1u);
    EXPECT_EQ(outcome[3], "");
    outcome[0] = "released";
  }, asio::detached);  // holder destroyed here: waiter 3 gets its slot
  io.run();
  EXPECT_EQ(outcome[0], "released");
  EXPECT_EQ(outcome[3], "held");
  EXPECT_EQ(gate.in_use(), 0u);
  EXPECT_EQ(gate.waiting(), 0u);
}

}  // namespace
}  // namespace pf
