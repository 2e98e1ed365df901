// Socket Mode frame, Events API and message parsing, and the seam's types made from them (see
// slack_events.h).
#include "chat/slack/slack_events.h"

#include <cinttypes>
#include <cstdio>

#include "core/json.h"

namespace pf {
namespace {

using nlohmann::json;

const json& empty_object() {
  static const json kEmpty = json::object();
  return kEmpty;
}

const json& member(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : empty_object();
}

std::string str(const json& j, const char* key) { return json_string(j, key); }
int64_t num(const json& j, const char* key) { return json_int(j, key); }

bool boolean(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

std::vector<SlackFile> files_of(const json& m) {
  std::vector<SlackFile> out;
  auto files = m.find("files");
  if (files == m.end() || !files->is_array()) return out;
  for (const json& f : *files) {
    if (!f.is_object() || str(f, "id").empty()) continue;
    SlackFile file{str(f, "id"), str(f, "name"), str(f, "mimetype"), str(f, "url_private_download"),
                   num(f, "size")};
    if (file.url_private_download.empty()) file.url_private_download = str(f, "url_private");
    out.push_back(std::move(file));
  }
  return out;
}

bool is_self(const SlackSelf& self, const std::string& user, const std::string& bot_id) {
  return (!self.user_id.empty() && user == self.user_id) ||
         (!self.bot_id.empty() && bot_id == self.bot_id);
}

SlackEvent& ignore(SlackEvent& ev, std::string reason) {
  ev.kind = SlackEvent::Kind::kIgnored;
  ev.reason = std::move(reason);
  return ev;
}

SlackEvent& malformed(SlackEvent& ev, std::string reason) {
  ev.kind = SlackEvent::Kind::kMalformed;
  ev.reason = std::move(reason);
  return ev;
}

// A message event of subtype message_changed or message_deleted.
SlackEvent& change_event(const json& e, const SlackSelf& self, SlackEvent& ev) {
  std::string channel = str(e, "channel"), subtype = str(e, "subtype");
  const json& previous = member(e, "previous_message");
  if (subtype == "message_deleted") {
    ev.message.channel = channel;
    ev.deleted_ts = str(e, "deleted_ts");
    if (ev.deleted_ts.empty()) ev.deleted_ts = str(previous, "ts");
    if (channel.empty() || !parse_ts(ev.deleted_ts))
      return malformed(ev, "message_deleted without channel or deleted_ts");
    if (is_self(self, str(previous, "user"), str(previous, "bot_id")))
      return ignore(ev, "own message");
    ev.kind = SlackEvent::Kind::kMessageDeleted;
    return ev;
  }
  std::string error;
  std::optional<SlackMessage> m = parse_slack_message(member(e, "message"), channel, &error);
  if (!m || channel.empty())
    return malformed(ev, "message_changed: " + (channel.empty() ? "no channel" : error));
  m->channel_type = str(e, "channel_type");
  ev.message = std::move(*m);
  if (is_self(self, ev.message.user, ev.message.bot_id)) return ignore(ev, "own message");
  if (ev.message.subtype == "tombstone") return ignore(ev, "a deleted thread parent");
  if (previous.contains("text") && str(previous, "text") == ev.message.text)
    return ignore(ev, "text unchanged");
  ev.kind = SlackEvent::Kind::kMessageChanged;
  return ev;
}

// A message or app_mention event.
SlackEvent& message_event(const json& e, const SlackSelf& self, SlackEvent& ev) {
  std::string subtype = str(e, "subtype");
  if (ev.event_type == "message" && (subtype == "message_changed" || subtype == "message_deleted"))
    return change_event(e, self, ev);
  std::string error;
  std::optional<SlackMessage> m = parse_slack_message(e, str(e, "channel"), &error);
  if (!m || m->channel.empty()) return malformed(ev, m ? "a message without channel" : error);
  ev.message = std::move(*m);
  if (is_self(self, ev.message.user, ev.message.bot_id)) return ignore(ev, "own message");
  if (!subtype.empty() && subtype != "file_share" && subtype != "thread_broadcast" &&
      subtype != "bot_message")
    return ignore(ev, "subtype " + subtype);
  if (boolean(e, "hidden")) return ignore(ev, "hidden message");
  ev.kind = ev.event_type == "message" ? SlackEvent::Kind::kMessage : SlackEvent::Kind::kAppMention;
  return ev;
}

SlackEvent& reaction_event(const json& e, const SlackSelf& self, SlackEvent& ev) {
  const json& item = member(e, "item");
  if (str(item, "type") != "message") return ignore(ev, "a reaction to a " + str(item, "type"));
  ev.reaction_user = str(e, "user");
  ev.reaction = str(e, "reaction");
  ev.reaction = ev.reaction.substr(0, ev.reaction.find("::"));
  ev.message.channel = str(item, "channel");
  ev.message.ts = str(item, "ts");
  if (ev.reaction_user.empty() || ev.reaction.empty() || ev.message.channel.empty() ||
      !parse_ts(ev.message.ts))
    return malformed(ev, ev.event_type + " without user, reaction, item.channel or item.ts");
  if (is_self(self, ev.reaction_user, "")) return ignore(ev, "own reaction");
  ev.added = ev.event_type == "reaction_added";
  ev.kind = SlackEvent::Kind::kReaction;
  return ev;
}

// ts canonical ("1.5" and "1.500000" name one message), or "" when it is no ts.
std::string canonical_ts(std::string_view ts) {
  std::optional<int64_t> micros = parse_ts(ts);
  return micros ? format_ts(*micros) : std::string();
}

}  // namespace

std::optional<int64_t> parse_ts(std::string_view ts) {
  size_t dot = ts.find('.');
  std::string_view secs = ts.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? std::string_view() : ts.substr(dot + 1);
  if (secs.empty() || secs.size() > 12) return std::nullopt;
  if (dot != std::string_view::npos && (frac.empty() || frac.size() > 6)) return std::nullopt;
  int64_t s = 0, f = 0;
  for (char c : secs) {
    if (c < '0' || c > '9') return std::nullopt;
    s = s * 10 + (c - '0');
  }
  for (char c : frac) {
    if (c < '0' || c > '9') return std::nullopt;
    f = f * 10 + (c - '0');
  }
  for (size_t i = frac.size(); i < 6; ++i) f *= 10;
  return s * 1000000 + f;
}

std::string format_ts(int64_t micros) {
  if (micros < 0) micros = 0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%" PRId64 ".%06" PRId64, micros / 1000000, micros % 1000000);
  return buf;
}

std::string slack_post_id(std::string_view channel, std::string_view ts) {
  std::string id(channel);
  id += ':';
  id += ts;
  return id;
}

bool split_post_id(std::string_view post_id, std::string* channel, std::string* ts) {
  size_t colon = post_id.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == post_id.size()) return false;
  *channel = std::string(post_id.substr(0, colon));
  *ts = std::string(post_id.substr(colon + 1));
  return true;
}

SlackFrame parse_socket_frame(std::string_view text) {
  SlackFrame out;
  std::string why;
  json j = parse_json(text, &why);
  if (j.is_discarded()) {
    out.error = "not JSON: " + why;
    return out;
  }
  if (!j.is_object()) {
    out.error = "not a JSON object";
    return out;
  }
  out.type = str(j, "type");
  if (j.contains("envelope_id") || out.type == "events_api" || out.type == "interactive" ||
      out.type == "slash_commands") {
    out.envelope_id = str(j, "envelope_id");
    if (out.envelope_id.empty()) {
      out.error = "an envelope without envelope_id";
      return out;
    }
    out.kind = SlackFrame::Kind::kEnvelope;
    out.envelope_type = out.type;
    out.retry_attempt = num(j, "retry_attempt");
    out.retry_reason = str(j, "retry_reason");
    out.accepts_response_payload = boolean(j, "accepts_response_payload");
    out.payload = member(j, "payload");
    return out;
  }
  if (out.type == "hello") {
    out.kind = SlackFrame::Kind::kHello;
    out.num_connections = num(j, "num_connections");
    out.approximate_connection_time = num(member(j, "debug_info"), "approximate_connection_time");
    out.app_id = str(member(j, "connection_info"), "app_id");
  } else if (out.type == "disconnect") {
    out.kind = SlackFrame::Kind::kDisconnect;
    out.reason = str(j, "reason");
  } else if (out.type.empty()) {
    out.error = "a frame without type";
  } else {
    out.kind = SlackFrame::Kind::kUnknown;
  }
  return out;
}

std::string socket_ack(std::string_view envelope_id) {
  return json{{"envelope_id", std::string(envelope_id)}}.dump(-1, ' ', false,
                                                              json::error_handler_t::replace);
}

std::optional<SlackMessage> parse_slack_message(const json& j, std::string_view channel,
                                                std::string* error) {
  if (!j.is_object()) {
    *error = "a message that is not an object";
    return std::nullopt;
  }
  SlackMessage m;
  m.channel = str(j, "channel");
  if (m.channel.empty()) m.channel = std::string(channel);
  m.channel_type = str(j, "channel_type");
  m.user = str(j, "user");
  m.text = str(j, "text");
  m.ts = str(j, "ts");
  m.thread_ts = str(j, "thread_ts");
  m.client_msg_id = str(j, "client_msg_id");
  m.bot_id = str(j, "bot_id");
  m.subtype = str(j, "subtype");
  m.files = files_of(j);
  if (!parse_ts(m.ts) || (m.user.empty() && m.bot_id.empty())) {
    *error = "a message without a valid ts, or with neither user nor bot_id";
    return std::nullopt;
  }
  return m;
}

SlackEvent parse_event_callback(const json& payload, const SlackSelf& self) {
  SlackEvent ev;
  if (!payload.is_object()) return malformed(ev, "the payload is not an object");
  ev.event_id = str(payload, "event_id");
  ev.team_id = str(payload, "team_id");
  ev.event_time = num(payload, "event_time");
  std::string type = str(payload, "type");
  if (type != "event_callback") return ignore(ev, "not an event_callback: " + type);
  auto e = payload.find("event");
  if (e == payload.end() || !e->is_object())
    return malformed(ev, "an event_callback without event");
  ev.event_type = str(*e, "type");
  if (ev.event_type == "message" || ev.event_type == "app_mention")
    return message_event(*e, self, ev);
  if (ev.event_type == "reaction_added" || ev.event_type == "reaction_removed")
    return reaction_event(*e, self, ev);
  return ignore(ev, "event type " + ev.event_type);
}

std::optional<InboundMessage> to_inbound_message(const SlackMessage& m, bool app_mention,
                                                 const SlackContext& c) {
  std::optional<int64_t> micros = parse_ts(m.ts);
  if (!micros || m.channel.empty()) return std::nullopt;
  InboundMessage out;
  out.platform = c.platform;
  out.bot = c.bot;
  out.channel_id = m.channel;
  out.user_id = m.user.empty() ? m.bot_id : m.user;
  out.text = mrkdwn_to_text(m.text, c.resolve);
  out.post_id = slack_post_id(m.channel, format_ts(*micros));
  std::optional<int64_t> root = parse_ts(m.thread_ts);
  if (root && *root != *micros) out.thread_root_id = slack_post_id(m.channel, format_ts(*root));
  bool im = m.channel_type == "im" || (m.channel_type.empty() && m.channel[0] == 'D');
  out.is_dm = im || m.channel_type == "mpim";
  bool named =
      !c.self.user_id.empty() && (m.text.find("<@" + c.self.user_id + ">") != std::string::npos ||
                                  m.text.find("<@" + c.self.user_id + "|") != std::string::npos);
  out.mentions_bot = app_mention || im || named;
  out.created_at_ms = *micros / 1000;
  out.from_bot = !m.bot_id.empty() || m.subtype == "bot_message";
  for (const SlackFile& f : m.files)
    out.attachments.push_back(Attachment{f.id, f.name, f.mimetype, attachment_type(f.mimetype),
                                         f.size, f.url_private_download});
  return out;
}

std::optional<InboundMessage> to_inbound_message(const SlackEvent& ev, const SlackContext& c) {
  if (ev.kind != SlackEvent::Kind::kMessage && ev.kind != SlackEvent::Kind::kAppMention)
    return std::nullopt;
  return to_inbound_message(ev.message, ev.kind == SlackEvent::Kind::kAppMention, c);
}

std::optional<InboundReaction> to_inbound_reaction(const SlackEvent& ev, const SlackContext& c) {
  std::string ts = canonical_ts(ev.message.ts);
  if (ev.kind != SlackEvent::Kind::kReaction || ts.empty()) return std::nullopt;
  InboundReaction r;
  r.platform = c.platform;
  r.bot = c.bot;
  r.channel_id = ev.message.channel;
  r.user_id = ev.reaction_user;
  r.post_id = slack_post_id(ev.message.channel, ts);
  r.emoji = ev.reaction;
  r.added = ev.added;
  return r;
}

std::optional<InboundChange> to_inbound_change(const SlackEvent& ev, const SlackContext& c) {
  bool deleted = ev.kind == SlackEvent::Kind::kMessageDeleted;
  if (!deleted && ev.kind != SlackEvent::Kind::kMessageChanged) return std::nullopt;
  std::string ts = canonical_ts(deleted ? ev.deleted_ts : ev.message.ts);
  if (ts.empty() || ev.message.channel.empty()) return std::nullopt;
  InboundChange ch;
  ch.platform = c.platform;
  ch.bot = c.bot;
  ch.channel_id = ev.message.channel;
  ch.post_id = slack_post_id(ev.message.channel, ts);
  ch.deleted = deleted;
  if (!deleted) ch.text = mrkdwn_to_text(ev.message.text, c.resolve);
  return ch;
}

}  // namespace pf
