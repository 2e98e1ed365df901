// Precedence on the network thread (src/bridge/precedence.h): a setup waits while other urgent
// work is outstanding but never for its own, goes at its deadline if that work never ends,
// passes at once when nothing is outstanding, and waiters are woken one at a time, each behind
// what was queued before it was woken; a token outliving its Precedence is harmless.
#include "bridge/precedence.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <string>
#include <vector>

namespace pf {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

Clock::time_point in(milliseconds ms) {
  return Clock::now() + ms;
}

TEST(Precedence, NothingOutstandingPassesWithoutSuspending) {
  asio::io_context io;
  Precedence p(io.get_executor());
  std::vector<std::string> order;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        asio::post(io, [&] { order.push_back("queued before"); });
        co_await p.give_way(nullptr, in(milliseconds(5000)));
        order.push_back("setup");
      },
      asio::detached);
  io.run();
  EXPECT_EQ(order, (std::vector<std::string>{"setup", "queued before"}));
}

TEST(Precedence, ASetupWaitsForOthersButNotForItsOwn) {
  asio::io_context io;
  Precedence p(io.get_executor());
  auto mine = p.begin();
  auto theirs = p.begin();
  EXPECT_EQ(p.outstanding(), 2u);
  Clock::time_point went{};
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await p.give_way(mine.get(), in(milliseconds(5000)));
        went = Clock::now();
      },
      asio::detached);
  Clock::time_point ended{};
  asio::steady_timer t(io, milliseconds(100));
  t.async_wait([&](const boost::system::error_code&) {
    ended = Clock::now();
    theirs->end();
    theirs->end();  // once only
  });
  io.run();
  EXPECT_EQ(p.outstanding(), 1u);  // its own is still out, and it went anyway
  ASSERT_NE(went, Clock::time_point{});
  EXPECT_GE(went, ended);
  EXPECT_LT(went - ended, milliseconds(1000));
}

TEST(Precedence, ASetupGoesAtItsDeadlineWhenOtherWorkNeverEnds) {
  asio::io_context io;
  Precedence p(io.get_executor());
  auto stuck = p.begin();
  Clock::time_point began = Clock::now(), went{};
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await p.give_way(nullptr, in(milliseconds(150)));
        went = Clock::now();
      },
      asio::detached);
  io.run();
  EXPECT_GE(went - began, milliseconds(145));
  EXPECT_LT(went - began, milliseconds(2000));
  stuck.reset();  // destroyed: ended
  EXPECT_EQ(p.outstanding(), 0u);
}

TEST(Precedence, WaitersAreWokenOneAtATimeBehindWhatWasQueuedMeanwhile) {
  asio::io_context io;
  Precedence p(io.get_executor());
  auto urgent = p.begin();
  std::vector<std::string> order;
  for (const char* name : {"A", "B", "C"})
    asio::co_spawn(
        io,
        [&, name]() -> asio::awaitable<void> {
          co_await p.give_way(nullptr, in(milliseconds(5000)));
          order.push_back(name);
        },
        asio::detached);
  asio::steady_timer t(io, milliseconds(20));
  t.async_wait([&](const boost::system::error_code&) {
    urgent->end();
    // An event that arrives as the urgent work ends: woken all at once, A, B and C would run
    // ahead of it.
    asio::post(io, [&] { order.push_back("event"); });
  });
  io.run();
  EXPECT_EQ(order, (std::vector<std::string>{"A", "event", "B", "C"}));
}

TEST(Precedence, NewUrgentWorkPausesTheWakingUntilItEnds) {
  asio::io_context io;
  Precedence p(io.get_executor());
  auto first = p.begin();
  std::shared_ptr<Precedence::Urgent> second;
  std::vector<std::string> order;
  for (const char* name : {"A", "B"})
    asio::co_spawn(
        io,
        [&, name]() -> asio::awaitable<void> {
          co_await p.give_way(nullptr, in(milliseconds(5000)));
          order.push_back(name);
          if (order.size() == 1) second = p.begin();  // a new placeholder while A runs
        },
        asio::detached);
  asio::steady_timer t(io, milliseconds(20)), t2(io, milliseconds(200));
  t.async_wait([&](const boost::system::error_code&) { first->end(); });
  Clock::time_point second_ended{}, b_went{};
  t2.async_wait([&](const boost::system::error_code&) {
    second_ended = Clock::now();
    second->end();
  });
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        while (order.size() < 2) co_await asio::post(io, asio::use_awaitable);
        b_went = Clock::now();
      },
      asio::detached);
  io.run();
  EXPECT_EQ(order, (std::vector<std::string>{"A", "B"}));
  EXPECT_GE(b_went, second_ended);
}

TEST(Precedence, ATokenMayOutliveItsPrecedence) {
  std::shared_ptr<Precedence::Urgent> token;
  {
    asio::io_context io;
    Precedence p(io.get_executor());
    token = p.begin();
  }
  EXPECT_TRUE(token->active());
  token->end();
  EXPECT_FALSE(token->active());
}

}  // namespace
}  // namespace pf
