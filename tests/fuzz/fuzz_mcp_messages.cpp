// libFuzzer entry point: the MCP JSON-RPC messages both ways. As a server: what pilotfish makes
// of a client's message (or batch) before any tool runs, and initialize. As a client: what it
// takes from a server's answer, sent as a JSON line or as server-sent events. Nothing may throw;
// every answer must serialise.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/json.h"
#include "core/log.h"
#include "mcp/messages.h"
#include "net/sse.h"

namespace {

using nlohmann::json;

void as_server(const json& message) {
  pf::McpIncoming in = pf::read_mcp_message(message);
  switch (in.kind) {
    case pf::McpIncoming::Kind::kInvalid:
      if (!in.error["error"]["code"].is_number_integer()) __builtin_trap();
      (void)in.error.dump();
      break;
    case pf::McpIncoming::Kind::kRequest:
      if (!in.id.is_string() && !in.id.is_number_integer()) __builtin_trap();
      [[fallthrough]];
    case pf::McpIncoming::Kind::kNotification:
      if (!in.params.is_object()) __builtin_trap();
      if (in.method == "initialize") {
        pf::McpSession session;
        (void)pf::mcp_initialize(in.params, session).dump();
        if (session.protocol_version.empty()) __builtin_trap();
      }
      break;
    case pf::McpIncoming::Kind::kResponse:
      break;
  }
}

void as_client(const json& answer) {
  json r = pf::mcp_find_response(answer, 1);
  if (!r.is_null() && !r.is_object()) __builtin_trap();
  if (r.is_object() && r.contains("error")) (void)pf::mcp_error_text(r["error"]);
  const json& result = r.is_object() && r.contains("result") ? r["result"] : answer;
  (void)pf::mcp_model_result(result).dump();
  std::string cursor;
  for (const pf::ToolSpec& t : pf::mcp_tools_of(result, &cursor))
    if (!t.parameters.is_object()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = (pf::log::set_level(pf::log::Level::kOff), true);
  (void)quiet;
  std::string text(reinterpret_cast<const char*>(data), size);
  json message = pf::parse_json(text);
  if (!message.is_discarded()) {
    if (message.is_array())
      for (const json& m : message) as_server(m);
    else
      as_server(message);
    as_client(message);
  }
  pf::SseParser sse([](const pf::SseEvent& e) {
    json m = pf::parse_json(e.data);
    if (!m.is_discarded()) as_client(m);
    return true;
  });
  sse.feed(text);
  sse.feed("\n\n");
  return 0;
}
