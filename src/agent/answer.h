// Answering a question: retrieve the best chunks, then either stream a chat model's answer
// grounded in them (with fallback over the configured chain), letting it call repository tools
// for a bounded number of steps, or, with no chat model configured, stream a retrieval-only
// answer that lists the best places. Both come out as the
// same events, the one seam between the agent and every transport (terminal, HTTP, chat).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>
#include "net/awaitable.h"

#include "core/config.h"
#include "core/trace.h"
#include "llm/chat.h"
#include "llm/embeddings.h"
#include "net/async_gate.h"
#include "search/hybrid.h"

namespace pf {

class ToolRegistry;
class Workspace;

struct AnswerEvent {
  // kStep opens each model call (a step: text, then perhaps tool calls and their results).
  enum class Kind { kStep, kText, kToolCall, kToolResult, kFinish } kind;
  std::string text;   // kText: a delta of the answer; kToolCall: arguments; kToolResult: JSON
  ToolCall call;      // kToolCall, kToolResult: which call
  std::string model;  // kFinish: the model that answered, or "retrieval-only"
  std::vector<std::string> skipped_models;  // kFinish: models passed over by fallback
  // kFinish: stop, length, content-filter, tool-calls (the step cap ended the loop) or other.
  std::string finish_reason;
};

struct AnswerOptions {
  int context_chunks = 8;
  HybridOptions search;    // retrieval settings (mode, fusion, per-file cap)
  std::string chat_model;  // "provider:model"; empty: the config's default
  ChatOptions chat;
  // The tools the model may call (each call runs on the workspace); null: answer from the
  // retrieved context only. Must outlive the answer.
  const ToolRegistry* tools = nullptr;
  int max_steps = 5;           // model calls; the last one is offered no tools
  std::string reasoning_effort;  // ChatRequest::reasoning_effort of every model call
  bool rewrite_query = false;  // let the chat model turn the question into a search query
  // Images shown with the question (the model must take them: model_sees_images).
  std::vector<ImageContent> question_images;
  // Appended to the system prompt (the bridge's channel context and AGENTS.md); may be empty.
  std::string instructions;
  // Raised when the client has gone: the model's connection is closed and nothing more runs.
  CancelSignal* cancel = nullptr;
  // Steering: asked at every step boundary for messages the user sent meanwhile; they join the
  // conversation as user messages before the next model call, and one more step is taken for
  // them when the model had finished. Empty: none. Called on the answer's thread.
  std::function<std::vector<std::string>()> steer;
  // Autopilot: asked when the model has finished (no tool calls, no steering) with that step's
  // text; a message returned joins as a user message and one more step is taken for it (within
  // max_steps), nullopt ends the answer. Empty: the answer ends. Called on the answer's thread.
  std::function<std::optional<std::string>(const std::string& text)> keep_going;
  // The pending-permission seam: awaited before each tool call on the answer's thread. nullopt
  // runs the tool; a JSON value is the call's result instead (a refusal the model can read).
  // It may wait for a person's answer, and must return once cancel is raised.
  std::function<boost::asio::awaitable<std::optional<nlohmann::json>>(const ToolCall&)>
      before_tool;
  // Told of each call that ran (before_tool let it through) with its result (JSON text), on the
  // answer's thread: the audit trail's end of a call (policy/audit.h). Empty: nobody.
  std::function<void(const ToolCall& call, const std::string& result)> after_tool;
  // Tracing (core/trace.h): the span this answer's spans go under (a chat turn, an HTTP
  // request; empty: a trace of their own), and what the caller adds to a tool call's span (the
  // permission decision and the rule behind it), on the answer's thread. Empty: nothing.
  TraceContext trace;
  std::function<void(const ToolCall& call, Span& span)> annotate_tool;
  // Set (by before_tool) when a call must wait for the client's approval in its next request:
  // the call gets no result, the rest of the step is not run, and the answer finishes with
  // finish reason tool-calls. Null: never. Must outlive the answer.
  const bool* awaiting_approval = nullptr;
  // Messages after the question and before the first model call: an assistant message's tool
  // calls with their results, when a client continues it (tool approval).
  std::vector<ChatMessage> resume;
  // A slot of a gate that bounds the answers between retrieval and their first model request
  // written (see net/async_gate.h), taken by the caller before it starts the answer (so that a
  // queued answer holds no frame of its own yet). The answer takes it over and gives it back
  // once that request is sent, or when it ends. Null: no bound.
  AsyncGate::Permit* setup = nullptr;
};

// on_event returns false to cancel (a closed client): the model request is closed too.
// Throws pf::Error when every model of the chain failed (perhaps after some text was streamed).
boost::asio::awaitable<void> async_answer_question(
    Workspace& workspace, const Config& config, Embedder* embedder, const std::string& question,
    const std::vector<ChatMessage>& history, const AnswerOptions& options,
    const std::function<bool(const AnswerEvent&)>& on_event);

// The same, blocking, with the work inline on one store (the command line).
void answer_question(Store& store, const Config& config, Embedder* embedder,
                     const std::string& question, const std::vector<ChatMessage>& history,
                     const AnswerOptions& options,
                     const std::function<bool(const AnswerEvent&)>& on_event);

}  // namespace pf
