// The MCP server over Streamable HTTP (MCP 2025-06-18, "Transports"), as `pilotfish serve`
// mounts it at /mcp: POST carries JSON-RPC messages and is answered with JSON (202 for
// notifications only); initialize opens a session named by the Mcp-Session-Id header, which
// every later request must carry (400 without it, 404 once it is gone); DELETE ends it; GET is
// 405 (no server-initiated stream). Authentication is the caller's (the API's bearer keys).
#pragma once

#include <deque>
#include <map>
#include <string>

#include "mcp/server.h"
#include "net/http_server.h"

namespace pf {

class McpHttp {
 public:
  // server must outlive this; at most max_sessions are kept (the oldest is dropped).
  explicit McpHttp(McpServer& server, size_t max_sessions = 1000);
  // Answers one request to the MCP endpoint and returns the status sent. Network thread only.
  // Throws ApiError-compatible failures as responses itself; never throws for bad input.
  boost::asio::awaitable<int> handle(ServerRequest& req, ServerResponse& res);

  size_t sessions() const { return sessions_.size(); }

 private:
  McpServer& server_;
  size_t max_sessions_;
  std::map<std::string, McpSession> sessions_;
  std::deque<std::string> order_;  // session ids, oldest first
};

}  // namespace pf
