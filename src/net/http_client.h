// A small HTTP/1.1 client over Boost.Beast for talking to model providers: http and https (the
// peer's certificate is verified against the system's CA store, with SNI and host-name
// checking; SSL_CERT_FILE names another), a deadline per request, and one-line pf::NetError
// messages that name the URL. It goes through the proxy the environment names, as curl does:
// https_proxy/HTTPS_PROXY (a CONNECT tunnel, so TLS stays end to end), http_proxy, and
// no_proxy/NO_PROXY to exempt hosts.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>
#include "net/awaitable.h"

#include "core/cancel.h"
#include "core/error.h"
#include "net/headers.h"

namespace pf {

class NetError : public Error {
 public:
  using Error::Error;
};

class ConnectionPool;

struct HttpRequest {
  std::string method = "POST";
  std::string url;  // http://host[:port]/path or https://...
  HeaderFields headers;
  std::string body;
  std::chrono::milliseconds timeout{60000};  // for the whole exchange
  // Raised by whoever wanted the answer and no longer does: the connection is closed at once.
  // Only for the async_* calls, on the thread that runs them.
  CancelSignal* cancel = nullptr;
  // Reuse kept-alive connections from this pool (async_http_request only; never through a
  // proxy). A reused connection that turns out closed is replaced once, transparently.
  ConnectionPool* pool = nullptr;
  // Called once the request (headers and body) is written to the connection, before the
  // answer is read (async_* calls, on their thread; a retried request calls it again).
  std::function<void()> written;
};

// Idle HTTP/1.1 connections kept for reuse by one client's async requests, so that a chat
// bridge's many small REST calls to its server skip the TCP and TLS handshakes. At most
// max_per_host requests to one host are in flight at once; the others wait their turn (first
// come, first served, within their own deadline and cancel signal), so a burst of calls reuses
// the kept connections instead of opening one each. Use it from the one thread that runs those
// requests, and destroy it before their io_context.
class ConnectionPool {
 public:
  explicit ConnectionPool(size_t max_idle_per_host = 16, size_t max_per_host = 16);
  ~ConnectionPool();
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;
  size_t idle() const;
  size_t connections_opened() const;  // in all, since the pool was made

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

struct HttpResponse {
  int status = 0;
  HeaderFields headers;
  std::string body;
  // The value of a header (case-insensitive name), or empty.
  std::string header(std::string_view name) const;
};

struct ParsedUrl {
  bool tls = false;
  std::string host, port, target;
};

// Throws NetError for anything that is not an http(s) URL with a host.
ParsedUrl parse_url(const std::string& url);

// The Host header for a URL: the host, and the port when it is not the scheme's default
// (RFC 9110 §7.2; servers build URLs from it).
std::string host_header(const ParsedUrl& u);

// The proxy URL a request to url goes through, from the environment; empty for none. no_proxy
// entries: "*", a host name, a domain (".example.com" and "example.com" both cover its
// sub-domains), optionally with ":port".
std::string proxy_for(const std::string& url);

// Sends the request and waits for the whole response. Throws NetError on connection failure,
// TLS failure, timeout or a malformed response; any HTTP status is returned, not thrown.
HttpResponse http_request(const HttpRequest& request);

// Like http_request, but a 2xx body goes to on_body piece by piece as it arrives (for
// server-sent events) and is not kept; other answers are read whole into the returned body.
// on_body returns false to stop: the connection is closed, which is how a cancelled request
// stops the server's work. Here timeout bounds each wait for more data (a slow first token, a
// stalled stream), not the whole exchange.
HttpResponse http_stream(const HttpRequest& request,
                         const std::function<bool(std::string_view)>& on_body);

// The same two, as coroutines on the caller's executor: the server runs thousands of these on
// one thread. The blocking calls above run these on a private io_context. A cancelled request
// ends at once with a NetError.
// The request is taken by value so its body can be freed once sent.
boost::asio::awaitable<HttpResponse> async_http_request(HttpRequest request);
boost::asio::awaitable<HttpResponse> async_http_stream(
    HttpRequest request, const std::function<bool(std::string_view)>& on_body);

}  // namespace pf
