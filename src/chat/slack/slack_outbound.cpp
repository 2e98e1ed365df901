// The Slack adapter's outbound side (see slack_adapter.h): posts (with an idempotency key in
// the message metadata, looked for before a post is tried again), edits, deletions, reactions,
// assistant-thread status, native streaming, files both ways, DM discovery and user names.
#include "chat/slack/slack_adapter.h"

#include <set>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "chat/slack/mrkdwn.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/text.h"

namespace pf {
namespace {

namespace asio = boost::asio;
using nlohmann::json;

constexpr const char* kReplyEvent = "pilotfish_reply";

asio::awaitable<void> sleep_ms(int64_t ms) {
  asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(ms));
  co_await t.async_wait(asio::use_awaitable);
}

// A post id "<channel>:<ts>" split; throws when it is not one.
std::pair<std::string, std::string> split(const std::string& post_id) {
  std::string channel, ts;
  if (!split_post_id(post_id, &channel, &ts)) throw Error("not a Slack post id: " + post_id);
  return {channel, ts};
}

// The ts of a thread root given as a post id (or as a bare ts).
std::string thread_ts_of(const std::string& thread_root_id) {
  std::string channel, ts;
  if (thread_root_id.empty()) return "";
  return split_post_id(thread_root_id, &channel, &ts) ? ts : thread_root_id;
}

std::string str(const json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

asio::awaitable<std::string> SlackAdapter::send_message(const std::string& channel_id,
                                                        const std::string& text,
                                                        const std::string& thread_root_id,
                                                        const std::string& key) {
  std::string channel = channel_id, thread_ts = thread_ts_of(thread_root_id);
  json args = {{"channel", channel}, {"text", markdown_to_mrkdwn(text)}};
  if (!thread_ts.empty()) args["thread_ts"] = thread_ts;
  if (key.empty()) {
    json r = co_await api_.call("chat.postMessage", args);
    ++counters_.posts;
    co_return slack_post_id(str(r, "channel"), str(r, "ts"));
  }
  args["metadata"] = {{"event_type", kReplyEvent}, {"event_payload", {{"key", key}}}};
  for (int attempt = 1;; ++attempt) {
    try {
      json r = co_await api_.call("chat.postMessage", args, false);
      ++counters_.posts;
      co_return slack_post_id(str(r, "channel"), str(r, "ts"));
    } catch (const SlackError& e) {
      // A refusal is final; a timeout or a 5xx may have posted it.
      if (!e.error().empty() || options_.rest_retry.gives_up_after(attempt)) throw;
      log::warn("slack", "chat.postMessage: " + std::string(e.what()) + "; looking for it");
    }
    co_await sleep_ms(options_.rest_retry.backoff_ms(attempt));
    std::string found;
    try {
      found = co_await find_posted(channel, thread_ts, key);
    } catch (const SlackError& e) {
      log::warn("slack", std::string("could not look for the post: ") + e.what());
    }
    if (!found.empty()) co_return found;
  }
}

asio::awaitable<std::string> SlackAdapter::find_posted(const std::string& channel,
                                                       const std::string& thread_ts,
                                                       const std::string& key) {
  json args = {{"channel", channel}, {"include_all_metadata", true}, {"limit", 50}};
  if (!thread_ts.empty()) args["ts"] = thread_ts;
  json r = co_await api_.call(thread_ts.empty() ? "conversations.history" : "conversations.replies",
                              args);
  json list = r.value("messages", json());
  if (!list.is_array()) list = json::array();
  for (const json& m : list) {
    if (!m.is_object() || str(m, "user") != self_.user_id) continue;
    const json& meta = m.value("metadata", json::object());
    if (!meta.is_object() || str(meta, "event_type") != kReplyEvent) continue;
    if (str(meta.value("event_payload", json::object()), "key") == key)
      co_return slack_post_id(channel.front() == 'U' ? str(r, "channel") : channel, str(m, "ts"));
  }
  co_return std::string();
}

asio::awaitable<void> SlackAdapter::update_message(const std::string& post_id,
                                                   const std::string& text) {
  auto [channel, ts] = split(post_id);
  json args = {{"channel", channel}, {"ts", ts}, {"text", markdown_to_mrkdwn(text)}};
  co_await api_.call("chat.update", args);
  ++counters_.edits;
}

asio::awaitable<void> SlackAdapter::delete_message(const std::string& post_id) {
  auto [channel, ts] = split(post_id);
  json args = {{"channel", channel}, {"ts", ts}};
  co_await api_.call("chat.delete", args);
}

asio::awaitable<void> SlackAdapter::set_typing(const std::string& channel_id,
                                               const std::string& thread_root_id) {
  // Slack shows bots no typing indicator; the assistant-thread status says as much.
  co_await set_status(channel_id, thread_root_id, "is typing…");
}

void SlackAdapter::status_failed(const SlackError& e) {
  // Off for the process where the workspace has no Agents feature or the scope is missing.
  if (e.error() == "not_agent_app" || e.error() == "missing_scope" ||
      e.error() == "not_allowed_token_type")
    status_off_ = true;
  if (e.error() == "not_agent_app") traits_.native_streaming = false;
  if (status_logged_) return;
  status_logged_ = true;
  log::warn("slack", options_.bot + ": no assistant-thread status (" + e.what() + ")");
}

asio::awaitable<void> SlackAdapter::set_status(const std::string& channel_id,
                                               const std::string& thread_root_id,
                                               const std::string& status) {
  std::string thread_ts = thread_ts_of(thread_root_id);
  if (status_off_ || thread_ts.empty()) co_return;
  // A status line is best effort: when busy threads have spent its tier for now it is skipped
  // rather than queued, since it would hold the reply behind it in the channel's outbox. A
  // clear still goes (it is what ends a reply that said nothing).
  if (!status.empty() && !api_.pacer().ready("assistant.threads.setStatus", "")) co_return;
  try {
    json args = {{"channel_id", channel_id}, {"thread_ts", thread_ts}, {"status", status}};
    co_await api_.call("assistant.threads.setStatus", args);
  } catch (const SlackError& e) {
    status_failed(e);
  }
}

asio::awaitable<void> SlackAdapter::add_reaction(const std::string& post_id,
                                                 const std::string& emoji) {
  std::string name = emoji;
  while (!name.empty() && name.front() == ':') name.erase(0, 1);
  while (!name.empty() && name.back() == ':') name.pop_back();
  try {
    auto [channel, ts] = split(post_id);
    json args = {{"channel", channel}, {"timestamp", ts}, {"name", name}};
    co_await api_.call("reactions.add", args);
  } catch (const SlackError& e) {
    if (e.error() != "already_reacted")
      log::warn("slack", "could not add :" + name + ": to " + post_id + ": " + e.what());
  } catch (const Error& e) {
    log::warn("slack", e.what());
  }
}

asio::awaitable<std::string> SlackAdapter::start_stream(const std::string& channel_id,
                                                        const std::string& thread_root_id,
                                                        const std::string& recipient_user_id,
                                                        const std::string& text) {
  if (!traits_.native_streaming) throw Error("Slack: this workspace does not stream natively");
  // Tier 2 (about 20 a minute for the workspace): when busy channels have spent it, this reply
  // is a post and edits rather than a wait of up to a minute for its first word.
  if (!api_.pacer().ready("chat.startStream", ""))
    throw Error("Slack: chat.startStream's budget is spent for now");
  json args = {{"channel", channel_id}, {"thread_ts", thread_ts_of(thread_root_id)}};
  if (!text.empty()) args["markdown_text"] = text;
  std::string type = co_await channel_type(channel_id);
  if (type != "im") {
    args["recipient_user_id"] = recipient_user_id;
    args["recipient_team_id"] = team_id_;
  }
  try {
    json r = co_await api_.call("chat.startStream", args);
    co_return slack_post_id(str(r, "channel"), str(r, "ts"));
  } catch (const SlackError& e) {
    if (e.error() == "not_agent_app") {
      traits_.native_streaming = false;
      log::info("slack", options_.bot + ": the workspace has no native streaming; posts and edits");
    }
    throw;
  }
}

asio::awaitable<void> SlackAdapter::append_stream(const std::string& post_id,
                                                  const std::string& text) {
  auto [channel, ts] = split(post_id);
  if (text.empty()) co_return;
  json args = {{"channel", channel}, {"ts", ts}, {"markdown_text", text}};
  co_await api_.call("chat.appendStream", args);
}

asio::awaitable<void> SlackAdapter::stop_stream(const std::string& post_id,
                                                const std::string& final_text) {
  auto [channel, ts] = split(post_id);
  json args = {{"channel", channel}, {"ts", ts}};
  if (!final_text.empty()) args["markdown_text"] = final_text;
  co_await api_.call("chat.stopStream", args);
}

asio::awaitable<void> SlackAdapter::download_file(const std::string& file_id,
                                                  const std::string& dest_path) {
  auto url = file_urls_.find(file_id);
  if (url == file_urls_.end())
    throw SlackError("files", "", 0, {}, {}, "no download address known for file " + file_id);
  HttpRequest req;
  req.method = "GET";
  req.url = url->second;
  HttpResponse r = co_await api_.fetch(req, true);
  if (r.status != 200)
    throw SlackError("files", "", r.status, {}, {}, "could not download " + file_id);
  // A token that cannot see the file gets a sign-in page with HTTP 200, not an error.
  if (r.header("Content-Type").rfind("text/html", 0) == 0)
    throw SlackError("files", "", r.status, {}, {},
                     "Slack answered " + file_id +
                         " with a sign-in page: the bot token lacks files:read or cannot see it");
  if (static_cast<int64_t>(r.body.size()) > options_.max_file_bytes)
    throw SlackError("files", "", r.status, {}, {}, "the attachment " + file_id + " is too large");
  write_file_atomic(dest_path, r.body);
}

asio::awaitable<std::string> SlackAdapter::send_file(const std::string& channel_id,
                                                     const std::string& path,
                                                     const std::string& text,
                                                     const std::string& thread_root_id) {
  std::string content = read_file(path);
  std::string name = path.substr(path.find_last_of('/') + 1);
  json ask = {{"filename", name}, {"length", static_cast<int64_t>(content.size())}};
  json slot = co_await api_.call("files.getUploadURLExternal", ask);
  std::string file_id = str(slot, "file_id");
  HttpRequest up;
  up.method = "POST";
  up.url = str(slot, "upload_url");
  up.headers.emplace_back("Content-Type", "application/octet-stream");
  up.body = std::move(content);
  HttpResponse r = co_await api_.fetch(std::move(up), false);
  if (r.status != 200)
    throw SlackError("files upload", "", r.status, {}, {}, r.body.substr(0, 200));
  std::string thread_ts = thread_ts_of(thread_root_id);
  json done = {{"files", json::array({{{"id", file_id}, {"title", name}}})},
               {"channel_id", channel_id}};
  if (!thread_ts.empty()) done["thread_ts"] = thread_ts;
  if (!text.empty()) done["initial_comment"] = markdown_to_mrkdwn(text);
  co_await api_.call("files.completeUploadExternal", done);
  co_return co_await find_file_share(channel_id, thread_ts, file_id);
}

asio::awaitable<std::string> SlackAdapter::find_file_share(const std::string& channel,
                                                           const std::string& thread_ts,
                                                           const std::string& file_id) {
  // The share is posted moments after completeUploadExternal, which does not name it.
  for (int attempt = 0; attempt < 10; ++attempt) {
    json args = {{"channel", channel}, {"limit", 20}};
    if (!thread_ts.empty()) args["ts"] = thread_ts;
    json r = co_await api_.call(
        thread_ts.empty() ? "conversations.history" : "conversations.replies", args);
    json list = r.value("messages", json());
    if (!list.is_array()) list = json::array();
    for (const json& m : list) {
      json files = m.is_object() ? m.value("files", json()) : json();
      if (!files.is_array()) continue;
      for (const json& f : files)
        if (str(f, "id") == file_id) co_return slack_post_id(channel, str(m, "ts"));
    }
    co_await sleep_ms(300);
  }
  log::warn("slack", "the share of file " + file_id + " did not appear in " + channel);
  co_return std::string();
}

asio::awaitable<std::vector<std::pair<std::string, std::string>>>
SlackAdapter::discover_dm_channels() {
  std::vector<std::pair<std::string, std::string>> out;
  std::string cursor;
  for (int page = 0; page < 50; ++page) {
    json args = {{"types", "im"}, {"limit", 200}};
    if (!cursor.empty()) args["cursor"] = cursor;
    json r = co_await api_.call("users.conversations", args);
    json list = r.value("channels", json());
    if (!list.is_array()) list = json::array();
    for (const json& c : list) {
      std::string id = str(c, "id"), user = str(c, "user");
      if (id.empty()) continue;
      channel_types_[id] = "im";
      out.emplace_back(id, user);
    }
    cursor = str(r.value("response_metadata", json::object()), "next_cursor");
    if (cursor.empty()) break;
  }
  co_return out;
}

asio::awaitable<std::string> SlackAdapter::username_of(const std::string& user_id) {
  auto now = std::chrono::steady_clock::now();
  auto it = users_.find(user_id);
  if (it != users_.end() && now - it->second.at < std::chrono::minutes(5))
    co_return it->second.name;
  std::string name;
  try {
    json args = {{"user", user_id}};
    json r = co_await api_.call("users.info", args);
    name = str(r.value("user", json::object()), "name");
  } catch (const SlackError& e) {
    log::warn("slack", "could not look up user " + user_id + ": " + e.what());
    co_return std::string();
  }
  users_[user_id] = CachedUser{name, now};
  co_return name;
}

asio::awaitable<std::optional<std::map<std::string, std::string>>> SlackAdapter::resolve_handles(
    const std::vector<std::string>& handles) {
  std::set<std::string> wanted;
  for (std::string h : handles) {
    h = ascii_lower(h);
    if (!h.empty() && h.front() == '@') h.erase(0, 1);
    if (!h.empty()) wanted.insert(h);
  }
  std::map<std::string, std::string> found;
  std::string cursor;
  do {
    json args = {{"limit", 200}};
    if (!cursor.empty()) args["cursor"] = cursor;
    json r = co_await api_.call("users.list", args);
    for (const json& u : r.value("members", json::array())) {
      if (!u.is_object() || u.value("deleted", false)) continue;
      std::string id = str(u, "id");
      json profile = u.value("profile", json::object());
      // An entry may be the id itself (kept as it is), the name or the display name.
      for (std::string name : {id, str(u, "name"), str(profile, "display_name")})
        if (!name.empty() && wanted.count(ascii_lower(name))) found.emplace(ascii_lower(name), id);
    }
    cursor = str(r.value("response_metadata", json::object()), "next_cursor");
  } while (!cursor.empty() && found.size() < wanted.size());
  co_return found;
}

}  // namespace pf
