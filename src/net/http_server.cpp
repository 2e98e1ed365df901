// The HTTP server (see http_server.h). Everything here runs on the one thread that runs the
// io_context, so connection and stream state needs no locks.
#include "net/http_server.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "core/log.h"
#include "core/text.h"

namespace pf {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

std::string error_json(const std::string& code, const std::string& message) {
  return nlohmann::json{{"error", code}, {"message", message}}.dump();
}

}  // namespace

struct Connection;

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
  Impl(asio::io_context& io, HttpServerOptions o, RequestHandler h)
      : io(io), options(o), handler(std::move(h)), acceptor(io), keepalive_timer(io) {}

  asio::io_context& io;
  HttpServerOptions options;
  RequestHandler handler;
  tcp::acceptor acceptor;
  asio::steady_timer keepalive_timer;
  bool stopping = false;
  std::set<Connection*> connections;
  std::set<ResponseState*> streams;

  static asio::awaitable<void> accept_loop(std::shared_ptr<Impl> self);
  static asio::awaitable<void> keepalive_loop(std::shared_ptr<Impl> self);
};

struct Connection : std::enable_shared_from_this<Connection> {
  Connection(std::shared_ptr<HttpServer::Impl> s, tcp::socket socket)
      : server(std::move(s)), stream(std::move(socket)) {
    server->connections.insert(this);
  }
  ~Connection() { server->connections.erase(this); }

  std::shared_ptr<HttpServer::Impl> server;
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
  bool between_requests = false;

  // Coroutines take their owner as an argument: a coroutine starts later than it is created,
  // and shared_from_this() inside it would come too late to keep the object alive.
  static asio::awaitable<void> run(std::shared_ptr<Connection> self);
  asio::awaitable<void> send_simple(unsigned version, int status, const std::string& body);
};

struct ResponseState : std::enable_shared_from_this<ResponseState> {
  ResponseState(std::shared_ptr<Connection> c, unsigned v, bool keep)
      : conn(std::move(c)), version(v), keep_alive(keep), drained(conn->stream.get_executor()) {}

  std::shared_ptr<Connection> conn;
  unsigned version;
  bool keep_alive;
  bool started = false, streaming = false, finished = false;
  bool gone = false;         // the client went away or stopped reading
  bool close_after = false;  // the connection cannot carry another request
  CancelSignal gone_signal;
  std::string head;     // the status line and headers of a stream, until written
  bool chunked = true;  // HTTP/1.0 clients get the stream raw, ended by closing
  std::string pending;  // queued stream bytes
  bool writing = false;
  std::string keepalive;
  std::vector<std::pair<std::string, std::string>> extra;  // add_header's, for either response
  Clock::time_point last_write = Clock::now();
  asio::steady_timer drained;  // its wait ends when the writer goes idle

  void mark_gone() {
    if (gone) return;
    gone = true;
    close_after = true;
    pending.clear();
    beast::error_code ignored;
    conn->stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    gone_signal.cancel();
  }
  void unregister() { conn->server->streams.erase(this); }
  bool queue(std::string_view bytes);

  static asio::awaitable<void> drain(std::shared_ptr<ResponseState> self, bool last);
  static void watch(std::shared_ptr<ResponseState> self);
};

// Writes what is queued as chunks (and the final empty chunk when last). One writer at a time:
// whoever starts one sets `writing` first, since a spawned coroutine starts only later.
asio::awaitable<void> ResponseState::drain(std::shared_ptr<ResponseState> self, bool last) {
  ResponseState& s = *self;
  while ((!s.pending.empty() || !s.head.empty() || last) && !s.gone) {
    std::string framed = std::move(s.head);
    s.head.clear();
    if (!s.pending.empty() && !s.chunked) {
      framed += s.pending;
    } else if (!s.pending.empty()) {
      char size[20];
      std::snprintf(size, sizeof size, "%zx\r\n", s.pending.size());
      framed.reserve(framed.size() + s.pending.size() + 32);
      framed += size;
      framed += s.pending;
      framed += "\r\n";
    }
    s.pending.clear();
    bool final_chunk = last;
    if (final_chunk && s.chunked) framed += "0\r\n\r\n";
    auto& stream = s.conn->stream;
    stream.expires_after(s.conn->server->options.write_timeout);
    beast::error_code ec;
    co_await asio::async_write(stream, asio::buffer(framed),
                               asio::redirect_error(asio::use_awaitable, ec));
    stream.expires_never();
    if (ec) {
      s.mark_gone();
      break;
    }
    s.last_write = Clock::now();
    if (final_chunk) break;
  }
  s.writing = false;
  s.drained.cancel();
}

// Waits for the socket to become readable while a stream is open: the peer closing it (or
// resetting it) is how a client that went away shows; bytes of a next request are left alone.
// A plain completion handler, not a coroutine: every open stream has one waiting, and a
// coroutine's spawn and frame cost about 0.4 KB more of each.
void ResponseState::watch(std::shared_ptr<ResponseState> self) {
  auto& socket = self->conn->stream.socket();
  socket.async_wait(tcp::socket::wait_read, [self](const beast::error_code& ec) {
    if (ec == asio::error::operation_aborted || self->finished) return;
    beast::error_code avail_ec;
    size_t available = self->conn->stream.socket().available(avail_ec);
    if (ec || avail_ec || available == 0) {
      log::info("http", "a client went away mid-stream");
      self->mark_gone();
    }
  });
}

// --- ServerRequest / ServerResponse ---

std::string ServerRequest::header(std::string_view name) const {
  return header_value(headers, name);
}

ServerResponse::ServerResponse(std::shared_ptr<ResponseState> state) : state_(std::move(state)) {}

ServerResponse::~ServerResponse() {
  if (state_->streaming && !state_->finished) {
    // The handler gave up on its stream: the client cannot tell where it ended, so close.
    state_->close_after = true;
    state_->finished = true;
    state_->unregister();
  }
}

bool ServerResponse::started() const {
  return state_->started;
}

CancelSignal& ServerResponse::client_gone() {
  return state_->gone_signal;
}

asio::awaitable<void> ServerResponse::send(int status, const std::string& content_type,
                                           std::string body, const Headers& headers) {
  if (state_->started) throw Error("internal: a response was sent twice");
  state_->started = state_->finished = true;
  http::response<http::string_body> res{static_cast<http::status>(status), state_->version};
  res.set(http::field::server, "pilotfish");
  res.set(http::field::content_type, content_type);
  for (const auto& [k, v] : state_->extra) res.set(k, v);
  for (const auto& [k, v] : headers) res.set(k, v);
  res.body() = std::move(body);
  res.keep_alive(state_->keep_alive && !state_->close_after);
  res.prepare_payload();
  auto& stream = state_->conn->stream;
  stream.expires_after(state_->conn->server->options.write_timeout);
  beast::error_code ec;
  co_await http::async_write(stream, res, asio::redirect_error(asio::use_awaitable, ec));
  stream.expires_never();
  if (ec) state_->close_after = true;
}

asio::awaitable<void> ServerResponse::send_error(int status, const std::string& code,
                                                 const std::string& message,
                                                 const Headers& headers) {
  co_await send(status, "application/json", error_json(code, message), headers);
}

void ServerResponse::add_header(std::string name, std::string value) {
  state_->extra.emplace_back(std::move(name), std::move(value));
}

void ServerResponse::begin_stream(int status, const Headers& headers, std::string keepalive) {
  ResponseState& s = *state_;
  if (s.started) throw Error("internal: a response was sent twice");
  s.started = s.streaming = true;
  s.keepalive = std::move(keepalive);
  s.chunked = s.version >= 11;
  if (!s.chunked) s.keep_alive = false;
  s.head = "HTTP/1." + std::to_string(s.version >= 11 ? 1 : 0) + " " + std::to_string(status) +
           " " + std::string(http::obsolete_reason(static_cast<http::status>(status))) + "\r\n";
  s.head += "Server: pilotfish\r\n";
  Headers all = s.extra;
  all.insert(all.end(), headers.begin(), headers.end());
  for (const auto& [k, v] : all) {
    if (beast::iequals(k, "connection") && !s.keep_alive) continue;
    if (k.find_first_of("\r\n:") != std::string::npos ||
        v.find_first_of("\r\n") != std::string::npos)
      throw Error("internal: a header with a line break: " + k);
    s.head += k + ": " + v + "\r\n";
  }
  if (s.chunked) s.head += "Transfer-Encoding: chunked\r\n";
  if (!s.keep_alive) s.head += "Connection: close\r\n";
  s.head += "\r\n";
  s.last_write = Clock::now();
  s.conn->server->streams.insert(&s);
  auto executor = s.conn->stream.get_executor();
  ResponseState::watch(state_);
  s.writing = true;
  asio::co_spawn(executor, ResponseState::drain(state_, false), asio::detached);
}

bool ResponseState::queue(std::string_view bytes) {
  if (gone || finished || bytes.empty()) return !gone;
  pending.append(bytes);
  if (pending.size() > conn->server->options.max_queued_bytes) {
    log::warn("http", "a client reads too slowly; closing its stream");
    mark_gone();
    return false;
  }
  if (!writing) {
    writing = true;
    asio::co_spawn(conn->stream.get_executor(), drain(shared_from_this(), false), asio::detached);
  }
  return true;
}

bool ServerResponse::write(std::string_view bytes) {
  return state_->queue(bytes);
}

asio::awaitable<void> ServerResponse::end_stream() {
  ResponseState& s = *state_;
  if (!s.streaming || s.finished) co_return;
  while (s.writing) {
    s.drained.expires_at(Clock::time_point::max());
    beast::error_code ec;
    co_await s.drained.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  if (!s.gone) {
    s.writing = true;
    co_await ResponseState::drain(state_, true);
  }
  s.finished = true;
  s.unregister();
  if (!s.chunked) s.close_after = true;
  beast::error_code ignored;
  s.conn->stream.socket().cancel(ignored);  // ends the watcher
}

// --- the connection loop ---

asio::awaitable<void> Connection::send_simple(unsigned version, int status,
                                              const std::string& body) {
  auto state = std::make_shared<ResponseState>(shared_from_this(), version, false);
  ServerResponse res(state);
  co_await res.send(status, "application/json", body);
}

// What reading one request gave: a request, a reason to close quietly, or an error to answer.
struct ReadResult {
  enum class Kind { kRequest, kClose, kRefuse } kind = Kind::kClose;
  ServerRequest request;
  unsigned version = 11;
  bool keep_alive = false;
  int status = 0;  // kRefuse
  std::string body;
};

// Reads one request. A coroutine of its own so that the parser and its copy of the headers are
// gone before the handler runs (a chat stream can be open for minutes).
asio::awaitable<ReadResult> read_request(std::shared_ptr<Connection> self, bool first) {
  auto& stream = self->stream;
  auto& buffer = self->buffer;
  const HttpServerOptions& o = self->server->options;
  ReadResult out;
  http::request_parser<http::string_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(o.max_header_bytes));
  parser.body_limit(o.max_body_bytes);
  stream.expires_after(first ? o.request_timeout : o.idle_timeout);
  self->between_requests = true;
  beast::error_code ec;
  co_await http::async_read_header(stream, buffer, parser,
                                   asio::redirect_error(asio::use_awaitable, ec));
  self->between_requests = false;
  if (!ec && !parser.is_done()) {
    // A request has started: its body gets the request timeout, not the idle one.
    stream.expires_after(o.request_timeout);
    co_await http::async_read(stream, buffer, parser,
                              asio::redirect_error(asio::use_awaitable, ec));
  }
  stream.expires_never();
  if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
      ec == asio::error::operation_aborted || ec == asio::error::connection_reset ||
      self->server->stopping)
    co_return out;
  if (ec) {
    out.kind = ReadResult::Kind::kRefuse;
    if (ec == http::error::body_limit) {
      out.status = 413;
      out.body = error_json("body_too_large", "the request body is larger than " +
                                                  std::to_string(o.max_body_bytes) + " bytes");
    } else if (ec == http::error::header_limit) {
      out.status = 431;
      out.body = error_json("headers_too_large", "the request headers are too large");
    } else {
      out.status = 400;
      out.body = error_json("bad_request", "malformed HTTP request: " + ec.message());
    }
    co_return out;
  }
  auto& msg = parser.get();
  ServerRequest& req = out.request;
  req.method = std::string(msg.method_string());
  std::string_view target(msg.target().data(), msg.target().size());
  size_t q = target.find('?');
  req.path = percent_decode(target.substr(0, q), false);
  if (q != std::string_view::npos) {
    std::string_view rest = target.substr(q + 1);
    while (!rest.empty()) {
      size_t amp = rest.find('&');
      std::string_view pair = rest.substr(0, amp);
      size_t eq = pair.find('=');
      req.query[percent_decode(pair.substr(0, eq), true)] =
          eq == std::string_view::npos ? "" : percent_decode(pair.substr(eq + 1), true);
      if (amp == std::string_view::npos) break;
      rest = rest.substr(amp + 1);
    }
  }
  for (const auto& f : msg)
    req.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
  req.body = std::move(msg.body());
  if (buffer.size() == 0) buffer.shrink_to_fit();  // idle connections keep no read buffer
  beast::error_code peer_ec;
  req.remote = stream.socket().remote_endpoint(peer_ec).address().to_string();
  out.kind = ReadResult::Kind::kRequest;
  out.version = msg.version();
  out.keep_alive = msg.keep_alive();
  co_return out;
}

asio::awaitable<void> Connection::run(std::shared_ptr<Connection> self) {
  auto& server = self->server;
  auto& stream = self->stream;
  bool first = true;
  for (;;) {
    ReadResult got = co_await read_request(self, first);
    first = false;
    if (got.kind == ReadResult::Kind::kClose) break;
    if (got.kind == ReadResult::Kind::kRefuse) {
      co_await self->send_simple(11, got.status, got.body);
      break;
    }
    ServerRequest& req = got.request;
    auto state = std::make_shared<ResponseState>(self, got.version, got.keep_alive);
    {
      ServerResponse res(state);
      std::string failure;
      try {
        co_await server->handler(req, res);
      } catch (const std::exception& e) {
        failure = e.what();
      }
      if (!failure.empty()) {
        log::error("http", req.method + " " + req.path + ": " + failure);
        if (!res.started())
          co_await res.send_error(500, "internal_error", "the server failed: " + failure);
        else
          state->close_after = true;
      } else if (!res.started()) {
        co_await res.send_error(500, "internal_error", "the handler sent no response");
      }
    }
    if (!state->keep_alive || state->close_after) break;
  }
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  stream.socket().close(ignored);
}

// --- the server ---

asio::awaitable<void> HttpServer::Impl::accept_loop(std::shared_ptr<Impl> self) {
  auto& acceptor = self->acceptor;
  auto& stopping = self->stopping;
  auto& io = self->io;
  while (!stopping) {
    beast::error_code ec;
    tcp::socket socket =
        co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (stopping || ec == asio::error::operation_aborted) break;
      // Out of file descriptors and the like: say so, breathe, go on.
      log::warn("http", "accept failed: " + ec.message());
      asio::steady_timer pause(io, std::chrono::milliseconds(100));
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    // Then whatever else is already waiting in the backlog, without going round the queue for
    // each: under a burst of connections every trip round it waits behind every open stream's
    // ready handlers, and accepting one connection per trip is what made the first byte late.
    for (int more = 0; !stopping; ++more) {
      socket.set_option(tcp::no_delay(true), ec);
      auto conn = std::make_shared<Connection>(self, std::move(socket));
      asio::co_spawn(io, Connection::run(std::move(conn)), asio::detached);
      if (more == 256) break;
      socket = acceptor.accept(ec);
      if (ec) break;  // would_block: the backlog is empty
    }
  }
}

asio::awaitable<void> HttpServer::Impl::keepalive_loop(std::shared_ptr<Impl> self) {
  auto& stopping = self->stopping;
  auto& keepalive_timer = self->keepalive_timer;
  const auto& options = self->options;
  auto& streams = self->streams;
  while (!stopping) {
    keepalive_timer.expires_after(
        std::chrono::duration_cast<std::chrono::milliseconds>(options.keepalive_interval) / 3);
    beast::error_code ec;
    co_await keepalive_timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (stopping) break;
    auto due = Clock::now() - options.keepalive_interval;
    std::vector<std::shared_ptr<ResponseState>> quiet;
    for (ResponseState* s : streams)
      if (!s->keepalive.empty() && s->last_write <= due && s->pending.empty())
        quiet.push_back(s->shared_from_this());
    for (auto& s : quiet) s->queue(s->keepalive);
  }
}

HttpServer::HttpServer(asio::io_context& io, HttpServerOptions options, RequestHandler handler)
    : impl_(std::make_shared<Impl>(io, options, std::move(handler))) {}

HttpServer::~HttpServer() {
  stop();
}

unsigned short HttpServer::listen(const std::string& host, const std::string& port) {
  try {
    tcp::resolver resolver(impl_->io);
    auto endpoints = resolver.resolve(host, port, tcp::resolver::passive);
    tcp::endpoint ep = endpoints.begin()->endpoint();
    impl_->acceptor.open(ep.protocol());
    impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
    impl_->acceptor.bind(ep);
    impl_->acceptor.listen(asio::socket_base::max_listen_connections);
    impl_->acceptor.non_blocking(true);  // accept_loop drains the backlog without blocking
    return impl_->acceptor.local_endpoint().port();
  } catch (const boost::system::system_error& e) {
    throw Error("cannot listen on " + host + ":" + port + ": " + e.code().message());
  }
}

void HttpServer::start() {
  asio::co_spawn(impl_->io, Impl::accept_loop(impl_), asio::detached);
  asio::co_spawn(impl_->io, Impl::keepalive_loop(impl_), asio::detached);
}

void HttpServer::stop() {
  if (impl_->stopping) return;
  impl_->stopping = true;
  beast::error_code ignored;
  impl_->acceptor.close(ignored);
  impl_->keepalive_timer.cancel();
  for (Connection* c : impl_->connections)
    if (c->between_requests) c->stream.socket().cancel(ignored);
}

size_t HttpServer::open_connections() const {
  return impl_->connections.size();
}

size_t HttpServer::open_streams() const {
  return impl_->streams.size();
}

}  // namespace pf
