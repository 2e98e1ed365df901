// The Slack adapter's catch-up after a gap (see slack_adapter.h): per recently active channel,
// conversations.history from the newest ts seen (reaching back thread_lookback to find parents
// whose latest_reply is newer) and conversations.replies for those threads; what is newer than
// the cursor is dispatched oldest first, as replayed, while the channel's live messages wait.
#include "chat/slack/slack_adapter.h"

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "core/clock.h"
#include "core/log.h"

namespace pf {
namespace {

namespace asio = boost::asio;
using nlohmann::json;

constexpr int kMaxPages = 50;  // a bound on one channel's paging, whatever the server says
constexpr int kPageSize = 200;

std::string next_cursor(const json& answer) {
  if (!answer.contains("response_metadata") || !answer["response_metadata"].is_object()) return "";
  const json& c = answer["response_metadata"].value("next_cursor", json());
  return c.is_string() ? c.get<std::string>() : "";
}

int64_t ts_of(const SlackMessage& m) {
  return parse_ts(m.ts).value_or(0);
}

}  // namespace

void SlackAdapter::request_catch_up() {
  if (catch_up_running_) {
    catch_up_again_ = true;
    return;
  }
  catch_up_running_ = true;
  auto alive = alive_;
  asio::co_spawn(
      io_,
      [this, alive]() -> asio::awaitable<void> {
        if (!*alive) co_return;
        do {
          catch_up_again_ = false;
          try {
            co_await catch_up();
          } catch (const std::exception& e) {
            log::error("slack", options_.bot + ": catch-up failed: " + e.what());
          }
          if (!*alive) co_return;
        } while (catch_up_again_ && !stopping_);
        catch_up_running_ = false;
      },
      asio::detached);
}

asio::awaitable<void> SlackAdapter::catch_up() {
  ++catch_ups_;
  int64_t now = unix_time_ms();
  std::vector<std::pair<std::string, int64_t>> channels;
  for (const auto& [id, since] : cursors_) {
    auto active = last_active_.find(id);
    if (active != last_active_.end() && now - active->second <= options_.replay_recent.count())
      channels.emplace_back(id, since);
  }
  for (const auto& c : channels) held_.try_emplace(c.first);
  for (const auto& c : channels) {
    try {
      co_await catch_up_channel(c.first, c.second);
    } catch (const SlackError& e) {
      // One channel the bot left, or a refusal, does not stop the others.
      log::warn("slack", options_.bot + ": could not catch up " + c.first + ": " + e.what());
    } catch (...) {
      for (const auto& other : channels) release_held(other.first);
      throw;
    }
    release_held(c.first);
  }
}

void SlackAdapter::release_held(const std::string& channel_id) {
  auto it = held_.find(channel_id);
  if (it == held_.end()) return;
  std::vector<InboundMessage> held = std::move(it->second);
  held_.erase(it);
  for (InboundMessage& m : held) dispatch(std::move(m));  // those caught up already are dropped
}

asio::awaitable<void> SlackAdapter::catch_up_channel(const std::string& channel_id,
                                                     int64_t since_us) {
  int64_t floor = (unix_time_ms() - options_.replay_window.count()) * 1000;
  since_us = std::max(since_us, floor);
  int64_t oldest = std::max(since_us - options_.thread_lookback.count() * 1000, floor);
  std::vector<SlackMessage> missed;
  std::vector<std::string> threads;
  std::string cursor;
  for (int page = 0; page < kMaxPages; ++page) {
    json args = {{"channel", channel_id}, {"oldest", format_ts(oldest)}, {"limit", kPageSize}};
    if (!cursor.empty()) args["cursor"] = cursor;
    json answer = co_await api_.call("conversations.history", args);
    json list = answer.value("messages", json());
    if (!list.is_array()) list = json::array();
    for (const json& item : list) {
      std::string why;
      std::optional<SlackMessage> m = parse_slack_message(item, channel_id, &why);
      if (!m) continue;
      if (ts_of(*m) > since_us) missed.push_back(*m);
      const json& latest = item.value("latest_reply", json());
      if (latest.is_string() && parse_ts(latest.get<std::string>()).value_or(0) > since_us)
        threads.push_back(m->ts);
    }
    cursor = next_cursor(answer);
    if (cursor.empty() || !answer.value("has_more", false)) break;
  }
  for (const std::string& thread : threads) {
    std::vector<SlackMessage> replies = co_await fetch_replies(channel_id, thread, since_us);
    missed.insert(missed.end(), replies.begin(), replies.end());
  }
  std::sort(missed.begin(), missed.end(),
            [](const SlackMessage& a, const SlackMessage& b) { return ts_of(a) < ts_of(b); });
  if (missed.empty()) co_return;
  std::string type = co_await channel_type(channel_id);
  SlackContext ctx = context();
  for (SlackMessage& m : missed) {
    if (m.user == self_.user_id || (!self_.bot_id.empty() && m.bot_id == self_.bot_id)) continue;
    // Only new posts are requests: no joins, edits or other notices.
    if (!m.subtype.empty() && m.subtype != "file_share" && m.subtype != "thread_broadcast" &&
        m.subtype != "bot_message")
      continue;
    m.channel_type = type;
    remember_files(m);
    std::optional<InboundMessage> in = to_inbound_message(m, false, ctx);
    if (!in) continue;
    in->replayed = true;
    dispatch(std::move(*in));
  }
}

asio::awaitable<std::vector<SlackMessage>> SlackAdapter::fetch_replies(
    const std::string& channel_id, const std::string& thread_ts, int64_t since_us) {
  std::vector<SlackMessage> out;
  std::string cursor;
  for (int page = 0; page < kMaxPages; ++page) {
    json args = {{"channel", channel_id},
                 {"ts", thread_ts},
                 {"oldest", format_ts(since_us)},
                 {"limit", kPageSize}};
    if (!cursor.empty()) args["cursor"] = cursor;
    json answer = co_await api_.call("conversations.replies", args);
    json list = answer.value("messages", json());
    if (!list.is_array()) list = json::array();
    for (const json& item : list) {
      std::string why;
      std::optional<SlackMessage> m = parse_slack_message(item, channel_id, &why);
      // The parent comes first on every page; older replies are not missed.
      if (!m || m->ts == thread_ts || ts_of(*m) <= since_us) continue;
      out.push_back(std::move(*m));
    }
    cursor = next_cursor(answer);
    if (cursor.empty() || !answer.value("has_more", false)) break;
  }
  co_return out;
}

asio::awaitable<std::string> SlackAdapter::channel_type(const std::string& channel_id) {
  auto it = channel_types_.find(channel_id);
  if (it != channel_types_.end() && !it->second.empty()) co_return it->second;
  std::string type;
  try {
    json args = {{"channel", channel_id}};
    json info = co_await api_.call("conversations.info", args);
    const json& c = info.value("channel", json::object());
    if (c.value("is_im", false))
      type = "im";
    else if (c.value("is_mpim", false))
      type = "mpim";
    else if (c.value("is_private", false))
      type = "group";
    else
      type = "channel";
  } catch (const SlackError& e) {
    log::warn("slack", "conversations.info " + channel_id + ": " + e.what());
    co_return std::string();
  }
  channel_types_[channel_id] = type;
  co_return type;
}

}  // namespace pf
