// The Slack adapter's connection side (see slack_adapter.h): identity, the Socket Mode loop with
// refreshes and reconnects, acknowledgements, dedupe and the ordered dispatch of live events,
// and the catch-up cursors it keeps. Catch-up is in slack_catchup.cpp, the outbound methods in
// slack_outbound.cpp.
#include "chat/slack/slack_adapter.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "core/clock.h"
#include "core/json.h"
#include "core/log.h"

namespace pf {
namespace {

namespace asio = boost::asio;
using nlohmann::json;

constexpr size_t kSeenIds = 2000;
constexpr size_t kFileUrls = 1000;
// As in the Mattermost adapter: cursors moved by a burst of messages are saved together.
constexpr std::chrono::milliseconds kCursorSaveDelay{200};

asio::awaitable<void> sleep_ms(int64_t ms) {
  asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(ms));
  co_await t.async_wait(asio::use_awaitable);
}

// Adds id to a bounded set; false when it was there already.
bool remember(std::set<std::string>& seen, std::deque<std::string>& order, const std::string& id) {
  if (!seen.insert(id).second) return false;
  order.push_back(id);
  if (order.size() > kSeenIds) {
    seen.erase(order.front());
    order.pop_front();
  }
  return true;
}

SlackApiOptions api_options(const SlackOptions& o) {
  SlackApiOptions a;
  a.base_url = o.api_url;
  a.bot_token = o.bot_token;
  a.app_token = o.app_token;
  a.retry = o.rest_retry;
  a.timeout = o.rest_timeout;
  a.rates = o.rates;
  a.pool_connections = o.pool_connections;
  return a;
}

}  // namespace

SlackAdapter::SlackAdapter(asio::io_context& io, SlackOptions options, CursorStore& saved_cursors)
    : io_(io),
      options_(std::move(options)),
      api_(io, api_options(options_)),
      saved_cursors_(saved_cursors) {
  // Room for mrkdwn's escapes under chat.update's 4,000 characters.
  traits_.max_post_chars = 3500;
  traits_.min_edit_interval = std::chrono::milliseconds(1200);
  int per_window = api_.pacer().limit_of("chat.update");
  traits_.edits_per_minute =
      static_cast<int>(per_window * 60000 / std::max<int64_t>(1, options_.rates.window.count()));
  traits_.native_streaming = options_.native_streaming;
  traits_.markup = Markup::kMrkdwn;
  traits_.catch_up = CatchUp::kHistory;
}

SlackAdapter::~SlackAdapter() {
  *alive_ = false;
  disconnect();
}

asio::awaitable<void> SlackAdapter::connect() {
  json me = co_await api_.call("auth.test");
  if (!me.contains("user_id") || !me["user_id"].is_string())
    throw SlackError("auth.test", "no user_id in the answer", 200);
  self_.user_id = me["user_id"];
  self_.bot_id = me.value("bot_id", "");
  team_id_ = me.value("team_id", "");
  identity_.user_id = self_.user_id;
  identity_.username = me.value("user", "");
  std::string prefix = options_.platform + ":";
  for (const auto& [key, ts] : saved_cursors_.cursors(options_.bot)) {
    if (key.rfind(prefix, 0) != 0) continue;
    std::string channel = key.substr(prefix.size());
    cursors_[channel] = std::max(cursors_[channel], ts);
    last_active_[channel] = ts / 1000;  // server time: close enough for "recent"
  }
  // The first socket is opened here, so a wrong app token fails connect().
  auto first = std::make_shared<Conn>();
  first->ws = co_await open_socket();
  log::info("slack", options_.bot + " is @" + identity_.username + " (" + self_.user_id +
                         ") in team " + team_id_);
  stopping_ = false;
  auto alive = alive_;
  int generation = ++generation_;
  asio::co_spawn(
      io_,
      [this, alive, generation, first]() -> asio::awaitable<void> {
        if (*alive) co_await run_socket(generation, first);
      },
      asio::detached);
}

asio::awaitable<std::unique_ptr<WebSocketClient>> SlackAdapter::open_socket() {
  // A ticket is good for one connection: a fresh one every time.
  json open = co_await api_.call_app("apps.connections.open");
  if (!open.contains("url") || !open["url"].is_string())
    throw SlackError("apps.connections.open", "no url in the answer", 200);
  WebSocketOptions o;
  o.max_message_bytes = options_.max_frame_bytes;
  o.idle_timeout = options_.ws_idle_timeout;
  auto ws = co_await WebSocketClient::connect(open["url"].get<std::string>(), o);
  // Live only after hello.
  SlackFrame hello = parse_socket_frame(co_await ws->read());
  if (hello.kind != SlackFrame::Kind::kHello)
    throw SlackError("apps.connections.open", "", 0, {}, {},
                     "the socket's first frame was " +
                         (hello.type.empty() ? std::string("not a hello") : hello.type) +
                         (hello.reason.empty() ? "" : " (" + hello.reason + ")"));
  co_return ws;
}

void SlackAdapter::disconnect() {
  save_cursors();
  stopping_ = true;
  ++generation_;
  if (socket_conn_ && socket_conn_->ws) socket_conn_->ws->abort();
}

asio::awaitable<void> SlackAdapter::run_socket(int generation, std::shared_ptr<Conn> first) {
  auto alive = alive_;
  auto current = [&] { return *alive && !stopping_ && generation == generation_; };
  int failures = 0;
  while (current()) {
    std::shared_ptr<Conn> conn = std::move(first);
    std::string failure;
    try {
      if (!conn) {
        conn = std::make_shared<Conn>();
        conn->ws = co_await open_socket();
      }
      if (!current()) {
        co_await conn->ws->close();
        co_return;
      }
      socket_conn_ = conn;
      socket_ = conn->ws.get();
      ++connections_;
      failures = 0;
      // Whatever came while no socket was open (a drop, a restart, a refresh) is fetched.
      request_catch_up();
      co_await read_frames(conn, generation);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    if (!*alive) co_return;
    if (conn && conn->replaced) co_return;  // its successor's loop carries on
    if (conn && socket_conn_ == conn) {
      socket_conn_.reset();
      socket_ = nullptr;
    }
    if (!current()) co_return;
    int64_t wait = options_.reconnect.backoff_ms(++failures);
    ++counters_.reconnects;
    log::warn("slack", options_.bot + ": the socket ended (" + failure + "); reconnecting in " +
                           std::to_string(wait) + " ms");
    co_await sleep_ms(wait);
  }
}

asio::awaitable<void> SlackAdapter::read_frames(std::shared_ptr<Conn> conn, int generation) {
  auto alive = alive_;
  for (;;) {
    std::string text = co_await conn->ws->read();
    if (!*alive || generation != generation_) co_return;
    SlackFrame f = parse_socket_frame(text);
    using Kind = SlackFrame::Kind;
    if (f.kind == Kind::kEnvelope) {
      // The acknowledgement goes first, whatever the envelope holds: Slack redelivers after 3 s.
      conn->ws->send(socket_ack(f.envelope_id));
      if (f.envelope_type == "events_api") handle_event(f.payload);
    } else if (f.kind == Kind::kDisconnect) {
      log::info("slack", options_.bot + ": disconnect (" + f.reason + "); opening a new socket");
      if (!refreshing_) {
        refreshing_ = true;
        asio::co_spawn(io_, refresh(conn, generation), asio::detached);
      }
    } else if (f.kind == Kind::kMalformed) {
      log::warn("slack", options_.bot + ": ignored a malformed frame (" + f.error + ")");
    }
  }
}

asio::awaitable<void> SlackAdapter::refresh(std::shared_ptr<Conn> old, int generation) {
  auto alive = alive_;
  auto next = std::make_shared<Conn>();
  try {
    next->ws = co_await open_socket();  // with its hello
  } catch (const std::exception& e) {
    if (*alive) refreshing_ = false;
    log::warn("slack", options_.bot + ": could not open the new socket (" + e.what() +
                           "); the old one reconnects when it closes");
    co_return;
  }
  if (!*alive) co_return;
  refreshing_ = false;
  if (stopping_ || generation != generation_) {
    co_await next->ws->close();
    co_return;
  }
  old->replaced = true;
  asio::co_spawn(
      io_,
      [this, alive, generation, next]() -> asio::awaitable<void> {
        if (*alive) co_await run_socket(generation, next);
      },
      asio::detached);
  // Envelopes the old socket got until now were acknowledged on it; now it may go.
  co_await old->ws->close();
}

SlackContext SlackAdapter::context() const {
  SlackContext c;
  c.platform = options_.platform;
  c.bot = options_.bot;
  c.self = self_;
  c.resolve = [this](const std::string& id) {
    // The bot by its own name, so that "<@BOT> /help" reads "@copilot /help" as on Mattermost.
    if (id == self_.user_id) return identity_.username;
    auto it = users_.find(id);
    return it == users_.end() ? std::string() : it->second.name;
  };
  return c;
}

void SlackAdapter::handle_event(const json& payload) {
  SlackEvent e = parse_event_callback(payload, self_);
  if (!e.event_id.empty() && !remember(seen_events_, seen_events_order_, e.event_id)) return;
  using Kind = SlackEvent::Kind;
  switch (e.kind) {
    case Kind::kMessage:
    case Kind::kAppMention:
      handle_message(e);
      return;
    case Kind::kMessageChanged:
    case Kind::kMessageDeleted:
      if (auto change = to_inbound_change(e, context()); change && on_change_) on_change_(*change);
      return;
    case Kind::kReaction:
      if (auto r = to_inbound_reaction(e, context())) {
        auto alive = alive_;
        asio::co_spawn(
            io_,
            [this, alive, r = *r]() mutable -> asio::awaitable<void> {
              r.username = co_await username_of(r.user_id);
              if (*alive && on_reaction_) on_reaction_(std::move(r));
            },
            asio::detached);
      }
      return;
    case Kind::kIgnored:
      log::debug("slack", options_.bot + ": ignored " + e.event_type + " (" + e.reason + ")");
      return;
    case Kind::kMalformed:
      log::warn("slack", options_.bot + ": ignored a malformed event (" + e.reason + ")");
      return;
  }
}

void SlackAdapter::handle_message(const SlackEvent& e) {
  if (!e.message.channel_type.empty()) channel_types_[e.message.channel] = e.message.channel_type;
  remember_files(e.message);
  std::optional<InboundMessage> m = to_inbound_message(e, context());
  if (!m) return;
  if (auto held = held_.find(m->channel_id); held != held_.end()) {
    held->second.push_back(std::move(*m));  // after the channel's catch-up, in order
    return;
  }
  dispatch(std::move(*m));
}

void SlackAdapter::remember_files(const SlackMessage& message) {
  for (const SlackFile& f : message.files) {
    if (f.url_private_download.empty()) continue;
    if (file_urls_.size() >= kFileUrls) file_urls_.erase(file_urls_.begin());
    file_urls_[f.id] = f.url_private_download;
  }
}

void SlackAdapter::dispatch(InboundMessage m) {
  if (!remember(seen_posts_, seen_posts_order_, m.post_id)) return;
  std::string channel, ts;
  if (split_post_id(m.post_id, &channel, &ts)) {
    std::optional<int64_t> us = parse_ts(ts);
    if (us && *us > cursors_[channel]) {
      cursors_[channel] = *us;
      unsaved_cursors_.insert(channel);
      schedule_cursor_save();
    }
  }
  last_active_[m.channel_id] = unix_time_ms();
  outbox_.push_back(std::move(m));
  if (draining_) return;
  draining_ = true;
  asio::co_spawn(io_, drain_outbox(), asio::detached);
}

asio::awaitable<void> SlackAdapter::drain_outbox() {
  auto alive = alive_;
  while (*alive && !outbox_.empty()) {
    InboundMessage m = std::move(outbox_.front());
    outbox_.pop_front();
    if (m.username.empty() && !m.user_id.empty()) m.username = co_await username_of(m.user_id);
    if (!*alive) co_return;
    if (on_message_) on_message_(std::move(m));
  }
  if (*alive) draining_ = false;
}

void SlackAdapter::track_channel(const std::string& channel_id, int64_t since_ms) {
  int64_t& cursor = cursors_[channel_id];
  if (cursor == 0) cursor = since_ms * 1000;
  last_active_[channel_id] = unix_time_ms();
  request_catch_up();  // the first hello may have come already
}

void SlackAdapter::schedule_cursor_save() {
  if (cursor_timer_) return;
  cursor_timer_ = std::make_shared<asio::steady_timer>(io_, kCursorSaveDelay);
  auto alive = alive_;
  cursor_timer_->async_wait([this, alive](const boost::system::error_code& ec) {
    if (ec || !*alive) return;
    save_cursors();
  });
}

void SlackAdapter::save_cursors() {
  if (cursor_timer_) cursor_timer_->cancel();
  cursor_timer_.reset();
  if (unsaved_cursors_.empty()) return;
  std::vector<std::pair<std::string, int64_t>> batch;
  for (const std::string& id : unsaved_cursors_) batch.emplace_back(channel_key(id), cursors_[id]);
  unsaved_cursors_.clear();
  try {
    saved_cursors_.set_cursors(options_.bot, batch);
  } catch (const Error& e) {
    log::error("slack", std::string("could not save the catch-up cursors: ") + e.what());
  }
}

}  // namespace pf
