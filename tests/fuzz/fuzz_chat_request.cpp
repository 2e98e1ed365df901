// libFuzzer entry point for what arrives from outside the server: chat request bodies (the
// three shapes: AI SDK, Activepieces, OpenAI), a model's tool-call arguments and tool results as the UI stream encodes them, and cron
// expressions from the config. A body may only parse or fail with a 400 ApiError.
#include <cstddef>
#include <cstdint>
#include <string>

#include "api/api_error.h"
#include "api/chat_request.h"
#include "api/openai_stream.h"
#include "api/ui_stream.h"
#include "index/schedule.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  try {
    pf::ChatInput in = pf::parse_chat_request(input, pf::ChatLimits{});
    if (in.question.empty()) __builtin_trap();
  } catch (const pf::ApiError& e) {
    if (e.status() != 400) __builtin_trap();
  }
  try {
    pf::OpenAiChatInput in = pf::parse_openai_chat_request(input, pf::ChatLimits{});
    if (in.chat.question.empty() || in.model.empty()) __builtin_trap();
  } catch (const pf::ApiError& e) {
    if (e.status() != 400) __builtin_trap();
  }
  pf::OpenAiCompletion completion(input);
  if (completion.on_event({pf::AnswerEvent::Kind::kText, input, {}, {}, {}, {}}).empty() !=
      input.empty())
    __builtin_trap();
  pf::UiMessageStream stream("m", true);
  std::string wire = stream.start();
  pf::ToolCall call{"c", "grep", input};
  wire += stream.on_event({pf::AnswerEvent::Kind::kToolCall, input, call, {}, {}, {}});
  wire += stream.on_event({pf::AnswerEvent::Kind::kToolResult, input, call, {}, {}, {}});
  if (wire.empty()) __builtin_trap();
  try {
    (void)pf::CronSchedule::parse(input).next_after(0);
  } catch (const pf::Error&) {
  }
  return 0;
}
