// The streaming chat clients of chat/completions (OpenAI-compatible servers, Azure OpenAI's
// deployments) and Anthropic's Messages API: each builds its request, reads the server-sent
// events, and assembles tool calls whose name and arguments arrive in fragments. The Responses
// API's client is responses_chat.cpp; what they share, chat_stream.h.
#include "llm/chat.h"

#include <functional>
#include <map>

#include "core/json.h"
#include "core/log.h"
#include "core/text.h"
#include "llm/chat_stream.h"
#include "llm/local_model.h"
#include "llm/provider.h"
#include "net/http_client.h"
#include "net/run_sync.h"
#include "net/sse.h"

namespace pf {

bool is_model_unavailable(int status, std::string_view message) {
  if (status == 429 || status == 503 || status == 529 || status == 502) return true;
  const std::string m = ascii_lower(message);
  for (const char* capacity : {"capacity", "overloaded", "rate limit", "rate_limit",
                               "too many requests", "resource exhausted", "resource_exhausted",
                               "quota exceeded", "exceeded your current quota"})
    if (m.find(capacity) != std::string::npos) return true;
  // "not found" alone is any 404 (a wrong URL too): the message must be about the model.
  if (m.find("model") == std::string::npos) return false;
  for (const char* missing : {"not found", "does not exist", "not available", "unavailable",
                              "not supported"})
    if (m.find(missing) != std::string::npos) return true;
  return false;
}
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
  } else if (!m.images.empty()) {
    json parts = json::array({{{"type", "text"}, {"text", m.content}}});
    for (const ImageContent& i : m.images)
      parts.push_back({{"type", "image_url"},
                       {"image_url", {{"url", "data:" + i.media_type + ";base64," + i.base64}}}});
    j["content"] = std::move(parts);
  } else {
    j["content"] = m.content;
  }
  if (!m.tool_call_id.empty()) j["tool_call_id"] = m.tool_call_id;
  return j;
}

class OpenAiChat : public ChatModel {
 public:
  explicit OpenAiChat(WireModel m) : m_(std::move(m)) {}

  const std::string& model_id() const override { return m_.id; }

  boost::asio::awaitable<void> async_stream(
      const ChatRequest& request, const std::function<bool(const ChatEvent&)>& on_event) override {
    HttpRequest req = build_request(request);
    StreamSession session(m_.id, on_event);
    std::map<int, ToolCall> calls;  // by the index the stream gives them
    auto emit = [&](const ChatEvent& e) { return session.emit(e); };
    SseParser sse([&](const SseEvent& e) {
      if (e.data == "[DONE]") return false;
      json chunk = parse_json(e.data);
      if (!chunk.is_object()) {
        session.fail("the stream holds something that is not JSON");
        return false;
      }
      if (chunk.contains("error")) {
        std::string message = provider_error_message(e.data);
        session.fail(message, is_model_unavailable(0, message));
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
        session.finished();
        return emit(ChatEvent{
            ChatEvent::Kind::kFinish, {}, {}, choice["finish_reason"].get<std::string>()});
      }
      return true;
    });

    co_await session.run(req, sse);
  }

 private:
  // The chat/completions request; a plain function, so that its JSON is gone before the
  // coroutine waits on the stream.
  HttpRequest build_request(const ChatRequest& request) const {
    json body = {{"model", m_.model}, {"stream", true}};
    json messages = json::array();
    for (const auto& m : request.messages) messages.push_back(to_wire(m));
    body["messages"] = std::move(messages);
    if (request.tools && !request.tools->empty()) {
      json tools = json::array();
      for (const auto& t : *request.tools)
        tools.push_back(
            {{"type", "function"},
             {"function",
              {{"name", t.name}, {"description", t.description}, {"parameters", t.parameters}}}});
      body["tools"] = std::move(tools);
      if (request.tool_choice != ToolChoice::kAuto)
        body["tool_choice"] = request.tool_choice == ToolChoice::kRequired ? "required" : "none";
    }
    if (request.max_tokens > 0) body["max_tokens"] = request.max_tokens;
    if (m_.sampling.temperature) body["temperature"] = *m_.sampling.temperature;
    if (m_.sampling.top_p) body["top_p"] = *m_.sampling.top_p;
    if (m_.sampling.seed) body["seed"] = *m_.sampling.seed;
    if (m_.reasons && !request.reasoning_effort.empty())
      body["reasoning_effort"] = request.reasoning_effort;

    return sse_request(m_.url, m_.auth, m_.options, body, request);
  }

  WireModel m_;
};

// Extended thinking's budget for a reasoning effort (Anthropic's least is 1,024 tokens).
int thinking_budget(const std::string& effort) {
  if (effort == "low") return 2048;
  if (effort == "medium") return 8192;
  if (effort == "high") return 16384;
  return 32000;  // xhigh
}

// Anthropic's Messages API: the system prompt is a field of its own, tool results travel as
// user messages of tool_result blocks, and the stream names its events (content blocks open,
// grow by text or partial JSON, close; message_delta carries the stop reason).
class AnthropicChat : public ChatModel {
 public:
  AnthropicChat(std::string id, std::string model, std::string url, std::string key, bool bearer,
                ChatOptions o, Sampling sampling, bool reasons)
      : id_(std::move(id)),
        model_(std::move(model)),
        url_(std::move(url)),
        key_(std::move(key)),
        bearer_(bearer),
        options_(o),
        sampling_(sampling),
        reasons_(reasons) {}

  const std::string& model_id() const override { return id_; }

  boost::asio::awaitable<void> async_stream(
      const ChatRequest& request, const std::function<bool(const ChatEvent&)>& on_event) override {
    HttpRequest req = build_request(request);
    StreamSession session(id_, on_event);
    std::string stop_reason;
    std::map<int, ToolCall> calls;
    std::map<int, json> thinking;  // signed thinking blocks, by index: sent back with the calls
    auto emit = [&](const ChatEvent& e) { return session.emit(e); };
    SseParser sse([&](const SseEvent& e) {
      json ev = parse_json(e.data);
      if (!ev.is_object()) {
        session.fail("the stream holds something that is not JSON");
        return false;
      }
      std::string type = ev.value("type", e.event);
      if (type == "error") {
        std::string kind =
            ev.contains("error") && ev["error"].is_object() ? ev["error"].value("type", "") : "";
        std::string message = provider_error_message(e.data);
        session.fail(message, kind == "overloaded_error" || kind == "rate_limit_error" ||
                                  is_model_unavailable(0, message));
        return false;
      }
      if (type == "content_block_start" && ev.contains("content_block")) {
        const json& b = ev["content_block"];
        if (b.value("type", "") == "tool_use") {
          ToolCall& c = calls[ev.value("index", 0)];
          c.id = b.value("id", "");
          c.name = b.value("name", "");
        } else if (b.value("type", "") == "thinking") {
          thinking[ev.value("index", 0)] = {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}};
        } else if (b.value("type", "") == "redacted_thinking") {
          thinking[ev.value("index", 0)] = {{"type", "redacted_thinking"}, {"data", b.value("data", "")}};
        }
      } else if (type == "content_block_delta" && ev.contains("delta")) {
        const json& d = ev["delta"];
        std::string dt = d.value("type", "");
        if (dt == "text_delta" && !d.value("text", "").empty())
          return emit(ChatEvent{ChatEvent::Kind::kTextDelta, d.value("text", ""), {}, {}});
        if (dt == "input_json_delta")
          calls[ev.value("index", 0)].arguments += d.value("partial_json", "");
        // Reasoning is kept to be sent back, never shown.
        auto t = thinking.find(ev.value("index", 0));
        if (t != thinking.end() && dt == "thinking_delta")
          t->second["thinking"] = t->second["thinking"].get<std::string>() + d.value("thinking", "");
        if (t != thinking.end() && dt == "signature_delta")
          t->second["signature"] = t->second["signature"].get<std::string>() + d.value("signature", "");
      } else if (type == "message_delta" && ev.contains("delta") &&
                 ev["delta"].contains("stop_reason") && ev["delta"]["stop_reason"].is_string()) {
        stop_reason = ev["delta"]["stop_reason"].get<std::string>();
      } else if (type == "message_stop") {
        if (!thinking.empty() && !calls.empty()) {
          json blocks = json::array();
          for (auto& [index, b] : thinking) blocks.push_back(std::move(b));
          if (!emit(ChatEvent{ChatEvent::Kind::kReasoning, blocks.dump(), {}, {}})) return false;
        }
        for (auto& [index, c] : calls) {
          if (c.arguments.empty()) c.arguments = "{}";
          if (!emit(ChatEvent{ChatEvent::Kind::kToolCall, {}, c, {}})) return false;
        }
        session.finished();
        std::string reason = stop_reason == "tool_use"     ? "tool_calls"
                             : stop_reason == "max_tokens" ? "length"
                             : stop_reason == "end_turn"   ? "stop"
                                                           : stop_reason;
        emit(ChatEvent{ChatEvent::Kind::kFinish, {}, {}, reason.empty() ? "stop" : reason});
        return false;
      }
      return true;
    });
    co_await session.run(req, sse);
  }

 private:
  // The Messages request; a plain function, as OpenAiChat's is.
  HttpRequest build_request(const ChatRequest& request) const {
    int max_tokens = request.max_tokens > 0 ? request.max_tokens : 4096;
    // Extended thinking takes no sampling settings and no forced tool choice.
    bool think = reasons_ && !request.reasoning_effort.empty() &&
                 request.tool_choice != ToolChoice::kRequired;
    json body = {{"model", model_}, {"stream", true}};
    if (think) {
      int budget = thinking_budget(request.reasoning_effort);
      body["thinking"] = {{"type", "enabled"}, {"budget_tokens", budget}};
      max_tokens = std::max(max_tokens, budget + 4096);
    } else {
      if (sampling_.temperature) body["temperature"] = *sampling_.temperature;
      if (sampling_.top_p) body["top_p"] = *sampling_.top_p;
      if (sampling_.top_k) body["top_k"] = *sampling_.top_k;
    }
    body["max_tokens"] = max_tokens;
    std::string system;
    json messages = json::array();
    for (const auto& m : request.messages) {
      if (m.role == "system") {
        system += (system.empty() ? "" : "\n\n") + m.content;
      } else if (m.role == "tool") {
        json block = {
            {"type", "tool_result"}, {"tool_use_id", m.tool_call_id}, {"content", m.content}};
        // Consecutive tool results share one user message.
        if (!messages.empty() && messages.back()["role"] == "user" &&
            messages.back()["content"].is_array() && !messages.back()["content"].empty() &&
            messages.back()["content"][0]["type"] == "tool_result")
          messages.back()["content"].push_back(block);
        else
          messages.push_back({{"role", "user"}, {"content", json::array({block})}});
      } else if (m.role == "assistant" && !m.tool_calls.empty()) {
        json content = json::array();
        // Its thinking first, as the API requires while thinking is on.
        json blocks = m.reasoning_blocks.empty() ? json() : parse_json(m.reasoning_blocks);
        if (think && blocks.is_array())
          for (json& b : blocks) content.push_back(std::move(b));
        if (!m.content.empty()) content.push_back({{"type", "text"}, {"text", m.content}});
        for (const auto& c : m.tool_calls) {
          json input = parse_json(c.arguments.empty() ? "{}" : c.arguments);
          content.push_back({{"type", "tool_use"},
                             {"id", c.id},
                             {"name", c.name},
                             {"input", input.is_object() ? input : json::object()}});
        }
        messages.push_back({{"role", "assistant"}, {"content", content}});
      } else if (!m.images.empty()) {
        json content = json::array();
        for (const ImageContent& i : m.images)
          content.push_back({{"type", "image"},
                             {"source", {{"type", "base64"}, {"media_type", i.media_type}, {"data", i.base64}}}});
        content.push_back({{"type", "text"}, {"text", m.content}});
        messages.push_back({{"role", m.role}, {"content", std::move(content)}});
      } else {
        messages.push_back({{"role", m.role}, {"content", m.content}});
      }
    }
    if (!system.empty()) body["system"] = system;
    body["messages"] = std::move(messages);
    if (request.tools && !request.tools->empty()) {
      json tools = json::array();
      for (const auto& t : *request.tools)
        tools.push_back(
            {{"name", t.name}, {"description", t.description}, {"input_schema", t.parameters}});
      body["tools"] = std::move(tools);
      if (request.tool_choice != ToolChoice::kAuto)
        body["tool_choice"] = {
            {"type", request.tool_choice == ToolChoice::kRequired ? "any" : "none"}};
    }
    HttpRequest req;
    req.url = url_;
    req.timeout = std::chrono::milliseconds(options_.idle_timeout_ms);
    req.headers = {{"Content-Type", "application/json"},
                   {"Accept", "text/event-stream"},
                   {"anthropic-version", "2023-06-01"}};
    if (!key_.empty()) {
      if (bearer_)
        req.headers.emplace_back("Authorization", "Bearer " + key_);
      else
        req.headers.emplace_back("x-api-key", key_);
    }
    req.body = body.dump();
    if (request.sent) request.sent();
    req.cancel = request.cancel;
    req.written = request.written;
    return req;

  }

  std::string id_, model_, url_, key_;
  bool bearer_;
  ChatOptions options_;
  Sampling sampling_;
  bool reasons_;
};

std::string cut_sentence(const std::string& model_id, size_t chars) {
  return "The provider's stream for model " + model_id +
         " ended before the answer was complete (after " + std::to_string(chars) + " character" +
         (chars == 1 ? "" : "s") + ")";
}

}  // namespace

StreamCutError::StreamCutError(const std::string& model_id, size_t chars)
    : Error(cut_sentence(model_id, chars) + "; the partial answer is above."),
      model_id_(model_id),
      chars_(chars) {}

std::string StreamCutError::unshown() const {
  return cut_sentence(model_id_, chars_) + "; the partial answer was dropped. Try again.";
}

void ChatModel::stream(const ChatRequest& request,
                       const std::function<bool(const ChatEvent&)>& on_event) {
  run_sync(async_stream(request, on_event));
}

const std::vector<std::string>& reasoning_levels() {
  static const std::vector<std::string> kLevels = {"low", "medium", "high", "xhigh"};
  return kLevels;
}

namespace {

// A capability of a model: its config's flag, else what family check says of its lower-cased
// name (a router's "vendor/" prefix dropped); a local model, or one of no provider, has none.
bool capability(const Config& config, const std::string& model_id,
                std::optional<bool> ModelConfig::*flag,
                const std::function<bool(const std::string& name)>& family) {
  auto parts = split_model_id(model_id);
  if (!parts) return false;
  const ProviderConfig* p = config.provider(parts->first);
  if (!p || p->type == "local") return false;
  for (const ModelConfig& m : p->models)
    if (m.id == parts->second && m.*flag) return *(m.*flag);
  std::string name = ascii_lower(parts->second);
  size_t slash = name.rfind('/');  // "openai/o3-mini" on a router
  return family(slash == std::string::npos ? name : name.substr(slash + 1));
}

}  // namespace

bool model_reasons(const Config& config, const std::string& model_id) {
  return capability(config, model_id, &ModelConfig::reasoning, [](const std::string& m) {
    auto starts = [&](std::string_view prefix) { return m.rfind(prefix, 0) == 0; };
    auto has = [&](std::string_view part) { return m.find(part) != std::string::npos; };
    return starts("o1") || starts("o3") || starts("o4") || starts("gpt-5") ||
           has("claude-3-7-sonnet") || has("claude-sonnet-4") || has("claude-opus-4") ||
           has("claude-haiku-4") || has("deepseek-r1") || has("deepseek-reasoner") || has("qwq");
  });
}

bool model_sees_images(const Config& config, const std::string& model_id) {
  return capability(config, model_id, &ModelConfig::vision, [](const std::string& m) {
    auto starts = [&](std::string_view prefix) { return m.rfind(prefix, 0) == 0; };
    auto has = [&](std::string_view part) { return m.find(part) != std::string::npos; };
    if (has("embed") || has("audio") || has("tts") || has("whisper") || has("o1-mini") ||
        has("o3-mini") || has("gpt-3.5"))
      return false;
    return starts("gpt-4o") || starts("gpt-4.1") || starts("gpt-4-turbo") || starts("gpt-5") ||
           starts("o1") || starts("o3") || starts("o4") || starts("claude-3") ||
           has("claude-sonnet-4") || has("claude-opus-4") || has("claude-haiku-4") ||
           has("gemini") || has("llava") || has("vision") || has("-vl") || has("pixtral") ||
           has("gemma3") || has("gemma-3");
  });
}

std::unique_ptr<ChatModel> make_chat_model(const Config& config, const std::string& model_id,
                                           const ChatOptions& options) {
  auto [p, model] = find_provider(config, model_id);
  if (p->type == "local") {
    const ModelConfig& m = local_model_config(*p, model, model_id);
    return make_local_chat_model(model_id, m.path, m.context_window.value_or(0), m.sampling);
  }
  // A hosted model need not be listed in the config (the provider's list is used); then its
  // sampling is the provider's default.
  Sampling sampling;
  for (const ModelConfig& m : p->models)
    if (m.id == model) sampling = m.sampling;
  if (p->type == "anthropic") {
    // "https://api.anthropic.com" and ".../v1" both name the API root.
    std::string url = endpoint(*p, "");
    url = (url.size() >= 4 && url.compare(url.size() - 4, 4, "/v1/") == 0) ? url + "messages"
                                                                           : url + "v1/messages";
    return std::make_unique<AnthropicChat>(model_id, model, url, provider_credential(*p, model_id),
                                           p->api_key_env.empty() && !p->bearer_token_env.empty(),
                                           options, sampling, model_reasons(config, model_id));
  }
  WireModel w{model_id, wire_model(*p, model), "", provider_auth(*p, model_id), options, sampling,
              model_reasons(config, model_id)};
  if (wire_api(*p, model) == "responses") {
    w.url = model_url(*p, model, "responses");
    return make_responses_chat(std::move(w));
  }
  w.url = model_url(*p, model, "chat/completions");
  return std::make_unique<OpenAiChat>(std::move(w));
}

}  // namespace pf
