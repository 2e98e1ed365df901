// The copilot's HTTP routes (see copilot_server.h).
#include "api/copilot_server.h"

#include "api/app.h"  // first of the rest: it includes the coroutine header first

#include <sys/resource.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <filesystem>

#include "agent/answer.h"
#include "api/api_error.h"
#include "api/cors.h"
#include "api/openai_stream.h"
#include "core/json.h"
#include "core/log.h"
#include "core/text.h"
#include "index/git_source.h"
#include "llm/fallback.h"
#include "llm/model_registry.h"
#include "search/result_json.h"

namespace pf {

using Clock = std::chrono::steady_clock;

namespace {

bool is_loopback(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1" || host == "[::1]" ||
         host.rfind("127.", 0) == 0;
}

std::string route_label(const std::string& path) {
  if (path == "/v1/platform-copilot/chat") return "chat";
  if (path == "/v1/platform-copilot/index") return "index";
  if (path == "/v1/search") return "search";
  if (path == "/v1/file") return "file";
  if (path == "/metrics") return "metrics";
  if (path == "/healthz") return "healthz";
  if (path == "/mcp") return "mcp";
  if (path == "/v1/chat/completions") return "openai_chat";
  if (path == "/v1/models") return "openai_models";
  if (path == "/v1/platform-copilot/models") return "models";
  if (path == "/" || path == "/index.html" || path.rfind("/assets/", 0) == 0) return "page";
  return "other";
}

bool is_openai_route(const std::string& path) {
  return path == "/v1/chat/completions" || path == "/v1/models";
}

}  // namespace

Principal App::authenticate(const ServerRequest& req) const {
  if (options_.no_auth) return Principal{"local", "admin"};
  std::optional<Principal> who = keys_.authenticate(req.header("Authorization"));
  if (!who)
    throw ApiError(401, "unauthorized",
                   req.header("Authorization").empty()
                       ? "this API needs a key: send Authorization: Bearer <key>"
                       : "the API key is not valid");
  return *who;
}

asio::awaitable<int> App::send_json(ServerResponse& res, int status, json body) {
  co_await res.send(status, "application/json", body.dump());
  co_return status;
}

// Every request, kept small: this frame is held for the whole of every chat stream, so the
// answer to a failure and the bookkeeping are functions of their own.
asio::awaitable<void> App::handle(ServerRequest& req, ServerResponse& res) {
  auto t0 = Clock::now();
  int status = 500;
  std::optional<ApiError> failure;
  Span span = request_span(req);
  try {
    // A preflight is answered before any key is asked for: browsers send it without one.
    if (apply_cors(req, res)) {
      co_await res.send(204, "text/plain", "");
      status = 204;
    } else {
      status = co_await route(req, res);
    }
  } catch (const ApiError& e) {
    failure = e;
  }
  if (failure) {
    status = failure->status();
    if (!res.started()) co_await send_failure(req, res, *failure);
  }
  double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  span.set("http.response.status_code", status);
  if (failure && status >= 500) span.fail(failure->what());
  metrics_.request(route_label(req.path), status, seconds);
  if (status >= 400)
    log::info("http",
              req.method + " " + req.path + " " + std::to_string(status) + " from " + req.remote);
}

Span App::request_span(ServerRequest& req) {
  if (!tracing_enabled()) return Span();
  // Under the caller's W3C traceparent when it sent one.
  std::optional<TraceContext> caller = parse_traceparent(req.header("traceparent"));
  Span span("HTTP " + req.method + " " + route_label(req.path), caller ? &*caller : nullptr,
            SpanKind::kServer);
  span.set("http.request.method", req.method);
  span.set("url.path", req.path);
  req.trace = span.context();
  return span;
}

bool App::apply_cors(const ServerRequest& req, ServerResponse& res) const {
  CorsAnswer cors = cors_answer(config_.server.cors_origins, req.header("Origin"), req.method,
                                req.header("Access-Control-Request-Method"));
  for (auto& [k, v] : cors.headers) res.add_header(k, v);
  if (cors.preflight && !cors.allowed)
    throw ApiError(403, "origin_not_allowed",
                   "pages of " + req.header("Origin") + " may not call this API (server.corsOrigins)");
  return cors.preflight;
}

asio::awaitable<void> App::send_failure(const ServerRequest& req, ServerResponse& res,
                                        const ApiError& failure) {
  int status = failure.status();
  ServerResponse::Headers headers;
  if (status == 401) headers.emplace_back("WWW-Authenticate", "Bearer");
  if (status == 405)
    headers.emplace_back("Allow", req.path == "/v1/platform-copilot/index"  ? "GET, POST, DELETE"
                                  : req.path == "/v1/platform-copilot/chat" ||
                                            req.path == "/v1/chat/completions"
                                      ? "POST"
                                      : "GET");
  // OpenAI's clients read OpenAI's error shape; every other route keeps the one the
  // Activepieces client reads.
  if (is_openai_route(req.path))
    co_await res.send(status, "application/json",
                      openai_error_json(status, failure.code(), failure.what()), headers);
  else
    co_await res.send_error(status, failure.code(), failure.what(), headers);
}

// Not a coroutine: it only picks the handler, whose awaitable it returns. A frame here would be
// held for the whole of every chat stream. What it borrows (req, res) outlives the handler.
asio::awaitable<int> App::route(ServerRequest& req, ServerResponse& res) {
  const std::string& p = req.path;
  if (p == "/healthz") return healthz(res);
  if (const WebAsset* page = web_asset_for(req)) return web_page(req, res, *page);
  Principal who = authenticate(req);
  auto method_is = [&](const char* m) {
    if (req.method != m)
      throw ApiError(405, "method_not_allowed", req.method + " is not allowed on " + p);
  };
  if (p == "/v1/platform-copilot/chat") {
    method_is("POST");
    return chat(req, res, std::move(who));
  }
  if (p == "/v1/platform-copilot/index") {
    if (req.method != "GET" && req.method != "DELETE") method_is("POST");
    if (!who.admin())
      throw ApiError(403, "forbidden", "indexing is for admins; this key's role is " + who.role);
    if (req.method == "DELETE") return clear_index(req, res, std::move(who));
    return reindex(req, res, std::move(who));
  }
  if (p == "/v1/platform-copilot/models") {
    method_is("GET");
    return models(res);
  }
  if (p == "/v1/chat/completions") {
    method_is("POST");
    return openai_chat(req, res, std::move(who));
  }
  if (p == "/v1/models") {
    method_is("GET");
    return openai_models(res);
  }
  if (p == "/mcp") return mcp_http_->handle(req, res);
  if (p == "/v1/search") {
    method_is("GET");
    return search(req, res);
  }
  if (p == "/v1/file") {
    method_is("GET");
    return source_view(req, res);
  }
  if (p == "/metrics") {
    method_is("GET");
    return metrics_page(res);
  }
  throw ApiError(404, "not_found", "no such route: " + req.method + " " + p);
}

asio::awaitable<int> App::healthz(ServerResponse& res) {
  json body;
  body["status"] = "ok";
  body["indexing"] = index_job() && index_job()->running();
  co_return co_await send_json(res, 200, std::move(body));
}

asio::awaitable<int> App::reindex(ServerRequest& req, ServerResponse& res, Principal who) {
  IndexJob* job = index_job();
  if (!job)
    throw ApiError(409, "no_repository",
                   "the server has no repository to index: start it with --repo DIR");
  if (req.method == "GET") co_return co_await send_json(res, 200, job->status());
  bool started = job->start("api");
  log::info("index", "re-index requested by " + who.name +
                         (started ? "" : " (a run is already in progress)"));
  // Braced initialisers inside a co_await trip GCC 12, hence the variable.
  json body = {{"status", started ? "indexing_started" : "already_running"}};
  co_return co_await send_json(res, 200, std::move(body));
}

asio::awaitable<int> App::clear_index(ServerRequest& req, ServerResponse& res, Principal who) {
  IndexJob* job = index_job();
  if (!job || !repo_)
    throw ApiError(409, "no_repository", "the server has no repository: start it with --repo DIR");
  auto named = req.query.find("repo");
  if (named != req.query.end() && !named->second.empty() && named->second != repo_->root &&
      std::filesystem::path(repo_->root).filename() != named->second)
    throw ApiError(404, "unknown_repository", "this server answers about " + repo_->root + " only");
  if (job->running())
    throw ApiError(409, "index_running", "an index run is in progress; clear the index once it ends");
  int64_t repo_id = repo_->search.base.repo_id.value_or(0);
  size_t files = 0;
  std::string failure;
  bool busy = false;
  co_await runtime_.workspace().run([&](Store& store) {
    try {
      std::unique_ptr<WriterLock> lock = store.acquire_writer_lock();
      auto listed = store.list_files(repo_id);
      store.begin_batch();
      try {
        for (const FileRecord& record : listed) store.remove_file(repo_id, record.path);
        store.commit_batch();
      } catch (...) {
        store.rollback_batch();
        throw;
      }
      files = listed.size();
    } catch (const BusyError& e) {
      busy = true;
      failure = e.what();
    } catch (const Error& e) {
      failure = e.what();
    }
  });
  if (busy) throw ApiError(409, "index_running", failure);
  if (!failure.empty()) throw ApiError(500, "clear_failed", failure);
  log::info("index", "the index of " + repo_->root + " was cleared by " + who.name + " (" +
                         std::to_string(files) + " files)");
  json body = {{"status", "cleared"}, {"repository", repo_->root}, {"files", files}};
  co_return co_await send_json(res, 200, std::move(body));
}

asio::awaitable<int> App::metrics_page(ServerResponse& res) {
  std::map<std::string, double> gauges;
  gauges["pilotfish_http_connections_open"] = static_cast<double>(server_->open_connections());
  gauges["pilotfish_http_streams_open"] = static_cast<double>(server_->open_streams());
  gauges["pilotfish_index_running"] = index_job() && index_job()->running() ? 1.0 : 0.0;
  std::string text = metrics_.render(gauges);
  if (options_.extra_metrics) text += options_.extra_metrics();
  co_await res.send(200, "text/plain; version=0.0.4; charset=utf-8", std::move(text));
  co_return 200;
}

asio::awaitable<int> App::search(ServerRequest& req, ServerResponse& res) {
  auto q = req.query.find("q");
  if (q == req.query.end() || q->second.empty())
    throw ApiError(400, "missing_query", "give the query as ?q=...");
  HybridOptions opt = search_;
  opt.base.limit = query_int(req, "limit", 1, 100).value_or(10);
  if (auto m = req.query.find("mode"); m != req.query.end()) {
    if (m->second == "lexical") {
      opt.mode = SearchMode::kLexical;
    } else if (m->second == "vector" || m->second == "hybrid") {
      if (!runtime_.embedder())
        throw ApiError(400, "no_embedding_model",
                       "mode=" + m->second + " needs defaults.embeddingModel in the config");
      opt.mode = m->second == "vector" ? SearchMode::kVector : SearchMode::kHybrid;
    } else {
      throw ApiError(400, "invalid_mode", "mode must be lexical, vector or hybrid");
    }
  }
  std::vector<SearchResult> results;
  std::string failure;
  std::string query = q->second;
  try {
    co_await runtime_.workspace().run(
        [&](Store& store) { results = hybrid_search(store, query, opt, runtime_.embedder()); });
  } catch (const Error& e) {
    failure = e.what();
  }
  if (!failure.empty()) throw ApiError(500, "search_failed", failure);
  co_return co_await send_json(res, 200, search_results_json(results));
}

// A chat is two coroutines: this one, all that a chat queued for a set-up slot holds (a
// thousand may wait at once), and answer_chat, the state of a running answer.
std::unique_ptr<AuditTrail> App::audit_trail(const Principal& who) const {
  AuditRecord base;
  base.front = "http";
  base.place = who.name;
  base.user = who.name;
  return std::make_unique<AuditTrail>(options_.audit, std::move(base));
}

asio::awaitable<int> App::chat(ServerRequest& req, ServerResponse& res, Principal who) {
  ChatTurn turn;
  turn.t0 = Clock::now();
  turn.audit = audit_trail(who);
  turn.trace = req.trace;
  turn.input = parse_chat_request(req.body, limits_);
  std::string().swap(req.body);  // parsed; a long stream need not keep it
  turn.approvals = turn.input.approvals || req.header("X-Pilotfish-Tool-Approvals") == "1";
  turn.ask_user = turn.input.ask_user || req.header("X-Pilotfish-Ask-User") == "1";
  HeaderFields().swap(req.headers);  // read; a stream need not keep them
  turn.chat_model = usable_chat_model(turn.input.model);
  // A continued message keeps its id: the client appends to it.
  UiMessageStream ui(turn.input.resumed_message_id.empty() ? new_message_id()
                                                           : turn.input.resumed_message_id,
                     config_.server.send_finish_reason);
  // Everything that can be checked has been: the headers and the start chunk go now, so the
  // time to the first byte does not wait for retrieval; a failure from here on is an error chunk.
  res.begin_stream(200, ui_stream_headers(), ": ping\n\n");
  metrics_.stream_started();
  res.write(ui.start());
  if (!turn.input.resumed.empty())
    turn.resumed = co_await resume_calls(turn.input, ui, res, *turn.audit);
  turn.setup = co_await setup_gate_.acquire();
  const char* outcome = co_await answer_chat(turn, ui, res);
  co_await res.end_stream();
  metrics_.stream_ended(outcome);
  co_return 200;
}

asio::awaitable<const char*> App::answer_chat(ChatTurn& turn, UiMessageStream& ui,
                                              ServerResponse& res) {
  AnswerOptions opt;
  opt.search = search_;
  opt.tools = !repo_ ? nullptr : turn.ask_user ? &tools_asking_ : &tools_;
  opt.cancel = &res.client_gone();
  opt.chat_model = std::move(turn.chat_model);
  opt.resume = std::move(turn.resumed);
  opt.setup = &turn.setup;
  opt.trace = turn.trace;
  opt.annotate_tool = [&turn](const ToolCall& call, Span& span) { turn.audit->annotate(call, span); };
  opt.rewrite_query = retrieval_config(config_).rewrite;
  // Side-effecting calls: the permission engine; "ask" becomes an approval request for a client
  // that answers them, else a refusal (an ai 5 client's schema rejects the chunk).
  bool awaiting = false;
  opt.awaiting_approval = &awaiting;
  std::function<json(const ToolCall&)> ask;
  if (turn.approvals)
    ask = [&](const ToolCall& call) {
      res.write(ui.approval_request(approvals_.sign(call), call.id));
      awaiting = true;
      return json{{"pending", "approval"}};
    };
  opt.before_tool = tool_gate(ask, turn.audit.get());
  opt.after_tool = [&turn](const ToolCall& call, const std::string& result) {
    turn.audit->ran(call, result);
  };
  if (turn.ask_user)
    opt.before_tool = [&awaiting, gate = opt.before_tool](const ToolCall& call)
        -> asio::awaitable<std::optional<json>> {
      if (call.name != kAskUserTool) co_return co_await gate(call);
      std::string error;
      if (!parse_user_question(call.arguments, &error)) co_return json{{"error", error}};
      awaiting = true;  // the client shows the question and sends the answer as the tool's output
      co_return json{{"pending", "user"}};
    };
  bool first_text = true;
  auto on_event = [&](const AnswerEvent& e) {
    if (e.kind == AnswerEvent::Kind::kText && first_text) {
      first_text = false;
      metrics_.first_token(std::chrono::duration<double>(Clock::now() - turn.t0).count());
    }
    if (e.kind == AnswerEvent::Kind::kFinish && !e.skipped_models.empty())
      log::warn("agent", "answered by " + e.model + " after passing over " +
                             std::to_string(e.skipped_models.size()) + " model(s)");
    return res.write(ui.on_event(e));
  };
  std::string failure;
  try {
    co_await async_answer_question(runtime_.workspace(), config_, runtime_.embedder(),
                                   turn.input.question, turn.input.history, opt, on_event);
  } catch (const Error& e) {
    failure = e.what();
  }
  co_return chat_outcome(failure, ui, res);
}

const char* App::chat_outcome(const std::string& failure, UiMessageStream& ui, ServerResponse& res) {
  if (!failure.empty()) {
    log::error("agent", "answer failed mid-stream: " + failure);
    // The log has the whole message; the client is not told where the providers live.
    res.write(ui.fail(redact_urls(failure, "the provider")));
    return "error";
  }
  if (!ui.finished()) {
    log::info("agent", "client went away; the answer was stopped");
    return "cancelled";
  }
  return "completed";
}

std::optional<int> App::query_int(const ServerRequest& req, const std::string& name, int min, int max) {
  auto it = req.query.find(name);
  if (it == req.query.end()) return std::nullopt;
  int v = min - 1;
  try {
    size_t used = 0;
    v = std::stoi(it->second, &used);
    if (used != it->second.size()) v = min - 1;
  } catch (const std::exception&) {
  }
  if (v < min || v > max)
    throw ApiError(400, "invalid_" + name, name + " must be a whole number from " +
                                               std::to_string(min) + " to " + std::to_string(max));
  return v;
}

std::string App::usable_chat_model(const std::string& asked) const {
  std::string model;
  if (!asked.empty()) {
    ModelResolution r = resolve_model(configured_models(config_), asked);
    if (!r.model) throw ApiError(400, "unknown_model", r.error);
    model = r.model->id();
  }
  std::string chat_model = model.empty() ? config_.defaults.chat_model : model;
  if (chat_model.empty()) return model;  // retrieval-only answers
  std::string setup_error;
  for (const auto& id : fallback_chain(config_, chat_model)) {
    try {
      make_chat_model(config_, id);
      return model;
    } catch (const Error& e) {
      setup_error = e.what();
    }
  }
  throw ApiError(503, "model_not_configured", setup_error);
}

App::ToolGate App::tool_gate(std::function<json(const ToolCall&)> ask, AuditTrail* audit) const {
  return [this, ask = std::move(ask), audit](const ToolCall& call) -> asio::awaitable<std::optional<json>> {
    const ToolEntry* entry = tools_.find(call.name);
    if (!entry || entry->permission == ToolPermission::kNone) co_return std::nullopt;
    std::string error;
    std::optional<PermissionRequest> request = permission_request(tools_, call.name, call.arguments, &error);
    if (!request) co_return json{{"error", error}};
    Verdict v = decide_permission(*request, policy());
    if (v.action != Verdict::Action::kAsk) {
      audit->decided(call, *request, v.action == Verdict::Action::kApprove, v.check, v.detail);
      if (v.action == Verdict::Action::kApprove) co_return std::nullopt;
      co_return json{{"error", "permission denied (" + v.check + "): " + v.detail}};
    }
    if (!ask) {
      audit->decided(call, *request, false, "prompt", "the client does not answer tool approvals", true);
      co_return json{{"error", "permission was not given (user-not-available): this client does not "
                               "answer tool approvals"}};
    }
    co_return ask(call);  // decided when the client's answer comes (resume_calls)
  };
}

PolicyContext App::policy() const {
  PolicyContext ctx;
  ctx.yolo = config_.actions.permission_mode == "autopilot";
  if (repo_) ctx.workspace_roots = {repo_->root};
  ctx.config = &config_.permissions;
  return ctx;
}

asio::awaitable<std::vector<ChatMessage>> App::resume_calls(const ChatInput& input, UiMessageStream& ui,
                                                            ServerResponse& res, AuditTrail& audit) {
  ChatMessage assistant{"assistant", input.resumed_text, {}, {}};
  std::vector<ChatMessage> results;
  PolicyContext ctx = policy();
  for (const ResumedToolCall& r : input.resumed) {
    assistant.tool_calls.push_back(r.call);
    json result;
    if (r.state == "output-available" && r.call.name == kAskUserTool) {
      json said = parse_json(r.output);
      result = said.is_string() ? user_answer(said.get<std::string>(), "") : json{{"answer", said}};
    } else if (r.state == "output-available") {
      result = parse_json(r.output);
    } else if (r.state == "output-error") {
      result = {{"error", r.output}};
    } else if (r.state == "output-denied") {
      result = {{"error", "the user denied this call"}};
    } else if (r.state != "approval-responded") {
      result = {{"error", "this call was not run"}};
    } else if (!approvals_.verify(r.approval_id, r.call)) {
      result = {{"error", "the approval does not answer a request of this server (or the server "
                          "restarted since); the call was not run"}};
    } else {
      std::string error;
      std::optional<PermissionRequest> request = permission_request(tools_, r.call.name, r.call.arguments, &error);
      // The client's yes replaces only the prompt: hard denies and deny rules still hold.
      Verdict v = request ? decide_permission(*request, ctx) : Verdict{};
      if (!request) {
        result = {{"error", error}};
      } else if (v.action == Verdict::Action::kDeny) {
        audit.decided(r.call, *request, false, v.check, v.detail);
        result = {{"error", "permission denied (" + v.check + "): " + v.detail}};
      } else if (!r.approved) {
        audit.decided(r.call, *request, false, "client", "denied by the client's user" +
                                                             (r.reason.empty() ? "" : ": " + r.reason));
        res.write(ui.tool_denied(r.call.id));
        result = {{"error", "the user denied this call" + (r.reason.empty() ? std::string() : ": " + r.reason)}};
        results.push_back(ChatMessage{"tool", result.dump(), {}, r.call.id});
        continue;
      } else {
        audit.decided(r.call, *request, true, "client", "approved by the client's user");
        co_await runtime_.workspace().run([&](Store& store) { result = tools_.call(r.call.name, r.call.arguments, &store); });
        audit.ran(r.call, result.dump());
      }
    }
    if (r.state == "approval-responded")
      res.write(ui.on_event(AnswerEvent{AnswerEvent::Kind::kToolResult, result.dump(), r.call, {}, {}, {}}));
    results.push_back(ChatMessage{"tool", result.is_discarded() ? std::string("null") : result.dump(), {}, r.call.id});
  }
  results.insert(results.begin(), std::move(assistant));
  co_return results;
}

namespace {

// Each open chat holds two sockets (client and model); the usual soft limit of 1,024 descriptors
// would stop a server at about 500 streams, so take what the hard limit allows.
void raise_open_file_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  rlim_t before = limit.rlim_cur;
  limit.rlim_cur = limit.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &limit) == 0)
    log::info("http", "open file limit raised from " + std::to_string(before) + " to " +
                          std::to_string(limit.rlim_cur));
}

// Lets open streams finish (up to 10 s), then stops the loop.
asio::awaitable<void> stop_when_streams_end(asio::io_context& io, HttpServer& server) {
  auto deadline = Clock::now() + std::chrono::seconds(10);
  asio::steady_timer t(io);
  while (server.open_streams() > 0 && Clock::now() < deadline) {
    t.expires_after(std::chrono::milliseconds(50));
    co_await t.async_wait(asio::use_awaitable);
  }
  io.stop();
}

}  // namespace

int serve(const Config& given_config, const ServeOptions& given) {
  ServeOptions options = given;
  // Only models the providers say they offer are resolved to and fallen back on.
  std::vector<std::string> warnings;
  const Config config = narrow_to_offered_models(given_config, &warnings);
  for (const auto& w : warnings) log::warn("llm", w);
  if (options.listen.empty()) options.listen = config.server.listen;
  size_t colon = options.listen.rfind(':');
  if (colon == std::string::npos)
    throw UsageError("--listen: expected host:port, got \"" + options.listen + "\"");
  std::string host = options.listen.substr(0, colon), port = options.listen.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (options.no_auth && !is_loopback(host))
    throw UsageError("--no-auth is only allowed on a loopback address (127.0.0.1, ::1), not " +
                     host);
  if (!options.no_auth && config.server.api_keys.empty())
    throw UsageError(
        "no API keys are configured: add server.apiKeys to the config (pilotfish hash-key prints "
        "a key's hash), or run with --no-auth on a loopback address");
  std::optional<CronSchedule> schedule;
  if (!config.server.reindex_schedule.empty())
    schedule = CronSchedule::parse(config.server.reindex_schedule);

  raise_open_file_limit();
  std::string root = find_server_root(config, options.db_path, options.repository);
  asio::io_context io(1);
  Metrics metrics;
  AnswerRuntime runtime(config, options.db_path, options.workers);
  App app(io, runtime, metrics, options, root);
  unsigned short bound = app.server().listen(host, port);
  app.server().start();
  std::string url = "http://" + (host.find(':') != std::string::npos ? "[" + host + "]" : host) +
                    ":" + std::to_string(bound);
  log::info("http", "listening on " + url + (root.empty() ? "" : " for " + root));
  if (options.on_listening) options.on_listening(url);

  if (IndexJob* job = app.index_job()) {
    const std::string& named = options.repository.empty() ? config.server.repository : options.repository;
    if (is_git_url(named)) job->fetch_before_each_run(parse_git_source(named));
    bool empty = true;
    {
      auto store = open_store(options.db_path, OpenMode::kReadOnly);
      empty = !store->has_chunks();
    }
    if (empty) job->start("startup");
    if (schedule) job->schedule(*schedule);
  } else {
    log::warn("index",
              "no repository to index: chat answers from the store as it is; start with --repo");
  }

  std::exception_ptr beside_failure;
  if (options.start_beside)
    asio::co_spawn(io, options.start_beside(io, runtime), [&](std::exception_ptr e) {
      if (!e) return;
      beside_failure = e;
      io.stop();
    });
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    log::info("http", "signal " + std::to_string(signal) + ": finishing open streams");
    app.server().stop();
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          if (options.stop_beside) co_await options.stop_beside();
          co_await stop_when_streams_end(io, app.server());
        },
        asio::detached);
  });
  io.run();
  if (options.end_beside) options.end_beside();
  if (beside_failure) std::rethrow_exception(beside_failure);
  return 0;
}

}  // namespace pf
