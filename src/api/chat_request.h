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

struct ChatInput {
  std::string question;
  std::vector<ChatMessage> history;  // user and assistant text, oldest first
  std::string model;                 // as the client named it (fuzzy), or empty: the default
};

// Throws ApiError (400 with a code: invalid_json, invalid_body, message_too_long,
// history_too_long) naming the field that is wrong.
ChatInput parse_chat_request(std::string_view body, const ChatLimits& limits);

}  // namespace pf
