// HTTP client implementation: one io_context per request, driven until the exchange finishes
// or the deadline passes (then the socket is closed, which cancels whatever is pending).
#include "net/http_client.h"

#include "core/text.h"
#include "net/async_gate.h"
#include "net/proxy.h"
#include "net/tls.h"

#include <openssl/evp.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <optional>

namespace pf::net_detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

// Where a request goes through, when a proxy is set (see proxy_for()).
std::optional<Proxy> proxy_from_env(const std::string& url) {
  std::string p = proxy_for(url);
  if (p.empty()) return std::nullopt;
  if (p.find("://") == std::string::npos) p = "http://" + p;
  Proxy proxy;
  size_t scheme_end = p.find("://") + 3;
  size_t at = p.find('@', scheme_end);
  if (at != std::string::npos && at < p.find('/', scheme_end)) {
    std::string credentials = p.substr(scheme_end, at - scheme_end);
    p.erase(scheme_end, at - scheme_end + 1);
    std::string encoded(4 * ((credentials.size() + 2) / 3) + 1, '\0');
    int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(encoded.data()),
                            reinterpret_cast<const unsigned char*>(credentials.data()),
                            static_cast<int>(credentials.size()));
    encoded.resize(static_cast<size_t>(n));
    proxy.authorization = "Basic " + encoded;
  }
  if (p.rfind("https://", 0) == 0)
    throw NetError("proxy " + p + ": only http:// proxies are supported (TLS to the proxy is not)");
  proxy.url = parse_url(p);
  return proxy;
}

// Asks an HTTP proxy for a tunnel to the request's host: what follows is the TLS handshake with
// the host itself, so the proxy sees neither the request nor the key.
asio::awaitable<void> open_tunnel(beast::tcp_stream& stream, const ParsedUrl& u,
                                  const Proxy& proxy) {
  std::string authority = u.host + ":" + u.port;
  http::request<http::empty_body> connect{http::verb::connect, authority, 11};
  connect.set(http::field::host, authority);
  if (!proxy.authorization.empty())
    connect.set(http::field::proxy_authorization, proxy.authorization);
  co_await http::async_write(stream, connect, asio::use_awaitable);
  beast::flat_buffer buffer;
  http::response_parser<http::empty_body> parser;
  parser.skip(true);  // a CONNECT answer has no body, whatever its headers say
  co_await http::async_read_header(stream, buffer, parser, asio::use_awaitable);
  unsigned status = parser.get().result_int();
  if (status != 200)
    throw NetError("the proxy " + proxy.url.host + ":" + proxy.url.port + " refused a tunnel to " +
                   authority + " (HTTP " + std::to_string(status) + ")");
}

}  // namespace pf::net_detail

namespace pf {
namespace {

using net_detail::open_tunnel;
using net_detail::Proxy;
using net_detail::proxy_from_env;

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// Writes the request and reads the whole response; the stream's deadline (set by the caller on
// its lowest layer) fails any operation still pending when it passes.
using BodySink = std::function<bool(std::string_view)>;

// How much of a failed streamed request's body is kept (its error message is at the start).
constexpr size_t kMaxFailureBody = 64 * 1024;

// A response body read straight out of the connection's buffer, with no copy in between: a 2xx
// body goes to the sink piece by piece as the parser meets it; a failure's body, up to
// kMaxFailureBody, is kept (its error message is at the start). A Beast Body with a reader only.
struct SinkBody {
  struct value_type {
    const BodySink* sink = nullptr;  // null: keep the body
    std::string kept;
    bool stopped = false;  // the sink asked to stop or threw, or enough of a failure is kept
    // What the sink threw: it runs inside Beast's read operation, whose completion may run on
    // the io_context's own loop, so it is carried out and rethrown in the reading coroutine.
    std::exception_ptr thrown;
  };
  class reader {
   public:
    template <bool isRequest, class Fields>
    reader(http::header<isRequest, Fields>&, value_type& v) : v_(v) {}
    void init(const boost::optional<std::uint64_t>&, beast::error_code& ec) { ec = {}; }
    template <class ConstBufferSequence>
    size_t put(const ConstBufferSequence& buffers, beast::error_code& ec) {
      ec = {};
      size_t used = 0;
      for (auto b : beast::buffers_range_ref(buffers)) {
        std::string_view piece(static_cast<const char*>(b.data()), b.size());
        used += piece.size();
        if (v_.sink) {
          try {
            v_.stopped = !(*v_.sink)(piece);
          } catch (...) {
            v_.thrown = std::current_exception();
            v_.stopped = true;
          }
        } else {
          v_.kept.append(piece.substr(0, kMaxFailureBody - v_.kept.size()));
          v_.stopped = v_.kept.size() >= kMaxFailureBody;
        }
        if (v_.stopped) {
          ec = asio::error::operation_aborted;  // ends the read; the caller sees `stopped`
          break;
        }
      }
      return used;
    }
    void finish(beast::error_code& ec) { ec = {}; }

   private:
    value_type& v_;
  };
};

// Reads the answer's header, then its body into sink (see SinkBody); the lowest layer's
// deadline is pushed forward before every read, so req.timeout bounds each wait rather than the
// whole stream. One frame for the whole read: it is what each open model stream holds.
template <typename Stream>
asio::awaitable<HttpResponse> read_streamed(Stream& stream, const HttpRequest& req,
                                            const BodySink& sink) {
  beast::flat_buffer buffer;
  http::response_parser<SinkBody> parser;
  // Not boost::none: Boost 1.74 then rejects every response that has a Content-Length.
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  beast::get_lowest_layer(stream).expires_after(req.timeout);
  co_await http::async_read_header(stream, buffer, parser, asio::use_awaitable);
  HttpResponse out;
  out.status = static_cast<int>(parser.get().result_int());
  SinkBody::value_type& body = parser.get().body();
  if (out.status / 100 == 2) {
    body.sink = &sink;
  } else {
    // A failure's headers matter (Retry-After); a stream's would only sit in memory while it runs.
    for (const auto& f : parser.get())
      out.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
  }
  parser.get().clear();  // the parser keeps what it needs of them (length, chunking) itself
  while (!parser.is_done() && !body.stopped) {
    beast::get_lowest_layer(stream).expires_after(req.timeout);
    beast::error_code ec;
    // read_some, not read: a read waits until the buffer is full, which would hold model tokens
    // back until 4 KB of them had arrived.
    co_await http::async_read_some(stream, buffer, parser,
                                   asio::redirect_error(asio::use_awaitable, ec));
    if (body.thrown) std::rethrow_exception(body.thrown);
    if (ec && !body.stopped) throw boost::system::system_error(ec);
  }
  if (body.stopped && body.sink) {
    beast::error_code ignored;
    beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_both, ignored);
  }
  out.body = std::move(body.kept);
  co_return out;
}

// Each step of an exchange is a coroutine of its own, because a coroutine's frame holds every
// local of every branch: one function for all of them would give each open model stream the
// parsers, buffers and TLS state of the paths it does not take.

// Writes the request (its body moved in and freed once sent: a model request can be large and
// a stream can last minutes).
template <typename Stream>
asio::awaitable<void> send_request(Stream& stream, const ParsedUrl& u, HttpRequest& req,
                                   const Proxy* plain_proxy) {
  // Through a proxy, plain HTTP asks for the absolute URL.
  std::string target = plain_proxy ? "http://" + u.host + ":" + u.port + u.target : u.target;
  http::request<http::string_body> r{http::string_to_verb(req.method), target, 11};
  r.set(http::field::host, host_header(u));
  if (plain_proxy && !plain_proxy->authorization.empty())
    r.set(http::field::proxy_authorization, plain_proxy->authorization);
  r.set(http::field::user_agent, "pilotfish/0.1");
  for (const auto& [k, v] : req.headers) r.set(k, v);
  r.body() = std::move(req.body);
  r.prepare_payload();
  co_await http::async_write(stream, r, asio::use_awaitable);
  if (req.written) req.written();
}

// keep_alive, when given, is told whether the connection may carry another request.
template <typename Stream>
asio::awaitable<HttpResponse> read_whole(Stream& stream, bool* keep_alive = nullptr) {
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(256 * 1024 * 1024);
  co_await http::async_read(stream, buffer, parser, asio::use_awaitable);
  auto& res = parser.get();
  if (keep_alive) *keep_alive = res.keep_alive() && buffer.size() == 0;
  HttpResponse out;
  out.status = static_cast<int>(res.result_int());
  for (const auto& f : res)
    out.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
  out.body = std::move(res.body());
  co_return out;
}

template <typename Stream>
asio::awaitable<HttpResponse> exchange(Stream& stream, const ParsedUrl& u, HttpRequest& req,
                                       const BodySink* sink, const Proxy* plain_proxy) {
  co_await send_request(stream, u, req, plain_proxy);
  if (sink) {
    HeaderFields().swap(req.headers);  // sent; a stream is never sent again
    co_return co_await read_streamed(stream, req, *sink);
  }
  co_return co_await read_whole(stream);
}

using Endpoints = tcp::resolver::results_type;

asio::awaitable<HttpResponse> run_plain(HttpRequest& req, const ParsedUrl& u,
                                        std::chrono::steady_clock::time_point deadline,
                                        const BodySink* sink, const Endpoints& endpoints,
                                        const Proxy* proxy) {
  beast::tcp_stream stream(co_await asio::this_coro::executor);
  CancelRegistration on_cancel(req.cancel, [&stream] { stream.close(); });
  stream.expires_at(deadline);
  co_await stream.async_connect(endpoints, asio::use_awaitable);
  co_return co_await exchange(stream, u, req, sink, proxy);
}

asio::awaitable<HttpResponse> run_tls(HttpRequest& req, const ParsedUrl& u,
                                      std::chrono::steady_clock::time_point deadline,
                                      const BodySink* sink, const Endpoints& endpoints,
                                      const Proxy* proxy) {
  beast::ssl_stream<beast::tcp_stream> stream(co_await asio::this_coro::executor,
                                              net_detail::client_tls_context());
  CancelRegistration on_cancel(req.cancel, [&stream] { beast::get_lowest_layer(stream).close(); });
  net_detail::expect_host(stream, u.host);
  beast::get_lowest_layer(stream).expires_at(deadline);
  co_await beast::get_lowest_layer(stream).async_connect(endpoints, asio::use_awaitable);
  if (proxy) co_await open_tunnel(beast::get_lowest_layer(stream), u, *proxy);
  co_await stream.async_handshake(asio::ssl::stream_base::client, asio::use_awaitable);
  co_return co_await exchange(stream, u, req, sink, nullptr);
}

// A connection of a ConnectionPool: plain or TLS.
struct PooledConnection {
  std::unique_ptr<beast::tcp_stream> plain;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::tcp_stream& lowest() { return plain ? *plain : beast::get_lowest_layer(*tls); }
};

asio::awaitable<std::unique_ptr<PooledConnection>> open_pooled(
    const ParsedUrl& u, std::chrono::steady_clock::time_point deadline) {
  auto executor = co_await asio::this_coro::executor;
  tcp::resolver resolver(executor);
  auto endpoints = co_await resolver.async_resolve(u.host, u.port, asio::use_awaitable);
  auto c = std::make_unique<PooledConnection>();
  if (!u.tls) {
    c->plain = std::make_unique<beast::tcp_stream>(executor);
    c->plain->expires_at(deadline);
    co_await c->plain->async_connect(endpoints, asio::use_awaitable);
    co_return c;
  }
  c->tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(
      executor, net_detail::client_tls_context());
  net_detail::expect_host(*c->tls, u.host);
  c->lowest().expires_at(deadline);
  co_await c->lowest().async_connect(endpoints, asio::use_awaitable);
  co_await c->tls->async_handshake(asio::ssl::stream_base::client, asio::use_awaitable);
  co_return c;
}

template <typename Stream>
asio::awaitable<HttpResponse> pooled_exchange(Stream& stream, const ParsedUrl& u, HttpRequest& req,
                                              bool* keep_alive) {
  co_await send_request(stream, u, req, nullptr);
  co_return co_await read_whole(stream, keep_alive);
}

}  // namespace

struct ConnectionPool::Impl {
  struct Host {
    std::vector<std::unique_ptr<PooledConnection>> idle;
    std::unique_ptr<AsyncGate> in_flight;  // made on first use, on the requests' executor
  };
  size_t max_idle;
  size_t max_in_flight;
  size_t opened = 0;
  std::map<std::string, Host> hosts;
};

ConnectionPool::ConnectionPool(size_t max_idle_per_host, size_t max_per_host)
    : impl_(std::make_unique<Impl>(
          Impl{max_idle_per_host, std::max<size_t>(1, max_per_host), 0, {}})) {}
ConnectionPool::~ConnectionPool() = default;

size_t ConnectionPool::idle() const {
  size_t n = 0;
  for (const auto& [key, host] : impl_->hosts) n += host.idle.size();
  return n;
}

size_t ConnectionPool::connections_opened() const {
  return impl_->opened;
}

namespace {

// One request over a pooled connection: an idle one if there is one, else a new one (once the
// host has fewer than max_per_host requests in flight; else it waits its turn); a reused connection
// the server closed meanwhile fails before any answer, and the request goes once more over a
// new connection.
asio::awaitable<HttpResponse> run_pooled(HttpRequest& req, const ParsedUrl& u,
                                         std::chrono::steady_clock::time_point deadline) {
  ConnectionPool::Impl& pool = req.pool->impl();
  auto& host = pool.hosts[(u.tls ? "https://" : "http://") + u.host + ":" + u.port];
  if (!host.in_flight)
    host.in_flight =
        std::make_unique<AsyncGate>(co_await asio::this_coro::executor, pool.max_in_flight);
  AsyncGate::Permit slot = co_await host.in_flight->acquire(deadline, req.cancel);
  if (req.cancel && req.cancel->cancelled()) throw NetError("cancelled");  // a held slot passes on
  if (!slot.held())
    throw NetError(req.method + " " + req.url + ": timed out waiting for a free connection");
  auto& idle = host.idle;
  for (int attempt = 1;; ++attempt) {
    std::unique_ptr<PooledConnection> c;
    bool reused = attempt == 1 && !idle.empty();
    if (reused) {
      c = std::move(idle.back());
      idle.pop_back();
    } else {
      c = co_await open_pooled(u, deadline);
      ++pool.opened;
    }
    std::string body = reused ? req.body : std::string();  // sending moves it out
    bool keep_alive = false;
    bool stale = false;
    HttpResponse r;
    {
      CancelRegistration on_cancel(req.cancel, [&c] { c->lowest().close(); });
      c->lowest().expires_at(deadline);
      try {
        // Not a conditional expression: GCC 12 miscompiles co_await inside one.
        if (c->plain)
          r = co_await pooled_exchange(*c->plain, u, req, &keep_alive);
        else
          r = co_await pooled_exchange(*c->tls, u, req, &keep_alive);
      } catch (const boost::system::system_error& e) {
        bool cancelled = req.cancel && req.cancel->cancelled();
        if (!reused || cancelled || e.code() == beast::error::timeout) throw;
        stale = true;
      }
    }
    if (stale) {
      req.body = std::move(body);
      continue;
    }
    if (keep_alive && idle.size() < pool.max_idle) {
      c->lowest().expires_never();
      idle.push_back(std::move(c));
    }
    co_return r;
  }
}

// A request over a connection of its own (a stream, or through a proxy).
asio::awaitable<HttpResponse> run_direct(HttpRequest& req, const ParsedUrl& u,
                                         std::chrono::steady_clock::time_point deadline,
                                         const BodySink* sink, std::optional<Proxy> proxy) {
  Endpoints endpoints;
  {
    const ParsedUrl& first_hop = proxy ? proxy->url : u;
    tcp::resolver resolver(co_await asio::this_coro::executor);
    endpoints =
        co_await resolver.async_resolve(first_hop.host, first_hop.port, asio::use_awaitable);
  }
  if (req.cancel && req.cancel->cancelled()) throw NetError("cancelled");
  if (!u.tls)
    co_return co_await run_plain(req, u, deadline, sink, endpoints, proxy ? &*proxy : nullptr);
  co_return co_await run_tls(req, u, deadline, sink, endpoints, proxy ? &*proxy : nullptr);
}

// Not a coroutine: the path taken is known before anything is awaited.
asio::awaitable<HttpResponse> run_request(HttpRequest& req, const ParsedUrl& u,
                                          std::chrono::steady_clock::time_point deadline,
                                          const BodySink* sink) {
  std::optional<Proxy> proxy = proxy_from_env(req.url);
  if (req.pool && !sink && !proxy) return run_pooled(req, u, deadline);
  return run_direct(req, u, deadline, sink, std::move(proxy));
}

}  // namespace

std::string HttpResponse::header(std::string_view name) const {
  return header_value(headers, name);
}

namespace {

std::string env(const char* lower, const char* upper) {
  // curl reads the lower-case name first (and only it for http_proxy).
  if (const char* v = std::getenv(lower); v && *v) return v;
  if (upper)
    if (const char* v = std::getenv(upper); v && *v) return v;
  return {};
}

}  // namespace

std::string proxy_for(const std::string& url) {
  ParsedUrl u = parse_url(url);
  std::string proxy = u.tls ? env("https_proxy", "HTTPS_PROXY") : env("http_proxy", nullptr);
  if (proxy.empty()) return {};
  std::string host = ascii_lower(u.host);
  std::string no_proxy = env("no_proxy", "NO_PROXY");
  size_t at = 0;
  while (at <= no_proxy.size()) {
    size_t comma = no_proxy.find(',', at);
    std::string entry = no_proxy.substr(at, comma == std::string::npos ? comma : comma - at);
    at = comma == std::string::npos ? no_proxy.size() + 1 : comma + 1;
    size_t b = entry.find_first_not_of(" \t"), e = entry.find_last_not_of(" \t");
    if (b == std::string::npos) continue;
    entry = ascii_lower(entry.substr(b, e - b + 1));
    if (entry == "*") return {};
    if (size_t colon = entry.rfind(':');
        colon != std::string::npos && entry.find(']') == std::string::npos) {
      if (entry.substr(colon + 1) != u.port) continue;  // "host:port" covers that port only
      entry.resize(colon);
    }
    if (!entry.empty() && entry.front() == '.') entry.erase(0, 1);
    if (host == entry || (host.size() > entry.size() &&
                          host.compare(host.size() - entry.size(), entry.size(), entry) == 0 &&
                          host[host.size() - entry.size() - 1] == '.'))
      return {};
  }
  return proxy;
}

std::string host_header(const ParsedUrl& u) {
  return u.host + ((u.tls && u.port == "443") || (!u.tls && u.port == "80") ? "" : ":" + u.port);
}

ParsedUrl parse_url(const std::string& url) {
  ParsedUrl u;
  std::string rest;
  if (url.rfind("https://", 0) == 0) {
    u.tls = true;
    rest = url.substr(8);
  } else if (url.rfind("http://", 0) == 0) {
    rest = url.substr(7);
  } else {
    throw NetError("not an http(s) URL: " + url);
  }
  size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  u.target = slash == std::string::npos ? "/" : rest.substr(slash);
  size_t colon = authority.rfind(':');
  if (colon != std::string::npos && authority.find(']') == std::string::npos) {
    u.host = authority.substr(0, colon);
    u.port = authority.substr(colon + 1);
  } else {
    u.host = authority;
    u.port = u.tls ? "443" : "80";
  }
  if (u.host.empty() || u.port.empty() ||
      u.port.find_first_not_of("0123456789") != std::string::npos)
    throw NetError("not an http(s) URL with a host: " + url);
  return u;
}

namespace {

// One-line NetErrors that name the request, whatever failed underneath.
[[noreturn]] void rethrow_as_net_error(const HttpRequest& req, bool streaming,
                                       std::exception_ptr failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const NetError&) {
    throw;
  } catch (const boost::system::system_error& e) {
    if (req.cancel && req.cancel->cancelled())
      throw NetError(req.method + " " + req.url + ": cancelled");
    if (e.code() == beast::error::timeout)
      throw NetError(req.method + " " + req.url + ": no " +
                     (streaming ? "data" : "complete answer") + " within " +
                     std::to_string(req.timeout.count()) + " ms");
    throw NetError(req.method + " " + req.url + ": " + e.code().message());
  } catch (const std::exception& e) {
    throw NetError(req.method + " " + req.url + ": " + e.what());
  }
}

// Owns the request for the whole exchange (its body is moved out once sent), so that the public
// calls below need no frame of their own.
asio::awaitable<HttpResponse> run_async(HttpRequest req, const BodySink* sink) {
  ParsedUrl u = parse_url(req.url);
  auto deadline = std::chrono::steady_clock::now() + req.timeout;
  std::exception_ptr failure;
  try {
    co_return co_await run_request(req, u, deadline, sink);
  } catch (...) {
    failure = std::current_exception();
  }
  rethrow_as_net_error(req, sink != nullptr, failure);
}

HttpResponse run(const HttpRequest& given, const BodySink* sink) {
  HttpRequest req = given;
  req.pool = nullptr;  // a pooled connection could not outlive this call's io_context
  asio::io_context io;
  HttpResponse result;
  std::exception_ptr failure;
  asio::co_spawn(io, run_async(req, sink), [&](std::exception_ptr e, HttpResponse r) {
    failure = e;
    result = std::move(r);
  });
  if (sink) {
    io.run();  // each read has its own deadline
  } else {
    // Name resolution is not covered by the stream's deadline: bound the whole run too.
    io.run_for(req.timeout + std::chrono::seconds(1));
    if (!io.stopped()) {
      io.stop();
      throw NetError(req.method + " " + req.url + ": no complete answer within " +
                     std::to_string(req.timeout.count()) + " ms");
    }
  }
  if (failure) std::rethrow_exception(failure);
  return result;
}

}  // namespace

HttpResponse http_request(const HttpRequest& req) {
  return run(req, nullptr);
}

HttpResponse http_stream(const HttpRequest& req,
                         const std::function<bool(std::string_view)>& on_body) {
  return run(req, &on_body);
}

// Not coroutines: run_async's frame holds the request, and one frame less is less memory for
// each of a thousand open streams.
asio::awaitable<HttpResponse> async_http_request(HttpRequest req) {
  return run_async(std::move(req), nullptr);
}

asio::awaitable<HttpResponse> async_http_stream(
    HttpRequest req, const std::function<bool(std::string_view)>& on_body) {
  return run_async(std::move(req), &on_body);
}

}  // namespace pf
