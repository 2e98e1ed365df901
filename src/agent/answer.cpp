// The answer pipeline (see answer.h).
#include "agent/answer.h"

#include <sstream>

#include "agent/prompt.h"
#include "agent/tools.h"
#include "llm/fallback.h"

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

}  // namespace

void answer_question(Store& store, const Config& config, Embedder* embedder,
                     const std::string& question, const std::vector<ChatMessage>& history,
                     const AnswerOptions& options,
                     const std::function<bool(const AnswerEvent&)>& on_event) {
  HybridOptions search = options.search;
  search.base.limit = options.context_chunks;
  std::vector<SearchResult> hits = hybrid_search(store, question, search, embedder);

  std::string chat_model =
      !options.chat_model.empty() ? options.chat_model : config.defaults.chat_model;
  if (chat_model.empty()) {
    // Streamed like any answer, in pieces, so every transport handles both the same way.
    std::string text = retrieval_only_answer(question, hits);
    for (size_t at = 0; at < text.size(); at += 256)
      if (!on_event(AnswerEvent{AnswerEvent::Kind::kText, text.substr(at, 256), {}, {}, {}}))
        return;
    on_event(AnswerEvent{AnswerEvent::Kind::kFinish, {}, {}, "retrieval-only", {}});
    return;
  }

  ChatRequest request;
  request.messages.push_back(ChatMessage{"system", system_prompt(hits), {}, {}});
  for (const ChatMessage& m : history) request.messages.push_back(m);
  request.messages.push_back(ChatMessage{"user", question, {}, {}});
  std::vector<std::string> chain = {chat_model};
  for (const auto& f : config.defaults.fallback_models) chain.push_back(f);
  bool cancelled = false;
  std::vector<std::string> skipped;
  std::string answered_by;
  for (int step = 1; step <= std::max(1, options.max_steps) && !cancelled; ++step) {
    bool offer_tools = options.tools && step < options.max_steps;
    request.tools = offer_tools ? options.tools->specs() : std::vector<ToolSpec>{};
    std::string text;
    std::vector<ToolCall> calls;
    FallbackResult used = stream_with_fallback(
        config, chain, request,
        [&](const ChatEvent& e) {
          if (e.kind == ChatEvent::Kind::kToolCall) calls.push_back(e.call);
          if (e.kind != ChatEvent::Kind::kTextDelta) return true;
          text += e.text;
          if (!on_event(AnswerEvent{AnswerEvent::Kind::kText, e.text, {}, {}, {}}))
            cancelled = true;
          return !cancelled;
        },
        options.chat);
    answered_by = used.model_id;
    skipped.insert(skipped.end(), used.skipped.begin(), used.skipped.end());
    // Later steps go to the model that answered: the conversation is its own now.
    chain = {used.model_id};
    if (cancelled || calls.empty() || !offer_tools) break;
    request.messages.push_back(ChatMessage{"assistant", text, calls, {}});
    for (const ToolCall& call : calls) {
      if (!on_event(AnswerEvent{AnswerEvent::Kind::kToolCall, call.arguments, call, {}, {}})) {
        cancelled = true;
        break;
      }
      std::string result = options.tools->call(call.name, call.arguments).dump();
      if (result.size() > options.max_tool_result_bytes)
        result =
            nlohmann::json{{"error", "the tool's output was too large (" +
                                         std::to_string(result.size()) + " bytes); ask for less"}}
                .dump();
      if (!on_event(AnswerEvent{AnswerEvent::Kind::kToolResult, result, call, {}, {}})) {
        cancelled = true;
        break;
      }
      request.messages.push_back(ChatMessage{"tool", result, {}, call.id});
    }
  }
  if (!cancelled) on_event(AnswerEvent{AnswerEvent::Kind::kFinish, {}, {}, answered_by, skipped});
}

}  // namespace pf
