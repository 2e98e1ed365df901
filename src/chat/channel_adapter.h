// The one seam between the bridge and a chat platform (spec §5): an adapter turns the
// platform's events into platform-neutral messages and reactions, and carries the bridge's
// posts, edits, deletions, reactions and files back. The orchestrator knows a platform only
// through this interface and the traits it declares (PlatformTraits): Mattermost
// (chat/mattermost/) and Slack (chat/slack/) implement it. Text crosses the seam as Markdown;
// an adapter converts it to its platform's markup.
//
// Threads: every method is called on the bridge's network thread, and handlers are called on
// it. Lifetimes: a coroutine method starts when first awaited and borrows its reference
// arguments: they must outlive the awaitable. Errors: methods that must succeed throw pf::Error
// (after the adapter's own retries); best-effort ones (typing, reactions) log and never throw.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "net/awaitable.h"

namespace pf {

struct Attachment {
  std::string id;    // the platform's file id
  std::string name;  // as uploaded; never trusted as a path
  std::string mime_type;
  std::string type;  // image, video, audio or file (from the mime type)
  int64_t size = 0;
  // Where the adapter downloads it from, when the event says (Slack's url_private_download);
  // empty where the id is enough (Mattermost). Initialised so brace lists may omit it.
  std::string url = {};
};

// The type of an attachment from its mime type: image, video, audio or file.
inline std::string attachment_type(std::string_view mime) {
  for (const char* kind : {"image", "video", "audio"})
    if (mime.rfind(std::string(kind) + "/", 0) == 0) return kind;
  return "file";
}

// A post, normalised by the adapter.
struct InboundMessage {
  std::string platform;  // the platform's config name
  std::string bot;       // the bot that received it
  std::string channel_id;
  std::string user_id, username;
  std::string text;  // as written; the bridge strips the bot's mention
  std::string post_id;
  std::string thread_root_id;  // the thread it is in, or empty at top level
  bool mentions_bot = false;   // a DM, or the text names @bot
  bool is_dm = false;          // a direct or group message channel
  int64_t created_at_ms = 0;   // server time
  bool replayed = false;       // fetched after a gap, not seen live
  bool from_bot = false;       // the platform marks the sender as a bot
  bool quiet = false;          // a scheduled prompt: answered only if the answer says something
  std::vector<Attachment> attachments;
};

struct InboundReaction {
  std::string platform, bot, channel_id, user_id, username, post_id, emoji;
  bool added = true;
};

// A message edited or deleted after it arrived: the bridge updates or drops it while it still
// waits to be answered; an answered one is left alone.
struct InboundChange {
  std::string platform, bot, channel_id, post_id;
  bool deleted = false;
  std::string text;  // the new text (edits)
};

struct BotIdentity {
  std::string user_id, username;
};

// A team (Mattermost) or workspace (Slack) the bot belongs to.
struct ChatTeam {
  std::string id, name, display_name;
};

// A channel as the administration calls see it (never a DM).
struct ChatChannel {
  std::string id;
  std::string name;          // the slug: lower-case letters, digits, '-' and '_'
  std::string display_name;  // as people see it (Slack: the name)
  std::string team_id;
  bool is_private = false;
};

// How the platform's posts are written.
enum class Markup {
  kMarkdown,  // CommonMark with GitHub's extensions (Mattermost)
  kMrkdwn,    // Slack's mrkdwn: *bold*, _italic_, <url|label>, no headings or tables
};

// How an adapter catches up after a gap (a dropped event stream, a restart).
enum class CatchUp {
  kSinceTime,  // one request per channel for every post changed after a server time
  kHistory,    // per channel, page its history (and threads' replies) after the newest seen
};

// What a platform allows and offers, as its adapter declares it; the orchestrator paces and
// shapes replies by it and never asks for a platform by name.
struct PlatformTraits {
  size_t max_post_chars = 16000;  // the longest text one post holds, in code points
  // The least time between two edits of one post (the bridge's editIntervalMs applies above
  // it), and a budget of edits a minute shared by every channel of the bot's workspace (0: none).
  std::chrono::milliseconds min_edit_interval{0};
  int edits_per_minute = 0;
  bool native_streaming = false;  // the platform renders an appended stream itself
  bool threads = true;            // replies can go in a thread
  bool reactions = true;          // people can answer with a reaction
  bool file_upload = true;
  Markup markup = Markup::kMarkdown;
  CatchUp catch_up = CatchUp::kSinceTime;
};

// What an adapter has done since it was made, for the bridge's /metrics.
struct AdapterCounters {
  int64_t posts = 0;         // messages, files and streams started
  int64_t edits = 0;         // messages updated (a stream's appends included)
  int64_t rate_limited = 0;  // HTTP 429 answers from the platform (each retried)
  int64_t reconnects = 0;    // event streams opened again after they ended
};

class ChannelAdapter {
 public:
  using MessageHandler = std::function<void(InboundMessage)>;
  using ReactionHandler = std::function<void(InboundReaction)>;
  using ChangeHandler = std::function<void(InboundChange)>;

  virtual ~ChannelAdapter() = default;

  virtual const std::string& platform() const = 0;
  virtual const std::string& bot() const = 0;
  // Set before connect(); each is called once per message or reaction, in order.
  virtual void on_message(MessageHandler handler) = 0;
  virtual void on_reaction(ReactionHandler handler) = 0;
  // Edits and deletions of people's messages, where the adapter reports them (default: none).
  virtual void on_change(ChangeHandler) {}

  // Learns the bot's identity and opens the event stream. Throws pf::Error when the server or
  // the token is wrong. After it returns, the adapter reconnects by itself until disconnect().
  virtual boost::asio::awaitable<void> connect() = 0;
  // Closes the event stream and saves what it keeps for a replay (the state store must still
  // exist); pending REST calls finish or fail. Idempotent.
  virtual void disconnect() = 0;
  // Valid after connect().
  virtual const BotIdentity& identity() const = 0;
  // Catch up on the channel after every gap from since_ms (server time) on, unless a newer
  // post of it was seen already: a channel's posts made before the event stream first opened
  // are answered too. Call after connect().
  virtual void track_channel(const std::string& channel_id, int64_t since_ms) = 0;
  // What the platform allows and offers; fixed for the adapter's lifetime.
  virtual const PlatformTraits& traits() const = 0;
  // Its counters so far (on the network thread). Default: none kept.
  virtual AdapterCounters counters() const { return {}; }

  // Posts text (in the thread of thread_root_id when not empty) and returns the post's id.
  // idempotency_key, when not empty, makes a retried post land once.
  virtual boost::asio::awaitable<std::string> send_message(const std::string& channel_id,
                                                           const std::string& text,
                                                           const std::string& thread_root_id,
                                                           const std::string& idempotency_key) = 0;
  // Replaces a post's text (streaming edits).
  virtual boost::asio::awaitable<void> update_message(const std::string& post_id,
                                                      const std::string& text) = 0;
  virtual boost::asio::awaitable<void> delete_message(const std::string& post_id) = 0;
  // Best-effort.
  virtual boost::asio::awaitable<void> set_typing(const std::string& channel_id,
                                                  const std::string& thread_root_id) = 0;
  virtual boost::asio::awaitable<void> add_reaction(const std::string& post_id,
                                                    const std::string& emoji) = 0;
  // Downloads an attachment to dest_path (the caller chose and checked it).
  virtual boost::asio::awaitable<void> download_file(const std::string& file_id,
                                                     const std::string& dest_path) = 0;
  // Uploads a file and posts it with text; returns the post's id.
  virtual boost::asio::awaitable<std::string> send_file(const std::string& channel_id,
                                                        const std::string& path,
                                                        const std::string& text,
                                                        const std::string& thread_root_id) = 0;
  // Native streaming (traits().native_streaming): a reply the platform renders as it grows.
  // start_stream posts it (in the thread, to the person asked, with the first text) and returns
  // its post id; append_stream adds text; stop_stream ends it, adding final_text. Each throws
  // pf::Error when the platform refuses (the caller falls back to posts and edits).
  virtual boost::asio::awaitable<std::string> start_stream(const std::string& /*channel_id*/,
                                                           const std::string& /*thread_root_id*/,
                                                           const std::string& /*recipient_user_id*/,
                                                           const std::string& /*text*/) {
    throw Error("this platform does not stream natively");
  }
  virtual boost::asio::awaitable<void> append_stream(const std::string& /*post_id*/,
                                                     const std::string& /*text*/) {
    throw Error("this platform does not stream natively");
  }
  virtual boost::asio::awaitable<void> stop_stream(const std::string& /*post_id*/,
                                                   const std::string& /*final_text*/) {
    throw Error("this platform does not stream natively");
  }
  // Best-effort: what the agent is doing now ("Searching the code…"), shown where the platform
  // has a status line for it (Slack's assistant-thread status); empty clears it. Default: the
  // typing indicator.
  virtual boost::asio::awaitable<void> set_status(const std::string& channel_id,
                                                  const std::string& thread_root_id,
                                                  const std::string& status) {
    if (!status.empty()) co_await set_typing(channel_id, thread_root_id);
  }
  // The bot's direct-message channels: {channel id, the other user's id}.
  virtual boost::asio::awaitable<std::vector<std::pair<std::string, std::string>>>
  discover_dm_channels() = 0;
  // A user's name from their id (cached); empty when unknown.
  virtual boost::asio::awaitable<std::string> username_of(const std::string& user_id) = 0;
  // Where people are to be matched by id because their names can change (Slack): the ids of
  // the users the handles name (case-insensitive, a leading '@' ignored; a handle may be an id
  // itself; one naming nobody is left out of the map). nullopt (the default): the platform's
  // usernames are matched as written. Throws pf::Error when the platform cannot be asked.
  virtual boost::asio::awaitable<std::optional<std::map<std::string, std::string>>> resolve_handles(
      const std::vector<std::string>& /*handles*/) {
    co_return std::nullopt;
  }

  // The bot's identity from its token, without opening the event stream (`pilotfish init`);
  // identity() returns it afterwards. Throws pf::Error when the server refuses the token.
  virtual boost::asio::awaitable<BotIdentity> whoami() { throw Error("this platform cannot say who the bot is"); }
  // Administration, for an admin bot's tools (bridge/admin_tools.h). Each throws pf::Error with
  // the platform's refusal (a name taken, a scope or permission missing); the defaults say the
  // platform cannot. The teams (Slack: the one workspace) the bot belongs to.
  virtual boost::asio::awaitable<std::vector<ChatTeam>> list_teams() {
    throw Error("this platform cannot list teams");
  }
  // The public and private channels the bot is a member of (no DMs), in the platform's order.
  virtual boost::asio::awaitable<std::vector<ChatChannel>> list_channels() {
    throw Error("this platform cannot list channels");
  }
  // The channel of that slug in the team (Slack: the workspace; team_id may be empty), whether
  // or not the bot is in it, where the bot may see it; nullopt when there is none.
  virtual boost::asio::awaitable<std::optional<ChatChannel>> find_channel(
      const std::string& /*team_id*/, const std::string& /*name*/) {
    throw Error("this platform cannot look channels up");
  }
  // Creates a channel with the bot as its first member. name: a slug (see ChatChannel).
  virtual boost::asio::awaitable<ChatChannel> create_channel(const std::string& /*team_id*/,
                                                             const std::string& /*name*/,
                                                             const std::string& /*display_name*/,
                                                             bool /*is_private*/) {
    throw Error("this platform cannot create channels");
  }
  // Adds a user to a channel; the bot's own id joins it. Already a member: done, no error.
  virtual boost::asio::awaitable<void> add_member(const std::string& /*channel_id*/,
                                                  const std::string& /*user_id*/) {
    throw Error("this platform cannot add channel members");
  }
};

}  // namespace pf
