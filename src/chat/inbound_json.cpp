// InboundMessage <-> JSON (see inbound_json.h).
#include "chat/inbound_json.h"

#include "core/json.h"

namespace pf {

using nlohmann::json;

std::string inbound_to_json(const InboundMessage& m) {
  json files = json::array();
  for (const Attachment& a : m.attachments)
    files.push_back({{"id", a.id},
                     {"name", a.name},
                     {"mime", a.mime_type},
                     {"type", a.type},
                     {"size", a.size},
                     {"url", a.url}});
  json j = {{"platform", m.platform},     {"bot", m.bot},
            {"channel", m.channel_id},    {"user", m.user_id},
            {"username", m.username},     {"text", m.text},
            {"post", m.post_id},          {"root", m.thread_root_id},
            {"mentions", m.mentions_bot}, {"dm", m.is_dm},
            {"at", m.created_at_ms},      {"files", files}};
  return j.dump();
}

std::optional<InboundMessage> inbound_from_json(const std::string& text) {
  json j = parse_json(text);
  if (!j.is_object() || !j.contains("post") || !j["post"].is_string()) return std::nullopt;
  try {
    InboundMessage m;
    m.platform = j.value("platform", "");
    m.bot = j.value("bot", "");
    m.channel_id = j.value("channel", "");
    m.user_id = j.value("user", "");
    m.username = j.value("username", "");
    m.text = j.value("text", "");
    m.post_id = j.value("post", "");
    m.thread_root_id = j.value("root", "");
    m.mentions_bot = j.value("mentions", false);
    m.is_dm = j.value("dm", false);
    m.created_at_ms = j.value("at", int64_t{0});
    if (j.contains("files") && j["files"].is_array())
      for (const json& f : j["files"])
        m.attachments.push_back({f.value("id", ""), f.value("name", ""), f.value("mime", ""),
                                 f.value("type", "file"), f.value("size", int64_t{0}),
                                 f.value("url", "")});
    return m;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

}  // namespace pf
