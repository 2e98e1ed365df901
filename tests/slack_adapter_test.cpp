// The Slack adapter (chat/slack/slack_adapter.h) against the Slack test server: identity, a
// mention answered once although message and app_mention both arrive, acks before work,
// redeliveries not dispatched twice, a refresh without a gap, a dropped socket and a restart
// caught up oldest first and once (thread replies too), edits, deletions and reactions
// reported, posts/edits/reactions/files/streams sent, 429s honoured and chat.update paced
// across many channels without a 429.
#include "chat/slack/slack_adapter.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <deque>
#include <boost/asio/io_context.hpp>
#include <fstream>

#include "core/clock.h"
#include "io_runner.h"
#include "slack_test_server.h"

namespace pf {
namespace {

namespace asio = boost::asio;
using nlohmann::json;

class MemoryCursors : public CursorStore {
 public:
  void set_cursors(const std::string&, const std::vector<std::pair<std::string, int64_t>>& c) override {
    for (const auto& [k, v] : c) saved[k] = std::max(saved[k], v);
  }
  std::vector<std::pair<std::string, int64_t>> cursors(const std::string&) override {
    return {saved.begin(), saved.end()};
  }
  std::map<std::string, int64_t> saved;
};

class SlackAdapterTest : public ::testing::Test {
 protected:
  SlackAdapterTest() : slack_({"--ack-timeout-ms", "1000"}) {}
  void SetUp() override {
    app_ = slack_.app("copilot");
    bot_user_ = app_["bot_user_id"];
    alice_ = slack_.user("alice")["id"];
    channel_ = slack_.channel("public", {alice_, bot_user_});
  }
  std::unique_ptr<SlackAdapter> make(int rate_window_ms = 60000) {
    SlackOptions o = test::adapter_options(slack_, app_);
    o.reconnect = RetryPolicy{0, 100, 500, 0.0};
    o.rates.margin = std::chrono::milliseconds(50);
    o.rates.window = std::chrono::milliseconds(rate_window_ms);
    auto a = std::make_unique<SlackAdapter>(io_, o, cursors_);
    a->on_message([this](InboundMessage m) { got_.push_back(std::move(m)); });
    a->on_change([this](InboundChange c) { changes_.push_back(std::move(c)); });
    a->on_reaction([this](InboundReaction r) { reactions_.push_back(std::move(r)); });
    return a;
  }
  template <typename T>
  T run(asio::awaitable<T> work) {
    return test::run_on(io_, std::move(work));
  }
  void run_void(asio::awaitable<void> work) { test::run_on(io_, std::move(work)); }
  bool pump(const std::function<bool()>& done, int ms = 15000) { return test::pump(io_, done, ms); }
  void settle(int ms) { pump([] { return false; }, ms); }
  int count(const std::string& ts) {
    int n = 0;
    for (const auto& m : got_) n += m.post_id == channel_ + ":" + ts;
    return n;
  }

  test::SlackServer slack_;
  json app_;
  std::string bot_user_, alice_, channel_;
  asio::io_context io_;
  MemoryCursors cursors_;
  std::vector<InboundMessage> got_;
  std::vector<InboundChange> changes_;
  std::vector<InboundReaction> reactions_;
};

TEST_F(SlackAdapterTest, AMentionIsDispatchedOnceAndEveryEnvelopeAckedAtOnce) {
  auto a = make();
  run_void(a->connect());
  EXPECT_EQ(a->identity().user_id, bot_user_);
  EXPECT_EQ(a->identity().username, "copilot");
  EXPECT_EQ(a->traits().markup, Markup::kMrkdwn);
  EXPECT_EQ(a->traits().edits_per_minute, 50);
  std::string ts = slack_.post(alice_, channel_, "<@" + bot_user_ + "> where is retry?");
  ASSERT_TRUE(pump([&] { return count(ts) == 1; }));
  settle(500);
  EXPECT_EQ(count(ts), 1);
  const InboundMessage& m = got_.back();
  EXPECT_TRUE(m.mentions_bot);
  EXPECT_EQ(m.username, "alice");
  EXPECT_EQ(m.user_id, alice_);
  EXPECT_FALSE(m.replayed);
  json env = slack_.call("GET", "/_test/apps/" + app_["app_id"].get<std::string>() + "/envelopes");
  ASSERT_EQ(env["envelopes"].size(), 2u);  // message and app_mention
  for (const json& e : env["envelopes"]) {
    EXPECT_EQ(e["outcome"], "acked");
    EXPECT_LT(e["acked_at"].get<double>() - e["sent_at"].get<double>(), 500.0);
  }
}

TEST_F(SlackAdapterTest, ARedeliveredEventIsNotDispatchedTwice) {
  auto a = make();
  run_void(a->connect());
  slack_.call("POST", "/_test/apps/" + app_["app_id"].get<std::string>() + "/delivery",
              {{"ignore_acks", true}});
  std::string ts = slack_.post(alice_, channel_, "hello there");
  // The server redelivers (retry_attempt 1, same event_id) after its 1 s ack timeout.
  ASSERT_TRUE(pump([&] {
    json env = slack_.call("GET", "/_test/apps/" + app_["app_id"].get<std::string>() + "/envelopes");
    for (const json& e : env["envelopes"])
      if (e["retry_attempt"].get<int>() >= 2) return true;
    return false;
  }));
  EXPECT_EQ(count(ts), 1);
}

TEST_F(SlackAdapterTest, ARefreshOpensTheNewSocketBeforeTheOldClosesAndLosesNothing) {
  auto a = make();
  run_void(a->connect());
  a->track_channel(channel_, unix_time_ms());
  slack_.call("POST", "/_test/sockets/disconnect",
              {{"reason", "refresh_requested"}, {"close_after_ms", 3000}});
  ASSERT_TRUE(pump([&] { return a->connections() == 2; }));
  json socks = slack_.call("GET", "/_test/sockets");
  ASSERT_EQ(socks["history"].size(), 2u) << socks.dump();
  json old = socks["history"][0];
  json next = socks["history"][1];
  EXPECT_FALSE(next["hello_at"].is_null());
  // The old one was closed by us after the new said hello, not by the server's 3 s deadline.
  ASSERT_TRUE(pump([&] {
    return !slack_.call("GET", "/_test/sockets")["history"][0]["closed_at"].is_null();
  }));
  socks = slack_.call("GET", "/_test/sockets");
  EXPECT_LE(next["hello_at"].get<double>(), socks["history"][0]["closed_at"].get<double>());
  EXPECT_LT(socks["history"][0]["closed_at"].get<double>() - old["opened_at"].get<double>(),
            2900.0);
  std::string ts = slack_.post(alice_, channel_, "after the refresh");
  ASSERT_TRUE(pump([&] { return count(ts) == 1; }));
  EXPECT_EQ(a->connections(), 2);
}

TEST_F(SlackAdapterTest, MessagesDuringADropAreCaughtUpOldestFirstAndOnce) {
  auto a = make();
  run_void(a->connect());
  std::string parent = slack_.post(alice_, channel_, "a thread");
  ASSERT_TRUE(pump([&] { return count(parent) == 1; }));
  std::string app_id = app_["app_id"];
  slack_.call("POST", "/_test/apps/" + app_id + "/delivery", {{"mode", "drop"}});
  slack_.call("POST", "/_test/sockets/drop", {{"app_id", app_id}});
  std::string m1 = slack_.post(alice_, channel_, "missed one");
  std::string r1 = slack_.post(alice_, channel_, "a missed reply", parent);
  std::string m2 = slack_.post(alice_, channel_, "missed two");
  slack_.call("POST", "/_test/apps/" + app_id + "/delivery", {{"mode", "normal"}});
  ASSERT_TRUE(pump([&] { return count(m2) == 1 && count(r1) == 1; })) << got_.size();
  settle(500);
  ASSERT_EQ(got_.size(), 4u);
  EXPECT_EQ(got_[1].post_id, channel_ + ":" + m1);
  EXPECT_EQ(got_[2].post_id, channel_ + ":" + r1);
  EXPECT_EQ(got_[2].thread_root_id, channel_ + ":" + parent);
  EXPECT_EQ(got_[3].post_id, channel_ + ":" + m2);
  for (size_t i = 1; i < got_.size(); ++i) EXPECT_TRUE(got_[i].replayed) << i;
  EXPECT_GE(a->connections(), 2);
}

TEST_F(SlackAdapterTest, ARestartOnTheSameCursorsCatchesUp) {
  std::string first;
  {
    auto a = make();
    run_void(a->connect());
    first = slack_.post(alice_, channel_, "seen before the restart");
    ASSERT_TRUE(pump([&] { return count(first) == 1; }));
    a->disconnect();
  }
  settle(200);
  EXPECT_FALSE(cursors_.saved.empty());
  slack_.call("POST", "/_test/apps/" + app_["app_id"].get<std::string>() + "/delivery",
              {{"mode", "drop"}});
  std::string m1 = slack_.post(alice_, channel_, "while down 1");
  std::string m2 = slack_.post(alice_, channel_, "while down 2");
  slack_.call("POST", "/_test/apps/" + app_["app_id"].get<std::string>() + "/delivery",
              {{"mode", "normal"}});
  got_.clear();
  auto b = make();
  run_void(b->connect());
  ASSERT_TRUE(pump([&] { return count(m2) == 1; }));
  settle(300);
  ASSERT_EQ(got_.size(), 2u);
  EXPECT_EQ(got_[0].post_id, channel_ + ":" + m1);
  EXPECT_TRUE(got_[0].replayed);
  EXPECT_EQ(count(first), 0);
}

TEST_F(SlackAdapterTest, EditsDeletionsAndReactionsAreReported) {
  auto a = make();
  run_void(a->connect());
  std::string ts = slack_.post(alice_, channel_, "first words");
  ASSERT_TRUE(pump([&] { return count(ts) == 1; }));
  slack_.call("POST", "/_test/messages/edit", {{"channel", channel_}, {"ts", ts}, {"text", "new & better"}});
  slack_.call("POST", "/_test/reactions", {{"user", alice_}, {"channel", channel_}, {"ts", ts}, {"name", "thumbsup"}});
  slack_.call("POST", "/_test/messages/delete", {{"channel", channel_}, {"ts", ts}});
  ASSERT_TRUE(pump([&] { return changes_.size() == 2 && reactions_.size() == 1; }));
  EXPECT_EQ(changes_[0].post_id, channel_ + ":" + ts);
  EXPECT_EQ(changes_[0].text, "new & better");
  EXPECT_FALSE(changes_[0].deleted);
  EXPECT_TRUE(changes_[1].deleted);
  EXPECT_EQ(reactions_[0].emoji, "thumbsup");
  EXPECT_EQ(reactions_[0].username, "alice");
}

TEST_F(SlackAdapterTest, PostsEditsReactionsFilesAndStreamsGoOut) {
  auto a = make();
  run_void(a->connect());
  std::string root = slack_.post(alice_, channel_, "question");
  std::string id = run(a->send_message(channel_, "**bold** & <x>", channel_ + ":" + root, "k1"));
  run_void(a->update_message(id, "now _done_"));
  run_void(a->add_reaction(id, ":eyes:"));
  run_void(a->add_reaction(id, "eyes"));  // already_reacted: ignored
  std::vector<json> msgs = slack_.messages(channel_);
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(channel_ + ":" + msgs[1]["ts"].get<std::string>(), id);
  EXPECT_EQ(msgs[1]["thread_ts"], root);
  EXPECT_EQ(msgs[1]["edits"][0]["text"], "now _done_");
  EXPECT_EQ(msgs[1]["metadata"]["event_payload"]["key"], "k1");
  EXPECT_EQ(msgs[1]["reactions"][0]["name"], "eyes");
  run_void(a->delete_message(id));
  EXPECT_TRUE(slack_.messages(channel_)[1]["deleted"].get<bool>());
  // Files both ways.
  test::TempDir dir;
  test::write_file(dir / "notes.txt", "retryWithBackoff notes");
  std::string file_post = run(a->send_file(channel_, dir / "notes.txt", "see *this*", ""));
  EXPECT_FALSE(file_post.empty());
  json f = slack_.call("POST", "/_test/files",
                       {{"user", alice_}, {"channel", channel_}, {"name", "a.txt"},
                        {"content_base64", "aGVsbG8="}, {"text", "<@" + bot_user_ + "> read"}});
  ASSERT_TRUE(pump([&] { return count(f["ts"]) == 1; }));
  ASSERT_EQ(got_.back().attachments.size(), 1u);
  run_void(a->download_file(got_.back().attachments[0].id, dir / "got.txt"));
  std::ifstream in(dir / "got.txt");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), "hello");
  // A native stream in a channel names its recipient.
  std::string stream = run(a->start_stream(channel_, channel_ + ":" + root, alice_, "Hel"));
  run_void(a->append_stream(stream, "lo"));
  run_void(a->stop_stream(stream, " world"));
  json last = slack_.messages(channel_).back();
  EXPECT_EQ(last["text"], "Hello world");
  EXPECT_EQ(last["streaming_state"], "completed");
  run_void(a->set_status(channel_, channel_ + ":" + root, "Searching the code…"));
  EXPECT_EQ(slack_.call("GET", "/_test/messages?channel=" + channel_)["statuses"][root]["status"],
            "Searching the code…");
}

TEST_F(SlackAdapterTest, ChatUpdateAcrossFiftyChannelsIsPacedWithoutA429) {
  slack_.call("POST", "/_test/rate", {{"window_ms", 3000}});
  std::vector<std::string> posts;
  for (int i = 0; i < 50; ++i) {
    std::string c = slack_.channel("public", {alice_, bot_user_});
    posts.push_back(c);
  }
  auto a = make(3000);  // the adapter's budget counts in the server's window
  run_void(a->connect());
  for (auto& c : posts) c = run(a->send_message(c, "placeholder", "", ""));
  slack_.call("POST", "/_test/reset");
  int done = 0, failed = 0;
  auto start = std::chrono::steady_clock::now();
  // The texts outlive the calls: an adapter's coroutines start later and borrow their arguments.
  std::deque<std::string> texts;
  for (int round = 0; round < 2; ++round)
    for (const std::string& id : posts) {
      texts.push_back("round " + std::to_string(round));
      asio::co_spawn(io_, a->update_message(id, texts.back()),
                     [&](std::exception_ptr e) { ++done; failed += e != nullptr; });
    }
  ASSERT_TRUE(pump([&] { return done == 100; }, 60000));
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(slack_.ratelimited("chat.update"), 0);
  EXPECT_EQ(slack_.calls("chat.update").size(), 100u);
  // 100 edits at 50 per 3 s: the budget made them wait rather than fail.
  EXPECT_GE(took, 3.0);
}

TEST_F(SlackAdapterTest, AStatusLineIsSkippedRatherThanQueuedWhenItsTierHasNoRoomNow) {
  slack_.call("POST", "/_test/rate", {{"window_ms", 3000}});
  std::vector<std::string> roots;
  for (int i = 0; i < 60; ++i) roots.push_back(channel_ + ":" + slack_.post(alice_, channel_, "q"));
  auto a = make(3000);  // Tier 4: 100 per 3 s, 25 in each quarter of it
  run_void(a->connect());
  slack_.call("POST", "/_test/reset");
  int done = 0, failed = 0;
  std::deque<std::string> statuses;
  for (const std::string& root : roots) {
    statuses.push_back("Searching the code…");
    asio::co_spawn(io_, a->set_status(channel_, root, statuses.back()),
                   [&](std::exception_ptr e) { ++done; failed += e != nullptr; });
  }
  ASSERT_TRUE(pump([&] { return done == 60; }, 30000));
  EXPECT_EQ(failed, 0);
  // The quarter's 25 went; the other 35 were dropped at once instead of waiting their turn.
  size_t sent = slack_.calls("assistant.threads.setStatus").size();
  EXPECT_GE(sent, 20u);
  EXPECT_LE(sent, 30u);
  EXPECT_EQ(slack_.ratelimited("assistant.threads.setStatus"), 0);
  // A clear is not dropped, and once the window has room a status goes again.
  run_void(a->set_status(channel_, roots[59], ""));
  EXPECT_EQ(slack_.calls("assistant.threads.setStatus").size(), sent + 1);
  settle(1000);
  run_void(a->set_status(channel_, roots[0], "Running grep…"));
  EXPECT_EQ(slack_.calls("assistant.threads.setStatus").size(), sent + 2);
}

}  // namespace
}  // namespace pf
