// The bridge's units on their own: the SQLite state store (exactly-once records, cursors,
// conversations, compaction, prefs, migrations on reopen), access lists, the loop detector,
// trigger stripping and the Mattermost frame parser on good and bad frames.
#include <gtest/gtest.h>

#include <limits>

#include "bridge/access.h"
#include "bridge/bridge.h"
#include "bridge/loop_detector.h"
#include "bridge/mattermost_events.h"
#include "bridge/service.h"
#include "bridge/sqlite_state_store.h"
#include "test_util.h"

namespace pf {
namespace {

TEST(SqliteStateStore, RecordsEachPostOnceAndKeepsWhatIsPendingAcrossReopen) {
  test::TempDir dir;
  std::string path = dir / "state.db";
  {
    auto s = open_sqlite_state_store(path);
    EXPECT_TRUE(s->record_inbound({"p1", "mm:c", "bot", "{}", 10, ""}));
    EXPECT_FALSE(s->record_inbound({"p1", "mm:c", "bot", "{}", 10, ""}));
    EXPECT_TRUE(s->record_inbound({"p2", "mm:c", "bot", "{}", 5, ""}));
    s->set_inbound_reply("p1", "r1");
    s->finish_inbound("p2");
    s->set_cursor("bot", "mm:c", 100);
    s->set_cursor("bot", "mm:c", 50);  // never moves back
  }
  auto s = open_sqlite_state_store(path);  // migrations are not applied twice
  auto pending = s->pending_inbound("bot");
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].post_id, "p1");
  EXPECT_EQ(pending[0].reply_post_id, "r1");
  EXPECT_TRUE(s->inbound_seen("p2"));
  s->prune_inbound(0);  // nothing finished before the epoch
  EXPECT_TRUE(s->inbound_seen("p2"));
  s->prune_inbound(std::numeric_limits<int64_t>::max());
  EXPECT_FALSE(s->inbound_seen("p2"));
  EXPECT_TRUE(s->inbound_seen("p1"));  // pending posts are never pruned
  ASSERT_EQ(s->cursors("bot").size(), 1u);
  EXPECT_EQ(s->cursors("bot")[0].second, 100);
}

TEST(SqliteStateStore, ConversationsKeepEveryMessageAndCompactWithoutLosingAny) {
  test::TempDir dir;
  auto s = open_sqlite_state_store(dir / "state.db");
  std::string a = s->create_conversation("mm:c");
  EXPECT_EQ(s->active_conversation("mm:c").value(), a);
  StoredMessage m;
  m.role = "user";
  m.content = "first question\nsecond line";
  EXPECT_EQ(s->append_message(a, m), 1);
  m.role = "assistant";
  m.content = "an answer";
  m.tool_calls = R"([{"id":"1","name":"read_file","arguments":"{}"}])";
  EXPECT_EQ(s->append_message(a, m), 2);
  s->compact(a, 1, "the summary");
  auto all = s->messages(a);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_TRUE(all[0].compacted);
  EXPECT_FALSE(all[1].compacted);
  EXPECT_EQ(all[2].role, "summary");
  EXPECT_EQ(all[1].tool_calls, m.tool_calls);
  std::string b = s->create_conversation("mm:c");
  EXPECT_EQ(s->active_conversation("mm:c").value(), b);
  auto list = s->conversations("mm:c", 10);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[1].first_line, "first question");
  s->set_active_conversation("mm:c", a);
  EXPECT_EQ(s->active_conversation("mm:c").value(), a);
  ChannelPrefs p;
  p.model = "a:m";
  s->set_prefs("mm:c", p);
  EXPECT_EQ(s->prefs("mm:c").model.value(), "a:m");
  EXPECT_FALSE(s->prefs("mm:c").verbose.has_value());
}

TEST(SqliteStateStore, AFileFromANewerPilotfishIsRefused) {
  test::TempDir dir;
  { open_sqlite_state_store(dir / "state.db"); }
  ASSERT_EQ(
      test::shell("sqlite3 " + (dir / "state.db") + " 'INSERT INTO schema_version VALUES (99)'"),
      0);
  EXPECT_THROW(open_sqlite_state_store(dir / "state.db"), Error);
}

TEST(BridgeStatePath, BesideTheStoreFileAndNeverInsideAUrl) {
  Config c;
  EXPECT_EQ(bridge_state_path(c, "/srv/pf/index.db"), "/srv/pf/bridge.db");
  EXPECT_EQ(bridge_state_path(c, "index.db"), "bridge.db");
  setenv("XDG_DATA_HOME", "/var/lib/pfdata", 1);
  EXPECT_EQ(bridge_state_path(c, "postgresql://u@db.internal/pilotfish?host=/run/postgresql"),
            "/var/lib/pfdata/pilotfish/bridge.db");
  unsetenv("XDG_DATA_HOME");
  c.bridge.state_db = "/data/state.db";
  EXPECT_EQ(bridge_state_path(c, "postgres://h/db"), "/data/state.db");
}

TEST(Access, DenyByDefaultAllowlistsUnionBlocklistsWin) {
  PlatformConfig p;
  BotConfig b;
  EXPECT_FALSE(access_allowed(p, b, "alice"));  // nothing configured
  p.access = {"allowlist", {"alice"}};
  b.access = {"allowlist", {"bob"}};
  EXPECT_TRUE(access_allowed(p, b, "@Alice"));
  EXPECT_TRUE(access_allowed(p, b, "bob"));
  EXPECT_FALSE(access_allowed(p, b, "carol"));
  EXPECT_FALSE(access_allowed(p, b, ""));
  b.access = {"blocklist", {"alice"}};
  EXPECT_FALSE(access_allowed(p, b, "alice"));
  p.access = {"open", {}};
  EXPECT_TRUE(access_allowed(p, b, "carol"));
  EXPECT_FALSE(access_allowed(p, b, "alice"));
}

TEST(LoopDetector, WarnsOnceAtFiveAndStopsAtTenWithinAMinute) {
  LoopDetector d;
  auto t = std::chrono::steady_clock::now();
  std::vector<LoopDetector::Verdict> v;
  for (int i = 0; i < 10; ++i)
    v.push_back(d.record("read_file", i % 2 ? R"({"a":1,"b":2})" : R"({"b":2,"a":1})", t));
  EXPECT_EQ(v[3], LoopDetector::Verdict::kOk);
  EXPECT_EQ(v[4], LoopDetector::Verdict::kWarn);
  EXPECT_EQ(v[5], LoopDetector::Verdict::kOk);  // the warning comes once
  EXPECT_EQ(v[9], LoopDetector::Verdict::kCritical);
  LoopDetector e;
  for (int i = 0; i < 9; ++i) e.record("grep", "{}", t + std::chrono::seconds(i * 10));
  // Calls older than a minute have left the window.
  EXPECT_EQ(e.record("grep", "{}", t + std::chrono::seconds(95)), LoopDetector::Verdict::kOk);
  EXPECT_EQ(e.record("other", "{}", t), LoopDetector::Verdict::kOk);
}

TEST(Bridge, StripsTheBotsMentionAndTheThreadTrigger) {
  bool thread = false;
  EXPECT_EQ(strip_triggers("@Copilot where is x?", "copilot", &thread), "where is x?");
  EXPECT_FALSE(thread);
  EXPECT_EQ(strip_triggers("@copilot2 hi", "copilot", &thread), "@copilot2 hi");
  EXPECT_EQ(strip_triggers("\U0001F9F5 @copilot explain", "copilot", &thread), "explain");
  EXPECT_TRUE(thread);
  EXPECT_EQ(strip_triggers("explain :thread:", "copilot", &thread), "explain");
  EXPECT_TRUE(thread);
}

TEST(MattermostEvents, ParsesPostedReactionsHelloAndRefusesGarbage) {
  auto posted = parse_mattermost_frame(
      R"({"event":"posted","seq":3,"data":{"channel_type":"D","sender_name":"@alice","post":)"
      R"("{\"id\":\"p\",\"channel_id\":\"c\",\"user_id\":\"u\",\"message\":\"hi\",\"root_id\":\"r\",)"
      R"(\"create_at\":5,\"metadata\":{\"files\":[{\"id\":\"f\",\"name\":\"a.png\",\"mime_type\":\"image/png\"}]}}"},"broadcast":{"channel_id":"c"}})");
  ASSERT_EQ(posted.kind, MattermostFrame::Kind::kPosted) << posted.error;
  EXPECT_EQ(posted.seq, 3);
  EXPECT_EQ(posted.post.root_id, "r");
  EXPECT_EQ(posted.channel_type, "D");
  ASSERT_EQ(posted.post.files.size(), 1u);
  EXPECT_EQ(posted.post.files[0].type, "image");
  auto reaction = parse_mattermost_frame(
      R"({"event":"reaction_added","seq":4,"data":{"reaction":"{\"user_id\":\"u\",\"post_id\":\"p\",\"emoji_name\":\"+1\"}"},"broadcast":{"channel_id":"c"}})");
  ASSERT_EQ(reaction.kind, MattermostFrame::Kind::kReaction);
  EXPECT_EQ(reaction.reaction.channel_id, "c");
  auto hello = parse_mattermost_frame(R"({"event":"hello","seq":0,"data":{"connection_id":"x"}})");
  EXPECT_EQ(hello.kind, MattermostFrame::Kind::kHello);
  EXPECT_EQ(hello.connection_id, "x");
  EXPECT_EQ(parse_mattermost_frame(R"({"status":"OK","seq_reply":1})").kind,
            MattermostFrame::Kind::kReply);
  for (const char* bad :
       {"", "not json", "[]", "{}", R"({"event":"posted","data":{"post":"{"}})",
        R"({"event":"posted","data":{"post":"{\"id\":\"p\"}"}})",
        R"({"event":"posted","data":{"post":5}})", R"({"event":"reaction_added","data":{}})"}) {
    auto f = parse_mattermost_frame(bad);
    EXPECT_EQ(f.kind, MattermostFrame::Kind::kMalformed) << bad;
    EXPECT_FALSE(f.error.empty()) << bad;
  }
  std::string deep(100000, '[');
  EXPECT_EQ(parse_mattermost_frame(deep).kind, MattermostFrame::Kind::kMalformed);
}

}  // namespace
}  // namespace pf
