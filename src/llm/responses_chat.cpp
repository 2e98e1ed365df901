// The OpenAI Responses API client (wireApi "responses", on OpenAI or Azure OpenAI): the
// conversation goes as "input" items (messages, function_call and function_call_output items),
// the system prompt as "instructions", tools flat; the stream's named events give text deltas,
// function calls (complete at output_item.done) and how the response ended (completed,
// incomplete, failed). Nothing is stored at the provider (store: false): each request carries
// the whole conversation, as chat/completions does. Reasoning summaries are never text.
#include "llm/chat_stream.h"

#include <map>

#include "core/json.h"

namespace pf {

namespace {

using nlohmann::json;

json input_item(const ChatMessage& m) {
  if (m.role == "user" && !m.images.empty()) {
    json parts = json::array({{{"type", "input_text"}, {"text", m.content}}});
    for (const ImageContent& i : m.images)
      parts.push_back({{"type", "input_image"}, {"image_url", "data:" + i.media_type + ";base64," + i.base64}});
    return {{"role", "user"}, {"content", std::move(parts)}};
  }
  return {{"role", m.role}, {"content", m.content}};
}

class ResponsesChat : public ChatModel {
 public:
  explicit ResponsesChat(WireModel m) : m_(std::move(m)) {}

  const std::string& model_id() const override { return m_.id; }

  boost::asio::awaitable<void> async_stream(
      const ChatRequest& request, const std::function<bool(const ChatEvent&)>& on_event) override {
    HttpRequest req = build_request(request);
    StreamSession session(m_.id, on_event);
    bool called = false;
    SseParser sse([&](const SseEvent& e) {
      json ev = parse_json(e.data);
      if (!ev.is_object()) {
        session.fail("the stream holds something that is not JSON");
        return false;
      }
      std::string type = ev.value("type", e.event);
      if (type == "response.output_text.delta" && ev.contains("delta") && ev["delta"].is_string()) {
        std::string delta = ev["delta"];
        return delta.empty() || session.emit(ChatEvent{ChatEvent::Kind::kTextDelta, delta, {}, {}});
      }
      if (type == "response.output_item.done" && ev.contains("item") && ev["item"].is_object() &&
          ev["item"].value("type", "") == "function_call") {
        const json& item = ev["item"];
        ToolCall call{item.value("call_id", item.value("id", "")), item.value("name", ""),
                      item.value("arguments", "")};
        called = true;
        return session.emit(ChatEvent{ChatEvent::Kind::kToolCall, {}, call, {}});
      }
      if (type == "response.completed" || type == "response.incomplete") {
        const json& r = ev.contains("response") ? ev["response"] : json::object();
        std::string reason = called ? "tool_calls" : "stop";
        if (type == "response.incomplete") {
          std::string why = r.contains("incomplete_details") && r["incomplete_details"].is_object()
                                ? r["incomplete_details"].value("reason", "")
                                : "";
          reason = why == "content_filter" ? "content_filter" : "length";
        }
        session.finished();
        return session.emit(ChatEvent{ChatEvent::Kind::kFinish, {}, {}, reason});
      }
      if (type == "response.failed" || type == "error") {
        const json& err = type == "error" ? ev
                          : ev.contains("response") && ev["response"].contains("error")
                              ? ev["response"]["error"]
                              : json::object();
        std::string message = err.is_object() ? err.value("message", "the response failed")
                                              : "the response failed";
        std::string code = err.is_object() && err.contains("code") && err["code"].is_string()
                               ? err["code"].get<std::string>()
                               : "";
        session.fail(message, code == "rate_limit_exceeded" || code == "server_is_overloaded" ||
                                  is_model_unavailable(0, message));
        return false;
      }
      return true;  // created, in_progress, added items, argument deltas, reasoning summaries
    });
    co_await session.run(req, sse);
  }

 private:
  // A plain function, so that its JSON is gone before the coroutine waits on the stream.
  HttpRequest build_request(const ChatRequest& request) const {
    json body = {{"model", m_.model}, {"stream", true}, {"store", false}};
    std::string instructions;
    json input = json::array();
    for (const ChatMessage& m : request.messages) {
      if (m.role == "system") {
        instructions += (instructions.empty() ? "" : "\n\n") + m.content;
      } else if (m.role == "tool") {
        input.push_back({{"type", "function_call_output"}, {"call_id", m.tool_call_id}, {"output", m.content}});
      } else {
        if (!m.content.empty() || m.tool_calls.empty()) input.push_back(input_item(m));
        for (const ToolCall& c : m.tool_calls)
          input.push_back({{"type", "function_call"}, {"call_id", c.id}, {"name", c.name},
                           {"arguments", c.arguments.empty() ? "{}" : c.arguments}});
      }
    }
    if (!instructions.empty()) body["instructions"] = instructions;
    body["input"] = std::move(input);
    if (request.tools && !request.tools->empty()) {
      json tools = json::array();
      for (const ToolSpec& t : *request.tools)
        tools.push_back({{"type", "function"}, {"name", t.name}, {"description", t.description},
                         {"parameters", t.parameters}});
      body["tools"] = std::move(tools);
      if (request.tool_choice != ToolChoice::kAuto)
        body["tool_choice"] = request.tool_choice == ToolChoice::kRequired ? "required" : "none";
    }
    if (request.max_tokens > 0) body["max_output_tokens"] = request.max_tokens;
    if (m_.sampling.temperature) body["temperature"] = *m_.sampling.temperature;
    if (m_.sampling.top_p) body["top_p"] = *m_.sampling.top_p;
    if (m_.reasons && !request.reasoning_effort.empty())
      body["reasoning"] = {{"effort", request.reasoning_effort}};

    return sse_request(m_.url, m_.auth, m_.options, body, request);
  }

  WireModel m_;
};

}  // namespace

std::unique_ptr<ChatModel> make_responses_chat(WireModel model) {
  return std::make_unique<ResponsesChat>(std::move(model));
}

}  // namespace pf
