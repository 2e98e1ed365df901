// The WebSocket client (see websocket_client.h): one implementation templated on the transport
// (TCP, or TLS over TCP), behind the abstract class so callers hold either the same way.
#include "net/websocket_client.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <deque>

#include "net/proxy.h"
#include "net/tls.h"

namespace pf {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

template <typename Next>
class Connection : public WebSocketClient, public std::enable_shared_from_this<Connection<Next>> {
 public:
  template <typename... Args>
  explicit Connection(Args&&... args) : ws_(std::forward<Args>(args)...) {}

  websocket::stream<Next>& ws() { return ws_; }

  asio::awaitable<std::string> read() override {
    beast::flat_buffer buffer;
    beast::error_code ec;
    co_await ws_.async_read(buffer, asio::redirect_error(asio::use_awaitable, ec));
    if (ec == websocket::error::closed || aborted_) {
      open_ = false;
      if (aborted_) throw WebSocketClosed(1006, "aborted");
      throw WebSocketClosed(ws_.reason().code,
                            std::string(ws_.reason().reason.data(), ws_.reason().reason.size()));
    }
    if (ec) {
      open_ = false;
      if (ec == websocket::error::message_too_big)
        throw NetError("the WebSocket peer sent a message of over " +
                       std::to_string(ws_.read_message_max()) + " bytes");
      if (ec == beast::error::timeout) throw NetError("the WebSocket peer went silent");
      throw NetError("WebSocket read failed: " + ec.message());
    }
    co_return beast::buffers_to_string(buffer.data());
  }

  bool send(std::string text) override {
    if (!open_) return false;
    queue_.push_back(std::move(text));
    if (!writing_) {
      writing_ = true;
      asio::co_spawn(ws_.get_executor(), drain(this->shared_from_this()), asio::detached);
    }
    return true;
  }

  asio::awaitable<void> close(int code, std::string reason) override {
    if (!open_) co_return;
    open_ = false;
    beast::error_code ec;
    websocket::stream_base::timeout t =
        websocket::stream_base::timeout::suggested(beast::role_type::client);
    t.handshake_timeout = std::chrono::seconds(1);
    ws_.set_option(t);
    websocket::close_reason why(static_cast<websocket::close_code>(code));
    why.reason = reason.substr(0, 120);
    co_await ws_.async_close(why, asio::redirect_error(asio::use_awaitable, ec));
    beast::get_lowest_layer(ws_).close();
  }

  void abort() override {
    aborted_ = true;
    open_ = false;
    beast::get_lowest_layer(ws_).close();
  }

  bool is_open() const override { return open_; }

 private:
  // Sends the queue in order; one write is in flight at a time, as Beast requires.
  static asio::awaitable<void> drain(std::shared_ptr<Connection> self) {
    while (!self->queue_.empty() && self->open_) {
      std::string text = std::move(self->queue_.front());
      self->queue_.pop_front();
      beast::error_code ec;
      self->ws_.text(true);
      co_await self->ws_.async_write(asio::buffer(text),
                                     asio::redirect_error(asio::use_awaitable, ec));
      if (ec) {
        self->open_ = false;
        break;
      }
    }
    self->queue_.clear();
    self->writing_ = false;
  }

  websocket::stream<Next> ws_;
  std::deque<std::string> queue_;
  bool writing_ = false;
  bool open_ = true;
  bool aborted_ = false;
};

// The owner holds a shared_ptr inside a unique_ptr-shaped handle, so drain() can keep the
// connection alive past the caller's last reference while a write finishes.
class Handle : public WebSocketClient {
 public:
  explicit Handle(std::shared_ptr<WebSocketClient> impl) : impl_(std::move(impl)) {}
  ~Handle() override { impl_->abort(); }
  asio::awaitable<std::string> read() override { return impl_->read(); }
  bool send(std::string text) override { return impl_->send(std::move(text)); }
  asio::awaitable<void> close(int code, std::string reason) override {
    return impl_->close(code, std::move(reason));
  }
  void abort() override { impl_->abort(); }
  bool is_open() const override { return impl_->is_open(); }

 private:
  std::shared_ptr<WebSocketClient> impl_;
};

template <typename Ws>
void configure(Ws& ws, const WebSocketOptions& options, const std::string& host) {
  ws.read_message_max(options.max_message_bytes);
  websocket::stream_base::timeout t{};
  t.handshake_timeout = options.handshake_timeout;
  t.idle_timeout = options.idle_timeout;
  t.keep_alive_pings = true;
  ws.set_option(t);
  HeaderFields headers = options.headers;
  ws.set_option(websocket::stream_base::decorator([headers, host](websocket::request_type& req) {
    req.set(beast::http::field::user_agent, "pilotfish/0.1");
    for (const auto& [k, v] : headers) req.set(k, v);
  }));
}

template <typename Ws>
asio::awaitable<void> handshake(Ws& ws, const ParsedUrl& u, const std::string& url) {
  websocket::response_type res;
  beast::error_code ec;
  co_await ws.async_handshake(res, host_header(u), u.target, asio::redirect_error(asio::use_awaitable, ec));
  if (ec == websocket::error::upgrade_declined)
    throw NetError("GET " + url + ": the server refused the WebSocket upgrade (HTTP " +
                   std::to_string(res.result_int()) + ")");
  if (ec) throw NetError("GET " + url + ": WebSocket handshake failed: " + ec.message());
}

asio::awaitable<std::unique_ptr<WebSocketClient>> open(std::string url, WebSocketOptions options) {
  // ws:// and wss:// ride on the http:// and https:// rules (proxy variables included).
  std::string http_url = url;
  if (url.rfind("ws://", 0) == 0) http_url = "http://" + url.substr(5);
  if (url.rfind("wss://", 0) == 0) http_url = "https://" + url.substr(6);
  ParsedUrl u = parse_url(http_url);
  std::optional<net_detail::Proxy> proxy = net_detail::proxy_from_env(http_url);
  auto executor = co_await asio::this_coro::executor;
  tcp::resolver resolver(executor);
  const ParsedUrl& first_hop = proxy ? proxy->url : u;
  auto endpoints =
      co_await resolver.async_resolve(first_hop.host, first_hop.port, asio::use_awaitable);
  auto deadline = std::chrono::steady_clock::now() + options.handshake_timeout;
  if (!u.tls) {
    auto conn = std::make_shared<Connection<beast::tcp_stream>>(executor);
    auto& tcp_layer = beast::get_lowest_layer(conn->ws());
    tcp_layer.expires_at(deadline);
    co_await tcp_layer.async_connect(endpoints, asio::use_awaitable);
    if (proxy) co_await net_detail::open_tunnel(tcp_layer, u, *proxy);
    tcp_layer.expires_never();  // the WebSocket's own timeouts take over
    configure(conn->ws(), options, u.host);
    co_await handshake(conn->ws(), u, url);
    co_return std::make_unique<Handle>(conn);
  }
  auto conn = std::make_shared<Connection<beast::ssl_stream<beast::tcp_stream>>>(
      executor, net_detail::client_tls_context());
  auto& tls = conn->ws().next_layer();
  auto& tcp_layer = beast::get_lowest_layer(conn->ws());
  net_detail::expect_host(tls, u.host);
  tcp_layer.expires_at(deadline);
  co_await tcp_layer.async_connect(endpoints, asio::use_awaitable);
  if (proxy) co_await net_detail::open_tunnel(tcp_layer, u, *proxy);
  co_await tls.async_handshake(asio::ssl::stream_base::client, asio::use_awaitable);
  tcp_layer.expires_never();
  configure(conn->ws(), options, u.host);
  co_await handshake(conn->ws(), u, url);
  co_return std::make_unique<Handle>(conn);
}

}  // namespace

asio::awaitable<std::unique_ptr<WebSocketClient>> WebSocketClient::connect(
    std::string url, WebSocketOptions options) {
  std::exception_ptr failure;
  try {
    co_return co_await open(url, std::move(options));
  } catch (const NetError&) {
    throw;
  } catch (const boost::system::system_error& e) {
    if (e.code() == beast::error::timeout)
      throw NetError("GET " + url + ": no WebSocket connection within the handshake timeout");
    throw NetError("GET " + url + ": " + e.code().message());
  } catch (const std::exception& e) {
    throw NetError("GET " + url + ": " + e.what());
  }
}

}  // namespace pf
