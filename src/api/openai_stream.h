// OpenAI's chat completions API as pilotfish's answer: the agent's answer events turned into a
// `chat.completion` object, or into the `chat.completion.chunk` server-sent events and
// `data: [DONE]` that the `openai` client and tools built on it (Open WebUI, LibreChat, editors)
// read. Only the answer's text is sent: pilotfish's own tool steps run inside the answer and
// are not offered to the client as tool calls to run. Token usage is not reported (the model
// streams do not carry it to the agent).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "agent/answer.h"

namespace pf {

// The response headers of a streamed completion.
const std::vector<std::pair<std::string, std::string>>& openai_stream_headers();

// {"error": {"message", "type", "param", "code"}}, OpenAI's shape, which the `openai` client
// turns into its APIError subclasses by status; type follows the status (invalid_request_error,
// authentication_error, permission_error, not_found_error, rate_limit_error, server_error).
std::string openai_error_json(int status, const std::string& code, const std::string& message);

// GET /v1/models: {"object": "list", "data": [{"id", "object": "model", "created", "owned_by"}]}.
nlohmann::json openai_model_list(const std::vector<std::string>& ids);

// One completion, built as the answer's events arrive. One request's; one thread.
class OpenAiCompletion {
 public:
  // model: the name the client asked for, echoed in every chunk.
  explicit OpenAiCompletion(std::string model);

  // Streamed: the first chunk (the assistant role), before any text.
  std::string start();
  // Streamed: the chunks for one event (text deltas; kFinish: the finish chunk and [DONE]).
  std::string on_event(const AnswerEvent& event);
  // Streamed: the answer failed after the stream began: an error event the `openai` client
  // raises as an APIError; no [DONE] follows.
  std::string fail(const std::string& message);
  bool finished() const { return finished_; }

  // Not streamed: the whole completion once the answer finished (call on_event for every event
  // first; its return value is then not needed).
  nlohmann::json whole() const;

 private:
  std::string chunk(const nlohmann::json& delta, const nlohmann::json& finish_reason) const;

  std::string id_, model_;
  long long created_;
  std::string text_;           // the whole answer, for whole()
  std::string finish_reason_;  // OpenAI's: stop, length, content_filter
  bool finished_ = false;
};

}  // namespace pf
