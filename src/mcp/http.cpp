// Streamable HTTP for the MCP server (see http.h).
#include "mcp/http.h"

#include "core/json.h"
#include "core/text.h"

namespace pf {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

asio::awaitable<int> rpc_error(ServerResponse& res, int status, int code, const std::string& message) {
  json body = {{"jsonrpc", "2.0"}, {"id", nullptr}, {"error", {{"code", code}, {"message", message}}}};
  co_await res.send(status, "application/json", body.dump());
  co_return status;
}

bool is_initialize(const json& m) {
  auto one = [](const json& x) { return mcp_string(x, "method", "") == "initialize"; };
  if (m.is_array()) {
    for (const json& x : m)
      if (one(x)) return true;
    return false;
  }
  return one(m);
}

}  // namespace

McpHttp::McpHttp(McpServer& server, size_t max_sessions) : server_(server), max_sessions_(max_sessions) {}

asio::awaitable<int> McpHttp::handle(ServerRequest& req, ServerResponse& res) {
  std::string id = req.header("Mcp-Session-Id");
  if (req.method == "GET") {
    std::string body = R"({"error":"method_not_allowed","message":"this server sends no stream of its own; POST messages"})";
    ServerResponse::Headers allow = {{"Allow", "POST, DELETE"}};
    co_await res.send(405, "application/json", std::move(body), allow);
    co_return 405;
  }
  if (req.method == "DELETE") {
    if (id.empty() || !sessions_.erase(id)) co_return co_await rpc_error(res, 404, -32001, "no such session");
    co_await res.send(200, "application/json", std::string("{}"));
    co_return 200;
  }
  if (req.method != "POST") {
    std::string body = R"({"error":"method_not_allowed","message":"POST or DELETE"})";
    ServerResponse::Headers allow = {{"Allow", "POST, DELETE"}};
    co_await res.send(405, "application/json", std::move(body), allow);
    co_return 405;
  }
  std::string version = req.header("MCP-Protocol-Version");
  const auto& known = McpServer::protocol_versions();
  if (!version.empty() && std::find(known.begin(), known.end(), version) == known.end())
    co_return co_await rpc_error(res, 400, -32600, "unsupported MCP-Protocol-Version " + version);
  std::string why;
  json message = parse_json(req.body, &why);
  if (message.is_discarded()) co_return co_await rpc_error(res, 400, -32700, "parse error: " + why);
  McpSession* session = nullptr;
  ServerResponse::Headers headers;
  if (is_initialize(message)) {
    id = random_id(24);
    if (sessions_.size() >= max_sessions_ && !order_.empty()) {
      sessions_.erase(order_.front());
      order_.pop_front();
    }
    session = &sessions_[id];
    order_.push_back(id);
    headers.emplace_back("Mcp-Session-Id", id);
  } else if (id.empty()) {
    co_return co_await rpc_error(res, 400, -32600, "send the Mcp-Session-Id header (initialize first)");
  } else {
    auto it = sessions_.find(id);
    if (it == sessions_.end()) co_return co_await rpc_error(res, 404, -32001, "no such session (it ended); initialize again");
    session = &it->second;
  }
  // The map may change while the message is handled (another request opens a session): the
  // session is copied in and out by id.
  McpSession local = *session;
  std::optional<json> answer = co_await server_.handle(message, local);
  if (auto it = sessions_.find(id); it != sessions_.end()) it->second = local;
  if (!answer) {
    co_await res.send(202, "application/json", std::string(), headers);
    co_return 202;
  }
  co_await res.send(200, "application/json", answer->dump(), headers);
  co_return 200;
}

}  // namespace pf
