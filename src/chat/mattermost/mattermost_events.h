// Mattermost's WebSocket frames and post objects, parsed into plain structs: the event stream
// is untrusted input (a proxy, a plugin or a broken server can send anything), so the parser
// never throws and says what was wrong instead. A fuzz target feeds it arbitrary bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/channel_adapter.h"

namespace pf {

// A post as the REST API and the "posted" event carry it.
struct MattermostPost {
  std::string id, channel_id, user_id, root_id, original_id, message, type;
  int64_t create_at = 0, update_at = 0, edit_at = 0, delete_at = 0;
  bool from_bot = false;          // props.from_bot
  std::vector<Attachment> files;  // metadata.files, or bare file_ids
};

struct MattermostFrame {
  enum class Kind {
    kHello,      // connection_id
    kPosted,     // post, channel_type, sender_name
    kReaction,   // reaction_*: user_id, post_id, emoji, channel_id; added
    kReply,      // an answer to one of our actions: seq_reply, status
    kOther,      // an event we do not act on (typing, status_change, ...)
    kMalformed,  // error says why
  } kind = Kind::kMalformed;
  std::string event;
  int64_t seq = -1;  // the server's sequence number of an event; -1 for replies
  std::string connection_id;
  MattermostPost post;
  std::string channel_type, sender_name, channel_id;
  InboundReaction reaction;
  int64_t seq_reply = -1;
  std::string status;
  std::string error;
};

// One WebSocket text frame. Never throws.
MattermostFrame parse_mattermost_frame(std::string_view frame);

// A post object (already parsed JSON text). nullopt with *error when it lacks an id, channel or
// user. Never throws.
std::optional<MattermostPost> parse_mattermost_post(std::string_view json_text, std::string* error);

}  // namespace pf
