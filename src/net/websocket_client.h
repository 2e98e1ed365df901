// An asynchronous WebSocket client on the same Boost.Beast stack as the HTTP client, for chat
// platforms' event streams: ws:// and wss:// (certificates verified as for HTTPS), the proxy the
// environment names (a CONNECT tunnel, as curl does), automatic pings while idle (a peer silent
// for idle_timeout is taken as gone), close codes, and a cap on the size of one message so a
// peer cannot fill memory. Every call runs on the executor the connection was made on; one
// coroutine reads while any number send.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "core/error.h"
#include "net/awaitable.h"
#include "net/headers.h"
#include "net/http_client.h"

namespace pf {

// The peer closed the connection with a close frame (code and reason as sent), or the socket
// was aborted (code 1006).
class WebSocketClosed : public NetError {
 public:
  WebSocketClosed(int code, const std::string& reason)
      : NetError("the WebSocket was closed (" + std::to_string(code) +
                 (reason.empty() ? "" : ": " + reason) + ")"),
        code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

struct WebSocketOptions {
  HeaderFields headers;  // sent with the upgrade request (Authorization, ...)
  size_t max_message_bytes = 16 * 1024 * 1024;  // a longer message fails the read (close 1009)
  std::chrono::milliseconds handshake_timeout{10000};
  // No data for this long and no answer to the ping sent half-way: the connection is dead.
  std::chrono::milliseconds idle_timeout{90000};
};

class WebSocketClient {
 public:
  // Connects and upgrades; url is ws://, wss://, http:// or https://. Throws NetError naming the
  // URL (with the HTTP status when the server refused the upgrade).
  static boost::asio::awaitable<std::unique_ptr<WebSocketClient>> connect(std::string url,
                                                                          WebSocketOptions options);

  virtual ~WebSocketClient() = default;
  // The next message (text or binary). Throws WebSocketClosed when the peer closes, NetError
  // when the connection fails, times out or a message is too large. One read at a time.
  virtual boost::asio::awaitable<std::string> read() = 0;
  // Queues a text message; messages go out in order. False once the connection is closed.
  virtual bool send(std::string text) = 0;
  // Sends a close frame and waits (at most a second) for the peer's; never throws.
  virtual boost::asio::awaitable<void> close(int code = 1000, std::string reason = {}) = 0;
  // Drops the connection at once: a pending read fails with WebSocketClosed(1006).
  virtual void abort() = 0;
  virtual bool is_open() const = 0;
};

}  // namespace pf
