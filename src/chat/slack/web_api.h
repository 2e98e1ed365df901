// The Slack Web API client for one app in one workspace (../shared/spec/slack-protocol.md, "Web
// API"): POST <base>/<method> with the bot token (or, for apps.connections.open, the app-level
// token) in Authorization, write methods as application/json; charset=utf-8, read methods
// form-encoded (Slack's specs list only that for them). An `ok:false` answer (HTTP 200) is a
// SlackError and never retried; HTTP 429 holds that method (per channel for chat.postMessage)
// for Retry-After seconds and retries; 5xx and network failures are retried with the policy.
// Every call first waits its turn in a pacing budget per method (Tier 2/3/4 per window, and
// chat.postMessage per channel), shared by all callers of the client, so that a workspace's
// busy channels together stay inside Slack's limits instead of meeting 429s.
//
// Threads: everything on the io_context the client was made with (calls wait on its timers).
// Errors: SlackError (a pf::Error) for refusals, failures and exhausted retries.
#pragma once

#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>

#include "core/error.h"
#include "core/retry.h"
#include "net/async_gate.h"
#include "net/http_client.h"
#include "nlohmann/json.hpp"

namespace pf {

// A call Slack refused (`error`: "missing_scope", "ratelimited", "channel_not_found", ...), or
// that failed without an answer (error empty, status 0) or with an HTTP error (status).
class SlackError : public Error {
 public:
  SlackError(std::string method, std::string error, int status, std::string needed = {},
             std::string provided = {}, const std::string& detail = {});
  const std::string& method() const { return method_; }
  const std::string& error() const { return error_; }
  int status() const { return status_; }                 // HTTP status; 0 when nothing was answered
  const std::string& needed() const { return needed_; }  // missing_scope: the scope needed
  const std::string& provided() const { return provided_; }  // missing_scope: the token's

 private:
  std::string method_, error_;
  int status_;
  std::string needed_, provided_;
};

// Slack's published limits, as the pacer keeps to them (scale and window for tests whose server
// counts in a shorter window).
struct SlackRateLimits {
  bool enabled = true;
  std::chrono::milliseconds window{60000};  // Tier 2 = 20, Tier 3 = 50, Tier 4 = 100 per window
  double scale = 1.0;                       // multiplies every tier (at least 1 per window)
  int post_burst = 3;                       // chat.postMessage per channel: 1/s with this burst
  std::chrono::milliseconds margin{200};    // added to each wait: the way to the server
};

// The Slack tier of a method (2, 3 or 4), or 0 for chat.postMessage's per-channel limit.
int slack_method_tier(const std::string& method);

// The pacing budget. Per tiered method, the times of its last calls, kept within two sliding
// windows: the tier's limit per window, and a short one that spreads them (a quarter of the limit
// per quarter of the window) so a burst does not spend a minute's budget at once. Per channel for
// chat.postMessage, a token bucket (post_burst tokens, one more a second). Each wait has the
// margin added. Admission is first come, first served.
// Threads: the executor's thread only; it must outlive the calls that use it.
class SlackPacer {
 public:
  SlackPacer(boost::asio::any_io_executor executor, SlackRateLimits limits);
  // Waits until a call of method (in channel) may go, and counts it; returns its id for sent().
  boost::asio::awaitable<uint64_t> admit(const std::string& method, const std::string& channel);
  // The call counted as id was written at now (later than admitted: a queue in between).
  void sent(const std::string& method, const std::string& channel, uint64_t id);
  // Whether a call of method (in channel) would go at once: no other waits for it, and its
  // budget has room now.
  bool ready(const std::string& method, const std::string& channel);
  // A 429: no call of method (in channel) before now + wait.
  void hold(const std::string& method, const std::string& channel, std::chrono::milliseconds wait);
  // Calls of method per window, as paced (0: chat.postMessage's per-channel bucket).
  int limit_of(const std::string& method) const;
  const SlackRateLimits& limits() const { return limits_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Bucket {
    explicit Bucket(boost::asio::any_io_executor ex) : gate(std::move(ex), 1) {}
    AsyncGate gate;  // one admission at a time, in arrival order
    std::deque<std::pair<uint64_t, Clock::time_point>> times;  // the last calls, oldest first
    Clock::time_point held_until{};
    int limit = 1;  // tiers: calls per window; chat.postMessage: the bucket's size
    std::chrono::milliseconds window{1000};
    // chat.postMessage: a token bucket per channel, refilled one token per `window`.
    bool bucket = false;
    double tokens = 0;
    Clock::time_point refilled{};
  };
  Bucket& bucket(const std::string& method, const std::string& channel);
  Clock::time_point next_allowed(Bucket& b) const;

  boost::asio::any_io_executor executor_;
  SlackRateLimits limits_;
  std::map<std::string, std::unique_ptr<Bucket>> buckets_;
  uint64_t next_id_ = 1;
};

struct SlackApiOptions {
  std::string base_url = "https://slack.com/api";  // no trailing slash
  std::string bot_token;                           // xoxb-…
  std::string app_token;                           // xapp-… (apps.connections.open only)
  RetryPolicy retry{6, 1000, 30000, 0.25};         // 5xx and network failures
  int max_rate_limited = 8;                        // 429s in a row before a call gives up
  std::chrono::milliseconds timeout{30000};
  SlackRateLimits rates;
  // Keep connections alive for reuse (only when every call runs on the client's io_context).
  bool pool_connections = true;
};

class SlackWebApi {
 public:
  // io must outlive the client; pacer, when given, is shared with other clients of the same app.
  SlackWebApi(boost::asio::io_context& io, SlackApiOptions options,
              std::shared_ptr<SlackPacer> pacer = nullptr);
  ~SlackWebApi();

  // Calls a method with args (a JSON object) and returns the answer (ok:true). retry false: a
  // 5xx or network failure is thrown at once (the call may have been done; 429s are still
  // retried). Throws SlackError. Arguments are taken by value: the coroutine may outlive them.
  boost::asio::awaitable<nlohmann::json> call(std::string method,
                                              nlohmann::json args = nlohmann::json::object(),
                                              bool retry = true);
  // The same with the app-level token.
  boost::asio::awaitable<nlohmann::json> call_app(std::string method,
                                                  nlohmann::json args = nlohmann::json::object());
  // Any other request (file downloads and uploads): 5xx and network failures retried; any
  // answered status returned. with_token adds the bot token. Throws SlackError(no answer).
  boost::asio::awaitable<HttpResponse> fetch(HttpRequest request, bool with_token);

  // The bot token's scopes as the last answer's x-oauth-scopes named them (for `bridge check`).
  const std::string& scopes() const { return scopes_; }
  int rate_limited() const { return rate_limited_; }  // 429s met so far
  const SlackApiOptions& options() const { return options_; }
  SlackPacer& pacer() { return *pacer_; }

 private:
  boost::asio::awaitable<nlohmann::json> invoke(std::string method, nlohmann::json args,
                                                bool app_token, bool retry);
  HttpRequest make_request(const std::string& method, const nlohmann::json& args, bool app_token);
  nlohmann::json read_answer(const std::string& method, const HttpResponse& r);

  SlackApiOptions options_;
  std::shared_ptr<SlackPacer> pacer_;
  ConnectionPool pool_;
  std::string scopes_;
  int rate_limited_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace pf
