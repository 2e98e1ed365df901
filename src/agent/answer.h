// Answering a question: retrieve the best chunks, then either stream a chat model's answer
// grounded in them (with fallback over the configured chain), letting it call repository tools
// for a bounded number of steps, or, with no chat model configured, stream a retrieval-only
// answer that lists the best places. Both come out as the
// same events, the one seam between the agent and every transport (terminal, HTTP, chat).
#pragma once

#include <functional>
#include <string>
#include <vector>
#include "net/awaitable.h"

#include "core/config.h"
#include "llm/chat.h"
#include "llm/embeddings.h"
#include "search/hybrid.h"

namespace pf {

class RepositoryTools;
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
  RepositoryTools* tools = nullptr;  // null: answer from the retrieved context only
  int max_steps = 5;                 // model calls; the last one is offered no tools
  bool rewrite_query = false;        // let the chat model turn the question into a search query
  size_t max_tool_result_bytes = 32 * 1024;
  // Raised when the client has gone: the model's connection is closed and nothing more runs.
  CancelSignal* cancel = nullptr;
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
