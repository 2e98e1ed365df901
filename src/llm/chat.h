// Chat models that stream: the request (system prompt, messages, tools) goes out, and text
// deltas, complete tool calls and the finish reason come back as events while the model writes.
// Two implementations: OpenAI-compatible servers (POST {baseUrl}/chat/completions with
// stream: true) and Anthropic's Messages API (POST {baseUrl}/v1/messages).
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>
#include "net/awaitable.h"

#include "core/cancel.h"
#include "core/config.h"
#include "core/error.h"

namespace pf {

struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // JSON text, as the model wrote it
};

// An image a user message shows the model (PNG, JPEG, GIF or WebP).
struct ImageContent {
  std::string media_type;  // "image/png", "image/jpeg", "image/gif", "image/webp"
  std::string base64;      // the file's bytes, base64-encoded
};

struct ChatMessage {
  ChatMessage() = default;
  ChatMessage(std::string role_, std::string content_, std::vector<ToolCall> tool_calls_ = {},
              std::string tool_call_id_ = {}, std::string reasoning_blocks_ = {})
      : role(std::move(role_)),
        content(std::move(content_)),
        tool_calls(std::move(tool_calls_)),
        tool_call_id(std::move(tool_call_id_)),
        reasoning_blocks(std::move(reasoning_blocks_)) {}

  std::string role;  // system, user, assistant, tool
  std::string content;
  std::vector<ToolCall> tool_calls;  // assistant messages that call tools
  std::string tool_call_id;          // tool messages: which call this answers
  // Assistant messages: the model's reasoning blocks as its API must have them back with the
  // tool calls they led to (Anthropic's signed thinking blocks, a JSON array); never shown.
  std::string reasoning_blocks;
  // User messages: images sent with the text, to a model that takes them (model_sees_images).
  std::vector<ImageContent> images;
};

struct ToolSpec {
  std::string name;
  std::string description;
  nlohmann::json parameters;  // JSON Schema of the arguments
};

// Whether the model may call one of the request's tools (kAuto), must start with a call
// (kRequired), or must answer in text (kNone).
enum class ToolChoice { kAuto, kRequired, kNone };

struct ChatRequest {
  std::vector<ChatMessage> messages;
  // Shared: every chat of a server offers the same tools, and a thousand open chats should not
  // each hold a copy of their schemas. Null or empty: no tools.
  std::shared_ptr<const std::vector<ToolSpec>> tools;
  ToolChoice tool_choice = ToolChoice::kAuto;  // sent only with tools
  int max_tokens = 0;  // 0: the server's default
  // "low", "medium", "high" or "xhigh" (reasoning_levels()); empty: the provider's default. Sent
  // only to a model that reasons (model_reasons), in its API's terms: OpenAI's
  // reasoning_effort, Anthropic's extended-thinking budget; a local model ignores it.
  std::string reasoning_effort;
  // Raised when nobody wants the answer any more: the model's connection is closed at once and
  // the stream ends quietly. Only for async_stream, on the thread that runs it.
  CancelSignal* cancel = nullptr;
  // Hooks for the owner of large messages (an answer's system prompt holds the retrieved code),
  // both called on the thread that runs async_stream: `sent` once the model's request body is
  // built, after which async_stream reads no message again (the owner may empty messages then);
  // `prepare` is awaited by async_stream_with_fallback before each attempt (refill them).
  std::function<void()> sent;
  std::function<boost::asio::awaitable<void>()> prepare;
  // Called once the model has the request: written to its connection (a local model: its
  // prompt built). On the thread that runs async_stream; again for each attempt.
  std::function<void()> written;
};

struct ChatEvent {
  // kReasoning: the step's reasoning blocks (ChatMessage::reasoning_blocks), before its calls.
  enum class Kind { kTextDelta, kToolCall, kFinish, kReasoning } kind;
  std::string text;           // kTextDelta; kReasoning: the blocks
  ToolCall call;              // kToolCall: complete, arguments assembled
  std::string finish_reason;  // kFinish: stop, tool_calls, length, ...
};

// The model cannot serve now (rate limit, overload, unknown model) and nothing was streamed yet:
// the caller may try a fallback model.
class ModelUnavailableError : public Error {
 public:
  explicit ModelUnavailableError(const std::string& message, int retry_after_ms = -1)
      : Error(message), retry_after_ms_(retry_after_ms) {}
  // What the provider asked for in Retry-After, or -1.
  int retry_after_ms() const { return retry_after_ms_; }

 private:
  int retry_after_ms_;
};

// Whether a provider's error means the model cannot serve now, so the next model of a fallback
// chain may: HTTP 429, 503, 529 (overloaded) and 502, or a message about capacity, overload,
// rate limits, too many requests, exhausted resources or quotas, or the model not being found,
// available or supported (an HTTP 400 that says so). Another status, such as a 404 or a 400
// that says nothing of the kind, is final. status 0: an error event inside a stream.
bool is_model_unavailable(int status, std::string_view message);

// The provider's stream ended (the connection broke or closed) after part of the answer had
// been streamed. what() says so in a sentence for the person reading the partial answer; the
// technical cause (request, socket error) goes to the log only.
class StreamCutError : public Error {
 public:
  StreamCutError(const std::string& model_id, size_t chars);
  size_t chars() const { return chars_; }
  // The sentence for a client that was not shown the partial answer (a non-streaming reply).
  std::string unshown() const;

 private:
  std::string model_id_;
  size_t chars_;
};

class ChatModel {
 public:
  virtual ~ChatModel() = default;
  virtual const std::string& model_id() const = 0;
  // Streams the answer; on_event returns false to cancel (the request is closed). Throws
  // ModelUnavailableError before the first event for capacity, rate-limit and not-found errors,
  // StreamCutError when the stream ends early after some text, pf::Error (naming the model) for
  // anything else.
  virtual boost::asio::awaitable<void> async_stream(
      const ChatRequest& request, const std::function<bool(const ChatEvent&)>& on_event) = 0;
  // The same, blocking the calling thread.
  void stream(const ChatRequest& request, const std::function<bool(const ChatEvent&)>& on_event);
};

struct ChatOptions {
  int idle_timeout_ms = 120000;  // the longest wait for the next piece of the stream
  // Fallback: when every model of the chain was unavailable, wait and go through it again, at
  // most this many times (the wait doubles from retry_backoff_ms, or is what Retry-After asked,
  // capped at max_retry_wait_ms).
  int chain_retries = 1;
  int retry_backoff_ms = 1000;
  int max_retry_wait_ms = 10000;
};

// The reasoning efforts a request may ask for, lowest first.
const std::vector<std::string>& reasoning_levels();

// Whether a model ("provider:model") takes a reasoning effort: its config's "reasoning", else
// the known reasoning families (OpenAI o1/o3/o4 and gpt-5, Claude 3.7 Sonnet and the Claude 4
// models, DeepSeek R1, QwQ); a local model never does.
bool model_reasons(const Config& config, const std::string& model_id);

// Whether a model takes images: its config's "vision", else the known families that do (GPT-4o,
// GPT-4.1, GPT-4 Turbo, GPT-5, o1, o3, o4-mini, Claude 3 and later, Gemini, Llama 3.2 Vision,
// LLaVA, Qwen-VL, Pixtral, Gemma 3); a local model never does.
bool model_sees_images(const Config& config, const std::string& model_id);

// Throws pf::ConfigError for an unknown provider or a credential variable that is not set.
std::unique_ptr<ChatModel> make_chat_model(const Config& config, const std::string& model_id,
                                           const ChatOptions& options = {});

}  // namespace pf
