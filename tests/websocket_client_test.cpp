// The WebSocket client against a real WebSocket server over loopback (Beast's server side, on a
// thread of its own): messages in order, close codes, the message-size cap, a refused upgrade,
// a silent peer, abort, and the CONNECT tunnel of a proxy.
#include "net/websocket_client.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "loopback_server.h"
#include "net/run_sync.h"
#include "test_util.h"

namespace pf {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using Ws = websocket::stream<tcp::socket>;

// Accepts one connection at a time and hands each upgraded stream to `session` (or, refusing,
// answers the upgrade with a 403).
class WsServer {
 public:
  explicit WsServer(std::function<void(Ws&)> session, bool refuse = false)
      : server_([session, refuse](tcp::socket& socket) {
          try {
            if (refuse) {
              beast::flat_buffer buf;
              beast::http::request<beast::http::string_body> req;
              beast::http::read(socket, buf, req);
              beast::http::response<beast::http::string_body> res{beast::http::status::forbidden,
                                                                  11};
              res.body() = "{\"id\":\"nope\"}";
              res.prepare_payload();
              beast::http::write(socket, res);
              return;
            }
            Ws ws(std::move(socket));
            ws.accept();
            session(ws);
          } catch (const std::exception&) {
          }
        }) {}
  std::string url() const {
    return "ws://127.0.0.1:" + std::to_string(server_.port()) + "/api/v4/websocket";
  }

 private:
  test::LoopbackServer server_;
};

void echo(Ws& ws) {
  for (;;) {
    beast::flat_buffer buf;
    ws.read(buf);
    ws.text(true);
    ws.write(buf.data());
  }
}

TEST(WebSocketClient, SendsAndReadsMessagesInOrder) {
  WsServer server(echo);
  std::vector<std::string> got = run_sync([&]() -> asio::awaitable<std::vector<std::string>> {
    auto ws = co_await WebSocketClient::connect(server.url(), {});
    for (int i = 0; i < 5; ++i) EXPECT_TRUE(ws->send("message " + std::to_string(i)));
    std::vector<std::string> out;
    for (int i = 0; i < 5; ++i) out.push_back(co_await ws->read());
    co_await ws->close(1000, "done");
    EXPECT_FALSE(ws->send("after close"));
    co_return out;
  }());
  ASSERT_EQ(got.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(got[i], "message " + std::to_string(i));
}

TEST(WebSocketClient, ThePeersCloseCodeAndReasonAreReported) {
  WsServer server([](Ws& ws) {
    ws.write(asio::buffer(std::string("hello")));
    ws.close(websocket::close_reason(static_cast<websocket::close_code>(4001), "token expired"));
  });
  run_sync([&]() -> asio::awaitable<void> {
    auto ws = co_await WebSocketClient::connect(server.url(), {});
    EXPECT_EQ(co_await ws->read(), "hello");
    int code = 0;
    std::string what;
    try {
      co_await ws->read();
    } catch (const WebSocketClosed& e) {
      code = e.code();
      what = e.what();
    }
    EXPECT_EQ(code, 4001);
    EXPECT_NE(what.find("token expired"), std::string::npos) << what;
  }());
}

TEST(WebSocketClient, AMessageOverTheCapFailsTheRead) {
  WsServer server([](Ws& ws) {
    ws.write(asio::buffer(std::string(100000, 'x')));
    beast::flat_buffer buf;
    ws.read(buf);
  });
  std::string error = run_sync([&]() -> asio::awaitable<std::string> {
    WebSocketOptions options;
    options.max_message_bytes = 64 * 1024;
    auto ws = co_await WebSocketClient::connect(server.url(), options);
    try {
      co_await ws->read();
    } catch (const NetError& e) {
      co_return std::string(e.what());
    }
    co_return std::string("no error");
  }());
  EXPECT_NE(error.find("over 65536 bytes"), std::string::npos) << error;
}

TEST(WebSocketClient, ARefusedUpgradeNamesTheStatus) {
  WsServer server(echo, /*refuse=*/true);
  std::string error = run_sync([&]() -> asio::awaitable<std::string> {
    try {
      co_await WebSocketClient::connect(server.url(), {});
    } catch (const NetError& e) {
      co_return std::string(e.what());
    }
    co_return std::string("connected");
  }());
  EXPECT_NE(error.find("refused the WebSocket upgrade (HTTP 403)"), std::string::npos) << error;
  EXPECT_NE(error.find("/api/v4/websocket"), std::string::npos) << error;
}

TEST(WebSocketClient, ASilentPeerIsTakenAsGone) {
  // The server never reads, so it never answers the client's pings.
  WsServer server([](Ws&) { std::this_thread::sleep_for(std::chrono::seconds(3)); });
  auto t0 = std::chrono::steady_clock::now();
  std::string error = run_sync([&]() -> asio::awaitable<std::string> {
    WebSocketOptions options;
    options.idle_timeout = std::chrono::milliseconds(600);
    auto ws = co_await WebSocketClient::connect(server.url(), options);
    try {
      co_await ws->read();
    } catch (const NetError& e) {
      co_return std::string(e.what());
    }
    co_return std::string("read something");
  }());
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(error.find("silent"), std::string::npos) << error;
  EXPECT_LT(seconds, 2.5);
}

TEST(WebSocketClient, AbortEndsAPendingRead) {
  WsServer server([](Ws& ws) {
    beast::flat_buffer buf;
    ws.read(buf);
  });
  int code = run_sync([&]() -> asio::awaitable<int> {
    auto ws = co_await WebSocketClient::connect(server.url(), {});
    asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(100));
    WebSocketClient* raw = ws.get();
    t.async_wait([raw](beast::error_code) { raw->abort(); });
    try {
      co_await ws->read();
    } catch (const WebSocketClosed& e) {
      co_return e.code();
    }
    co_return 0;
  }());
  EXPECT_EQ(code, 1006);
}

TEST(WebSocketClient, GoesThroughTheProxyTunnel) {
  test::TempDir dir;
  test::PythonServer proxy("connect_proxy.py", {"--log", dir / "proxy.log"});
  WsServer server(echo);
  std::string proxy_url = "http://127.0.0.1:" + std::to_string(proxy.port());
  ::setenv("http_proxy", proxy_url.c_str(), 1);
  std::string got = run_sync([&]() -> asio::awaitable<std::string> {
    auto ws = co_await WebSocketClient::connect(server.url(), {});
    ws->send("through the proxy");
    co_return co_await ws->read();
  }());
  ::unsetenv("http_proxy");
  EXPECT_EQ(got, "through the proxy");
  std::ifstream log(dir / "proxy.log");
  std::stringstream text;
  text << log.rdbuf();
  EXPECT_NE(text.str().find("CONNECT 127.0.0.1:"), std::string::npos) << text.str();
}

}  // namespace
}  // namespace pf
