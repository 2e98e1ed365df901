// The worker pool's hand-off (src/runtime/worker_pool.h): offload() runs work on a pool thread
// once, frees what it holds once (a std::function made for a large lambda was freed twice
// before: GCC 12 destroys a co_await's temporaries twice; found by ASan), resumes the caller on
// its own executor, and carries the work's exception back.
#include "runtime/worker_pool.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <stdexcept>
#include <thread>

#include "net/awaitable.h"

namespace pf {
namespace {

namespace asio = boost::asio;

TEST(WorkerPoolTest, OffloadRunsHeapHeldWorkOnceOnThePool) {
  asio::io_context io;
  asio::thread_pool pool(2);
  auto token = std::make_shared<std::string>(1000, 'x');  // too big to be stored in place
  std::weak_ptr<std::string> weak = token;
  int runs = 0, resumed = 0;
  std::thread::id ran_on, resumed_on;
  auto task = [&](int i) -> asio::awaitable<void> {
    if (i % 2) co_return;  // a coroutine that may return before its co_await
    std::shared_ptr<std::string> held = token;
    std::string big(1000, 'y');
    // More than a std::function keeps in place: its target went to the heap and was freed twice.
    co_await offload(pool, [&held, &big, &runs, &ran_on, &token, &weak, &pool] {
      ++runs;
      ran_on = std::this_thread::get_id();
      (void)held, (void)big, (void)token, (void)weak, (void)pool;
    });
    ++resumed;
    resumed_on = std::this_thread::get_id();
  };
  for (int i = 0; i < 50; ++i) asio::co_spawn(io, task(i), asio::detached);
  io.run();
  token.reset();
  pool.join();
  EXPECT_EQ(runs, 25);
  EXPECT_EQ(resumed, 25);
  EXPECT_NE(ran_on, std::this_thread::get_id());
  EXPECT_EQ(resumed_on, std::this_thread::get_id());
  EXPECT_TRUE(weak.expired());
}

TEST(WorkerPoolTest, OffloadCarriesTheWorksExceptionBack) {
  asio::io_context io;
  asio::thread_pool pool(1);
  std::string caught;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        try {
          co_await offload(pool, [] { throw std::runtime_error("disk on fire"); });
        } catch (const std::exception& e) {
          caught = e.what();
        }
      },
      asio::detached);
  io.run();
  EXPECT_EQ(caught, "disk on fire");
}

}  // namespace
}  // namespace pf
