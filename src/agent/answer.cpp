// The answer pipeline (see answer.h).
#include "agent/answer.h"

#include <sstream>

#include "agent/prompt.h"
#include "agent/tool_registry.h"
#include "agent/workspace.h"
#include "core/log.h"
#include "llm/fallback.h"
#include "net/run_sync.h"

namespace pf {
namespace {

// The embedded default's answer: the best places, with a few lines of each.
std::string retrieval_only_answer(const std::string& question,
                                  const std::vector<SearchResult>& hits) {
  std::ostringstream out;
  if (hits.empty()) {
    out << "No indexed code or documentation matches \"" << question << "\".\n";
    return out.str();
  }
  out << "No chat model is configured, so here are the places that best match your question:\n\n";
  for (size_t i = 0; i < hits.size(); ++i) {
    const Chunk& c = hits[i].hit.chunk;
    std::string label = !c.symbol.empty() ? c.symbol : c.heading_path;
    out << (i + 1) << ". `" << c.path << ":" << c.start_line << "-" << c.end_line << "`";
    if (!label.empty()) out << " — " << c.chunk_type << " " << label;
    out << "\n";
    std::istringstream lines(c.content);
    std::string line, snippet;
    for (int n = 0; n < 4 && std::getline(lines, line); ++n) snippet += line + "\n";
    std::string fence = fence_for(snippet);
    out << fence << (c.language == "text" ? "" : c.language) << "\n" << snippet << fence << "\n\n";
  }
  return out.str();
}

// Asks the chat model for a search query: identifiers kept, likely names and terms added, and
// follow-ups ("where is it called?") resolved against the conversation. Any failure, or an empty
// or rambling answer, keeps the original question: retrieval must never depend on this step.
boost::asio::awaitable<std::string> rewrite_for_search(const Config& config,
                                                       const std::vector<std::string>& chain,
                                                       const std::string& question,
                                                       const std::vector<ChatMessage>& history,
                                                       const AnswerOptions& options) {
  ChatRequest req;
  req.max_tokens = 100;
  req.cancel = options.cancel;
  req.messages.push_back(ChatMessage{
      "system",
      "You turn a developer's latest question about a code repository into one short search "
      "query for a code search engine. Keep identifiers, file names and error messages exactly as "
      "written; add the identifier names and technical terms the answer is likely to contain; "
      "resolve words like \"it\" or \"that\" from the conversation. Output only the query, on "
      "one line, without quotes or explanation.",
      {},
      {}});
  size_t from = history.size() > 4 ? history.size() - 4 : 0;
  for (size_t i = from; i < history.size(); ++i)
    if (history[i].role == "user" || history[i].role == "assistant")
      req.messages.push_back(history[i]);
  req.messages.push_back(ChatMessage{"user", question, {}, {}});
  std::string text, failure;
  try {
    co_await async_stream_with_fallback(
        config, chain, req,
        [&](const ChatEvent& e) {
          if (e.kind == ChatEvent::Kind::kTextDelta) text += e.text;
          return text.size() < 1000;
        },
        options.chat);
  } catch (const Error& e) {
    failure = e.what();
  }
  if (!failure.empty()) {
    log::warn("agent", "query rewrite failed, searching with the question: " + failure);
    co_return question;
  }
  size_t b = text.find_first_not_of(" \t\r\n\"'`");
  size_t e = text.find_last_not_of(" \t\r\n\"'`");
  std::string query = b == std::string::npos ? std::string() : text.substr(b, e - b + 1);
  if (query.empty() || query.size() > 500 || query.find('\n') != std::string::npos)
    co_return question;
  log::info("agent", "search query: " + query);
  co_return query;
}

// The model's finish reason in the UI stream's words.
std::string ui_finish_reason(const std::string& model_reason) {
  if (model_reason == "stop" || model_reason == "length") return model_reason;
  if (model_reason == "tool_calls") return "tool-calls";
  if (model_reason == "content_filter") return "content-filter";
  return "other";
}

// The context of an answer: the question (or, when rewrite, the model's query for it) searched
// in the workspace. A coroutine of its own so that its locals are gone before the answer
// streams: the caller's frame is held by every open stream.
boost::asio::awaitable<std::vector<SearchResult>> retrieve(
    Workspace& workspace, const Config& config, Embedder* embedder,
    const std::vector<std::string>& chain, bool rewrite, const std::string& question,
    const std::vector<ChatMessage>& history, const AnswerOptions& options) {
  Span span("retrieval", &options.trace);
  std::string search_query = question;
  if (rewrite)
    search_query = co_await rewrite_for_search(config, chain, question, history, options);
  span.set("pilotfish.query.rewritten", rewrite);
  if (trace_content()) span.set("pilotfish.query", search_query.substr(0, 2000));
  HybridOptions search = options.search;
  search.base.limit = options.context_chunks;
  search.trace = span.context();
  std::vector<SearchResult> hits;
  co_await workspace.run(
      [&](Store& store) { hits = hybrid_search(store, search_query, search, embedder); });
  span.set("pilotfish.results", static_cast<int64_t>(hits.size()));
  co_return hits;
}

// With no chat model: the best places, streamed like any answer, in pieces, so every transport
// handles both the same way.
void answer_from_retrieval(const std::string& question, const std::vector<SearchResult>& hits,
                           const std::function<bool(const AnswerEvent&)>& on_event) {
  using Kind = AnswerEvent::Kind;
  if (!on_event(AnswerEvent{Kind::kStep, {}, {}, {}, {}, {}})) return;
  std::string text = retrieval_only_answer(question, hits);
  for (size_t at = 0; at < text.size(); at += 256)
    if (!on_event(AnswerEvent{Kind::kText, text.substr(at, 256), {}, {}, {}, {}})) return;
  on_event(AnswerEvent{Kind::kFinish, {}, {}, "retrieval-only", {}, "stop"});
}

// How a step's tool calls ended.
enum class CallsEnd { kDone, kStopped, kPaused };

// Runs the model's calls of one step in order, each through options.before_tool first, and
// appends their results to messages. kStopped: the client went away or cancelled; kPaused: a
// call waits for the client's approval (the rest are not run).
boost::asio::awaitable<CallsEnd> run_tool_calls(
    Workspace& workspace, const std::vector<ToolCall>& calls, const AnswerOptions& options,
    std::vector<ChatMessage>& messages, const std::function<bool(const AnswerEvent&)>& on_event) {
  using Kind = AnswerEvent::Kind;
  auto cancelled = [&] { return options.cancel && options.cancel->cancelled(); };
  for (const ToolCall& call : calls) {
    if (!on_event(AnswerEvent{Kind::kToolCall, call.arguments, call, {}, {}, {}}))
      co_return CallsEnd::kStopped;
    Span span("tool " + call.name, &options.trace);
    span.set("pilotfish.tool.name", call.name);
    if (trace_content()) span.set("pilotfish.tool.arguments", call.arguments.substr(0, 2000));
    std::optional<nlohmann::json> refusal;
    if (options.before_tool) refusal = co_await options.before_tool(call);
    if (options.awaiting_approval && *options.awaiting_approval) {
      span.set("pilotfish.tool.outcome", "awaiting-approval");
      co_return CallsEnd::kPaused;
    }
    std::string result;
    if (refusal) {
      result = refusal->dump();
      span.set("pilotfish.tool.outcome", "refused");
    } else if (!cancelled()) {
      auto started = std::chrono::steady_clock::now();
      co_await workspace.run([&](Store& store) {
        result = options.tools->call(call.name, call.arguments, &store).dump();
      });
      span.set("pilotfish.tool.outcome", "ran");
      span.set("pilotfish.tool.run_ms",
               static_cast<int64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::steady_clock::now() - started)
                                        .count()));
      if (options.after_tool) options.after_tool(call, result);
    }
    if (span.recording()) {
      nlohmann::json r = nlohmann::json::parse(result, nullptr, false);
      if (r.is_object() && r.contains("exit_code") && r["exit_code"].is_number_integer())
        span.set("pilotfish.tool.exit_code", r["exit_code"].get<int64_t>());
      if (r.is_object() && r.contains("error") && r["error"].is_string())
        span.fail(r["error"].get<std::string>());
      if (options.annotate_tool) options.annotate_tool(call, span);
    }
    span.end();
    if (cancelled() || !on_event(AnswerEvent{Kind::kToolResult, result, call, {}, {}, {}}))
      co_return CallsEnd::kStopped;
    messages.push_back(ChatMessage{"tool", result, {}, call.id});
  }
  co_return CallsEnd::kDone;
}

}  // namespace

boost::asio::awaitable<void> async_answer_question(
    Workspace& workspace, const Config& config, Embedder* embedder, const std::string& question,
    const std::vector<ChatMessage>& history, const AnswerOptions& options,
    const std::function<bool(const AnswerEvent&)>& on_event) {
  using Kind = AnswerEvent::Kind;
  auto cancelled = [&] { return options.cancel && options.cancel->cancelled(); };
  std::string chat_model =
      !options.chat_model.empty() ? options.chat_model : config.defaults.chat_model;
  std::vector<std::string> chain = fallback_chain(config, chat_model);

  // Held from before retrieval until the first model request is written (request.written below):
  // what an answer holds in that stretch is its largest state.
  AsyncGate::Permit setup;
  if (options.setup) setup = std::move(*options.setup);
  if (cancelled()) co_return;
  std::vector<SearchResult> hits =
      co_await retrieve(workspace, config, embedder, chain,
                        options.rewrite_query && !chat_model.empty(), question, history, options);
  if (cancelled()) co_return;
  if (chat_model.empty()) {
    setup.release();
    answer_from_retrieval(question, hits, on_event);
    co_return;
  }

  ChatRequest request;
  request.cancel = options.cancel;
  request.messages.push_back(
      ChatMessage{"system", system_prompt(hits, options.instructions), {}, {}});
  // The system prompt (the retrieved code, ~14 KB on a real repository) is the largest thing an
  // open stream would hold, and a thousand streams wait for their models at once. It is dropped
  // as soon as a model request is built from it, and rebuilt from the context's rows before
  // another is (a fallback model, a later step).
  std::vector<int64_t> context_rows;
  for (const SearchResult& h : hits) context_rows.push_back(h.hit.rowid);
  std::vector<SearchResult>().swap(hits);  // in the prompt now; a long stream need not keep them
  bool prompt_dropped = false;
  request.sent = [&] {
    std::string().swap(request.messages.front().content);
    prompt_dropped = true;
  };
  request.written = [&] { setup.release(); };
  request.prepare = [&]() -> boost::asio::awaitable<void> {
    if (!prompt_dropped) co_return;
    co_await workspace.run([&](Store& store) {
      std::vector<SearchResult> again;
      for (StoredChunk& c : store.chunks_by_rowid(context_rows))
        again.push_back(SearchResult{store.repository_root(c.repo_id), std::move(c)});
      request.messages.front().content = system_prompt(again, options.instructions);
    });
    prompt_dropped = false;
  };
  request.reasoning_effort = options.reasoning_effort;
  for (const ChatMessage& m : history) request.messages.push_back(m);
  request.messages.push_back(ChatMessage{"user", question, {}, {}});
  request.messages.back().images = options.question_images;
  for (const ChatMessage& m : options.resume) request.messages.push_back(m);
  bool stopped = false;  // the client went away
  std::vector<std::string> skipped;
  std::string answered_by, finish_reason = "stop";
  auto take_steering = [&] {
    if (!options.steer) return false;
    std::vector<std::string> said = options.steer();
    for (auto& text : said) request.messages.push_back(ChatMessage{"user", std::move(text), {}, {}});
    return !said.empty();
  };
  for (int step = 1; step <= std::max(1, options.max_steps) && !stopped; ++step) {
    if (step > 1) take_steering();
    bool offer_tools = options.tools && !options.tools->empty() && step < options.max_steps;
    request.tools = offer_tools ? options.tools->specs() : nullptr;
    if (!on_event(AnswerEvent{Kind::kStep, {}, {}, {}, {}, {}})) break;
    std::string text, model_reason, reasoning;
    std::vector<ToolCall> calls;
    Span model_span("chat " + chain.front(), &options.trace, SpanKind::kClient);
    model_span.set("gen_ai.operation.name", "chat");
    model_span.set("gen_ai.request.model", chain.front());
    model_span.set("pilotfish.step", step);
    auto asked_at = std::chrono::steady_clock::now();
    bool first_token = false;
    FallbackResult used;
    try {
    used = co_await async_stream_with_fallback(
        config, chain, request,
        [&](const ChatEvent& e) {
          if (!first_token && (e.kind == ChatEvent::Kind::kTextDelta ||
                               e.kind == ChatEvent::Kind::kToolCall)) {
            first_token = true;
            model_span.set("pilotfish.time_to_first_token_ms",
                           static_cast<int64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                    std::chrono::steady_clock::now() - asked_at)
                                                    .count()));
          }
          if (e.kind == ChatEvent::Kind::kToolCall) calls.push_back(e.call);
          if (e.kind == ChatEvent::Kind::kFinish) model_reason = e.finish_reason;
          if (e.kind == ChatEvent::Kind::kReasoning) reasoning = e.text;  // kept, never shown
          if (e.kind != ChatEvent::Kind::kTextDelta) return true;
          text += e.text;
          if (!on_event(AnswerEvent{Kind::kText, e.text, {}, {}, {}, {}})) stopped = true;
          return !stopped;
        },
        options.chat);
    } catch (const std::exception& e) {
      model_span.fail(e.what());  // ended failed as the answer unwinds
      throw;
    }
    stopped = stopped || cancelled();
    model_span.set("gen_ai.response.model", used.model_id);
    model_span.set("gen_ai.response.finish_reasons", model_reason);
    model_span.set("pilotfish.output.chars", static_cast<int64_t>(text.size()));
    model_span.set("pilotfish.tool_calls", static_cast<int64_t>(calls.size()));
    if (!used.skipped.empty()) {
      std::string skipped_list;
      for (const auto& s : used.skipped) skipped_list += (skipped_list.empty() ? "" : ", ") + s;
      model_span.set("pilotfish.fallback.skipped", skipped_list);
    }
    model_span.end();
    answered_by = used.model_id;
    skipped.insert(skipped.end(), used.skipped.begin(), used.skipped.end());
    finish_reason = ui_finish_reason(model_reason);
    // Later steps go to the model that answered: the conversation is its own now.
    chain = {used.model_id};
    if (stopped) break;
    if (calls.empty() || !offer_tools) {
      // The model has finished; what the user said meanwhile still deserves an answer.
      if (step >= options.max_steps) break;
      request.messages.push_back(ChatMessage{"assistant", text, {}, {}});
      if (take_steering()) continue;
      std::optional<std::string> more = options.keep_going ? options.keep_going(text) : std::nullopt;
      if (!more) break;
      request.messages.push_back(ChatMessage{"user", std::move(*more), {}, {}});
      continue;
    }
    request.messages.push_back(ChatMessage{"assistant", text, calls, {}, reasoning});
    CallsEnd end = co_await run_tool_calls(workspace, calls, options, request.messages, on_event);
    if (end == CallsEnd::kStopped) stopped = true;
    if (end == CallsEnd::kPaused) {
      finish_reason = "tool-calls";
      break;
    }
  }
  if (!stopped) on_event(AnswerEvent{Kind::kFinish, {}, {}, answered_by, skipped, finish_reason});
}

void answer_question(Store& store, const Config& config, Embedder* embedder,
                     const std::string& question, const std::vector<ChatMessage>& history,
                     const AnswerOptions& options,
                     const std::function<bool(const AnswerEvent&)>& on_event) {
  InlineWorkspace workspace(store);
  run_sync(
      async_answer_question(workspace, config, embedder, question, history, options, on_event));
}

}  // namespace pf
