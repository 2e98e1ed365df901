// The asynchronous HTTP/1.1 server under `pilotfish serve`, on Boost.Beast: every connection is
// a coroutine on one io_context, so thousands of slow model streams cost a few kilobytes each
// and no thread apiece. It reads requests within limits (header and body size, idle time) and
// answers either whole or as a chunked stream. A stream's writes never block the producer: they
// are queued and drained in order. While a stream is open the server watches the socket, and a
// client that goes away raises the response's CancelSignal, which is how a closed browser tab
// stops the model it was waiting on. Quiet streams get a keep-alive line every 15 s so proxies
// with idle timeouts do not cut them.
//
// The server's own errors (malformed request, body too large) are JSON {"error", "message"}
// bodies, like every other error of the API.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/trace.h"
#include "core/cancel.h"
#include "net/awaitable.h"
#include "net/headers.h"

namespace pf {

struct ServerRequest {
  std::string method;                        // GET, POST, ...
  std::string path;                          // without the query string, percent-decoded
  std::map<std::string, std::string> query;  // percent-decoded; a repeated name keeps the last
  HeaderFields headers;
  std::string body;
  std::string remote;  // peer address, for logs
  // The span a handler's work goes under (the application sets it; core/trace.h), or empty.
  TraceContext trace;

  // The value of a header (case-insensitive name), or empty.
  std::string header(std::string_view name) const;
};

struct ResponseState;

// How a handler answers: once with send(), or with begin_stream(), write()s and end_stream().
class ServerResponse {
 public:
  using Headers = std::vector<std::pair<std::string, std::string>>;

  explicit ServerResponse(std::shared_ptr<ResponseState> state);
  ~ServerResponse();

  boost::asio::awaitable<void> send(int status, const std::string& content_type, std::string body,
                                    const Headers& headers = {});
  // A JSON error body {"error": code, "message": message}.
  boost::asio::awaitable<void> send_error(int status, const std::string& code,
                                          const std::string& message, const Headers& headers = {});

  // Starts a chunked response: its status line and headers go out with the first bytes.
  // Not a coroutine, so a producer that learns synchronously that it has something to say (a
  // model's first event) can start the stream right there. keepalive: bytes to send when the
  // stream has been quiet for a while (an SSE comment line), or empty for none.
  void begin_stream(int status, const Headers& headers, std::string keepalive = {});
  // Queues bytes of the stream; returns false once the client is gone (nothing more is sent).
  bool write(std::string_view bytes);
  // Sends what is queued and ends the stream.
  boost::asio::awaitable<void> end_stream();

  // A header for whichever response follows (send, send_error or begin_stream), before that
  // call's own; for what every answer of a request carries (CORS).
  void add_header(std::string name, std::string value);

  bool started() const;
  // Raised when the client goes away (or stops reading) while a stream is open.
  CancelSignal& client_gone();

 private:
  std::shared_ptr<ResponseState> state_;
};

using RequestHandler = std::function<boost::asio::awaitable<void>(ServerRequest&, ServerResponse&)>;

struct HttpServerOptions {
  size_t max_header_bytes = 16 * 1024;
  uint64_t max_body_bytes = 1 << 20;
  std::chrono::seconds request_timeout{30};  // to read a whole request
  std::chrono::seconds idle_timeout{60};     // between requests on a kept-alive connection
  std::chrono::seconds write_timeout{60};    // a client that reads nothing for this long is gone
  std::chrono::seconds keepalive_interval{15};
  size_t max_queued_bytes = 4 << 20;  // a stream's unsent bytes beyond this: the client is gone
};

class HttpServer {
 public:
  HttpServer(boost::asio::io_context& io, HttpServerOptions options, RequestHandler handler);
  ~HttpServer();

  // Binds and listens; port "0" picks a free one. Returns the bound port. Throws pf::Error.
  unsigned short listen(const std::string& host, const std::string& port);
  // Accepts connections until stop().
  void start();
  // Stops accepting and closes connections that are between requests; open streams finish.
  void stop();

  size_t open_connections() const;
  size_t open_streams() const;

  struct Impl;  // shared with the connections it accepts; defined in http_server.cpp

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace pf
