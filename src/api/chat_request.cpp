// Chat request bodies (see chat_request.h).
#include "api/chat_request.h"

#include <nlohmann/json.hpp>

#include "agent/ask_user.h"
#include "api/api_error.h"
#include "core/json.h"
#include "core/text.h"

namespace pf {
namespace {

using json = nlohmann::json;

[[noreturn]] void bad(const std::string& code, const std::string& message) {
  throw ApiError(400, code, message);
}

void check_length(const std::string& text, const std::string& field, const ChatLimits& limits) {
  if (code_points(text) > limits.max_message_chars)
    bad("message_too_long",
        field + " is longer than " + std::to_string(limits.max_message_chars) + " characters");
}

std::string optional_string(const json& body, const char* key) {
  if (!body.contains(key) || body[key].is_null()) return {};
  if (!body[key].is_string()) bad("invalid_body", std::string(key) + " must be a string");
  return body[key].get<std::string>();
}

// A string member, or fallback when o is no object or the member is absent or no string. Not
// json::value(), which throws type_error for a member of another type (found by fuzz_chat_request).
std::string string_member(const json& o, const char* key, const char* fallback) {
  if (!o.is_object()) return fallback;
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : fallback;
}

// A UIMessage's text: its text parts joined (tool, reasoning, file and data parts are the
// client's record of earlier work, not something the user said).
std::string ui_message_text(const json& m, const std::string& at) {
  if (!m.contains("parts") || !m["parts"].is_array()) {
    // Older clients sent {role, content}; take it rather than refuse.
    if (m.contains("content") && m["content"].is_string()) return m["content"].get<std::string>();
    bad("invalid_body", at + ".parts must be an array");
  }
  std::string text;
  for (const json& part : m["parts"]) {
    if (!part.is_object() || !part.contains("type") || !part["type"].is_string())
      bad("invalid_body", at + ".parts: each part needs a type");
    if (part["type"] != "text") continue;
    if (!part.contains("text") || !part["text"].is_string())
      bad("invalid_body", at + ".parts: a text part needs text (a string)");
    if (!text.empty()) text += "\n";
    text += part["text"].get<std::string>();
  }
  return text;
}

// The tool parts of a UI message ("tool-<name>" or "dynamic-tool"), as calls to resume.
std::vector<ResumedToolCall> tool_parts(const json& m, const std::string& at, bool* approval_seen) {
  std::vector<ResumedToolCall> out;
  if (!m.contains("parts") || !m["parts"].is_array()) return out;
  for (const json& part : m["parts"]) {
    std::string type = string_member(part, "type", "");
    if (type != "dynamic-tool" && type.rfind("tool-", 0) != 0) continue;
    ResumedToolCall r;
    r.call.name = type == "dynamic-tool" ? (part.contains("toolName") && part["toolName"].is_string()
                                                ? part["toolName"].get<std::string>() : "")
                                         : type.substr(5);
    if (!part.contains("toolCallId") || !part["toolCallId"].is_string() || r.call.name.empty())
      bad("invalid_body", at + ": a tool part needs toolCallId and a tool name");
    r.call.id = part["toolCallId"];
    r.call.arguments = part.contains("input") ? part["input"].dump() : "{}";
    r.state = string_member(part, "state", "");
    if (r.state == "output-available") r.output = part.contains("output") ? part["output"].dump() : "null";
    if (r.state == "output-error") r.output = string_member(part, "errorText", "error");
    if (r.state == "approval-requested" || r.state == "approval-responded") *approval_seen = true;
    if (r.state == "approval-responded") {
      const json& a = part.contains("approval") ? part["approval"] : json();
      if (!a.is_object() || !a.contains("id") || !a["id"].is_string() || !a.contains("approved") ||
          !a["approved"].is_boolean())
        bad("invalid_body", at + ": an approval-responded part needs approval.id and approval.approved");
      r.approval_id = a["id"];
      r.approved = a["approved"];
      if (a.contains("reason") && a["reason"].is_string()) r.reason = a["reason"];
    }
    out.push_back(std::move(r));
  }
  return out;
}

ChatInput from_ui_messages(const json& body, const ChatLimits& limits) {
  const json& messages = body["messages"];
  if (messages.empty()) bad("invalid_body", "messages is empty");
  ChatInput in;
  size_t count = messages.size();
  // A continuation: the assistant's message with an approval answer ends the list.
  const json& last = messages.back();
  if (last.is_object() && string_member(last, "role", "") == "assistant" && count >= 2) {
    std::vector<ResumedToolCall> calls = tool_parts(last, "messages[" + std::to_string(count - 1) + "]", &in.approvals);
    bool answered = false;
    for (const auto& c : calls)
      answered = answered || c.state == "approval-responded" ||
                 (c.call.name == kAskUserTool && (c.state == "output-available" || c.state == "output-error"));
    if (answered) {
      in.resumed = std::move(calls);
      in.resumed_message_id = string_member(last, "id", "");
      in.resumed_text = ui_message_text(last, "messages[" + std::to_string(count - 1) + "]");
      --count;
    }
  }
  for (size_t i = 0; i < count; ++i) {
    std::string at = "messages[" + std::to_string(i) + "]";
    const json& m = messages[i];
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
      bad("invalid_body", at + " needs a role");
    std::string role = m["role"].get<std::string>();
    if (role != "user" && role != "assistant" && role != "system")
      bad("invalid_body", at + ".role must be user, assistant or system");
    std::string text = ui_message_text(m, at);
    if (role == "assistant") tool_parts(m, at, &in.approvals);
    if (i + 1 == count) {
      if (role != "user") bad("invalid_body", "the last message must be the user's");
      if (text.empty()) bad("invalid_body", "the last message has no text");
      check_length(text, "the message", limits);
      in.question = std::move(text);
    } else if (role != "system" && !text.empty()) {
      // A client's system messages are not ours to follow: the server owns the system prompt.
      check_length(text, at, limits);
      in.history.push_back(ChatMessage{role, std::move(text), {}, {}});
    }
  }
  if (in.history.size() > limits.max_history_messages)
    bad("history_too_long", "the conversation has " + std::to_string(in.history.size()) +
                                " earlier messages; at most " +
                                std::to_string(limits.max_history_messages) + " are accepted");
  return in;
}

ChatInput from_activepieces(const json& body, const ChatLimits& limits) {
  ChatInput in;
  in.question = body["message"].get<std::string>();
  if (in.question.empty()) bad("invalid_body", "message must not be empty");
  check_length(in.question, "message", limits);
  if (body.contains("conversationHistory") && !body["conversationHistory"].is_null()) {
    const json& h = body["conversationHistory"];
    if (!h.is_array()) bad("invalid_body", "conversationHistory must be an array");
    if (h.size() > limits.max_history_messages)
      bad("history_too_long", "conversationHistory has " + std::to_string(h.size()) +
                                  " messages; at most " +
                                  std::to_string(limits.max_history_messages) + " are accepted");
    for (size_t i = 0; i < h.size(); ++i) {
      std::string at = "conversationHistory[" + std::to_string(i) + "]";
      const json& m = h[i];
      if (!m.is_object() || !m.contains("role") || !m["role"].is_string() ||
          (m["role"] != "user" && m["role"] != "assistant"))
        bad("invalid_body", at + ".role must be user or assistant");
      if (!m.contains("content") || !m["content"].is_string())
        bad("invalid_body", at + ".content must be a string");
      std::string content = m["content"].get<std::string>();
      check_length(content, at + ".content", limits);
      in.history.push_back(ChatMessage{m["role"].get<std::string>(), std::move(content), {}, {}});
    }
  }
  return in;
}

// An OpenAI message's content: a string, or an array of parts of which only text is taken.
std::string openai_content(const json& m, const std::string& at) {
  if (!m.contains("content") || m["content"].is_null()) return {};
  const json& c = m["content"];
  if (c.is_string()) return c.get<std::string>();
  if (!c.is_array()) bad("invalid_body", at + ".content must be a string or an array of parts");
  std::string text;
  for (const json& part : c) {
    if (!part.is_object() || string_member(part, "type", "") != "text" || !part.contains("text") ||
        !part["text"].is_string())
      bad("invalid_body", at + ".content: only text parts ({\"type\": \"text\", \"text\": ...}) are accepted");
    if (!text.empty()) text += "\n";
    text += part["text"].get<std::string>();
  }
  return text;
}

// What pilotfish cannot do as a model: several choices, the client's own tools.
void refuse_unsupported(const json& body) {
  if (body.contains("n") && !body["n"].is_null() && body["n"] != 1)
    bad("unsupported_parameter", "n must be 1: pilotfish gives one answer");
  if (body.contains("tools") && body["tools"].is_array() && !body["tools"].empty())
    bad("unsupported_parameter",
        "tools: pilotfish calls its own repository tools; a client's tools are not supported");
}

}  // namespace

OpenAiChatInput parse_openai_chat_request(std::string_view text, const ChatLimits& limits) {
  std::string why;
  json body = parse_json(text, &why);
  if (body.is_discarded()) bad("invalid_json", "the request body is " + why);
  if (!body.is_object()) bad("invalid_body", "the request body must be a JSON object");
  OpenAiChatInput out;
  if (!body.contains("model") || !body["model"].is_string() || body["model"].get<std::string>().empty())
    bad("invalid_body", "model is required (\"pilotfish\" or \"pilotfish:<repository>\")");
  out.model = body["model"];
  if (body.contains("stream") && !body["stream"].is_null()) {
    if (!body["stream"].is_boolean()) bad("invalid_body", "stream must be true or false");
    out.stream = body["stream"];
  }
  refuse_unsupported(body);
  if (!body.contains("messages") || !body["messages"].is_array() || body["messages"].empty())
    bad("invalid_body", "messages must be a non-empty array");
  const json& messages = body["messages"];
  for (size_t i = 0; i < messages.size(); ++i) {
    std::string at = "messages[" + std::to_string(i) + "]";
    const json& m = messages[i];
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
      bad("invalid_body", at + " needs a role");
    std::string role = m["role"];
    if (role != "user" && role != "assistant" && role != "system" && role != "developer")
      bad("invalid_body", at + ".role must be system, developer, user or assistant");
    std::string content = openai_content(m, at);
    if (i + 1 == messages.size()) {
      if (role != "user") bad("invalid_body", "the last message must be the user's");
      if (content.empty()) bad("invalid_body", "the last message has no text");
      check_length(content, "the message", limits);
      out.chat.question = std::move(content);
    } else if ((role == "user" || role == "assistant") && !content.empty()) {
      // As for the other bodies, the server owns the system prompt: system and developer
      // messages are not followed.
      check_length(content, at + ".content", limits);
      out.chat.history.push_back(ChatMessage{role, std::move(content), {}, {}});
    }
  }
  if (out.chat.history.size() > limits.max_history_messages)
    bad("history_too_long", "the conversation has " + std::to_string(out.chat.history.size()) +
                                " earlier messages; at most " +
                                std::to_string(limits.max_history_messages) + " are accepted");
  return out;
}

ChatInput parse_chat_request(std::string_view text, const ChatLimits& limits) {
  std::string why;
  json body = parse_json(text, &why);
  if (body.is_discarded()) bad("invalid_json", "the request body is " + why);
  if (!body.is_object()) bad("invalid_body", "the request body must be a JSON object");
  bool ui = body.contains("messages");
  bool ap = body.contains("message");
  if (ui && ap)
    bad("invalid_body", "give either messages (AI SDK) or message (Activepieces), not both");
  if (!ui && !ap)
    bad("invalid_body", "give messages (an array of UI messages) or message (a string)");
  if (ui && !body["messages"].is_array()) bad("invalid_body", "messages must be an array");
  if (ap && !body["message"].is_string()) bad("invalid_body", "message must be a string");
  ChatInput in = ui ? from_ui_messages(body, limits) : from_activepieces(body, limits);
  // The Activepieces client names a model by modelId, scoped by provider when given; an AI SDK
  // front end may add either through its transport's body.
  std::string model = optional_string(body, "modelId");
  if (model.empty()) model = optional_string(body, "model");
  std::string provider = optional_string(body, "provider");
  if (!model.empty() && !provider.empty() && model.find(':') == std::string::npos)
    model = provider + ":" + model;
  in.model = model;
  if (body.contains("toolApprovals") && body["toolApprovals"].is_boolean() && body["toolApprovals"])
    in.approvals = true;
  if (body.contains("askUser") && body["askUser"].is_boolean() && body["askUser"]) in.ask_user = true;
  return in;
}

}  // namespace pf
