// What a chat request asks, from either body the chat endpoint accepts: the AI SDK's default
// {id, messages: UIMessage[], trigger?, ...} (an unmodified useChat) or the Activepieces web
// client's {message, conversationHistory, modelId?, provider?}. A body with `messages` (an
// array) is the first; one with `message` (a string) the second; neither or both is an error.
// Limits keep one request from holding the model hostage: the question and each history entry
// are capped in characters, and the history in messages.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "llm/chat.h"

namespace pf {

struct ChatLimits {
  size_t max_message_chars = 8000;   // Unicode code points
  size_t max_history_messages = 50;  // earlier messages
};

// A tool call of the assistant message a client continues (AI SDK 6 tool approval): the last
// message is the assistant's, with the client's answer to an approval request in it.
struct ResumedToolCall {
  ToolCall call;        // id, name, arguments (the input as JSON text)
  std::string state;    // the UI part's: output-available, output-error, output-denied,
                        // approval-responded, ...
  std::string output;   // output-available: the output as JSON text; output-error: the error
  std::string approval_id;  // approval-responded
  bool approved = false;
  std::string reason;
};

struct ChatInput {
  std::string question;
  std::vector<ChatMessage> history;  // user and assistant text, oldest first
  std::string model;                 // as the client named it (fuzzy), or empty: the default
  // The client asked for tool approvals (body "toolApprovals": true) or sent approval parts.
  bool approvals = false;
  // The client answers ask_user as a client-side tool (body "askUser": true).
  bool ask_user = false;
  // Continuing an assistant message: its id, its text so far and its tool calls, in order.
  std::string resumed_message_id;
  std::string resumed_text;
  std::vector<ResumedToolCall> resumed;
};

// A continuation is a body whose last message is the assistant's and holds an approval-responded
// tool part, or an ask_user part with the client's output; the question is then the user
// message before it.
// Throws ApiError (400 with a code: invalid_json, invalid_body, message_too_long,
// history_too_long) naming the field that is wrong.
ChatInput parse_chat_request(std::string_view body, const ChatLimits& limits);

// An OpenAI chat completions body ({model, messages, stream?, ...}): the last message is the
// question (text, or text parts), earlier user and assistant messages the history; system and
// developer messages are not followed (the server owns the system prompt); sampling options are
// accepted and left to the configured model. Throws ApiError 400 (invalid_json, invalid_body,
// message_too_long, history_too_long, unsupported_parameter for n > 1 or the client's tools).
struct OpenAiChatInput {
  ChatInput chat;     // question and history
  std::string model;  // as sent: "pilotfish" or "pilotfish:<repository>" (checked by the route)
  bool stream = false;
};
OpenAiChatInput parse_openai_chat_request(std::string_view body, const ChatLimits& limits);

}  // namespace pf
