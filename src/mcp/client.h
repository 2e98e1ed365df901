// pilotfish as an MCP client: the tools of the MCP servers in the config (mcp.servers) and in a
// user's and the workspace's mcp-config.json, offered to the model as server__tool, each call decided by the
// permission engine as an mcp request. A local server is started with its command (stdio, one
// JSON-RPC message per line; its working directory the workspace; an environment of PATH, HOME,
// LANG, TERM, USER plus what its config names, never the rest of ours); a remote one is spoken
// to over Streamable HTTP (JSON or server-sent-event answers, Mcp-Session-Id). A server that
// dies, answers garbage or hangs past its timeout is stopped, its calls fail with a clear error,
// and it is started again on a later call after a capped backoff.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/tool_registry.h"
#include "core/config.h"
#include "core/retry.h"

namespace pf {

class McpClient {
 public:
  // workspace: the local server's working directory. Nothing starts until the first call.
  McpClient(McpServerConfig config, std::string workspace);
  ~McpClient();  // stops a local server
  McpClient(const McpClient&) = delete;
  McpClient& operator=(const McpClient&) = delete;

  // The server's tools (connecting first if needed). Throws pf::Error naming the server when
  // it cannot be reached or is backing off. Blocking; thread-safe.
  std::vector<ToolSpec> tools();
  // Calls a tool: the server's result ({"content": [...], "isError": ...}), or {"error": ...}
  // when the server is down, backing off, hangs or fails. Blocking; thread-safe (one call at a
  // time per server); never throws.
  nlohmann::json call(const std::string& tool, const nlohmann::json& arguments);
  // One line for /mcp: running, down (and why), or not started.
  std::string status() const;
  // Stops the server; the next call starts it again at once.
  void reset();
  const McpServerConfig& config() const { return config_; }

 private:
  void connect_locked();
  void stop_locked(const std::string& why);
  nlohmann::json rpc_locked(const std::string& method, const nlohmann::json& params);
  void notify_locked(const std::string& method);
  nlohmann::json stdio_exchange_locked(const nlohmann::json& message, int64_t id, bool expect_answer);
  nlohmann::json http_exchange_locked(const nlohmann::json& message, int64_t id, bool expect_answer);

  McpServerConfig config_;
  std::string workspace_;
  mutable std::mutex mu_;
  bool connected_ = false;
  pid_t pid_ = -1;
  int to_server_ = -1, from_server_ = -1;
  std::string read_buffer_;
  std::string session_id_, protocol_version_;
  int64_t next_id_ = 1;
  std::vector<ToolSpec> tools_;
  int failures_ = 0;  // since the last success, for the backoff
  std::chrono::steady_clock::time_point down_until_{};
  std::string last_error_;
  RetryPolicy backoff_{0, 1000, 60000, 0.25};
};

// The MCP servers of one workspace, and their tools as registry entries (kMcp, server__tool).
class McpTools {
 public:
  // servers: the config's, then the user's mcp-config.json (user_dir, empty:
  // ~/.config/pilotfish), then the workspace's, each file winning for a name an earlier source
  // named. A bad mcp-config.json is logged and skipped.
  McpTools(const std::vector<McpServerConfig>& servers, const std::string& workspace,
           const std::string& user_dir = "");
  // Adds the tools of every server that answers (a server that does not is logged and left
  // out: its tools come back on the next add_to after it recovers). Entries call into this
  // object, which must outlive every copy of the registry. Blocking.
  void add_to(ToolRegistry& registry);
  std::vector<std::string> status() const;
  // The servers as merged, in order.
  std::vector<McpServerConfig> servers() const;
  bool empty() const { return clients_.empty(); }

 private:
  std::vector<std::unique_ptr<McpClient>> clients_;
};

// "${VAR}" replaced by the environment's value (empty when unset).
std::string expand_env(const std::string& text);

}  // namespace pf
