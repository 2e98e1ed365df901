// The proxy rules every outgoing connection follows, shared by the HTTP client and the
// WebSocket client (internal to net): which proxy the environment names for a URL, and the
// CONNECT tunnel through it.
#pragma once

#include <boost/beast/core/tcp_stream.hpp>
#include <optional>
#include <string>

#include "net/awaitable.h"
#include "net/http_client.h"

namespace pf::net_detail {

struct Proxy {
  ParsedUrl url;
  std::string authorization;  // "Basic ..." from user:password@ in the proxy URL, or empty
};

// The proxy for url from the environment (see proxy_for()), or nullopt. Throws NetError for a
// proxy URL we cannot use (https://).
std::optional<Proxy> proxy_from_env(const std::string& url);

// Asks the proxy, over stream (already connected to it), for a tunnel to u's host and port.
// Throws NetError when the proxy refuses.
boost::asio::awaitable<void> open_tunnel(boost::beast::tcp_stream& stream, const ParsedUrl& u,
                                         const Proxy& proxy);

}  // namespace pf::net_detail
