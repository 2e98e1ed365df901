// pilotfish as an MCP server (Model Context Protocol, JSON-RPC 2.0): any coding agent (Claude
// Code, Cursor, Continue, Copilot) can search and read the indexed repositories through the
// tools search_code, read_file, list_directory, grep and index_status. This is the protocol
// without a transport: `pilotfish mcp` carries it over stdio (one message per line) and
// `pilotfish serve` over Streamable HTTP at /mcp (mcp_http.h).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mcp/messages.h"
#include "net/awaitable.h"

namespace pf {

class AnswerRuntime;

class McpServer {
 public:
  // runtime must outlive the server. roots: the repositories offered (directories as indexed);
  // empty: every repository of the store.
  McpServer(AnswerRuntime& runtime, std::vector<std::string> roots = {});

  // Handles one message: a request (the response), a notification (nullopt) or a batch (the
  // array of responses, nullopt if all were notifications). Never throws: bad input is a
  // JSON-RPC error response. Call from the network thread; tool work runs on the runtime's
  // workers.
  boost::asio::awaitable<std::optional<nlohmann::json>> handle(const nlohmann::json& message,
                                                               McpSession& session);
  // The same for a message as text; text that is not JSON is the -32700 response.
  boost::asio::awaitable<std::optional<std::string>> handle_text(std::string_view text,
                                                                 McpSession& session);

  // The protocol versions spoken, newest first.
  static const std::vector<std::string>& protocol_versions() { return mcp_protocol_versions(); }

 private:
  boost::asio::awaitable<nlohmann::json> request(const std::string& method,
                                                 const nlohmann::json& params, McpSession& session);
  boost::asio::awaitable<nlohmann::json> call_tool(const std::string& name,
                                                   const nlohmann::json& arguments);
  // The repositories offered now: canonical roots.
  boost::asio::awaitable<std::vector<std::string>> repositories();

  AnswerRuntime& runtime_;
  std::vector<std::string> roots_;
};

}  // namespace pf
