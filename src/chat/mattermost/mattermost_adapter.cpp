// The Mattermost adapter (see mattermost_adapter.h).
#include "chat/mattermost/mattermost_adapter.h"

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fstream>

#include "chat/mattermost/mattermost_events.h"
#include "core/clock.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/log.h"
#include "core/text.h"

namespace pf {
namespace {

namespace asio = boost::asio;
using nlohmann::json;

constexpr size_t kRecentIds = 500;
// How long a channel's newest post time may wait to be saved. The cursor only says where a
// replay after a restart starts; one that is behind by a moment replays posts that the state
// store then drops as answered (record_inbound), so posts in a burst share one transaction
// instead of a commit each on the way to their placeholders.
constexpr std::chrono::milliseconds kCursorSaveDelay{200};
constexpr int64_t kMaxFileBytes = 50 * 1024 * 1024;

asio::awaitable<void> sleep_ms(int64_t ms) {
  asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(ms));
  co_await t.async_wait(asio::use_awaitable);
}

// How long a 429 asks us to wait (X-Ratelimit-Reset, Retry-After), else the policy's backoff;
// never under 100 ms, so a "0" does not turn into a tight loop.
int64_t rate_limit_wait_ms(const HttpResponse& r, int64_t fallback) {
  int64_t asked = requested_wait_ms(r.headers);
  return asked < 0 ? fallback : std::max<int64_t>(100, asked);
}

bool mentions(const std::string& text, const std::string& username) {
  if (username.empty()) return false;
  std::string lower = ascii_lower(text), name = "@" + ascii_lower(username);
  for (size_t at = lower.find(name); at != std::string::npos; at = lower.find(name, at + 1)) {
    size_t end = at + name.size();
    bool word_end =
        end == lower.size() || !(std::isalnum(static_cast<unsigned char>(lower[end])) ||
                                 lower[end] == '_' || lower[end] == '-' ||
                                 (lower[end] == '.' && end + 1 < lower.size() &&
                                  std::isalnum(static_cast<unsigned char>(lower[end + 1]))));
    if (word_end) return true;
  }
  return false;
}

}  // namespace

MattermostAdapter::MattermostAdapter(asio::io_context& io, MattermostOptions options,
                                     CursorStore& saved_cursors)
    : io_(io), options_(std::move(options)), saved_cursors_(saved_cursors) {
  traits_.max_post_chars = options_.max_post_chars;
}

MattermostAdapter::~MattermostAdapter() {
  *alive_ = false;
  disconnect();
}

asio::awaitable<HttpResponse> MattermostAdapter::send_with_retry(HttpRequest request, bool retry) {
  for (int attempt = 1;; ++attempt) {
    HttpResponse r;
    std::string failure;
    try {
      r = co_await async_http_request(request);
    } catch (const NetError& e) {
      failure = e.what();
    }
    bool retryable = !failure.empty() || r.status == 429 || r.status >= 500;
    if (!retryable || !retry || stopping_ || options_.rest_retry.gives_up_after(attempt)) {
      if (!failure.empty()) throw MattermostError(failure, 0, "");
      co_return r;
    }
    int64_t wait = options_.rest_retry.backoff_ms(attempt);
    if (r.status == 429) {
      ++counters_.rate_limited;
      wait = rate_limit_wait_ms(r, wait);
    }
    log::warn("mattermost", request.method + " " + request.url + ": " +
                                (failure.empty() ? "HTTP " + std::to_string(r.status) : failure) +
                                "; retrying in " + std::to_string(wait) + " ms");
    co_await sleep_ms(wait);
  }
}

asio::awaitable<json> MattermostAdapter::rest(const std::string& method, const std::string& path,
                                              const json& body, bool retry) {
  HttpRequest req;
  req.method = method;
  req.url = options_.url + "/api/v4" + path;
  req.timeout = options_.rest_timeout;
  req.pool = options_.pool_connections ? &pool_ : nullptr;
  req.headers.emplace_back("Authorization", "Bearer " + options_.token);
  req.headers.emplace_back("X-Requested-With", "XMLHttpRequest");
  if (!body.is_null()) {
    req.headers.emplace_back("Content-Type", "application/json");
    req.body = body.dump();
  }
  HttpResponse r = co_await send_with_retry(std::move(req), retry);
  json answer = r.body.empty() ? json() : parse_json(r.body);
  if (r.status >= 400) {
    // An AppError {id, message, status_code}, or the rate limiter's plain text.
    std::string id, message;
    if (answer.is_object()) {
      if (answer.contains("id") && answer["id"].is_string()) id = answer["id"];
      if (answer.contains("message") && answer["message"].is_string()) message = answer["message"];
    }
    if (message.empty()) message = r.body.substr(0, 200);
    throw MattermostError(method + " " + path + ": HTTP " + std::to_string(r.status) + " " +
                              message + (id.empty() ? "" : " (" + id + ")"),
                          r.status, id);
  }
  if (answer.is_discarded())
    throw MattermostError(method + " " + path + ": not JSON", r.status, "");
  co_return answer;
}

asio::awaitable<void> MattermostAdapter::connect() {
  json me = co_await rest("GET", "/users/me");
  if (!me.is_object() || !me.contains("id") || !me["id"].is_string())
    throw MattermostError("GET /users/me: no user id in the answer", 200, "");
  identity_.user_id = me["id"];
  identity_.username = me.value("username", "");
  for (const auto& [key, t] : saved_cursors_.cursors(options_.bot)) {
    std::string prefix = options_.platform + ":";
    if (key.rfind(prefix, 0) != 0) continue;
    cursors_[key.substr(prefix.size())] = t;
    last_active_[key.substr(prefix.size())] = t;  // server time: close enough for "recent"
  }
  log::info("mattermost", options_.bot + " is @" + identity_.username + " on " + options_.url);
  stopping_ = false;
  auto alive = alive_;
  int generation = ++socket_generation_;
  asio::co_spawn(
      io_,
      [this, alive, generation]() -> asio::awaitable<void> {
        if (*alive) co_await run_socket(generation);
      },
      asio::detached);
}

void MattermostAdapter::track_channel(const std::string& channel_id, int64_t since_ms) {
  int64_t& cursor = cursors_[channel_id];
  if (cursor == 0) cursor = since_ms;
  last_active_[channel_id] = unix_time_ms();
  // The first connection's hello may have come already: look now too.
  request_replay();
}

void MattermostAdapter::schedule_cursor_save() {
  if (cursor_timer_) return;  // the pending save takes this one too
  cursor_timer_ = std::make_shared<asio::steady_timer>(io_, kCursorSaveDelay);
  auto alive = alive_;
  cursor_timer_->async_wait([this, alive](const boost::system::error_code& ec) {
    if (ec || !*alive) return;
    save_cursors();
  });
}

void MattermostAdapter::save_cursors() {
  if (cursor_timer_) cursor_timer_->cancel();
  cursor_timer_.reset();
  if (unsaved_cursors_.empty()) return;
  std::vector<std::pair<std::string, int64_t>> batch;
  for (const std::string& id : unsaved_cursors_) batch.emplace_back(channel_key(id), cursors_[id]);
  unsaved_cursors_.clear();
  try {
    saved_cursors_.set_cursors(options_.bot, batch);
  } catch (const Error& e) {
    log::error("mattermost", std::string("could not save the replay cursors: ") + e.what());
  }
}

void MattermostAdapter::disconnect() {
  save_cursors();
  stopping_ = true;
  ++socket_generation_;
  if (socket_) socket_->abort();
}

asio::awaitable<void> MattermostAdapter::run_socket(int generation) {
  auto alive = alive_;
  int failures = 0;
  // A loop of an earlier connect() (asleep between tries when disconnect() came) ends here.
  auto current = [&] { return *alive && !stopping_ && generation == socket_generation_; };
  while (current()) {
    std::string ws_url = options_.url;
    ws_url.replace(0, ws_url.rfind("https", 0) == 0 ? 5 : 4,
                   ws_url.rfind("https", 0) == 0 ? "wss" : "ws");
    ws_url += "/api/v4/websocket";
    if (!connection_id_.empty())
      ws_url +=
          "?connection_id=" + connection_id_ + "&sequence_number=" + std::to_string(next_seq_);
    std::string failure;
    // The loop owns its socket: a later connect()'s loop never frees it under this one.
    std::unique_ptr<WebSocketClient> ws;
    try {
      WebSocketOptions o;
      o.headers.emplace_back("Authorization", "Bearer " + options_.token);
      o.max_message_bytes = options_.max_frame_bytes;
      o.idle_timeout = options_.ws_idle_timeout;
      ws = co_await WebSocketClient::connect(ws_url, o);
      if (!current()) co_return;
      socket_ = ws.get();
      ++connections_;
      failures = 0;
      // Whether or not the server resumes the old connection, posts may have been missed while
      // it was down: fetch them (what was seen is not dispatched twice).
      if (connections_ > 1) request_replay();
      // Servers that drop the upgrade's Authorization (some proxies do) take the challenge.
      json challenge = {{"seq", 1},
                        {"action", "authentication_challenge"},
                        {"data", {{"token", options_.token}}}};
      ws->send(challenge.dump());
      next_action_seq_ = 2;
      co_await read_events(*ws);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    if (!*alive) co_return;
    if (socket_ == ws.get()) socket_ = nullptr;
    if (!current()) break;
    ++failures;
    ++counters_.reconnects;
    int64_t wait = options_.reconnect.backoff_ms(failures);
    log::warn("mattermost", options_.bot + ": the event stream ended (" + failure +
                                "); reconnecting in " + std::to_string(wait) + " ms");
    co_await sleep_ms(wait);
  }
}

asio::awaitable<void> MattermostAdapter::read_events(WebSocketClient& ws) {
  for (;;) {
    std::string frame = co_await ws.read();
    handle_frame(frame);
  }
}

void MattermostAdapter::handle_frame(const std::string& text) {
  MattermostFrame f = parse_mattermost_frame(text);
  using Kind = MattermostFrame::Kind;
  if (f.kind == Kind::kMalformed) {
    log::warn("mattermost", options_.bot + ": ignored a malformed event (" + f.error + ")");
    return;
  }
  if (f.kind == Kind::kReply) return;
  if (f.kind == Kind::kHello) {
    // A new connection id means the server started afresh: what it sent meanwhile is gone.
    bool fresh = f.connection_id != connection_id_;
    connection_id_ = f.connection_id;
    next_seq_ = f.seq + 1;
    if (fresh) request_replay();
    return;
  }
  if (f.seq >= 0) {
    if (f.seq != next_seq_) {
      log::warn("mattermost", options_.bot + ": events " + std::to_string(next_seq_) + ".." +
                                  std::to_string(f.seq - 1) + " were missed; replaying");
      request_replay();
    }
    next_seq_ = f.seq + 1;
  }
  if (f.kind == Kind::kPosted) {
    std::string sender = f.sender_name;
    if (!sender.empty() && sender.front() == '@') sender.erase(0, 1);
    channel_types_[f.post.channel_id] = f.channel_type;
    if (auto held = held_.find(f.post.channel_id); held != held_.end()) {
      held->second.push_back(HeldPost{std::move(f.post), f.channel_type, std::move(sender)});
      return;
    }
    dispatch_post(f.post, f.channel_type, false, sender);
    return;
  }
  if (f.kind == Kind::kReaction && f.reaction.user_id != identity_.user_id && on_reaction_) {
    InboundReaction r = f.reaction;
    r.platform = options_.platform;
    r.bot = options_.bot;
    auto alive = alive_;
    asio::co_spawn(
        io_,
        [this, alive, r]() mutable -> asio::awaitable<void> {
          r.username = co_await username_of(r.user_id);
          if (*alive && on_reaction_) on_reaction_(std::move(r));
        },
        asio::detached);
  }
}

void MattermostAdapter::dispatch_post(const MattermostPost& post, const std::string& channel_type,
                                      bool replayed, const std::string& username) {
  if (post.user_id == identity_.user_id || post.delete_at != 0 || !post.original_id.empty() ||
      post.type.rfind("system_", 0) == 0)
    return;
  if (recent_ids_.count(post.id)) return;
  recent_ids_.insert(post.id);
  recent_order_.push_back(post.id);
  if (recent_order_.size() > kRecentIds) {
    recent_ids_.erase(recent_order_.front());
    recent_order_.erase(recent_order_.begin());
  }
  if (post.create_at > cursors_[post.channel_id]) {
    cursors_[post.channel_id] = post.create_at;
    unsaved_cursors_.insert(post.channel_id);
    schedule_cursor_save();
  }
  last_active_[post.channel_id] = unix_time_ms();
  if (!on_message_) return;
  InboundMessage m;
  m.platform = options_.platform;
  m.bot = options_.bot;
  m.channel_id = post.channel_id;
  m.user_id = post.user_id;
  m.username = username;
  m.text = post.message;
  m.post_id = post.id;
  m.thread_root_id = post.root_id;
  m.is_dm = channel_type == "D" || channel_type == "G";
  m.mentions_bot = m.is_dm || mentions(post.message, identity_.username);
  m.created_at_ms = post.create_at;
  m.replayed = replayed;
  m.attachments = post.files;
  m.from_bot = post.from_bot;
  on_message_(std::move(m));
}

void MattermostAdapter::request_replay() {
  if (replay_running_) {
    replay_again_ = true;  // the latest request runs once the current replay ends
    return;
  }
  // Set before the coroutine runs: requests made meanwhile (a burst of track_channel calls,
  // several reconnects) must join this replay, not start their own.
  replay_running_ = true;
  auto alive = alive_;
  asio::co_spawn(
      io_,
      [this, alive]() -> asio::awaitable<void> {
        if (!*alive) co_return;
        do {
          replay_again_ = false;
          try {
            co_await replay();
          } catch (const std::exception& e) {
            log::error("mattermost", options_.bot + ": replay failed: " + e.what());
          }
          if (!*alive) co_return;
        } while (replay_again_ && !stopping_);
        replay_running_ = false;
      },
      asio::detached);
}

asio::awaitable<void> MattermostAdapter::replay() {
  ++replays_;
  int64_t now = unix_time_ms();
  std::vector<std::pair<std::string, int64_t>> channels;
  for (const auto& [id, since] : cursors_) {
    auto active = last_active_.find(id);
    if (active != last_active_.end() && now - active->second <= options_.replay_recent.count())
      channels.emplace_back(id, since);
  }
  for (const auto& [id, since] : channels) held_.try_emplace(id);
  try {
    for (const auto& [id, since] : channels) {
      co_await replay_channel(id, since);
      release_held(id);
    }
  } catch (...) {
    for (const auto& [id, since] : channels) release_held(id);
    throw;
  }
}

void MattermostAdapter::release_held(const std::string& channel_id) {
  auto it = held_.find(channel_id);
  if (it == held_.end()) return;
  std::vector<HeldPost> held = std::move(it->second);
  held_.erase(it);
  // Those the replay fetched too were dispatched by it: dispatch_post drops them.
  for (const HeldPost& h : held) dispatch_post(h.post, h.channel_type, false, h.username);
}

asio::awaitable<void> MattermostAdapter::replay_channel(const std::string& channel_id,
                                                        int64_t since) {
  json list =
      co_await rest("GET", "/channels/" + channel_id + "/posts?since=" + std::to_string(since));
  std::vector<MattermostPost> missed;
  if (list.is_object() && list.contains("posts") && list["posts"].is_object())
    for (const auto& [id, p] : list["posts"].items()) {
      std::string error;
      std::optional<MattermostPost> post = parse_mattermost_post(p.dump(), &error);
      // Edit-history rows, deletions and edits of older posts come back too: none is new.
      if (!post || post->channel_id != channel_id || post->create_at <= since) continue;
      missed.push_back(std::move(*post));
    }
  std::sort(missed.begin(), missed.end(), [](const MattermostPost& a, const MattermostPost& b) {
    return a.create_at != b.create_at ? a.create_at < b.create_at : a.id < b.id;
  });
  if (missed.empty()) co_return;
  std::string type = co_await channel_type(channel_id);
  for (const MattermostPost& p : missed) {
    if (p.user_id == identity_.user_id || recent_ids_.count(p.id)) continue;
    std::string username = co_await username_of(p.user_id);
    dispatch_post(p, type, true, username);
  }
}

asio::awaitable<std::string> MattermostAdapter::channel_type(const std::string& channel_id) {
  auto it = channel_types_.find(channel_id);
  if (it != channel_types_.end() && !it->second.empty()) co_return it->second;
  json c = co_await rest("GET", "/channels/" + channel_id);
  std::string type = c.is_object() ? c.value("type", "") : "";
  channel_types_[channel_id] = type;
  co_return type;
}

asio::awaitable<std::string> MattermostAdapter::send_message(const std::string& channel_id,
                                                             const std::string& text,
                                                             const std::string& thread_root_id,
                                                             const std::string& key) {
  json body = {{"channel_id", channel_id}, {"message", text}, {"root_id", thread_root_id}};
  if (!key.empty()) body["pending_post_id"] = identity_.user_id + ":" + key;
  json post = co_await rest("POST", "/posts", body);
  if (!post.is_object() || !post.contains("id") || !post["id"].is_string())
    throw MattermostError("POST /posts: no post id in the answer", 201, "");
  ++counters_.posts;
  co_return post["id"].get<std::string>();
}

asio::awaitable<void> MattermostAdapter::update_message(const std::string& post_id,
                                                        const std::string& text) {
  json body = {{"id", post_id}, {"message", text}};
  co_await rest("PUT", "/posts/" + post_id + "/patch", body);
  ++counters_.edits;
}

asio::awaitable<void> MattermostAdapter::delete_message(const std::string& post_id) {
  co_await rest("DELETE", "/posts/" + post_id);
}

asio::awaitable<void> MattermostAdapter::set_typing(const std::string& channel_id,
                                                    const std::string& thread_root_id) {
  // Over the event socket while it is up, as Mattermost's own clients send it: one frame instead
  // of an HTTP request for the server to parse and answer at the busiest moment of a turn, its
  // start. The server's answer (seq_reply) is not waited for: typing is best-effort.
  if (socket_) {
    json action = {{"seq", next_action_seq_++},
                   {"action", "user_typing"},
                   {"data", {{"channel_id", channel_id}, {"parent_id", thread_root_id}}}};
    if (socket_->send(action.dump())) co_return;
  }
  try {
    json body = {{"channel_id", channel_id}, {"parent_id", thread_root_id}};
    co_await rest("POST", "/users/me/typing", body, false);
  } catch (const std::exception& e) {
    log::debug("mattermost", std::string("typing: ") + e.what());
  }
}

asio::awaitable<void> MattermostAdapter::add_reaction(const std::string& post_id,
                                                      const std::string& emoji) {
  try {
    json body = {{"user_id", identity_.user_id}, {"post_id", post_id}, {"emoji_name", emoji}};
    co_await rest("POST", "/reactions", body);
  } catch (const std::exception& e) {
    log::warn("mattermost", "could not add :" + emoji + ": to " + post_id + ": " + e.what());
  }
}

asio::awaitable<void> MattermostAdapter::download_file(const std::string& file_id,
                                                       const std::string& dest_path) {
  HttpRequest req;
  req.method = "GET";
  req.url = options_.url + "/api/v4/files/" + file_id;
  req.timeout = options_.rest_timeout;
  req.pool = options_.pool_connections ? &pool_ : nullptr;
  req.headers.emplace_back("Authorization", "Bearer " + options_.token);
  HttpResponse r = co_await send_with_retry(std::move(req), true);
  if (r.status != 200)
    throw MattermostError("GET /files/" + file_id + ": HTTP " + std::to_string(r.status), r.status,
                          "");
  if (static_cast<int64_t>(r.body.size()) > kMaxFileBytes)
    throw MattermostError("the attachment " + file_id + " is larger than 50 MiB", 200, "");
  write_file_atomic(dest_path, r.body);
}

asio::awaitable<std::string> MattermostAdapter::send_file(const std::string& channel_id,
                                                          const std::string& path,
                                                          const std::string& text,
                                                          const std::string& thread_root_id) {
  std::string content = read_file(path);
  std::string boundary = "pilotfish-" + random_id(24);
  std::string name = path.substr(path.find_last_of('/') + 1);
  std::string body = "--" + boundary +
                     "\r\nContent-Disposition: form-data; name=\"channel_id\"\r\n\r\n" +
                     channel_id + "\r\n--" + boundary +
                     "\r\nContent-Disposition: form-data; name=\"files\"; filename=\"" + name +
                     "\"\r\nContent-Type: application/octet-stream\r\n\r\n" + content + "\r\n--" +
                     boundary + "--\r\n";
  HttpRequest req;
  req.method = "POST";
  req.url = options_.url + "/api/v4/files";
  req.timeout = options_.rest_timeout;
  req.pool = options_.pool_connections ? &pool_ : nullptr;
  req.headers.emplace_back("Authorization", "Bearer " + options_.token);
  req.headers.emplace_back("Content-Type", "multipart/form-data; boundary=" + boundary);
  req.body = std::move(body);
  HttpResponse r = co_await send_with_retry(std::move(req), true);
  json info = parse_json(r.body);
  if (r.status >= 400 || !info.is_object() || !info.contains("file_infos") ||
      !info["file_infos"].is_array() || info["file_infos"].empty())
    throw MattermostError("POST /files: HTTP " + std::to_string(r.status), r.status, "");
  json post_body = {{"channel_id", channel_id},
                    {"message", text},
                    {"root_id", thread_root_id},
                    {"file_ids", json::array({info["file_infos"][0].value("id", "")})}};
  json post = co_await rest("POST", "/posts", post_body);
  co_return post.value("id", "");
}

asio::awaitable<std::vector<std::pair<std::string, std::string>>>
MattermostAdapter::discover_dm_channels() {
  std::vector<std::pair<std::string, std::string>> out;
  json channels = co_await rest("GET", "/users/" + identity_.user_id + "/channels");
  if (!channels.is_array()) co_return out;
  for (const json& c : channels) {
    if (!c.is_object() || c.value("type", "") != "D") continue;
    std::string name = c.value("name", "");
    size_t sep = name.find("__");
    if (sep == std::string::npos) continue;
    std::string a = name.substr(0, sep), b = name.substr(sep + 2);
    std::string other = a == identity_.user_id ? b : a;
    channel_types_[c.value("id", "")] = "D";
    out.emplace_back(c.value("id", ""), other);
  }
  co_return out;
}

asio::awaitable<std::string> MattermostAdapter::username_of(const std::string& user_id) {
  auto now = std::chrono::steady_clock::now();
  auto it = users_.find(user_id);
  if (it != users_.end() && now - it->second.at < std::chrono::minutes(5))
    co_return it->second.username;
  std::string name;
  try {
    json u = co_await rest("GET", "/users/" + user_id);
    if (u.is_object()) name = u.value("username", "");
  } catch (const std::exception& e) {
    log::warn("mattermost", "could not look up user " + user_id + ": " + e.what());
    co_return std::string();
  }
  users_[user_id] = CachedUser{name, now};
  co_return name;
}

}  // namespace pf
