// The UI message stream encoder (see ui_stream.h).
#include "api/ui_stream.h"

#include "core/text.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>

#include "core/json.h"
#include "net/sse.h"

namespace pf {

using json = nlohmann::json;

const std::vector<std::pair<std::string, std::string>>& ui_stream_headers() {
  static const std::vector<std::pair<std::string, std::string>> headers = {
      {"Content-Type", "text/event-stream"},
      {"Cache-Control", "no-cache"},
      {"Connection", "keep-alive"},
      {"x-vercel-ai-ui-message-stream", "v1"},
      {"x-accel-buffering", "no"}};
  return headers;
}

std::string new_message_id() {
  return random_id(16);
}

UiMessageStream::UiMessageStream(std::string message_id, bool send_finish_reason)
    : message_id_(std::move(message_id)), send_finish_reason_(send_finish_reason) {}

std::string UiMessageStream::start() {
  return sse_json_event({{"type", "start"}, {"messageId", message_id_}});
}

std::string UiMessageStream::close_text() {
  if (open_text_id_.empty()) return {};
  std::string out = sse_json_event({{"type", "text-end"}, {"id", open_text_id_}});
  open_text_id_.clear();
  return out;
}

std::string UiMessageStream::open_step() {
  if (step_open_) return {};
  step_open_ = true;
  return sse_json_event({{"type", "start-step"}});
}

// finish-step forgets open text ids on the client, so the text part is closed first.
std::string UiMessageStream::close_step() {
  if (!step_open_) return {};
  std::string out = close_text();
  step_open_ = false;
  return out + sse_json_event({{"type", "finish-step"}});
}

std::string UiMessageStream::on_event(const AnswerEvent& e) {
  if (finished_) return {};
  std::string out;
  switch (e.kind) {
    case AnswerEvent::Kind::kStep:
      out += close_step();
      out += open_step();
      break;
    case AnswerEvent::Kind::kText:
      if (e.text.empty()) break;
      out += open_step();
      if (open_text_id_.empty()) {
        open_text_id_ = "txt-" + std::to_string(next_text_id_++);
        out += sse_json_event({{"type", "text-start"}, {"id", open_text_id_}});
      }
      out += sse_json_event({{"type", "text-delta"}, {"id", open_text_id_}, {"delta", e.text}});
      break;
    case AnswerEvent::Kind::kToolCall: {
      out += open_step();
      out += close_text();
      out += sse_json_event(
          {{"type", "tool-input-start"}, {"toolCallId", e.call.id}, {"toolName", e.call.name}});
      std::string arguments = e.call.arguments.empty() ? "{}" : e.call.arguments;
      out += sse_json_event(
          {{"type", "tool-input-delta"}, {"toolCallId", e.call.id}, {"inputTextDelta", arguments}});
      json input = parse_json(arguments);
      if (input.is_discarded()) {
        failed_inputs_.push_back(e.call.id);
        out += sse_json_event({{"type", "tool-input-error"},
                      {"toolCallId", e.call.id},
                      {"toolName", e.call.name},
                      {"input", arguments},
                      {"errorText", "the model's tool arguments are not valid JSON"}});
      } else {
        out += sse_json_event({{"type", "tool-input-available"},
                      {"toolCallId", e.call.id},
                      {"toolName", e.call.name},
                      {"input", input}});
      }
      break;
    }
    case AnswerEvent::Kind::kToolResult: {
      if (std::find(failed_inputs_.begin(), failed_inputs_.end(), e.call.id) !=
          failed_inputs_.end())
        break;  // its part already ended in output-error
      json output = parse_json(e.text);
      if (output.is_object() && output.contains("error") && output["error"].is_string())
        out += sse_json_event({{"type", "tool-output-error"},
                      {"toolCallId", e.call.id},
                      {"errorText", output["error"].get<std::string>()}});
      else
        out += sse_json_event({{"type", "tool-output-available"},
                      {"toolCallId", e.call.id},
                      {"output", output.is_discarded() ? json(e.text) : output}});
      break;
    }
    case AnswerEvent::Kind::kFinish: {
      out += close_step();
      json finish = {{"type", "finish"}};
      // Which model answered, and which were passed over: useChat keeps it as message.metadata.
      if (!e.model.empty()) {
        finish["messageMetadata"] = {{"model", e.model}};
        if (!e.skipped_models.empty()) finish["messageMetadata"]["passedOver"] = e.skipped_models;
      }
      if (send_finish_reason_) {
        static const char* kKnown[] = {"stop",       "length", "content-filter",
                                       "tool-calls", "error",  "other"};
        std::string reason = "other";
        for (const char* k : kKnown)
          if (e.finish_reason == k) reason = k;
        finish["finishReason"] = reason;
      }
      out += sse_json_event(finish);
      out += "data: [DONE]\n\n";
      finished_ = true;
      break;
    }
  }
  return out;
}

std::string UiMessageStream::approval_request(const std::string& approval_id,
                                              const std::string& call_id) {
  if (finished_) return {};
  return sse_json_event({{"type", "tool-approval-request"}, {"approvalId", approval_id}, {"toolCallId", call_id}});
}

std::string UiMessageStream::tool_denied(const std::string& call_id) {
  if (finished_) return {};
  return sse_json_event({{"type", "tool-output-denied"}, {"toolCallId", call_id}});
}

std::string UiMessageStream::fail(const std::string& error_text) {
  if (finished_) return {};
  std::string out = close_text();
  out += open_step();  // the error sits inside a step, as streamText's stream has it
  out += sse_json_event({{"type", "error"}, {"errorText", error_text}});
  out += close_step();
  json finish = {{"type", "finish"}};
  if (send_finish_reason_) finish["finishReason"] = "error";
  out += sse_json_event(finish);
  out += "data: [DONE]\n\n";
  finished_ = true;
  return out;
}

}  // namespace pf
