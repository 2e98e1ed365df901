// The HTTP server on its own, in process: a quiet stream gets keep-alive lines, and a kept-alive
// connection carries a second request after a streamed one.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <thread>

#include "net/http_client.h"
#include "net/http_server.h"

namespace pf {
namespace {

namespace asio = boost::asio;

// Streams "start", stays quiet for 1.5 s, then "done".
asio::awaitable<void> slow_stream(ServerRequest& req, ServerResponse& res) {
  if (req.path != "/slow") {
    co_await res.send(200, "text/plain", "fast");
    co_return;
  }
  res.begin_stream(200, {{"Content-Type", "text/event-stream"}}, ": ping\n\n");
  res.write("data: start\n\n");
  asio::steady_timer t(co_await asio::this_coro::executor);
  t.expires_after(std::chrono::milliseconds(1500));
  co_await t.async_wait(asio::use_awaitable);
  res.write("data: done\n\n");
  co_await res.end_stream();
}

TEST(HttpServer, QuietStreamsGetKeepAliveLines) {
  asio::io_context io;
  HttpServerOptions options;
  options.keepalive_interval = std::chrono::seconds(1);
  HttpServer server(io, options, slow_stream);
  unsigned short port = server.listen("127.0.0.1", "0");
  server.start();
  std::thread loop([&] { io.run(); });
  HttpRequest req;
  req.method = "GET";
  req.url = "http://127.0.0.1:" + std::to_string(port) + "/slow";
  HttpResponse r = http_request(req);
  EXPECT_EQ(r.status, 200);
  size_t ping = r.body.find(": ping\n\n");
  EXPECT_NE(ping, std::string::npos) << r.body;
  EXPECT_LT(r.body.find("data: start"), ping);
  EXPECT_GT(r.body.find("data: done"), ping);
  req.url = "http://127.0.0.1:" + std::to_string(port) + "/fast";
  EXPECT_EQ(http_request(req).body, "fast");
  asio::post(io, [&] {
    server.stop();
    io.stop();
  });
  loop.join();
}

}  // namespace
}  // namespace pf
