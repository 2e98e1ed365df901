// The MCP JSON-RPC messages (see messages.h): the server's reading of requests and the
// client's reading of answers, checked member by member so that no shape a peer sends throws.
#include "mcp/messages.h"

#include <algorithm>

#include "core/log.h"

namespace pf {

using nlohmann::json;

namespace {

bool is_id(const json& id) { return id.is_string() || id.is_number_integer(); }

// The member, or nullptr when object is no object or lacks it.
const json* member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

}  // namespace

json mcp_error_response(const json& id, int code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

std::string mcp_string(const json& object, const char* key, const std::string& fallback) {
  const json* m = member(object, key);
  return m && m->is_string() ? m->get<std::string>() : fallback;
}

McpIncoming read_mcp_message(const json& message) {
  McpIncoming in;
  const json* id = member(message, "id");
  json id_or_null = id && is_id(*id) ? *id : json();
  if (mcp_string(message, "jsonrpc", "") != "2.0") {
    in.error = mcp_error_response(id_or_null, kRpcInvalidRequest, "expected a JSON-RPC 2.0 message");
    return in;
  }
  const json* method = member(message, "method");
  if (!method) {
    in.kind = McpIncoming::Kind::kResponse;  // a response to us: none expected
    return in;
  }
  if (id && !is_id(*id)) {
    in.error = mcp_error_response(nullptr, kRpcInvalidRequest, "id must be a string or an integer");
    return in;
  }
  if (!method->is_string()) {
    in.error = mcp_error_response(id_or_null, kRpcInvalidRequest, "method must be a string");
    return in;
  }
  const json* params = member(message, "params");
  if (params && !params->is_object()) {
    in.error = mcp_error_response(id_or_null, kRpcInvalidParams, "params must be an object");
    return in;
  }
  in.kind = id ? McpIncoming::Kind::kRequest : McpIncoming::Kind::kNotification;
  in.id = id_or_null;
  in.method = method->get<std::string>();
  in.params = params ? *params : json::object();
  return in;
}

const std::vector<std::string>& mcp_protocol_versions() {
  static const std::vector<std::string> versions = {"2025-06-18", "2025-03-26", "2024-11-05"};
  return versions;
}

json mcp_initialize(const json& params, McpSession& session) {
  std::string asked = mcp_string(params, "protocolVersion", "");
  const auto& known = mcp_protocol_versions();
  session.protocol_version =
      std::find(known.begin(), known.end(), asked) != known.end() ? asked : known.front();
  if (const json* info = member(params, "clientInfo")) session.client = mcp_string(*info, "name", "");
  session.initialized = true;  // notifications/initialized follows; requests may come first
  log::info("mcp", "session with " + (session.client.empty() ? "a client" : session.client) +
                       ", protocol " + session.protocol_version);
  return {{"protocolVersion", session.protocol_version},
          {"capabilities", {{"tools", {{"listChanged", false}}}}},
          {"serverInfo", {{"name", "pilotfish"}, {"version", "0.1.0"}}},
          {"instructions",
           "pilotfish indexes repositories. Use search_code to find where something is "
           "implemented or documented, then read_file for the lines; grep for exact text; "
           "index_status lists the repositories."}};
}

json mcp_find_response(const json& answer, int64_t id) {
  auto ours = [id](const json& m) {
    const json* mid = member(m, "id");
    return mid && !m.contains("method") && mid->is_number_integer() && *mid == id;
  };
  if (answer.is_array()) {
    for (const json& m : answer)
      if (ours(m)) return m;
    return nullptr;
  }
  return ours(answer) ? answer : json();
}

std::string mcp_error_text(const json& error) {
  std::string dumped = error.dump(-1, ' ', false, json::error_handler_t::replace);
  return mcp_string(error, "message", dumped);
}

json mcp_model_result(const json& result) {
  std::string text;
  const json* content = member(result, "content");
  if (content && content->is_array()) {
    for (const json& c : *content) {
      std::string type = mcp_string(c, "type", "");
      const json* t = member(c, "text");
      std::string piece = type == "text" && t && t->is_string()
                              ? t->get<std::string>()
                              : "[" + (type.empty() ? std::string("content") : type) + " omitted]";
      text += (text.empty() ? "" : "\n") + piece;
    }
  }
  json out = {{"content", text}};
  const json* is_error = member(result, "isError");
  if (is_error && is_error->is_boolean() && is_error->get<bool>()) out["isError"] = true;
  if (const json* s = member(result, "structuredContent")) out["structuredContent"] = *s;
  return out;
}

std::vector<ToolSpec> mcp_tools_of(const json& list, std::string* cursor) {
  std::vector<ToolSpec> tools;
  const json* entries = member(list, "tools");
  if (entries && entries->is_array())
    for (const json& t : *entries) {
      const json* name = member(t, "name");
      if (!name || !name->is_string()) continue;
      const json* schema = member(t, "inputSchema");
      tools.push_back({name->get<std::string>(), mcp_string(t, "description", ""),
                       schema && schema->is_object() ? *schema : json{{"type", "object"}}});
    }
  *cursor = mcp_string(list, "nextCursor", "");
  return tools;
}

}  // namespace pf
