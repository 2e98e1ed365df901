// The OpenAI-compatible streaming chat client: builds the chat/completions request, reads the
// server-sent events, and assembles tool calls whose name and arguments arrive in fragments
// keyed by index.
#include "llm/chat.h"

#include <map>

#include "llm/provider.h"
#include "net/http_client.h"
#include "net/sse.h"

namespace pf {
namespace {

using nlohmann::json;

json to_wire(const ChatMessage& m) {
  json j = {{"role", m.role}};
  if (!m.tool_calls.empty()) {
    j["content"] = m.content.empty() ? json(nullptr) : json(m.content);
    json calls = json::array();
    for (const auto& c : m.tool_calls)
      calls.push_back({{"id", c.id},
                       {"type", "function"},
                       {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    j["tool_calls"] = calls;
  } else {
    j["content"] = m.content;
  }
  if (!m.tool_call_id.empty()) j["tool_call_id"] = m.tool_call_id;
  return j;
}

class OpenAiChat : public ChatModel {
 public:
  OpenAiChat(std::string id, std::string model, std::string url, std::string auth, ChatOptions o)
      : id_(std::move(id)),
        model_(std::move(model)),
        url_(std::move(url)),
        auth_(std::move(auth)),
        options_(o) {}

  const std::string& model_id() const override { return id_; }

  void stream(const ChatRequest& request,
              const std::function<bool(const ChatEvent&)>& on_event) override {
    json body = {{"model", model_}, {"stream", true}};
    json messages = json::array();
    for (const auto& m : request.messages) messages.push_back(to_wire(m));
    body["messages"] = messages;
    if (!request.tools.empty()) {
      json tools = json::array();
      for (const auto& t : request.tools)
        tools.push_back(
            {{"type", "function"},
             {"function",
              {{"name", t.name}, {"description", t.description}, {"parameters", t.parameters}}}});
      body["tools"] = tools;
    }
    if (request.max_tokens > 0) body["max_tokens"] = request.max_tokens;

    HttpRequest req;
    req.url = url_;
    req.timeout = std::chrono::milliseconds(options_.idle_timeout_ms);
    req.headers = {{"Content-Type", "application/json"}, {"Accept", "text/event-stream"}};
    if (!auth_.empty()) req.headers.emplace_back("Authorization", "Bearer " + auth_);
    req.body = body.dump();

    bool started = false, cancelled = false, finished = false;
    std::string failure;
    std::map<int, ToolCall> calls;  // by the index the stream gives them
    auto emit = [&](const ChatEvent& e) {
      started = true;
      if (!on_event(e)) cancelled = true;
      return !cancelled;
    };
    SseParser sse([&](const SseEvent& e) {
      if (e.data == "[DONE]") return false;
      json chunk = json::parse(e.data, nullptr, false);
      if (!chunk.is_object()) {
        failure = "the stream holds something that is not JSON";
        return false;
      }
      if (chunk.contains("error")) {
        failure = provider_error_message(e.data);
        return false;
      }
      if (!chunk.contains("choices") || !chunk["choices"].is_array() || chunk["choices"].empty())
        return true;
      const json& choice = chunk["choices"][0];
      if (choice.contains("delta") && choice["delta"].is_object()) {
        const json& d = choice["delta"];
        if (d.contains("content") && d["content"].is_string() &&
            !d["content"].get<std::string>().empty())
          if (!emit(
                  ChatEvent{ChatEvent::Kind::kTextDelta, d["content"].get<std::string>(), {}, {}}))
            return false;
        if (d.contains("tool_calls") && d["tool_calls"].is_array()) {
          for (const json& tc : d["tool_calls"]) {
            int index = tc.value("index", 0);
            ToolCall& c = calls[index];
            if (tc.contains("id") && tc["id"].is_string()) c.id = tc["id"].get<std::string>();
            if (tc.contains("function") && tc["function"].is_object()) {
              const json& f = tc["function"];
              if (f.contains("name") && f["name"].is_string())
                c.name += f["name"].get<std::string>();
              if (f.contains("arguments") && f["arguments"].is_string())
                c.arguments += f["arguments"].get<std::string>();
            }
          }
        }
      }
      if (choice.contains("finish_reason") && choice["finish_reason"].is_string()) {
        for (auto& [index, c] : calls) {
          if (c.id.empty()) c.id = "call_" + std::to_string(index);
          if (!emit(ChatEvent{ChatEvent::Kind::kToolCall, {}, c, {}})) return false;
        }
        calls.clear();
        finished = true;
        return emit(ChatEvent{
            ChatEvent::Kind::kFinish, {}, {}, choice["finish_reason"].get<std::string>()});
      }
      return true;
    });

    HttpResponse res;
    try {
      res = http_stream(req, [&](std::string_view bytes) { return sse.feed(bytes); });
    } catch (const NetError& e) {
      if (!started) throw ModelUnavailableError("model " + id_ + ": " + e.what());
      throw Error("model " + id_ + ": the stream broke off: " + e.what());
    }
    if (res.status / 100 != 2) {
      std::string msg = "model " + id_ + ": HTTP " + std::to_string(res.status) + ": " +
                        provider_error_message(res.body);
      if (res.status == 429 || res.status == 503 || res.status == 529 || res.status == 404 ||
          res.status == 502)
        throw ModelUnavailableError(msg);
      throw Error(msg);
    }
    if (cancelled) return;
    if (!failure.empty()) throw Error("model " + id_ + ": " + failure);
    if (!finished) {
      // The server closed the stream without a finish: whatever arrived is all there is.
      if (!started)
        throw ModelUnavailableError("model " + id_ + ": the stream ended before any answer");
      throw Error("model " + id_ + ": the stream ended before the answer was finished");
    }
  }

 private:
  std::string id_, model_, url_, auth_;
  ChatOptions options_;
};

}  // namespace

std::unique_ptr<ChatModel> make_chat_model(const Config& config, const std::string& model_id,
                                           const ChatOptions& options) {
  auto [p, model] = find_provider(config, model_id);
  if (p->type != "openai")
    throw ConfigError("model \"" + model_id + "\": " + p->type +
                      " providers are not supported yet");
  return std::make_unique<OpenAiChat>(model_id, model, endpoint(*p, "chat/completions"),
                                      provider_credential(*p, model_id), options);
}

}  // namespace pf
