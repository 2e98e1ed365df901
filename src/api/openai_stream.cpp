// OpenAI chat completion objects and chunks (see openai_stream.h).
#include "api/openai_stream.h"

#include <chrono>

#include "core/text.h"
#include "net/sse.h"

namespace pf {

using json = nlohmann::json;

namespace {

long long unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The agent's finish reasons in OpenAI's words. tool-calls means the step cap ended the tool
// loop: the client sees a finished answer, not calls for it to run.
std::string openai_finish_reason(const std::string& reason) {
  if (reason == "length") return "length";
  if (reason == "content-filter") return "content_filter";
  return "stop";
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& openai_stream_headers() {
  static const std::vector<std::pair<std::string, std::string>> headers = {
      {"Content-Type", "text/event-stream"},
      {"Cache-Control", "no-cache"},
      {"Connection", "keep-alive"},
      {"x-accel-buffering", "no"}};
  return headers;
}

std::string openai_error_json(int status, const std::string& code, const std::string& message) {
  std::string type = status == 401   ? "authentication_error"
                     : status == 403 ? "permission_error"
                     : status == 404 ? "not_found_error"
                     : status == 429 ? "rate_limit_error"
                     : status >= 500 ? "server_error"
                                     : "invalid_request_error";
  json body = {{"error", {{"message", message}, {"type", type}, {"param", nullptr}, {"code", code}}}};
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

json openai_model_list(const std::vector<std::string>& ids) {
  json data = json::array();
  long long created = unix_now();
  for (const std::string& id : ids)
    data.push_back({{"id", id}, {"object", "model"}, {"created", created}, {"owned_by", "pilotfish"}});
  return {{"object", "list"}, {"data", std::move(data)}};
}

OpenAiCompletion::OpenAiCompletion(std::string model)
    : id_("chatcmpl-" + random_id(24)), model_(std::move(model)), created_(unix_now()) {}

std::string OpenAiCompletion::chunk(const json& delta, const json& finish_reason) const {
  json c = {{"id", id_},
            {"object", "chat.completion.chunk"},
            {"created", created_},
            {"model", model_},
            {"choices", {{{"index", 0}, {"delta", delta}, {"finish_reason", finish_reason}}}}};
  return sse_json_event(c);
}

std::string OpenAiCompletion::start() {
  return chunk({{"role", "assistant"}, {"content", ""}}, nullptr);
}

std::string OpenAiCompletion::on_event(const AnswerEvent& event) {
  if (finished_) return {};
  if (event.kind == AnswerEvent::Kind::kText) {
    if (event.text.empty()) return {};
    text_ += event.text;
    return chunk({{"content", event.text}}, nullptr);
  }
  if (event.kind != AnswerEvent::Kind::kFinish) return {};  // tool steps stay inside the answer
  finished_ = true;
  finish_reason_ = openai_finish_reason(event.finish_reason);
  return chunk(json::object(), finish_reason_) + "data: [DONE]\n\n";
}

std::string OpenAiCompletion::fail(const std::string& message) {
  finished_ = true;
  json e = {{"error", {{"message", message}, {"type", "server_error"}, {"param", nullptr}, {"code", "answer_failed"}}}};
  return sse_json_event(e);
}

json OpenAiCompletion::whole() const {
  json message = {{"role", "assistant"}, {"content", text_}, {"refusal", nullptr}};
  return {{"id", id_},
          {"object", "chat.completion"},
          {"created", created_},
          {"model", model_},
          {"choices",
           {{{"index", 0}, {"message", std::move(message)}, {"logprobs", nullptr},
             {"finish_reason", finish_reason_.empty() ? "stop" : finish_reason_}}}}};
}

}  // namespace pf
