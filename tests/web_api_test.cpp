// The Slack Web API client (chat/slack/web_api.h) against the Slack test server: ok:false
// answers as SlackError (never retried), missing_scope with the scopes named, the token kinds,
// 429 with Retry-After honoured, 5xx and dropped connections retried, and the pacing budget that
// keeps a burst of calls (one method from many callers; chat.postMessage per channel) inside
// the tiers the server enforces, where the same burst unpaced meets 429s.
#include "chat/slack/web_api.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <exception>

#include "loopback_server.h"
#include "slack_test_server.h"

namespace pf {
namespace {

namespace asio = boost::asio;
using nlohmann::json;

// Runs work on io until it ends; rethrows its exception.
template <typename T>
T drive(asio::io_context& io, asio::awaitable<T> work) {
  std::exception_ptr failure;
  std::optional<T> result;
  asio::co_spawn(io, std::move(work), [&](std::exception_ptr e, T r) {
    failure = e;
    if (!e) result.emplace(std::move(r));
  });
  io.restart();
  io.run();
  if (failure) std::rethrow_exception(failure);
  return std::move(*result);
}

// Runs n calls at once on io; returns how many failed.
int drive_all(asio::io_context& io, int n, const std::function<asio::awaitable<json>(int)>& make) {
  int failed = 0;
  for (int i = 0; i < n; ++i)
    asio::co_spawn(io, make(i), [&](std::exception_ptr e, json) { failed += e != nullptr; });
  io.restart();
  io.run();
  return failed;
}

class WebApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    app_ = slack_.app("copilot");
    alice_ = slack_.user("alice")["id"];
    channel_ = slack_.channel("public", {alice_, app_["bot_user_id"]});
  }
  SlackApiOptions options(bool pace = true) {
    SlackApiOptions o;
    o.base_url = slack_.api_url();
    o.bot_token = app_["bot_token"];
    o.app_token = app_["app_token"];
    o.retry = RetryPolicy{3, 50, 200, 0.0};
    o.rates.enabled = pace;
    return o;
  }

  test::SlackServer slack_;
  json app_;
  std::string alice_, channel_;
  asio::io_context io_;
};

TEST_F(WebApiTest, AnOkFalseAnswerIsASlackErrorAndIsNotRetried) {
  SlackWebApi api(io_, options());
  try {
    drive(io_, api.call("chat.postMessage", {{"channel", "CNOSUCH"}, {"text", "hi"}}));
    FAIL() << "no error";
  } catch (const SlackError& e) {
    EXPECT_EQ(e.error(), "channel_not_found");
    EXPECT_EQ(e.status(), 200);
    EXPECT_EQ(e.method(), "chat.postMessage");
    EXPECT_NE(std::string(e.what()).find("channel_not_found"), std::string::npos);
  }
  EXPECT_EQ(slack_.calls("chat.postMessage").size(), 1u);
  // An argument error carries Slack's explanation.
  try {
    drive(io_, api.call("chat.postMessage", {{"text", "hi"}}));
    FAIL() << "no error";
  } catch (const SlackError& e) {
    EXPECT_EQ(e.error(), "invalid_arguments");
    EXPECT_NE(std::string(e.what()).find("missing required field: channel"), std::string::npos);
  }
  // And a good call answers.
  json ok = drive(io_, api.call("chat.postMessage", {{"channel", channel_}, {"text", "a & b"}}));
  EXPECT_EQ(ok["channel"], channel_);
  EXPECT_EQ(slack_.messages(channel_).back()["text"], "a & b");
}

TEST_F(WebApiTest, MissingScopeNamesTheScopeNeededAndTheTokensScopesAreKept) {
  std::string token = slack_.call(
      "POST", "/_test/tokens",
      {{"app_id", app_["app_id"]}, {"scopes", {"users:read", "channels:read"}}})["token"];
  SlackApiOptions o = options();
  o.bot_token = token;
  SlackWebApi api(io_, o);
  try {
    drive(io_, api.call("chat.postMessage", {{"channel", channel_}, {"text", "hi"}}));
    FAIL() << "no error";
  } catch (const SlackError& e) {
    EXPECT_EQ(e.error(), "missing_scope");
    EXPECT_EQ(e.needed(), "chat:write");
    EXPECT_EQ(e.provided(), "users:read,channels:read");
    EXPECT_NE(std::string(e.what()).find("chat:write"), std::string::npos);
  }
  EXPECT_EQ(api.scopes(), "users:read,channels:read");
  // A read method goes form-encoded and works with the scope it has.
  json info = drive(io_, api.call("users.info", {{"user", alice_}}));
  EXPECT_EQ(info["user"]["name"], "alice");
}

TEST_F(WebApiTest, EachTokenKindGoesWhereItBelongs) {
  SlackWebApi api(io_, options());
  json me = drive(io_, api.call("auth.test"));
  EXPECT_EQ(me["user_id"], app_["bot_user_id"]);
  EXPECT_EQ(me["bot_id"], app_["bot_id"]);
  json open = drive(io_, api.call_app("apps.connections.open"));
  EXPECT_EQ(open["url"].get<std::string>().rfind("ws://", 0), 0u);
  try {
    drive(io_, api.call("apps.connections.open"));
    FAIL() << "the bot token opened a socket";
  } catch (const SlackError& e) {
    EXPECT_EQ(e.error(), "not_allowed_token_type");
  }
  SlackApiOptions o = options();
  o.bot_token = "xoxb-wrong";
  SlackWebApi wrong(io_, o);
  try {
    drive(io_, wrong.call("auth.test"));
    FAIL() << "a wrong token passed";
  } catch (const SlackError& e) {
    EXPECT_EQ(e.error(), "invalid_auth");
  }
}

TEST_F(WebApiTest, A429IsRetriedAfterRetryAfter) {
  // The server allows one users.info per 2 s; the client's own pacing would allow 100 a minute.
  slack_.call("POST", "/_test/rate", {{"window_ms", 2000}, {"limits", {{"users.info", 1}}}});
  SlackWebApi api(io_, options());
  drive(io_, api.call("users.info", {{"user", alice_}}));
  json second = drive(io_, api.call("users.info", {{"user", alice_}}));
  EXPECT_EQ(second["user"]["id"], alice_);
  EXPECT_EQ(api.rate_limited(), 1);
  std::vector<json> calls = slack_.calls("users.info");
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_TRUE(calls[1]["ratelimited"].get<bool>());
  EXPECT_TRUE(calls[2]["ok"].get<bool>());
  // Retry-After said 2 s (rounded up): the retry waited for it.
  EXPECT_GE(calls[2]["t"].get<double>() - calls[1]["t"].get<double>(), 1500.0);
}

TEST_F(WebApiTest, ServerErrorsAreRetriedAndAnUnreachableServerIsAnError) {
  int served = 0;
  test::LoopbackServer flaky([&](asio::ip::tcp::socket& s) {
    namespace http = boost::beast::http;
    boost::beast::flat_buffer buf;
    http::request<http::string_body> req;
    boost::system::error_code ec;
    http::read(s, buf, req, ec);
    http::response<http::string_body> res{
        ++served <= 2 ? http::status::service_unavailable : http::status::ok, 11};
    res.set(http::field::content_type, "application/json; charset=utf-8");
    res.set(http::field::connection, "close");
    res.body() = served <= 2 ? "upstream down" : R"({"ok":true,"answer":42})";
    res.prepare_payload();
    http::write(s, res, ec);
  });
  SlackApiOptions o = options();
  o.base_url = "http://127.0.0.1:" + std::to_string(flaky.port()) + "/api";
  o.pool_connections = false;
  SlackWebApi api(io_, o);
  EXPECT_EQ(drive(io_, api.call("auth.test"))["answer"], 42);
  EXPECT_EQ(served, 3);
  // Not retried when the caller says so (a post that may have landed).
  served = 0;
  try {
    drive(io_, api.call("chat.postMessage", {{"channel", "C1"}, {"text", "x"}}, false));
    FAIL() << "no error";
  } catch (const SlackError& e) {
    EXPECT_EQ(e.status(), 503);
    EXPECT_EQ(e.error(), "");
  }
  EXPECT_EQ(served, 1);
  o.base_url = "http://127.0.0.1:1/api";
  SlackWebApi gone(io_, o);
  try {
    drive(io_, gone.call("auth.test"));
    FAIL() << "no error";
  } catch (const SlackError& e) {
    EXPECT_EQ(e.status(), 0);
  }
}

TEST_F(WebApiTest, ABurstOfOneMethodIsPacedInsideItsTierWithoutA429) {
  // Tier 3 = 50 calls per 2 s window on the server, and in the client's budget.
  slack_.call("POST", "/_test/rate", {{"window_ms", 2000}});
  slack_.call("POST", "/_test/reset");
  SlackApiOptions o = options();
  o.rates.window = std::chrono::milliseconds(2000);
  o.rates.margin = std::chrono::milliseconds(50);
  SlackWebApi api(io_, o);
  auto start = std::chrono::steady_clock::now();
  int failed = drive_all(io_, 120, [&](int) {
    return api.call("conversations.info", {{"channel", channel_}});
  });
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(slack_.ratelimited("conversations.info"), 0);
  EXPECT_EQ(slack_.calls("conversations.info").size(), 120u);
  EXPECT_EQ(api.rate_limited(), 0);
  // 120 calls at 50 per 2 s: the last ones waited two windows.
  EXPECT_GE(took, 4.0);
  // The same burst unpaced: the server refuses part of it (the test measures something).
  slack_.call("POST", "/_test/reset");
  SlackWebApi unpaced(io_, options(false));
  drive_all(io_, 60, [&](int) {
    return unpaced.call("conversations.info", {{"channel", channel_}});
  });
  EXPECT_GT(slack_.ratelimited("conversations.info"), 0);
}

TEST_F(WebApiTest, PostsArePacedPerChannel) {
  std::string other = slack_.channel("public", {alice_, app_["bot_user_id"]});
  slack_.call("POST", "/_test/reset");
  SlackWebApi api(io_, options());
  auto start = std::chrono::steady_clock::now();
  int failed = drive_all(io_, 10, [&](int i) {
    return api.call("chat.postMessage",
                    {{"channel", i % 2 ? other : channel_}, {"text", "n" + std::to_string(i)}});
  });
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(slack_.ratelimited("chat.postMessage"), 0);
  EXPECT_EQ(slack_.messages(channel_).size(), 5u);
  EXPECT_EQ(slack_.messages(other).size(), 5u);
  // 5 a channel at 1 per 1.2 s (1/s and the margin) after a burst of 3: about 2.4 s, the channels
  // side by side, not 4 s+.
  EXPECT_GE(took, 2.0);
  EXPECT_LT(took, 4.0);
}

TEST(SlackPacer, ReadySaysWhetherACallWouldGoAtOnce) {
  asio::io_context io;
  SlackRateLimits limits;
  limits.window = std::chrono::milliseconds(60000);
  SlackPacer pacer(io.get_executor(), limits);
  // Tier 2: 20 a minute, 5 of them in a quarter of it; the first five go at once.
  int admitted = 0;
  for (int i = 0; i < 5; ++i) {
    EXPECT_TRUE(pacer.ready("chat.startStream", "")) << i;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          co_await pacer.admit("chat.startStream", "");
          ++admitted;
        },
        asio::detached);
    io.restart();
    io.poll();
  }
  EXPECT_EQ(admitted, 5);
  EXPECT_FALSE(pacer.ready("chat.startStream", ""));  // the sixth would wait 15 s
  EXPECT_TRUE(pacer.ready("chat.appendStream", ""));  // another method has its own budget
  limits.enabled = false;
  SlackPacer off(io.get_executor(), limits);
  EXPECT_TRUE(off.ready("chat.startStream", ""));
}

}  // namespace
}  // namespace pf
