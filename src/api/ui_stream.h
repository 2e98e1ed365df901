// The AI SDK's UI message stream, protocol v1 (../shared/spec/ui-message-stream.md): turns the
// agent's answer events into the `data: <json>\n\n` events an unmodified `useChat` reads.
// The order is the one the client enforces: start, then per model call a step (text parts,
// tool calls with their inputs and outputs), then finish and [DONE]. Only fields every client
// from ai 5.0.92 on accepts are sent; nothing is ever null.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "agent/answer.h"

namespace pf {

// The five response headers of the protocol.
const std::vector<std::pair<std::string, std::string>>& ui_stream_headers();

// A fresh 16-character alphanumeric id (the assistant message's).
std::string new_message_id();

class UiMessageStream {
 public:
  // send_finish_reason: off for clients older than ai 5.0.92, which reject the field.
  UiMessageStream(std::string message_id, bool send_finish_reason);

  // The `start` event.
  std::string start();
  // The events for one answer event (kFinish also ends the stream with [DONE]).
  std::string on_event(const AnswerEvent& event);
  // Ends the stream after a failure: open parts closed, an `error` event, the step and the
  // message finished with finishReason "error", then [DONE].
  std::string fail(const std::string& error_text);
  bool finished() const { return finished_; }
  // AI SDK 6 tool approval, for clients that opted in (an ai 5 client rejects these chunks):
  // the call waits for the client's answer, which comes in its next request.
  std::string approval_request(const std::string& approval_id, const std::string& call_id);
  // The client denied the call.
  std::string tool_denied(const std::string& call_id);

 private:
  std::string close_text();
  std::string open_step();
  std::string close_step();

  std::string message_id_;
  bool send_finish_reason_;
  bool step_open_ = false, finished_ = false;
  std::string open_text_id_;  // empty: no text part open
  int next_text_id_ = 0;
  std::vector<std::string> failed_inputs_;  // calls whose input was not JSON: no output follows
};

}  // namespace pf
