// Slack's Socket Mode frames and Events API bodies, parsed into plain structs, and the seam's
// platform-neutral messages made from them. The event stream is untrusted input: nothing here
// throws, bad input is reported with a reason, and a fuzz target feeds it arbitrary bytes.
// Pure functions, callable from any thread.
//
// Ids: a Slack ts ("1712345678.123456") is unique only per channel, so a post id on the seam is
// "<channel>:<ts>" (slack_post_id), and a thread root likewise "<channel>:<thread_ts>".
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/channel_adapter.h"
#include "chat/slack/mrkdwn.h"

namespace pf {

// A ts as microseconds since the epoch, in integers: digits, optionally "." and 1-6 digits
// (fewer are padded: ".5" is 500000 µs). nullopt for anything else (signs, spaces, an empty
// or trailing ".", more than 12 digits of seconds, more than 6 of fraction).
std::optional<int64_t> parse_ts(std::string_view ts);
// "<seconds>.<6 digits>"; negative micros are formatted as 0.
std::string format_ts(int64_t micros);

// "<channel>:<ts>"; split_post_id undoes it (false when post_id has no ':' or an empty side).
std::string slack_post_id(std::string_view channel, std::string_view ts);
bool split_post_id(std::string_view post_id, std::string* channel, std::string* ts);

// One Socket Mode text frame.
struct SlackFrame {
  enum class Kind {
    kHello,       // num_connections, approximate_connection_time (s), app_id
    kDisconnect,  // reason: warning, refresh_requested, too_many_websockets, link_disabled, ...
    kEnvelope,    // acknowledge envelope_id at once, whatever the envelope_type
    kUnknown,     // a JSON object of another type (type says which)
    kMalformed,   // error says why
  } kind = Kind::kMalformed;
  std::string type;  // the frame's "type" as sent
  int64_t num_connections = 0, approximate_connection_time = 0;
  std::string app_id;
  std::string reason;
  std::string envelope_id;
  std::string envelope_type;  // events_api, interactive, slash_commands (or another)
  int64_t retry_attempt = 0;
  std::string retry_reason;  // "" on the first delivery, "timeout" after a missed ack
  bool accepts_response_payload = false;
  nlohmann::json payload;  // an object (empty when the envelope had none)
  std::string error;
};
SlackFrame parse_socket_frame(std::string_view text);
// The acknowledgement of an envelope: {"envelope_id":"…"}.
std::string socket_ack(std::string_view envelope_id);

struct SlackFile {
  std::string id, name, mimetype, url_private_download;
  int64_t size = 0;
};

// A message as events and conversations.history/replies carry it.
struct SlackMessage {
  std::string channel, channel_type;  // channel_type: channel, group, im, mpim ("" if absent)
  std::string user, text, ts, thread_ts, client_msg_id, bot_id, subtype;
  std::vector<SlackFile> files;
};

// The bot as auth.test names it: its user (U…) and its bot (B…). Either may be empty.
struct SlackSelf {
  std::string user_id, bot_id;
};

struct SlackEvent {
  enum class Kind {
    kMessage,         // message: a new post (no subtype, file_share, thread_broadcast, bot_message)
    kAppMention,      // app_mention: the same post as its message event (same channel and ts)
    kMessageChanged,  // message: message.channel/ts name the edited post, message.text the new text
    kMessageDeleted,  // message.channel and deleted_ts
    kReaction,        // reaction_user, reaction, message.channel/ts (the item); added
    kIgnored,         // reason says why (own message, channel_join, ...)
    kMalformed,       // reason says why
  } kind = Kind::kMalformed;
  std::string event_id, team_id, event_type;  // event_type: the inner event's type
  int64_t event_time = 0;                     // seconds
  SlackMessage message;
  std::string deleted_ts;
  std::string reaction_user, reaction;  // reaction: the name without a ::skin-tone-N suffix
  bool added = true;
  std::string reason;
};

// An Events API body (type event_callback), as an events_api envelope's payload. Messages and
// reactions of self are kIgnored ("own message"), as are subtypes that are not new posts,
// edits that keep the text, and reactions on files. Never throws.
SlackEvent parse_event_callback(const nlohmann::json& payload, const SlackSelf& self);

// A message object alone (conversations.history/replies items), channel given; nullopt with
// *error when it has no ts or neither user nor bot_id. Never throws.
std::optional<SlackMessage> parse_slack_message(const nlohmann::json& message,
                                                std::string_view channel, std::string* error);

// What the seam's messages need besides the event.
struct SlackContext {
  std::string platform, bot;  // config names
  SlackSelf self;
  SlackUserResolver resolve;  // names <@U…> mentions in the text (optional)
};

// kMessage / kAppMention (or a parsed history message) → InboundMessage: post id and thread
// root as above (a thread's parent, thread_ts == ts, is top level), mentions_bot for <@self>,
// app_mention or an im, is_dm for im/mpim (a D… channel when channel_type is absent),
// created_at_ms from ts, from_bot for bot_id or bot_message, text through mrkdwn_to_text,
// attachments from files. username is left empty. nullopt when the ts is not a ts.
std::optional<InboundMessage> to_inbound_message(const SlackMessage& message, bool app_mention,
                                                 const SlackContext& context);
std::optional<InboundMessage> to_inbound_message(const SlackEvent& event,
                                                 const SlackContext& context);
// kReaction → InboundReaction (username empty); nullopt for other kinds.
std::optional<InboundReaction> to_inbound_reaction(const SlackEvent& event,
                                                   const SlackContext& context);
// kMessageChanged / kMessageDeleted → InboundChange (text through mrkdwn_to_text); else nullopt.
std::optional<InboundChange> to_inbound_change(const SlackEvent& event,
                                               const SlackContext& context);

}  // namespace pf
