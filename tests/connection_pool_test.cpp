// The HTTP client's connection pool against a real HTTP/1.1 server over loopback (Beast's
// server side on a thread): kept-alive connections are reused, a connection the server closed
// while it sat idle is replaced without the caller seeing an error, and an answer that says
// "Connection: close" is not kept. At most max_per_host requests are in flight to one host: the
// rest wait their turn, and a waiting request still honours its cancel signal and deadline.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <thread>
#include <vector>

#include "core/cancel.h"
#include "loopback_server.h"
#include "net/http_client.h"
#include "net/run_sync.h"

namespace pf {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// Serves each connection until the client closes it, or for at most per_connection requests
// (then closes without saying so, as a server's idle timeout does), or answers with
// "Connection: close" when close_header is set. Bodies count the requests: {"n": 1}, ...
class CountingServer {
 public:
  CountingServer(int per_connection, bool close_header)
      : server_([this, per_connection, close_header](tcp::socket& socket) {
          beast::flat_buffer buf;
          beast::error_code ec;
          for (int n = 0; n < per_connection; ++n) {
            http::request<http::string_body> req;
            http::read(socket, buf, req, ec);
            if (ec) break;
            http::response<http::string_body> res{http::status::ok, 11};
            res.body() = "{\"n\":" + std::to_string(++requests_) + "}";
            res.keep_alive(!close_header);
            res.prepare_payload();
            http::write(socket, res, ec);
            if (ec || close_header) break;
          }
        }) {}
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_.port()) + "/api"; }
  int connections() const { return server_.connections(); }

 private:
  std::atomic<int> requests_{0};
  test::LoopbackServer server_;  // last: its thread uses requests_
};

struct PoolRun {
  std::vector<std::string> bodies;
  size_t opened = 0, idle = 0;
};

// n requests one after another through one pool, made and dropped inside the coroutine: a pool
// must not outlive the io_context its connections belong to (run_sync's, here).
PoolRun requests_through_a_pool(const std::string& url, int n) {
  return run_sync([&]() -> asio::awaitable<PoolRun> {
    ConnectionPool pool;
    PoolRun run;
    for (int i = 0; i < n; ++i) {
      HttpRequest r;
      r.method = i % 2 ? "POST" : "GET";
      r.url = url;
      r.body = i % 2 ? "{\"i\":1}" : "";
      r.pool = &pool;
      HttpResponse res = co_await async_http_request(r);
      EXPECT_EQ(res.status, 200);
      run.bodies.push_back(res.body);
    }
    run.opened = pool.connections_opened();
    run.idle = pool.idle();
    co_return run;
  }());
}

TEST(ConnectionPool, KeptAliveConnectionsAreReused) {
  CountingServer server(1000, false);
  PoolRun run = requests_through_a_pool(server.url(), 10);
  ASSERT_EQ(run.bodies.size(), 10u);
  EXPECT_EQ(run.bodies.back(), "{\"n\":10}");
  EXPECT_EQ(server.connections(), 1);
  EXPECT_EQ(run.opened, 1u);
  EXPECT_EQ(run.idle, 1u);
}

TEST(ConnectionPool, AConnectionTheServerDroppedIsReplacedUnseen) {
  CountingServer server(2, false);  // the server drops each connection after two answers
  PoolRun run = requests_through_a_pool(server.url(), 6);
  ASSERT_EQ(run.bodies.size(), 6u);
  EXPECT_EQ(run.bodies.back(), "{\"n\":6}");  // no request was lost or sent twice
  EXPECT_EQ(server.connections(), 3);
}

TEST(ConnectionPool, ConnectionCloseAnswersAreNotKept) {
  CountingServer server(1000, true);
  PoolRun run = requests_through_a_pool(server.url(), 4);
  ASSERT_EQ(run.bodies.size(), 4u);
  EXPECT_EQ(server.connections(), 4);
  EXPECT_EQ(run.idle, 0u);
}


// n requests started together through a pool that lets max_per_host of them in flight.
PoolRun concurrent_requests(const std::string& url, int n, size_t max_per_host) {
  return run_sync([&]() -> asio::awaitable<PoolRun> {
    ConnectionPool pool(16, max_per_host);
    PoolRun run;
    auto executor = co_await asio::this_coro::executor;
    std::vector<std::string> bodies(n);
    int done = 0;
    for (int i = 0; i < n; ++i) {
      asio::co_spawn(
          executor,
          [&, i]() -> asio::awaitable<void> {
            HttpRequest r;
            r.method = "GET";
            r.url = url;
            r.pool = &pool;
            bodies[i] = (co_await async_http_request(r)).body;
            ++done;
          },
          asio::detached);
    }
    asio::steady_timer tick(executor);
    while (done < n) {
      tick.expires_after(std::chrono::milliseconds(5));
      co_await tick.async_wait(asio::use_awaitable);
    }
    run.bodies = bodies;
    run.opened = pool.connections_opened();
    run.idle = pool.idle();
    co_return run;
  }());
}

TEST(ConnectionPool, ABurstWaitsForTheConnectionsInFlightInsteadOfOpeningOneEach) {
  // This server serves one connection at a time, until the client lets it go: a second
  // connection opened while the first is kept would never be answered.
  CountingServer server(1000, false);
  PoolRun run = concurrent_requests(server.url(), 8, 1);
  ASSERT_EQ(run.bodies.size(), 8u);
  std::vector<std::string> sorted = run.bodies;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted.front(), "{\"n\":1}");
  EXPECT_EQ(sorted.back(), "{\"n\":8}");
  EXPECT_EQ(run.opened, 1u);
  EXPECT_EQ(server.connections(), 1);
}

TEST(ConnectionPool, AWaitingRequestHonoursItsCancelSignalAndItsDeadline) {
  // The server holds its one connection's answer for 400 ms.
  test::LoopbackServer server([](tcp::socket& socket) {
    beast::flat_buffer buf;
    beast::error_code ec;
    for (;;) {
      http::request<http::string_body> req;
      http::read(socket, buf, req, ec);
      if (ec) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(400));
      http::response<http::string_body> res{http::status::ok, 11};
      res.body() = "{}";
      res.prepare_payload();
      http::write(socket, res, ec);
      if (ec) return;
    }
  });
  std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/api";
  std::vector<std::string> outcomes = run_sync([&]() -> asio::awaitable<std::vector<std::string>> {
    ConnectionPool pool(16, 1);
    auto executor = co_await asio::this_coro::executor;
    std::vector<std::string> out(3);
    CancelSignal cancel;
    int done = 0;
    auto one = [&](int i, CancelSignal* signal, std::chrono::milliseconds timeout) {
      asio::co_spawn(
          executor,
          [&, i, signal, timeout]() -> asio::awaitable<void> {
            HttpRequest r;
            r.method = "GET";
            r.url = url;
            r.pool = &pool;
            r.cancel = signal;
            r.timeout = timeout;
            try {
              out[i] = std::to_string((co_await async_http_request(r)).status);
            } catch (const std::exception& e) {
              out[i] = e.what();
            }
            ++done;
          },
          asio::detached);
    };
    one(0, nullptr, std::chrono::milliseconds(5000));  // holds the one connection
    one(1, &cancel, std::chrono::milliseconds(5000));   // waits, then is cancelled
    one(2, nullptr, std::chrono::milliseconds(100));    // waits past its deadline
    asio::steady_timer tick(executor);
    tick.expires_after(std::chrono::milliseconds(50));
    co_await tick.async_wait(asio::use_awaitable);
    cancel.cancel();
    while (done < 3) {
      tick.expires_after(std::chrono::milliseconds(5));
      co_await tick.async_wait(asio::use_awaitable);
    }
    co_return out;
  }());
  EXPECT_EQ(outcomes[0], "200");
  EXPECT_NE(outcomes[1].find("cancelled"), std::string::npos) << outcomes[1];
  EXPECT_NE(outcomes[2].find("timed out waiting for a free connection"), std::string::npos)
      << outcomes[2];
}

}  // namespace
}  // namespace pf
