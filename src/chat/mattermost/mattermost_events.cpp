// Mattermost frame and post parsing (see mattermost_events.h).
#include "chat/mattermost/mattermost_events.h"

#include <nlohmann/json.hpp>

#include "core/json.h"

namespace pf {
namespace {

using nlohmann::json;

std::string str(const json& j, const char* key) { return json_string(j, key); }
int64_t num(const json& j, const char* key) { return json_int(j, key); }

std::optional<json> parse_object(std::string_view text, std::string* error) {
  std::string why;
  json j = parse_json(text, &why);
  if (j.is_discarded()) {
    *error = "not JSON: " + why;
    return std::nullopt;
  }
  if (!j.is_object()) {
    *error = "not a JSON object";
    return std::nullopt;
  }
  return j;
}

std::optional<MattermostPost> post_from(const json& p, std::string* error) {
  MattermostPost out;
  out.id = str(p, "id");
  out.channel_id = str(p, "channel_id");
  out.user_id = str(p, "user_id");
  if (out.id.empty() || out.channel_id.empty() || out.user_id.empty()) {
    *error = "a post without id, channel_id or user_id";
    return std::nullopt;
  }
  out.root_id = str(p, "root_id");
  out.original_id = str(p, "original_id");
  out.message = str(p, "message");
  out.type = str(p, "type");
  out.create_at = num(p, "create_at");
  out.update_at = num(p, "update_at");
  out.edit_at = num(p, "edit_at");
  out.delete_at = num(p, "delete_at");
  if (auto props = p.find("props"); props != p.end() && props->is_object()) {
    auto fb = props->find("from_bot");
    out.from_bot = fb != props->end() && ((fb->is_string() && fb->get<std::string>() == "true") ||
                                          (fb->is_boolean() && fb->get<bool>()));
  }
  if (auto meta = p.find("metadata"); meta != p.end() && meta->is_object()) {
    if (auto files = meta->find("files"); files != meta->end() && files->is_array())
      for (const json& f : *files) {
        if (!f.is_object() || str(f, "id").empty()) continue;
        Attachment a;
        a.id = str(f, "id");
        a.name = str(f, "name");
        a.mime_type = str(f, "mime_type");
        a.type = attachment_type(a.mime_type);
        a.size = num(f, "size");
        out.files.push_back(std::move(a));
      }
  }
  if (out.files.empty())
    if (auto ids = p.find("file_ids"); ids != p.end() && ids->is_array())
      for (const json& id : *ids)
        if (id.is_string() && !id.get<std::string>().empty())
          out.files.push_back(Attachment{id.get<std::string>(), "", "", "file", 0});
  return out;
}

}  // namespace

std::optional<MattermostPost> parse_mattermost_post(std::string_view text, std::string* error) {
  std::optional<json> j = parse_object(text, error);
  if (!j) return std::nullopt;
  return post_from(*j, error);
}

MattermostFrame parse_mattermost_frame(std::string_view frame) {
  MattermostFrame out;
  std::optional<json> j = parse_object(frame, &out.error);
  if (!j) return out;
  if (j->contains("seq_reply")) {
    out.kind = MattermostFrame::Kind::kReply;
    out.seq_reply = num(*j, "seq_reply");
    out.status = str(*j, "status");
    return out;
  }
  out.event = str(*j, "event");
  if (out.event.empty()) {
    out.error = "a frame with neither event nor seq_reply";
    return out;
  }
  if (auto s = j->find("seq"); s != j->end() && s->is_number_integer()) out.seq = num(*j, "seq");
  static const json kEmpty = json::object();
  auto data_it = j->find("data");
  const json& data = data_it != j->end() && data_it->is_object() ? *data_it : kEmpty;
  auto b_it = j->find("broadcast");
  const json& broadcast = b_it != j->end() && b_it->is_object() ? *b_it : kEmpty;
  out.channel_id = str(broadcast, "channel_id");
  if (out.event == "hello") {
    out.kind = MattermostFrame::Kind::kHello;
    out.connection_id = str(data, "connection_id");
    return out;
  }
  if (out.event == "posted") {
    // data.post is a JSON document inside a string.
    std::string post_text = str(data, "post");
    if (post_text.empty()) {
      out.error = "a posted event without data.post";
      return out;
    }
    std::optional<MattermostPost> post = parse_mattermost_post(post_text, &out.error);
    if (!post) return out;
    out.post = std::move(*post);
    out.channel_type = str(data, "channel_type");
    out.sender_name = str(data, "sender_name");
    out.kind = MattermostFrame::Kind::kPosted;
    return out;
  }
  if (out.event == "reaction_added" || out.event == "reaction_removed") {
    std::string text = str(data, "reaction");
    std::optional<json> r = text.empty() ? std::nullopt : parse_object(text, &out.error);
    if (!r) {
      if (out.error.empty()) out.error = "a reaction event without data.reaction";
      return out;
    }
    out.reaction.user_id = str(*r, "user_id");
    out.reaction.post_id = str(*r, "post_id");
    out.reaction.emoji = str(*r, "emoji_name");
    out.reaction.channel_id =
        !str(*r, "channel_id").empty() ? str(*r, "channel_id") : out.channel_id;
    out.reaction.added = out.event == "reaction_added";
    if (out.reaction.user_id.empty() || out.reaction.post_id.empty() ||
        out.reaction.emoji.empty()) {
      out.error = "a reaction without user_id, post_id or emoji_name";
      return out;
    }
    out.kind = MattermostFrame::Kind::kReaction;
    return out;
  }
  out.kind = MattermostFrame::Kind::kOther;
  return out;
}

}  // namespace pf
