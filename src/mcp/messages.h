// The JSON-RPC 2.0 messages of MCP, read without any transport or coroutine: what the server
// makes of an incoming message, and what the client takes from a server's answers. Pure
// functions on JSON that never throw, so the server, the client and the fuzz target share them.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "llm/chat.h"

namespace pf {

// JSON-RPC error codes the server answers with.
constexpr int kRpcParseError = -32700, kRpcInvalidRequest = -32600, kRpcMethodNotFound = -32601,
              kRpcInvalidParams = -32602, kRpcInternalError = -32603;

// What a connection (stdio) or an Mcp-Session-Id (HTTP) has agreed.
struct McpSession {
  bool initialized = false;      // initialize was answered
  std::string protocol_version;  // the version agreed
  std::string client;            // clientInfo.name, for logs
};

// One incoming message (not a batch) as the server reads it.
struct McpIncoming {
  enum class Kind { kRequest, kNotification, kResponse, kInvalid } kind = Kind::kInvalid;
  nlohmann::json id;      // kRequest: a string or an integer
  std::string method;     // kRequest, kNotification
  nlohmann::json params;  // kRequest, kNotification: an object
  nlohmann::json error;   // kInvalid: the error response to send
};

// A JSON-RPC error response.
nlohmann::json mcp_error_response(const nlohmann::json& id, int code, const std::string& message);
// Reads one message (an element of a batch, or the whole message when it is no array).
McpIncoming read_mcp_message(const nlohmann::json& message);
// The protocol versions spoken, newest first.
const std::vector<std::string>& mcp_protocol_versions();
// Answers initialize (params: an object): agrees a version (the asked one when spoken, else
// the newest) into session and returns the result.
nlohmann::json mcp_initialize(const nlohmann::json& params, McpSession& session);

// The response to request id in what a server sent (one message or a batch), null when none:
// requests and notifications from the server are not responses.
nlohmann::json mcp_find_response(const nlohmann::json& answer, int64_t id);
// The text of a response's error member, for an Error.
std::string mcp_error_text(const nlohmann::json& error);
// A tools/call result as the model reads it: {"content": text, "isError"?, "structuredContent"?}.
nlohmann::json mcp_model_result(const nlohmann::json& result);
// The tools of a tools/list result (entries without a string name are skipped); *cursor: its
// nextCursor, empty when it has none.
std::vector<ToolSpec> mcp_tools_of(const nlohmann::json& list, std::string* cursor);
// A string member of an object, or fallback when absent or not a string.
std::string mcp_string(const nlohmann::json& object, const char* key, const std::string& fallback);

}  // namespace pf
