// Internal to api: the server's application object, the routes of `pilotfish serve` over the
// answering runtime (copilot_server.cpp: the Activepieces-compatible and AI SDK routes, search,
// index, metrics, MCP; openai_routes.cpp: the OpenAI-compatible ones). One per server; its
// handlers run on the server's network thread.
#pragma once

#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agent/action_tools.h"
#include "agent/ask_user.h"
#include "agent/tool_registry.h"
#include "api/api_error.h"
#include "api/auth.h"
#include "api/chat_request.h"
#include "api/copilot_server.h"
#include "api/metrics.h"
#include "api/tool_approval.h"
#include "api/ui_stream.h"
#include "api/web_assets.h"
#include "mcp/client.h"
#include "mcp/http.h"
#include "mcp/server.h"
#include "net/async_gate.h"
#include "net/http_server.h"
#include "policy/permission.h"
#include "runtime/answer_runtime.h"
#include "search/retrieval_config.h"

namespace pf {

namespace asio = boost::asio;
using nlohmann::json;

class App {
 public:
  // metrics must outlive runtime: its index jobs report to it until they are joined.
  App(asio::io_context& io, AnswerRuntime& runtime, Metrics& metrics, const ServeOptions& options,
      const std::string& root)
      : runtime_(runtime),
        metrics_(metrics),
        config_(runtime.config()),
        options_(options),
        keys_(config_.server.api_keys),
        search_(runtime.search_defaults()),
        setup_gate_(io.get_executor(), static_cast<size_t>(config_.server.answers_in_setup)) {
    limits_.max_message_chars = static_cast<size_t>(config_.server.max_message_chars);
    limits_.max_history_messages = static_cast<size_t>(config_.server.max_history_messages);
    if (!root.empty()) {
      // The server answers about its repository only, even in a store that holds several.
      repo_ = &runtime.repository(root, [this](bool ok, double seconds, int64_t chunks) {
        metrics_.index_run(ok, seconds, chunks);
      });
      search_ = repo_->search;
    }
    if (repo_) {
      // The chat's tools: the repository's, and the side-effecting ones actions.enabled offers.
      tools_ = repo_->tools->registry();
      if (!config_.actions.enabled.empty()) {
        actions_ = std::make_unique<ActionTools>(repo_->root, config_.actions, repo_->tools->own(),
                                                 config_.permissions);
        actions_->add_to(tools_, config_.actions.enabled);
      }
      // MCP servers' tools, listed once at start (a server down now is left out until restart).
      mcp_tools_ = std::make_unique<McpTools>(config_.mcp_servers, repo_->root);
      if (!mcp_tools_->empty()) mcp_tools_->add_to(tools_);
      tools_asking_ = tools_;
      tools_asking_.add(ask_user_tool());
    }
    mcp_ = std::make_unique<McpServer>(runtime, root.empty() ? std::vector<std::string>{}
                                                             : std::vector<std::string>{root});
    mcp_http_ = std::make_unique<McpHttp>(*mcp_);
    HttpServerOptions http;
    http.max_body_bytes = static_cast<uint64_t>(config_.server.max_body_bytes);
    server_ = std::make_unique<HttpServer>(
        io, http, [this](ServerRequest& req, ServerResponse& res) { return handle(req, res); });
  }

  HttpServer& server() { return *server_; }
  IndexJob* index_job() { return repo_ ? repo_->index_job.get() : nullptr; }

 private:
  asio::awaitable<void> handle(ServerRequest& req, ServerResponse& res);
  // Adds the CORS headers req's origin gets; true for a preflight to answer with 204. Throws
  // ApiError 403 for a preflight from an origin that is not allowed.
  bool apply_cors(const ServerRequest& req, ServerResponse& res) const;
  // The request's span (core/trace.h), its context put in req.trace; not recording when tracing
  // is off. A function of its own: what it reads is not kept in the handler's long-lived frame.
  static Span request_span(ServerRequest& req);
  // The JSON error answer to a request that failed before its response started.
  asio::awaitable<void> send_failure(const ServerRequest& req, ServerResponse& res,
                                     const ApiError& failure);
  // The handler for req's path (throws ApiError 401/403/404/405 before any is chosen).
  asio::awaitable<int> route(ServerRequest& req, ServerResponse& res);
  asio::awaitable<int> healthz(ServerResponse& res);
  asio::awaitable<int> reindex(ServerRequest& req, ServerResponse& res, Principal who);
  // DELETE /v1/platform-copilot/index[?repo=]: forgets every chunk of the served repository
  // (the reference's clearIndex); the next index run builds it again. 409 while a run goes on.
  asio::awaitable<int> clear_index(ServerRequest& req, ServerResponse& res, Principal who);
  asio::awaitable<int> metrics_page(ServerResponse& res);
  asio::awaitable<int> chat(ServerRequest& req, ServerResponse& res, Principal who);
  // What a chat holds from its request until its answer runs (see chat()).
  struct ChatTurn {
    std::chrono::steady_clock::time_point t0;
    ChatInput input;
    bool approvals = false;  // the client answers tool approvals
    bool ask_user = false;   // the client answers ask_user (a client-side tool)
    std::string chat_model;  // usable_chat_model's
    std::vector<ChatMessage> resumed;  // resume_calls'
    AsyncGate::Permit setup;           // the set-up slot, handed to the answer
    std::unique_ptr<AuditTrail> audit;  // the caller's side-effecting calls (audit_trail())
    TraceContext trace;                 // the request's span
  };
  // The audit trail of one request's calls, as the key who made it.
  std::unique_ptr<AuditTrail> audit_trail(const Principal& who) const;
  asio::awaitable<const char*> answer_chat(ChatTurn& turn, UiMessageStream& ui,
                                           ServerResponse& res);
  // The stream's end once the answer is over (an error chunk after a failure); returns the
  // outcome for the metrics: completed, cancelled or error.
  const char* chat_outcome(const std::string& failure, UiMessageStream& ui, ServerResponse& res);
  asio::awaitable<int> search(ServerRequest& req, ServerResponse& res);
  // GET /v1/file?path=&start=&end= (source_view.cpp): lines of a repository file, under the
  // tools' path rules, for the page's citation links.
  asio::awaitable<int> source_view(ServerRequest& req, ServerResponse& res);
  // The chat page (web_page.cpp): the asset a request asks for (nullptr: not a page request,
  // or server.webPage is off), sent with its cache and security headers; and GET
  // /v1/platform-copilot/models, the configured chat models for its picker.
  const WebAsset* web_asset_for(const ServerRequest& req) const;
  asio::awaitable<int> web_page(const ServerRequest& req, ServerResponse& res, const WebAsset& asset);
  asio::awaitable<int> models(ServerResponse& res);
  // A query parameter as a whole number in [min, max]; nullopt when absent. Throws ApiError 400
  // (invalid_<name>) otherwise.
  static std::optional<int> query_int(const ServerRequest& req, const std::string& name, int min,
                                      int max);
  // OpenAI's API (openai_routes.cpp): POST /v1/chat/completions, GET /v1/models.
  asio::awaitable<int> openai_chat(ServerRequest& req, ServerResponse& res, Principal who);
  asio::awaitable<int> openai_models(ServerResponse& res);
  std::vector<std::string> openai_model_ids() const;
  // The chat model for what the client asked ("" for the default): its id, or "" with no chat
  // model configured. Throws ApiError 400 for a name that resolves to no model, 503 when no
  // model of its chain can even be set up (an unset key variable).
  std::string usable_chat_model(const std::string& asked) const;
  // The permission engine before each side-effecting call. ask: what to do with an "ask"
  // verdict (send an approval request and return the pending result); null: refuse it, as
  // for a client that cannot answer approvals. audit (must outlive the gate) is told each
  // decision.
  using ToolGate = std::function<asio::awaitable<std::optional<json>>(const ToolCall&)>;
  ToolGate tool_gate(std::function<json(const ToolCall&)> ask, AuditTrail* audit) const;
  PolicyContext policy() const;
  // A continued message's calls (tool approval), on a stream already begun: each answered call
  // decided again and run or denied, its outcome streamed; returns the assistant message and the
  // tool results.
  asio::awaitable<std::vector<ChatMessage>> resume_calls(const ChatInput& input, UiMessageStream& ui,
                                                         ServerResponse& res, AuditTrail& audit);
  // Taken by value: callers may hand over a local and return the awaitable.
  asio::awaitable<int> send_json(ServerResponse& res, int status, json body);
  Principal authenticate(const ServerRequest& req) const;

  AnswerRuntime& runtime_;
  Metrics& metrics_;
  const Config& config_;
  ServeOptions options_;
  ApiKeys keys_;
  ChatLimits limits_;
  HybridOptions search_;
  AsyncGate setup_gate_;  // server.limits.answersInSetup, shared by both chat routes
  Repository* repo_ = nullptr;
  ToolRegistry tools_;
  ToolRegistry tools_asking_;  // tools_ and ask_user, for clients that answer it
  std::unique_ptr<ActionTools> actions_;
  std::unique_ptr<McpTools> mcp_tools_;
  ApprovalSigner approvals_;
  std::unique_ptr<McpServer> mcp_;  // the same repositories as tools, at /mcp
  std::unique_ptr<McpHttp> mcp_http_;
  std::unique_ptr<HttpServer> server_;
};

}  // namespace pf
