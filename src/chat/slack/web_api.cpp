// The Slack Web API client and its pacing budget (see web_api.h).
#include "chat/slack/web_api.h"

#include <algorithm>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cmath>
#include <set>

#include "core/json.h"
#include "core/log.h"

namespace pf {
namespace {

namespace asio = boost::asio;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string text_of(const json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string error_message(const std::string& method, const std::string& error, int status,
                          const std::string& needed, const std::string& provided,
                          const std::string& detail) {
  std::string m = "Slack " + method + ": " + (error.empty() ? "failed" : error);
  if (!needed.empty())
    m += " (the bot needs the scope " + needed + "; the token has " +
         (provided.empty() ? "none" : provided) + ")";
  if (status != 0 && status != 200) m += " (HTTP " + std::to_string(status) + ")";
  if (!detail.empty()) m += ": " + detail;
  return m;
}

// Methods whose specs accept only form encoding: reads, and the two that take no content.
bool form_encoded(const std::string& method) {
  static const std::set<std::string> kForm = {"auth.test",
                                              "apps.connections.open",
                                              "bots.info",
                                              "users.info",
                                              "users.list",
                                              "users.conversations",
                                              "conversations.history",
                                              "conversations.replies",
                                              "conversations.info",
                                              "conversations.members",
                                              "files.getUploadURLExternal"};
  return kForm.count(method) > 0;
}

std::string percent_encode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

std::string form_body(const json& args) {
  std::string body;
  if (!args.is_object()) return body;
  for (const auto& [key, value] : args.items()) {
    if (value.is_null()) continue;
    std::string v = value.is_string() ? value.get<std::string>() : value.dump();
    if (!body.empty()) body += '&';
    body += percent_encode(key) + "=" + percent_encode(v);
  }
  return body;
}

asio::awaitable<void> sleep_until(Clock::time_point t) {
  asio::steady_timer timer(co_await asio::this_coro::executor, t);
  co_await timer.async_wait(asio::use_awaitable);
}

}  // namespace

SlackError::SlackError(std::string method, std::string error, int status, std::string needed,
                       std::string provided, const std::string& detail)
    : Error(error_message(method, error, status, needed, provided, detail)),
      method_(std::move(method)),
      error_(std::move(error)),
      status_(status),
      needed_(std::move(needed)),
      provided_(std::move(provided)) {}

int slack_method_tier(const std::string& method) {
  static const std::map<std::string, int> kTiers = {{"auth.test", 4},
                                                    {"apps.connections.open", 3},
                                                    {"bots.info", 3},
                                                    {"users.info", 4},
                                                    {"users.list", 2},
                                                    {"chat.postMessage", 0},
                                                    {"chat.update", 3},
                                                    {"chat.delete", 3},
                                                    {"chat.startStream", 2},
                                                    {"chat.appendStream", 4},
                                                    {"chat.stopStream", 2},
                                                    {"assistant.threads.setStatus", 4},
                                                    {"reactions.add", 3},
                                                    {"reactions.remove", 2},
                                                    {"conversations.history", 3},
                                                    {"conversations.replies", 3},
                                                    {"conversations.info", 3},
                                                    {"conversations.open", 3},
                                                    {"conversations.join", 3},
                                                    {"conversations.create", 2},
                                                    {"conversations.invite", 3},
                                                    {"conversations.list", 2},
                                                    {"conversations.members", 4},
                                                    {"users.conversations", 3},
                                                    {"files.getUploadURLExternal", 4},
                                                    {"files.completeUploadExternal", 4}};
  auto it = kTiers.find(method);
  return it == kTiers.end() ? 2 : it->second;  // an unlisted method: the strictest common tier
}

SlackPacer::SlackPacer(asio::any_io_executor executor, SlackRateLimits limits)
    : executor_(std::move(executor)), limits_(limits) {}

int SlackPacer::limit_of(const std::string& method) const {
  int tier = slack_method_tier(method);
  if (tier == 0) return 0;
  int per_window = tier == 2 ? 20 : tier == 3 ? 50 : 100;
  return std::max(1, static_cast<int>(std::floor(per_window * limits_.scale)));
}

SlackPacer::Bucket& SlackPacer::bucket(const std::string& method, const std::string& channel) {
  int limit = limit_of(method);
  std::string key = limit == 0 ? method + "|" + channel : method;
  auto& slot = buckets_[key];
  if (!slot) {
    slot = std::make_unique<Bucket>(executor_);
    if (limit == 0) {
      // 1 a second per channel (scaled like the tiers), post_burst of them at once.
      slot->bucket = true;
      slot->window = std::chrono::milliseconds(static_cast<int64_t>(
                         static_cast<double>(limits_.window.count()) / (60.0 * limits_.scale))) +
                     limits_.margin;
      slot->limit = std::max(1, limits_.post_burst);
      slot->tokens = slot->limit;
      slot->refilled = Clock::now();
    } else {
      slot->limit = limit;
      slot->window = limits_.window;
    }
  }
  return *slot;
}

SlackPacer::Clock::time_point SlackPacer::next_allowed(Bucket& b) const {
  Clock::time_point now = Clock::now(), t = std::max(now, b.held_until);
  if (b.bucket) {
    auto per_token = std::chrono::duration<double, std::milli>(b.window);
    b.tokens = std::min<double>(b.limit, b.tokens + (now - b.refilled) / per_token);
    b.refilled = now;
    if (b.tokens >= 1) return t;
    auto wait = std::chrono::duration_cast<Clock::duration>((1 - b.tokens) * per_token);
    return std::max(t, now + wait + std::chrono::milliseconds(1));
  }
  size_t n = b.times.size();
  // The whole window: at most limit calls in any window.
  if (n >= static_cast<size_t>(b.limit))
    t = std::max(t, b.times[n - b.limit].second + b.window + limits_.margin);
  // The short window: a quarter of them per quarter of the window, so a burst (the first replies
  // of many channels at once) goes out at once but cannot spend a minute's budget in a second.
  size_t shortn = static_cast<size_t>(std::max(1, b.limit / 4));
  if (shortn < static_cast<size_t>(b.limit) && n >= shortn) {
    auto span = b.window * static_cast<int64_t>(shortn) / b.limit;
    t = std::max(t, b.times[n - shortn].second + span + limits_.margin);
  }
  return t;
}

asio::awaitable<uint64_t> SlackPacer::admit(const std::string& method, const std::string& channel) {
  if (!limits_.enabled) co_return 0;
  Bucket& b = bucket(method, channel);
  AsyncGate::Permit turn = co_await b.gate.acquire();
  // Checked again after each wait: a 429 or a late write may have moved the time meanwhile.
  for (Clock::time_point t = next_allowed(b); t > Clock::now(); t = next_allowed(b))
    co_await sleep_until(t);
  uint64_t id = next_id_++;
  if (b.bucket) {
    b.tokens -= 1;
    co_return id;
  }
  b.times.emplace_back(id, Clock::now());
  while (b.times.size() > static_cast<size_t>(b.limit)) b.times.pop_front();
  co_return id;
}

bool SlackPacer::ready(const std::string& method, const std::string& channel) {
  if (!limits_.enabled) return true;
  Bucket& b = bucket(method, channel);
  if (b.gate.in_use() > 0 || b.gate.waiting() > 0) return false;
  Clock::time_point next = next_allowed(b);  // before now: it reads the clock itself
  return next <= Clock::now();
}

void SlackPacer::sent(const std::string& method, const std::string& channel, uint64_t id) {
  if (!limits_.enabled || id == 0) return;
  Bucket& b = bucket(method, channel);
  auto it =
      std::find_if(b.times.begin(), b.times.end(), [id](const auto& e) { return e.first == id; });
  if (it == b.times.end()) return;
  it->second = std::max(it->second, Clock::now());
  std::sort(b.times.begin(), b.times.end(),
            [](const auto& x, const auto& y) { return x.second < y.second; });
}

void SlackPacer::hold(const std::string& method, const std::string& channel,
                      std::chrono::milliseconds wait) {
  Bucket& b = bucket(method, channel);
  b.held_until = std::max(b.held_until, Clock::now() + wait);
}

SlackWebApi::SlackWebApi(asio::io_context& io, SlackApiOptions options,
                         std::shared_ptr<SlackPacer> pacer)
    : options_(std::move(options)),
      pacer_(pacer ? std::move(pacer)
                   : std::make_shared<SlackPacer>(io.get_executor(), options_.rates)) {
  while (!options_.base_url.empty() && options_.base_url.back() == '/')
    options_.base_url.pop_back();
}

SlackWebApi::~SlackWebApi() {
  *alive_ = false;
}

HttpRequest SlackWebApi::make_request(const std::string& method, const json& args, bool app_token) {
  HttpRequest req;
  req.method = "POST";
  req.url = options_.base_url + "/" + method;
  req.timeout = options_.timeout;
  req.pool = options_.pool_connections ? &pool_ : nullptr;
  req.headers.emplace_back("Authorization",
                           "Bearer " + (app_token ? options_.app_token : options_.bot_token));
  if (form_encoded(method)) {
    req.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
    req.body = form_body(args);
  } else {
    req.headers.emplace_back("Content-Type", "application/json; charset=utf-8");
    req.body = args.is_object() ? args.dump() : "{}";
  }
  return req;
}

json SlackWebApi::read_answer(const std::string& method, const HttpResponse& r) {
  std::string scopes = r.header("x-oauth-scopes");
  if (!scopes.empty()) scopes_ = scopes;
  if (r.status != 200) throw SlackError(method, "", r.status, {}, {}, r.body.substr(0, 200));
  json answer = parse_json(r.body);
  if (answer.is_discarded() || !answer.is_object())
    throw SlackError(method, "", r.status, {}, {}, "the answer is not a JSON object");
  auto ok = answer.find("ok");
  if (ok != answer.end() && ok->is_boolean() && ok->get<bool>()) return answer;
  std::string detail;
  if (answer.contains("response_metadata") && answer["response_metadata"].is_object()) {
    const json& messages = answer["response_metadata"].value("messages", json::array());
    if (messages.is_array())
      for (const json& m : messages)
        if (m.is_string()) detail += (detail.empty() ? "" : "; ") + m.get<std::string>();
  }
  std::string error = text_of(answer, "error");
  throw SlackError(method, error.empty() ? "unknown_error" : error, r.status,
                   text_of(answer, "needed"), text_of(answer, "provided"), detail);
}

asio::awaitable<json> SlackWebApi::call(std::string method, json args, bool retry) {
  co_return co_await invoke(std::move(method), std::move(args), false, retry);
}

asio::awaitable<json> SlackWebApi::call_app(std::string method, json args) {
  co_return co_await invoke(std::move(method), std::move(args), true, true);
}

asio::awaitable<json> SlackWebApi::invoke(std::string method, json args, bool app_token,
                                          bool retry) {
  auto alive = alive_;
  auto pacer = pacer_;
  std::string channel = text_of(args, "channel");
  int limited = 0;
  for (int attempt = 1;;) {
    uint64_t id = co_await pacer->admit(method, channel);
    if (!*alive) throw SlackError(method, "", 0, {}, {}, "the client was closed");
    HttpRequest req = make_request(method, args, app_token);
    req.written = [pacer, method, channel, id] { pacer->sent(method, channel, id); };
    HttpResponse r;
    std::string failure;
    try {
      r = co_await async_http_request(std::move(req));
    } catch (const NetError& e) {
      failure = e.what();
    }
    if (!*alive) throw SlackError(method, "", 0, {}, {}, "the client was closed");
    if (failure.empty() && r.status == 429) {
      ++rate_limited_;
      int64_t wait = requested_wait_ms(r.headers);
      if (wait < 0) wait = options_.retry.backoff_ms(limited + 1);
      wait = std::max<int64_t>(wait, 100);
      pacer->hold(method, channel, std::chrono::milliseconds(wait));
      if (++limited >= options_.max_rate_limited) throw SlackError(method, "ratelimited", 429);
      log::warn("slack", method + ": rate-limited; waiting " + std::to_string(wait) + " ms");
      continue;  // the pacer's hold makes the next admission wait
    }
    if (!failure.empty() || r.status >= 500) {
      std::string why = failure.empty() ? "HTTP " + std::to_string(r.status) : failure;
      if (!retry || options_.retry.gives_up_after(attempt))
        throw SlackError(method, "", r.status, {}, {}, why);
      int64_t wait = options_.retry.backoff_ms(attempt++);
      log::warn("slack", method + ": " + why + "; retrying in " + std::to_string(wait) + " ms");
      co_await sleep_until(Clock::now() + std::chrono::milliseconds(wait));
      if (!*alive) throw SlackError(method, "", 0, {}, {}, "the client was closed");
      continue;
    }
    co_return read_answer(method, r);
  }
}

asio::awaitable<HttpResponse> SlackWebApi::fetch(HttpRequest request, bool with_token) {
  auto alive = alive_;
  if (with_token) request.headers.emplace_back("Authorization", "Bearer " + options_.bot_token);
  if (request.timeout == std::chrono::milliseconds(60000)) request.timeout = options_.timeout;
  request.pool = options_.pool_connections ? &pool_ : nullptr;
  std::string what = request.method + " " + request.url.substr(0, request.url.find('?'));
  for (int attempt = 1;; ++attempt) {
    HttpResponse r;
    std::string failure;
    try {
      r = co_await async_http_request(request);
    } catch (const NetError& e) {
      failure = e.what();
    }
    if (!*alive) throw SlackError(what, "", 0, {}, {}, "the client was closed");
    if (failure.empty() && r.status < 500 && r.status != 429) co_return r;
    if (options_.retry.gives_up_after(attempt)) {
      if (!failure.empty()) throw SlackError(what, "", 0, {}, {}, failure);
      co_return r;
    }
    int64_t wait = options_.retry.backoff_ms(attempt);
    if (r.status == 429) wait = std::max<int64_t>(100, requested_wait_ms(r.headers));
    co_await sleep_until(Clock::now() + std::chrono::milliseconds(wait));
  }
}

}  // namespace pf
