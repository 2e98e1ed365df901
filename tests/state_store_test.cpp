// The bridge's StateStore contract (src/bridge/state_store.h), one suite over both backends: the
// SQLite file and a real PostgreSQL 15 server (tests/pg_server.h). Exactly-once records and
// what stays pending across a reopen, cursors, conversations and compaction, prefs, permission
// rules, schedules and their history, DMs, a schema from a newer pilotfish; then what only
// PostgreSQL can get wrong: two replicas numbering one conversation's messages at once, and a
// server restart under an open store.
#include "bridge/state_store.h"

#include <gtest/gtest.h>

#include <limits>
#include <set>
#include <thread>

#include "core/error.h"
#include "pg_server.h"
#include "test_util.h"

namespace pf {
namespace {

class StateStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  bool pg() const { return GetParam() == "postgres"; }
  void SetUp() override {
    location_ = pg() ? test::PostgresServer::shared().new_database(&db_name_)
                     : std::string(dir_ / "state.db");
    s_ = open_state_store(location_);
  }
  test::TempDir dir_;
  std::string location_, db_name_;
  std::unique_ptr<StateStore> s_;
};

TEST_P(StateStoreTest, RecordsEachPostOnceAndKeepsWhatIsPendingAcrossReopen) {
  EXPECT_TRUE(s_->record_inbound({"p1", "mm:c", "bot", "{\"a\":1}", 10, ""}));
  EXPECT_FALSE(s_->record_inbound({"p1", "mm:c", "bot", "{}", 10, ""}));
  EXPECT_TRUE(s_->record_inbound({"p2", "mm:c", "bot", "{}", 5, ""}));
  EXPECT_TRUE(s_->record_inbound({"p3", "mm:c", "other", "{}", 1, ""}));
  s_->set_inbound_reply("p1", "r1");
  s_->finish_inbound("p2");
  s_->set_cursors("bot", {{"mm:c", 100}});
  s_->set_cursors("bot", {{"mm:c", 50}, {"mm:d", 7}});  // c never moves back
  s_ = open_state_store(location_);  // migrations are not applied twice
  auto pending = s_->pending_inbound("bot");
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].post_id, "p1");
  EXPECT_EQ(pending[0].payload, "{\"a\":1}");  // the first record, not the duplicate
  EXPECT_EQ(pending[0].created_at_ms, 10);
  EXPECT_EQ(pending[0].reply_post_id, "r1");
  s_->set_inbound_reply("p1", "");
  EXPECT_EQ(s_->pending_inbound("bot")[0].reply_post_id, "");
  // An edit while it waits replaces the payload; a finished post keeps its own.
  s_->set_inbound_payload("p1", "{\"a\":2}");
  s_->set_inbound_payload("p2", "{\"edited\":true}");
  EXPECT_EQ(s_->pending_inbound("bot")[0].payload, "{\"a\":2}");
  EXPECT_EQ(s_->pending_inbound("bot").size(), 1u);
  EXPECT_TRUE(s_->inbound_seen("p2"));
  EXPECT_FALSE(s_->inbound_seen("p9"));
  s_->prune_inbound(0);  // nothing finished before the epoch
  EXPECT_TRUE(s_->inbound_seen("p2"));
  s_->prune_inbound(std::numeric_limits<int64_t>::max());
  EXPECT_FALSE(s_->inbound_seen("p2"));
  EXPECT_TRUE(s_->inbound_seen("p1"));  // pending posts are never pruned
  auto cursors = s_->cursors("bot");
  ASSERT_EQ(cursors.size(), 2u);
  std::map<std::string, int64_t> by_channel(cursors.begin(), cursors.end());
  EXPECT_EQ(by_channel["mm:c"], 100);
  EXPECT_EQ(by_channel["mm:d"], 7);
  EXPECT_TRUE(s_->cursors("other").empty());
}

TEST_P(StateStoreTest, ConversationsKeepEveryMessageAndCompactWithoutLosingAny) {
  std::string a = s_->create_conversation("mm:c");
  EXPECT_EQ(s_->active_conversation("mm:c").value(), a);
  EXPECT_FALSE(s_->active_conversation("mm:other").has_value());
  StoredMessage m;
  m.role = "user";
  m.content = "first question\nsecond line";
  m.post_id = "p1";
  m.tokens = 7;
  EXPECT_EQ(s_->append_message(a, m), 1);
  m = StoredMessage();
  m.role = "assistant";
  m.content = "an answer";
  m.model = "a:m";
  m.tool_calls = R"([{"id":"1","name":"read_file","arguments":"{}"}])";
  EXPECT_EQ(s_->append_message(a, m), 2);
  m = StoredMessage();
  m.role = "tool";
  m.content = "{\"ok\":true}";
  m.tool_call_id = "1";
  EXPECT_EQ(s_->append_message(a, m), 3);
  s_->compact(a, 2, "the summary");
  auto all = s_->messages(a);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_TRUE(all[0].compacted);
  EXPECT_TRUE(all[1].compacted);
  EXPECT_FALSE(all[2].compacted);
  EXPECT_EQ(all[3].role, "summary");
  EXPECT_EQ(all[3].seq, 4);
  EXPECT_EQ(all[0].post_id, "p1");
  EXPECT_EQ(all[0].tokens, 7);
  EXPECT_EQ(all[1].tool_calls, R"([{"id":"1","name":"read_file","arguments":"{}"}])");
  EXPECT_EQ(all[1].model, "a:m");
  EXPECT_EQ(all[2].tool_call_id, "1");
  EXPECT_EQ(all[2].post_id, "");  // absent, not "NULL"
  EXPECT_GT(all[0].created_at_ms, 0);
  s_->add_usage(a, 100, 20);
  s_->add_usage(a, 1, 2);
  ConversationInfo info = s_->conversation(a).value();
  EXPECT_EQ(info.messages, 4);
  EXPECT_EQ(info.prompt_tokens, 101);
  EXPECT_EQ(info.completion_tokens, 22);
  EXPECT_EQ(info.first_line, "first question");
  EXPECT_FALSE(s_->conversation("nope").has_value());
  std::string b = s_->create_conversation("mm:c");
  EXPECT_EQ(s_->active_conversation("mm:c").value(), b);
  auto list = s_->conversations("mm:c", 10);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].id, b);  // most recently updated first
  EXPECT_EQ(list[1].id, a);
  EXPECT_EQ(list[0].first_line, "");
  EXPECT_EQ(s_->conversations("mm:c", 1).size(), 1u);
  s_->set_active_conversation("mm:c", a);
  EXPECT_EQ(s_->active_conversation("mm:c").value(), a);
  s_ = open_state_store(location_);
  EXPECT_EQ(s_->messages(a).size(), 4u);  // a conversation survives a restart
  EXPECT_EQ(s_->active_conversation("mm:c").value(), a);
}

// Thread-scoped conversations are kept under "platform:channel/thread root" (bridge.h's
// conversation_key): the store treats the key as opaque, so a channel's listing and each
// thread's stay apart, LIKE wildcards in a key match nothing else, and a reopen keeps them.
TEST_P(StateStoreTest, ThreadKeysAreConversationsOfTheirOwn) {
  std::string channel = s_->create_conversation("slack:C1");
  std::string t1 = s_->create_conversation("slack:C1/C1:1712345678.000100");
  std::string t2 = s_->create_conversation("slack:C1/C1:1712345678.000200");
  std::string odd = s_->create_conversation("mm:c_%/r%");
  EXPECT_EQ(s_->active_conversation("slack:C1").value(), channel);
  EXPECT_EQ(s_->active_conversation("slack:C1/C1:1712345678.000100").value(), t1);
  EXPECT_EQ(s_->active_conversation("slack:C1/C1:1712345678.000200").value(), t2);
  EXPECT_FALSE(s_->active_conversation("slack:C1/C1:1712345678.000300").has_value());
  ASSERT_EQ(s_->conversations("slack:C1", 10).size(), 1u);
  EXPECT_EQ(s_->conversations("slack:C1", 10)[0].id, channel);
  ASSERT_EQ(s_->conversations("slack:C1/C1:1712345678.000100", 10).size(), 1u);
  EXPECT_EQ(s_->conversations("slack:C1/C1:1712345678.000100", 10)[0].id, t1);
  EXPECT_TRUE(s_->conversations("mm:c__/r_", 10).empty());
  EXPECT_FALSE(s_->active_conversation("mm:cx%/r%").has_value());
  std::string t1b = s_->create_conversation("slack:C1/C1:1712345678.000100");  // /new there
  EXPECT_EQ(s_->active_conversation("slack:C1").value(), channel);
  EXPECT_EQ(s_->active_conversation("slack:C1/C1:1712345678.000200").value(), t2);
  s_ = open_state_store(location_);
  EXPECT_EQ(s_->active_conversation("slack:C1/C1:1712345678.000100").value(), t1b);
  EXPECT_EQ(s_->active_conversation("mm:c_%/r%").value(), odd);
  EXPECT_EQ(s_->conversations("slack:C1/C1:1712345678.000100", 10).size(), 2u);
}

TEST_P(StateStoreTest, PrefsKeepWhatWasSetAndNothingElse) {
  EXPECT_FALSE(s_->prefs("mm:c").model.has_value());
  ChannelPrefs p;
  p.model = "a:m";
  p.yolo = false;
  s_->set_prefs("mm:c", p);
  ChannelPrefs got = s_->prefs("mm:c");
  EXPECT_EQ(got.model.value(), "a:m");
  EXPECT_FALSE(got.verbose.has_value());
  ASSERT_TRUE(got.yolo.has_value());
  EXPECT_FALSE(*got.yolo);
  p.model.reset();
  p.verbose = true;
  p.yolo = true;
  s_->set_prefs("mm:c", p);
  got = s_->prefs("mm:c");
  EXPECT_FALSE(got.model.has_value());
  EXPECT_TRUE(got.verbose.value());
  EXPECT_TRUE(got.yolo.value());
  EXPECT_FALSE(s_->prefs("mm:d").verbose.has_value());
  EXPECT_FALSE(got.agent.has_value());
  EXPECT_TRUE(got.disabled_skills.empty());
}

TEST_P(StateStoreTest, PrefsKeepTheAgentAndDisabledSkills) {
  ChannelPrefs p;
  p.agent = "Code Reviewer";
  p.disabled_skills = {"deploy", "it's \"quoted\""};
  s_->set_prefs("mm:c", p);
  s_ = open_state_store(location_);
  ChannelPrefs got = s_->prefs("mm:c");
  EXPECT_EQ(got.agent.value(), "Code Reviewer");
  EXPECT_EQ(got.disabled_skills, p.disabled_skills);
  p.agent = "";  // deselected: kept apart from "never chosen"
  p.disabled_skills.clear();
  s_->set_prefs("mm:c", p);
  got = s_->prefs("mm:c");
  ASSERT_TRUE(got.agent.has_value());
  EXPECT_EQ(*got.agent, "");
  EXPECT_TRUE(got.disabled_skills.empty());
}

TEST_P(StateStoreTest, PlansAndModesAreKept) {
  ChannelPrefs p;
  p.plan_mode = true;
  p.autopilot = false;
  p.reasoning_effort = "high";
  s_->set_prefs("mm:c", p);
  std::string conv = s_->create_conversation("mm:c");
  EXPECT_EQ(s_->plan(conv), "");
  s_->set_plan(conv, "1. read\n2. change");
  s_->set_plan(conv, "1. read\n2. change\n3. test");
  s_ = open_state_store(location_);
  EXPECT_EQ(s_->plan(conv), "1. read\n2. change\n3. test");
  EXPECT_TRUE(s_->prefs("mm:c").plan_mode.value());
  EXPECT_FALSE(s_->prefs("mm:c").autopilot.value());
  EXPECT_EQ(s_->prefs("mm:c").reasoning_effort, "high");
  EXPECT_FALSE(s_->prefs("mm:d").plan_mode.has_value());
  s_->set_plan(conv, "");
  EXPECT_EQ(s_->plan(conv), "");
}

TEST(NameListTest, RoundTripsAndReadsGarbageAsNone) {
  EXPECT_EQ(name_list(name_list_json({"a", "b c"})), (std::vector<std::string>{"a", "b c"}));
  EXPECT_TRUE(name_list("not json").empty());
  EXPECT_TRUE(name_list("{\"a\": 1}").empty());
  EXPECT_EQ(name_list("[\"a\", 1, null]"), (std::vector<std::string>{"a"}));
}

TEST_P(StateStoreTest, PermissionRulesReplaceByKeyAndListInScopeOrder) {
  int64_t r1 = s_->add_permission_rule({0, "mm:c", "run_command", "git *", "allow"});
  int64_t r2 = s_->add_permission_rule({0, "global", "run_command", "*", "deny"});
  int64_t r3 = s_->add_permission_rule({0, "mm:c", "run_command", "git *", "deny"});  // replaces r1
  EXPECT_GT(r3, r2);
  EXPECT_GT(r2, r1);
  auto rules = s_->permission_rules("run_command", {"mm:c", "global"});
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0].id, r3);
  EXPECT_EQ(rules[0].action, "deny");
  EXPECT_EQ(rules[1].scope, "global");
  rules = s_->permission_rules("run_command", {"global", "mm:c"});
  EXPECT_EQ(rules[0].scope, "global");
  EXPECT_TRUE(s_->permission_rules("write_file", {"mm:c", "global"}).empty());
  s_->add_permission_rule({0, "mm:c", "write_file", "*", "allow"});
  EXPECT_EQ(s_->list_permission_rules("").size(), 3u);
  EXPECT_EQ(s_->list_permission_rules("mm:c").size(), 2u);
  EXPECT_EQ(s_->clear_permission_rules("mm:c", "run_command", "no such pattern"), 0);
  EXPECT_EQ(s_->clear_permission_rules("mm:c", "", ""), 2);
  EXPECT_EQ(s_->list_permission_rules("").size(), 1u);
}

TEST_P(StateStoreTest, SchedulesKeepTheirOrderAndHistory) {
  ScheduleRecord daily{"s1", "mm:c", "bot", "", "daily digest", "0 9 * * *", "Europe/Paris",
                       0, true, "alice", 0, 1000};
  ScheduleRecord once{"s2", "mm:d", "bot", "root", "once", "", "UTC", 5000, true, "bob", 0, 5000};
  s_->save_schedule(daily);
  s_->save_schedule(once);
  daily.last_run_ms = 1000;
  daily.next_run_ms = 2000;
  daily.enabled = false;
  s_->save_schedule(daily);  // an update keeps its place
  auto all = s_->schedules("bot", "");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].id, "s1");
  EXPECT_EQ(all[0].timezone, "Europe/Paris");
  EXPECT_EQ(all[0].next_run_ms, 2000);
  EXPECT_FALSE(all[0].enabled);
  EXPECT_EQ(all[1].thread_root, "root");
  EXPECT_EQ(all[1].run_at_ms, 5000);
  EXPECT_EQ(s_->schedules("bot", "mm:d").size(), 1u);
  EXPECT_TRUE(s_->schedules("other", "").empty());
  s_->delete_schedule("s2");
  EXPECT_EQ(s_->schedules("bot", "").size(), 1u);
  s_->add_schedule_run({"s1", "mm:c", "fired", 10});
  s_->add_schedule_run({"s1", "mm:c", "missed", 30});
  s_->add_schedule_run({"s1", "mm:c", "failed", 20});
  auto runs = s_->schedule_runs("mm:c", 2);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].outcome, "missed");  // newest first
  EXPECT_EQ(runs[1].at_ms, 20);
}

TEST_P(StateStoreTest, AgentCallsAreKeptNewestFirstPerBot) {
  s_->add_agent_call({"copilot", "helper", "reviewer", "asked", "said", 120, true, "", "ch1", 1, 1000});
  s_->add_agent_call({"helper", "scribe", "", "again", "", 5, false, "too deep", "ch1", 2, 2000});
  s_->add_agent_call({"other", "third", "", "m", "r", 1, true, "", "ch2", 1, 3000});
  auto helper = s_->agent_calls("helper", 10);
  ASSERT_EQ(helper.size(), 2u);
  EXPECT_EQ(helper[0].target_bot, "scribe");
  EXPECT_FALSE(helper[0].success);
  EXPECT_EQ(helper[0].error, "too deep");
  EXPECT_EQ(helper[0].depth, 2);
  EXPECT_EQ(helper[1].target_agent, "reviewer");
  EXPECT_TRUE(helper[1].success);
  EXPECT_EQ(helper[1].duration_ms, 120);
  EXPECT_EQ(helper[1].response_summary, "said");
  EXPECT_EQ(helper[1].created_at_ms, 1000);
  EXPECT_EQ(s_->agent_calls("", 2).size(), 2u);
  EXPECT_EQ(s_->agent_calls("", 2)[0].caller_bot, "other");
  EXPECT_TRUE(s_->agent_calls("nobody", 10).empty());
}

// The audit trail: appended in order, read oldest first within the newest `limit`, filtered
// by place and time; a record without an exit code keeps none.
TEST_P(StateStoreTest, AuditRecordsAreAppendedAndReadBack) {
  for (int i = 0; i < 5; ++i) {
    AuditRecord a;
    a.at_ms = 1000 * (i + 1);
    a.front = "chat";
    a.place = i % 2 ? "mm:b" : "mm:a";
    a.user = "alice";
    a.bot = "copilot";
    a.tool = "run_command";
    a.target = "make " + std::to_string(i);
    a.decision = i == 4 ? "denied" : "approved";
    a.decided_by = i == 4 ? "@alice" : "stored-rule";
    if (i != 4) a.exit_code = i;
    a.duration_ms = i == 4 ? -1 : 10 * i;
    s_->add_audit(a);
  }
  s_ = open_state_store(location_);
  std::vector<AuditRecord> all = s_->audit_records({});
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[0].target, "make 0");
  EXPECT_EQ(all[0].exit_code, 0);
  EXPECT_EQ(all[3].exit_code, 3);
  EXPECT_EQ(all[3].duration_ms, 30);
  EXPECT_FALSE(all[4].exit_code.has_value());
  EXPECT_EQ(all[4].duration_ms, -1);
  EXPECT_EQ(all[4].decided_by, "@alice");
  EXPECT_LT(all[0].id, all[4].id);
  std::vector<AuditRecord> a = s_->audit_records({0, "mm:a", 1000});
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[2].target, "make 4");
  std::vector<AuditRecord> newest = s_->audit_records({2500, "", 2});
  ASSERT_EQ(newest.size(), 2u);
  EXPECT_EQ(newest[0].target, "make 3");
  EXPECT_EQ(newest[1].target, "make 4");
}

TEST_P(StateStoreTest, BridgeSettingsAreKeptAndReplaced) {
  EXPECT_FALSE(s_->setting("streamerMode"));
  s_->set_setting("streamerMode", "on");
  s_->set_setting("streamerMode", "off");
  s_->set_setting("other", "x");
  EXPECT_EQ(s_->setting("streamerMode").value_or(""), "off");
  EXPECT_EQ(s_->setting("other").value_or(""), "x");
}

TEST_P(StateStoreTest, DmsAreRegisteredOnce) {
  s_->register_dm({"mm:dm1", "bot", "u1"});
  s_->register_dm({"mm:dm1", "bot", "u2"});  // known already: kept as it was
  s_->register_dm({"mm:dm2", "other", "u3"});
  auto dms = s_->dms("bot");
  ASSERT_EQ(dms.size(), 1u);
  EXPECT_EQ(dms[0].other_user_id, "u1");
  s_->release_memory();
  EXPECT_EQ(s_->dms("other").size(), 1u);
}

TEST_P(StateStoreTest, AStateFromANewerPilotfishIsRefused) {
  s_.reset();
  if (pg()) {
    test::PostgresServer::shared().psql(db_name_, "INSERT INTO bridge_schema_version VALUES (99)");
  } else {
    ASSERT_EQ(test::shell("sqlite3 " + location_ + " 'INSERT INTO schema_version VALUES (99)'"), 0);
  }
  try {
    open_state_store(location_);
    ADD_FAILURE() << "opened";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("newer pilotfish"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, StateStoreTest, ::testing::Values("sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

// Two replicas append to one conversation at once (each has its own connection): every message
// gets its own seq, none is lost.
TEST(PgStateStore, ReplicasNumberOneConversationsMessagesWithoutCollisions) {
  std::string url = test::PostgresServer::shared().new_database();
  auto a = open_state_store(url);
  auto b = open_state_store(url);
  std::string id = a->create_conversation("mm:c");
  const int kEach = 100;
  auto append = [&](StateStore* s, const std::string& who) {
    for (int i = 0; i < kEach; ++i) {
      StoredMessage m;
      m.role = "user";
      m.content = who + std::to_string(i);
      s->append_message(id, m);
    }
  };
  std::thread t1(append, a.get(), "a"), t2(append, b.get(), "b");
  t1.join();
  t2.join();
  auto all = a->messages(id);
  ASSERT_EQ(all.size(), 2u * kEach);
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].seq, static_cast<int64_t>(i + 1));
  std::set<std::string> contents;
  for (const auto& m : all) contents.insert(m.content);
  EXPECT_EQ(contents.size(), 2u * kEach);
}

TEST(PgStateStore, AServerRestartUnderAnOpenStoreIsSurvived) {
  auto& server = test::PostgresServer::shared();
  std::string url = server.new_database();
  auto s = open_state_store(url);
  EXPECT_TRUE(s->record_inbound({"p1", "mm:c", "bot", "{}", 1, ""}));
  server.stop();
  server.start();
  // The connection broke while idle: made again once, and the call goes through.
  EXPECT_FALSE(s->record_inbound({"p1", "mm:c", "bot", "{}", 1, ""}));
  EXPECT_TRUE(s->record_inbound({"p2", "mm:c", "bot", "{}", 2, ""}));
  EXPECT_EQ(s->pending_inbound("bot").size(), 2u);
}

TEST(PgStateStore, AnUnreachableServerIsAOneLineErrorWithoutThePassword) {
  try {
    open_state_store("postgresql://pf:hunter2@127.0.0.1:1/none?connect_timeout=2");
    ADD_FAILURE() << "opened";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_EQ(what.find("hunter2"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_NE(what.find("cannot connect to PostgreSQL"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace pf
