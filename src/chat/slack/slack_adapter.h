// The Slack adapter (spec §6, ../shared/spec/slack-protocol.md): one per Slack app (bot token
// and app-level token). Identity from auth.test; events over Socket Mode (apps.connections.open
// for each connection, every envelope acknowledged before any work, dedupe on event_id and on
// the post id "<channel>:<ts>" so the message/app_mention pair, redeliveries and catch-up
// overlap are answered once; `disconnect` answered by opening the new socket, waiting for its
// hello, then closing the old; dropped sockets reopened with backoff). After every hello it
// catches up each recently active channel from the newest ts seen (kept in the CursorStore as
// microseconds): conversations.history, and conversations.replies for threads with newer
// replies, oldest first, while that channel's live messages wait. Posts, edits, reactions,
// files, native streaming and assistant-thread status go through the Web API client (paced per
// method, 429s honoured).
#pragma once

#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "chat/channel_adapter.h"
#include "chat/cursor_store.h"
#include "chat/slack/slack_events.h"
#include "chat/slack/web_api.h"
#include "core/retry.h"
#include "net/websocket_client.h"

namespace pf {

struct SlackOptions {
  std::string platform;  // the config's name for the workspace
  std::string bot;       // the bot's config name
  std::string api_url = "https://slack.com/api";
  std::string bot_token;  // xoxb-…
  std::string app_token;  // xapp-… (connections:write)
  RetryPolicy rest_retry{6, 1000, 30000, 0.25};
  RetryPolicy reconnect{0, 1000, 30000, 0.25};  // forever
  SlackRateLimits rates;
  std::chrono::milliseconds rest_timeout{30000};
  // No frame for this long and no answer to the ping sent half-way: the socket is dead.
  std::chrono::milliseconds ws_idle_timeout{30000};
  size_t max_frame_bytes = 4 * 1024 * 1024;
  // Channels seen within replay_recent are caught up after a gap, never further back than
  // replay_window; thread_lookback: how old a thread's parent may be for its new replies to
  // be found.
  std::chrono::milliseconds replay_recent{std::chrono::hours(24)};
  std::chrono::milliseconds replay_window{std::chrono::hours(24)};
  std::chrono::milliseconds thread_lookback{std::chrono::hours(24)};
  int64_t max_file_bytes = 50 * 1024 * 1024;
  bool native_streaming = true;  // until the workspace says not_agent_app
  bool pool_connections = true;
};

class SlackAdapter : public ChannelAdapter {
 public:
  // saved_cursors must outlive the adapter; io is the bridge's network thread's context.
  SlackAdapter(boost::asio::io_context& io, SlackOptions options, CursorStore& saved_cursors);
  ~SlackAdapter() override;

  const std::string& platform() const override { return options_.platform; }
  const std::string& bot() const override { return options_.bot; }
  void on_message(MessageHandler h) override { on_message_ = std::move(h); }
  void on_reaction(ReactionHandler h) override { on_reaction_ = std::move(h); }
  void on_change(ChangeHandler h) override { on_change_ = std::move(h); }
  // Throws SlackError when a token or the server is wrong (auth.test, apps.connections.open).
  boost::asio::awaitable<void> connect() override;
  void disconnect() override;
  const BotIdentity& identity() const override { return identity_; }
  void track_channel(const std::string& channel_id, int64_t since_ms) override;
  const PlatformTraits& traits() const override { return traits_; }
  AdapterCounters counters() const override {
    AdapterCounters c = counters_;
    c.rate_limited = api_.rate_limited();
    return c;
  }

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
  boost::asio::awaitable<std::string> start_stream(const std::string& channel_id,
                                                   const std::string& thread_root_id,
                                                   const std::string& recipient_user_id,
                                                   const std::string& text) override;
  boost::asio::awaitable<void> append_stream(const std::string& post_id,
                                             const std::string& text) override;
  boost::asio::awaitable<void> stop_stream(const std::string& post_id,
                                           const std::string& final_text) override;
  boost::asio::awaitable<void> set_status(const std::string& channel_id,
                                          const std::string& thread_root_id,
                                          const std::string& status) override;
  boost::asio::awaitable<std::vector<std::pair<std::string, std::string>>> discover_dm_channels()
      override;
  boost::asio::awaitable<std::string> username_of(const std::string& user_id) override;
  // users.list, paged: a handle matches a user's id, name or display name (not a deleted
  // user's).
  boost::asio::awaitable<std::optional<std::map<std::string, std::string>>> resolve_handles(
      const std::vector<std::string>& handles) override;
  // Administration (slack_admin.cpp): one workspace; channels by conversations.list.
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

  // The Web API client (for `pilotfish bridge check`: scopes(), memberships).
  SlackWebApi& api() { return api_; }
  // For tests and /status.
  int connections() const { return connections_; }  // sockets that said hello
  int catch_ups() const { return catch_ups_; }
  bool connected() const { return socket_ != nullptr; }
  const std::string& team_id() const { return team_id_; }

 private:
  struct Conn {
    std::unique_ptr<WebSocketClient> ws;
    bool replaced = false;  // a refresh opened its successor and closes it
  };
  // connection: sockets, frames, live events (slack_adapter.cpp)
  boost::asio::awaitable<std::unique_ptr<WebSocketClient>> open_socket();
  boost::asio::awaitable<void> run_socket(int generation, std::shared_ptr<Conn> first);
  boost::asio::awaitable<void> read_frames(std::shared_ptr<Conn> conn, int generation);
  boost::asio::awaitable<void> refresh(std::shared_ptr<Conn> old, int generation);
  void handle_event(const nlohmann::json& payload);
  void handle_message(const SlackEvent& event);
  SlackContext context() const;
  // Queues a message for the handler (in order, its username looked up first) unless its post
  // id was dispatched already; moves the channel's cursor.
  void dispatch(InboundMessage message);
  boost::asio::awaitable<void> drain_outbox();
  void remember_files(const SlackMessage& message);
  void schedule_cursor_save();
  void save_cursors();
  std::string channel_key(const std::string& channel_id) const {
    return options_.platform + ":" + channel_id;
  }
  // catch-up (slack_catchup.cpp)
  void request_catch_up();
  boost::asio::awaitable<void> catch_up();
  boost::asio::awaitable<void> catch_up_channel(const std::string& channel_id, int64_t since_us);
  boost::asio::awaitable<std::vector<SlackMessage>> fetch_replies(const std::string& channel_id,
                                                                  const std::string& thread_ts,
                                                                  int64_t since_us);
  boost::asio::awaitable<std::string> channel_type(const std::string& channel_id);
  void release_held(const std::string& channel_id);
  // outbound (slack_outbound.cpp)
  boost::asio::awaitable<std::string> find_posted(const std::string& channel,
                                                  const std::string& thread_ts,
                                                  const std::string& key);
  boost::asio::awaitable<std::string> find_file_share(const std::string& channel,
                                                      const std::string& thread_ts,
                                                      const std::string& file_id);
  void status_failed(const SlackError& e);

  boost::asio::io_context& io_;
  SlackOptions options_;
  SlackWebApi api_;
  AdapterCounters counters_;  // rate_limited is the Web API's
  CursorStore& saved_cursors_;
  PlatformTraits traits_;
  MessageHandler on_message_;
  ReactionHandler on_reaction_;
  ChangeHandler on_change_;
  BotIdentity identity_;
  SlackSelf self_;
  std::string team_id_;
  bool stopping_ = false, refreshing_ = false;
  int generation_ = 0;                 // bumped by connect() and disconnect()
  std::shared_ptr<Conn> socket_conn_;  // the current connection
  WebSocketClient* socket_ = nullptr;  // its socket
  int connections_ = 0, catch_ups_ = 0;
  bool catch_up_running_ = false, catch_up_again_ = false;
  std::map<std::string, int64_t> cursors_;  // channel -> newest ts seen (µs)
  std::set<std::string> unsaved_cursors_;
  std::shared_ptr<boost::asio::steady_timer> cursor_timer_;
  std::map<std::string, int64_t> last_active_;  // channel -> when seen (ms)
  // Dedupe: the last post ids dispatched and event ids handled, oldest first.
  std::set<std::string> seen_posts_, seen_events_;
  std::deque<std::string> seen_posts_order_, seen_events_order_;
  std::map<std::string, std::vector<InboundMessage>> held_;  // channels being caught up
  std::deque<InboundMessage> outbox_;
  bool draining_ = false;
  std::map<std::string, std::string> channel_types_;  // id -> channel, group, im, mpim
  std::map<std::string, std::string> file_urls_;      // file id -> url_private_download
  struct CachedUser {
    std::string name;
    std::chrono::steady_clock::time_point at;
  };
  std::map<std::string, CachedUser> users_;
  bool status_off_ = false, status_logged_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace pf
