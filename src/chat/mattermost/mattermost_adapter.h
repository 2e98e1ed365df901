// The Mattermost adapter (spec §6, ../shared/spec/mattermost-protocol.md): one per bot token.
// Identity from /users/me; events from one WebSocket (/api/v4/websocket: the token on the
// upgrade and in an authentication challenge, seq tracking, pings); posts, edits, deletions,
// reactions, typing and files over REST. It reconnects by itself with capped, jittered backoff,
// and after any gap — a dropped socket, a seq gap, a process restart — replays the posts it
// missed in the channels it has seen recently (GET /channels/{id}/posts?since=), oldest first,
// without edit-history rows, deleted posts, edits of old posts, system posts or its own posts.
// The newest post time per channel is kept in the state store, so a restart replays too.
// REST calls honour 429 (X-Ratelimit-Reset, Retry-After) and retry server errors with backoff.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "chat/channel_adapter.h"
#include "chat/mattermost/mattermost_events.h"
#include "chat/cursor_store.h"
#include "core/retry.h"
#include "net/http_client.h"
#include "net/websocket_client.h"
#include "nlohmann/json.hpp"

namespace pf {

// A Mattermost API error: the AppError's id and status (0 when the server did not answer).
class MattermostError : public Error {
 public:
  MattermostError(const std::string& message, int status, std::string id)
      : Error(message), status_(status), id_(std::move(id)) {}
  int status() const { return status_; }
  const std::string& id() const { return id_; }

 private:
  int status_;
  std::string id_;
};

struct MattermostOptions {
  std::string platform;  // the config's name for the server
  std::string bot;       // the bot's config name
  std::string url;       // https://chat.example.com (no trailing slash)
  std::string token;
  RetryPolicy rest_retry{5, 500, 30000, 0.25};
  RetryPolicy reconnect{0, 1000, 30000, 0.25};  // forever
  std::chrono::milliseconds rest_timeout{30000};
  std::chrono::milliseconds ws_idle_timeout{90000};
  size_t max_frame_bytes = 4 * 1024 * 1024;
  size_t max_post_chars = 16000;  // the server's MaxPostSize, or less
  // Keep REST connections alive for reuse; only when every call runs on the adapter's io_context
  // (not for one-off calls through run_sync, whose io_context ends with the call).
  bool pool_connections = true;
  // Channels seen within this long are replayed after a gap.
  std::chrono::milliseconds replay_recent{std::chrono::hours(24)};
};

class MattermostAdapter : public ChannelAdapter {
 public:
  // state must outlive the adapter; io is the bridge's network thread's context.
  MattermostAdapter(boost::asio::io_context& io, MattermostOptions options, CursorStore& saved_cursors);
  ~MattermostAdapter() override;

  const std::string& platform() const override { return options_.platform; }
  const std::string& bot() const override { return options_.bot; }
  void on_message(MessageHandler h) override { on_message_ = std::move(h); }
  void on_reaction(ReactionHandler h) override { on_reaction_ = std::move(h); }
  boost::asio::awaitable<void> connect() override;
  void disconnect() override;
  const BotIdentity& identity() const override { return identity_; }
  void track_channel(const std::string& channel_id, int64_t since_ms) override;
  const PlatformTraits& traits() const override { return traits_; }
  AdapterCounters counters() const override { return counters_; }

  boost::asio::awaitable<std::string> send_message(const std::string& channel_id,
                                                   const std::string& text,
                                                   const std::string& thread_root_id,
                                                   const std::string& idempotency_key) override;
  boost::asio::awaitable<void> update_message(const std::string& post_id,
                                              const std::string& text) override;
  boost::asio::awaitable<void> delete_message(const std::string& post_id) override;
  boost::asio::awaitable<void> set_typing(const std::string& channel_id,
                                          const std::string& thread_root_id) override;
  boost::asio::awaitable<void> add_reaction(const std::string& post_id,
                                            const std::string& emoji) override;
  boost::asio::awaitable<void> download_file(const std::string& file_id,
                                             const std::string& dest_path) override;
  boost::asio::awaitable<std::string> send_file(const std::string& channel_id,
                                                const std::string& path, const std::string& text,
                                                const std::string& thread_root_id) override;
  boost::asio::awaitable<std::vector<std::pair<std::string, std::string>>> discover_dm_channels()
      override;
  boost::asio::awaitable<std::string> username_of(const std::string& user_id) override;
  // Administration (mattermost_admin.cpp).
  boost::asio::awaitable<BotIdentity> whoami() override;
  boost::asio::awaitable<std::vector<ChatTeam>> list_teams() override;
  boost::asio::awaitable<std::vector<ChatChannel>> list_channels() override;
  boost::asio::awaitable<std::optional<ChatChannel>> find_channel(const std::string& team_id,
                                                                  const std::string& name) override;
  boost::asio::awaitable<ChatChannel> create_channel(const std::string& team_id,
                                                     const std::string& name,
                                                     const std::string& display_name,
                                                     bool is_private) override;
  boost::asio::awaitable<void> add_member(const std::string& channel_id,
                                          const std::string& user_id) override;

  // One REST call with the retry policy; the parsed JSON answer (null for an empty body).
  // Throws MattermostError. Public for `pilotfish bridge check`.
  boost::asio::awaitable<nlohmann::json> rest(const std::string& method, const std::string& path,
                                              const nlohmann::json& body = nullptr,
                                              bool retry = true);

  // For tests and /status: connections made so far and replays run.
  int connections() const { return connections_; }
  int replays() const { return replays_; }
  bool connected() const { return socket_ != nullptr; }

 private:
  boost::asio::awaitable<void> run_socket(int generation);
  boost::asio::awaitable<void> read_events(WebSocketClient& ws);
  void handle_frame(const std::string& text);
  void dispatch_post(const MattermostPost& post, const std::string& channel_type, bool replayed,
                     const std::string& username);
  // Dispatches what arrived live for channel_id while its replay ran, and stops holding it.
  void release_held(const std::string& channel_id);
  boost::asio::awaitable<void> replay();
  boost::asio::awaitable<void> replay_channel(const std::string& channel_id, int64_t since);
  boost::asio::awaitable<std::string> channel_type(const std::string& channel_id);
  boost::asio::awaitable<HttpResponse> send_with_retry(HttpRequest request, bool retry);
  void request_replay();
  // The replay cursors moved since the last save, saved together shortly (kCursorSaveDelay)
  // or at disconnect().
  void schedule_cursor_save();
  void save_cursors();
  std::string channel_key(const std::string& channel_id) const {
    return options_.platform + ":" + channel_id;
  }

  boost::asio::io_context& io_;
  MattermostOptions options_;
  PlatformTraits traits_;  // Markdown, no edit limit of its own, catch-up by ?since=
  ConnectionPool pool_;  // REST calls reuse kept-alive connections to the server
  CursorStore& saved_cursors_;  // the replay cursors across restarts
  MessageHandler on_message_;
  ReactionHandler on_reaction_;
  BotIdentity identity_;
  bool stopping_ = false;
  AdapterCounters counters_;
  int socket_generation_ = 0;          // bumped by connect() and disconnect(): an older loop ends
  WebSocketClient* socket_ = nullptr;  // the running loop's (it owns it), for disconnect()
  std::string connection_id_;
  int64_t next_seq_ = 0;         // the server's next event seq
  int64_t next_action_seq_ = 2;  // ours, for actions on the socket (1 is the auth challenge)
  int connections_ = 0, replays_ = 0;
  bool replay_running_ = false, replay_again_ = false;
  std::map<std::string, int64_t> cursors_;      // channel id -> newest create_at seen
  std::set<std::string> unsaved_cursors_;       // channel ids whose cursor moved since saved
  std::shared_ptr<boost::asio::steady_timer> cursor_timer_;  // the pending save_cursors()
  std::map<std::string, int64_t> last_active_;  // channel id -> when seen (ms, local)
  std::set<std::string> recent_ids_;            // the last posts dispatched, for dedupe
  // Channels whose replay runs, and the live posts that wait for it (in arrival order): a live
  // post dispatched before the missed posts older than it would be answered out of order.
  struct HeldPost {
    MattermostPost post;
    std::string channel_type, username;
  };
  std::map<std::string, std::vector<HeldPost>> held_;
  std::vector<std::string> recent_order_;
  std::map<std::string, std::string> channel_types_;  // id -> O/P/D/G
  struct CachedUser {
    std::string username;
    std::chrono::steady_clock::time_point at;
  };
  std::map<std::string, CachedUser> users_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace pf
