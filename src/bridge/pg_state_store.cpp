// The bridge's PostgreSQL state store (see pg_state_store.h and state_store.h): the same tables
// as the SQLite file's, prefixed bridge_ so that they sit beside the index store's in one
// database, and the same answers to every call. Several replicas may share it: what must be
// atomic across them (recording a post, numbering a message, replacing a rule) is one statement
// or one transaction with the row locked.
#include "bridge/pg_state_store.h"

#include "core/clock.h"
#include "core/error.h"
#include "core/text.h"
#include "store/pg_util.h"

namespace pf {
namespace {

using pg::Param;

// Applied once each, in order, each in its own transaction; append only, as the SQLite ones.
const char* const kMigrations[] = {
    // 1: the schema of SQLite's migrations 1 to 3 at once.
    "CREATE TABLE bridge_inbound (post_id TEXT PRIMARY KEY, channel_key TEXT NOT NULL,"
    "  bot TEXT NOT NULL, payload TEXT NOT NULL, created_at BIGINT NOT NULL,"
    "  received_at BIGINT NOT NULL, reply_post_id TEXT, done_at BIGINT);"
    "CREATE INDEX bridge_inbound_pending ON bridge_inbound(bot, created_at) WHERE done_at IS NULL;"
    "CREATE INDEX bridge_inbound_done ON bridge_inbound(done_at) WHERE done_at IS NOT NULL;"
    "CREATE TABLE bridge_cursors (bot TEXT NOT NULL, channel_key TEXT NOT NULL,"
    "  created_at BIGINT NOT NULL, PRIMARY KEY (bot, channel_key));"
    "CREATE TABLE bridge_conversations (id TEXT PRIMARY KEY, ord BIGSERIAL,"
    "  channel_key TEXT NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL,"
    "  prompt_tokens BIGINT NOT NULL DEFAULT 0, completion_tokens BIGINT NOT NULL DEFAULT 0);"
    "CREATE INDEX bridge_conversations_channel ON bridge_conversations(channel_key, updated_at);"
    "CREATE TABLE bridge_messages (conversation_id TEXT NOT NULL"
    "  REFERENCES bridge_conversations(id), seq BIGINT NOT NULL, role TEXT NOT NULL,"
    "  content TEXT NOT NULL, tool_calls TEXT, tool_call_id TEXT, model TEXT, post_id TEXT,"
    "  tokens BIGINT NOT NULL DEFAULT 0, compacted BOOLEAN NOT NULL DEFAULT false,"
    "  created_at BIGINT NOT NULL, PRIMARY KEY (conversation_id, seq));"
    "CREATE TABLE bridge_active_conversations (channel_key TEXT PRIMARY KEY,"
    "  conversation_id TEXT NOT NULL REFERENCES bridge_conversations(id));"
    "CREATE TABLE bridge_channel_prefs (channel_key TEXT PRIMARY KEY, model TEXT, \"verbose\" BOOLEAN,"
    "  yolo BOOLEAN, updated_at BIGINT NOT NULL);"
    "CREATE TABLE bridge_dm_channels (channel_key TEXT PRIMARY KEY, bot TEXT NOT NULL,"
    "  other_user_id TEXT NOT NULL, created_at BIGINT NOT NULL);"
    "CREATE TABLE bridge_permission_rules (id BIGSERIAL PRIMARY KEY, scope TEXT NOT NULL,"
    "  tool TEXT NOT NULL, command_pattern TEXT NOT NULL DEFAULT '*',"
    "  action TEXT NOT NULL CHECK (action IN ('allow', 'deny')), created_at BIGINT NOT NULL,"
    "  UNIQUE (scope, tool, command_pattern));"
    "CREATE INDEX bridge_permission_rules_tool ON bridge_permission_rules(tool, scope);"
    "CREATE TABLE bridge_schedules (id TEXT PRIMARY KEY, ord BIGSERIAL,"
    "  channel_key TEXT NOT NULL, bot TEXT NOT NULL, thread_root TEXT, prompt TEXT NOT NULL,"
    "  cron TEXT, timezone TEXT NOT NULL, run_at BIGINT, enabled BOOLEAN NOT NULL,"
    "  created_by TEXT, last_run BIGINT, next_run BIGINT);"
    "CREATE INDEX bridge_schedules_bot ON bridge_schedules(bot, channel_key);"
    "CREATE TABLE bridge_schedule_runs (id BIGSERIAL PRIMARY KEY, schedule_id TEXT NOT NULL,"
    "  channel_key TEXT NOT NULL, outcome TEXT NOT NULL, at BIGINT NOT NULL);"
    "CREATE INDEX bridge_schedule_runs_channel ON bridge_schedule_runs(channel_key, at);",
    // 2: SQLite's migration 4 (/agent and /skills).
    "ALTER TABLE bridge_channel_prefs ADD COLUMN agent TEXT;"
    "ALTER TABLE bridge_channel_prefs ADD COLUMN disabled_skills TEXT;",
    // 3: SQLite's migration 5 (plan mode, autopilot, plans).
    "ALTER TABLE bridge_channel_prefs ADD COLUMN plan_mode BOOLEAN;"
    "ALTER TABLE bridge_channel_prefs ADD COLUMN autopilot BOOLEAN;"
    "CREATE TABLE bridge_plans (conversation_id TEXT PRIMARY KEY, content TEXT NOT NULL,"
    "  updated_at BIGINT NOT NULL);",
    // 4: SQLite's migration 6 (/reasoning).
    "ALTER TABLE bridge_channel_prefs ADD COLUMN reasoning_effort TEXT;",
    // 5: SQLite's migration 7 (ask_agent's audit).
    "CREATE TABLE bridge_agent_calls (id BIGSERIAL PRIMARY KEY, caller_bot TEXT NOT NULL,"
    "  target_bot TEXT NOT NULL, target_agent TEXT NOT NULL, message_summary TEXT NOT NULL,"
    "  response_summary TEXT NOT NULL, duration_ms BIGINT NOT NULL, success BOOLEAN NOT NULL,"
    "  error TEXT NOT NULL, chain_id TEXT NOT NULL, depth BIGINT NOT NULL,"
    "  created_at BIGINT NOT NULL);"
    "CREATE INDEX bridge_agent_calls_at ON bridge_agent_calls(created_at);",
    // 6: SQLite's migration 8 (settings of the whole bridge).
    "CREATE TABLE bridge_settings (key TEXT PRIMARY KEY, value TEXT NOT NULL,"
    "  updated_at BIGINT NOT NULL);",
    // 7: SQLite's migration 9 (the audit trail).
    "CREATE TABLE bridge_audit (id BIGSERIAL PRIMARY KEY, at BIGINT NOT NULL,"
    "  front TEXT NOT NULL, place TEXT NOT NULL, user_name TEXT NOT NULL, bot TEXT NOT NULL,"
    "  tool TEXT NOT NULL, target TEXT NOT NULL, decision TEXT NOT NULL,"
    "  decided_by TEXT NOT NULL, detail TEXT NOT NULL, exit_code BIGINT,"
    "  duration_ms BIGINT NOT NULL, error TEXT NOT NULL);"
    "CREATE INDEX bridge_audit_at ON bridge_audit(at);",
};

Param num(int64_t v) { return Param::number(v); }
Param txt(const std::string& v) { return Param::text(v); }
Param flag(bool v) { return Param::text(v ? "true" : "false"); }
template <class T>
Param optional_flag(const std::optional<T>& v) {
  Param p = flag(v.value_or(false));
  p.null = !v.has_value();
  return p;
}
bool is_true(const pg::Result& r, int row, int col) { return r.view(row, col) == "t"; }

class PgStateStore : public StateStore {
 public:
  explicit PgStateStore(const std::string& conninfo) : c_(conninfo) { migrate(); }

  bool record_inbound(const InboundRecord& r) override {
    auto res = c_.exec(
        "INSERT INTO bridge_inbound (post_id, channel_key, bot, payload, created_at, received_at, "
        "reply_post_id) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (post_id) DO NOTHING "
        "RETURNING 1",
        {txt(r.post_id), txt(r.channel_key), txt(r.bot), txt(r.payload), num(r.created_at_ms),
         num(unix_time_ms()), Param::text_or_null(r.reply_post_id)});
    return res.rows() == 1;
  }
  void set_inbound_reply(const std::string& post_id, const std::string& reply) override {
    c_.exec("UPDATE bridge_inbound SET reply_post_id = $1 WHERE post_id = $2",
            {Param::text_or_null(reply), txt(post_id)});
  }
  void set_inbound_payload(const std::string& post_id, const std::string& payload) override {
    c_.exec("UPDATE bridge_inbound SET payload = $1 WHERE post_id = $2 AND done_at IS NULL",
            {txt(payload), txt(post_id)});
  }
  void finish_inbound(const std::string& post_id) override {
    c_.exec("UPDATE bridge_inbound SET done_at = $1 WHERE post_id = $2 AND done_at IS NULL",
            {num(unix_time_ms()), txt(post_id)});
  }
  std::vector<InboundRecord> pending_inbound(const std::string& bot) override {
    auto r = c_.exec(
        "SELECT post_id, channel_key, bot, payload, created_at, reply_post_id FROM bridge_inbound "
        "WHERE bot = $1 AND done_at IS NULL ORDER BY created_at, received_at",
        {txt(bot)});
    std::vector<InboundRecord> out;
    for (int i = 0; i < r.rows(); ++i)
      out.push_back({r.text(i, 0), r.text(i, 1), r.text(i, 2), r.text(i, 3), r.int64(i, 4),
                     r.text(i, 5)});
    return out;
  }
  bool inbound_seen(const std::string& post_id) override {
    return c_.exec("SELECT 1 FROM bridge_inbound WHERE post_id = $1", {txt(post_id)}).rows() == 1;
  }
  void prune_inbound(int64_t before) override {
    c_.exec("DELETE FROM bridge_inbound WHERE done_at IS NOT NULL AND done_at < $1", {num(before)});
  }

  void set_cursors(const std::string& bot,
                   const std::vector<std::pair<std::string, int64_t>>& cursors) override {
    pg::Transaction tx(c_);
    for (const auto& [channel_key, t] : cursors)
      c_.exec(
          "INSERT INTO bridge_cursors (bot, channel_key, created_at) VALUES ($1, $2, $3) "
          "ON CONFLICT (bot, channel_key) DO UPDATE SET created_at = "
          "greatest(bridge_cursors.created_at, excluded.created_at)",
          {txt(bot), txt(channel_key), num(t)});
    tx.commit();
  }
  std::vector<std::pair<std::string, int64_t>> cursors(const std::string& bot) override {
    auto r = c_.exec("SELECT channel_key, created_at FROM bridge_cursors WHERE bot = $1", {txt(bot)});
    std::vector<std::pair<std::string, int64_t>> out;
    for (int i = 0; i < r.rows(); ++i) out.emplace_back(r.text(i, 0), r.int64(i, 1));
    return out;
  }

  std::string create_conversation(const std::string& channel_key) override {
    std::string id = random_id(12);
    int64_t t = unix_time_ms();
    pg::Transaction tx(c_);
    c_.exec(
        "INSERT INTO bridge_conversations (id, channel_key, created_at, updated_at) VALUES "
        "($1, $2, $3, $3)",
        {txt(id), txt(channel_key), num(t)});
    set_active(channel_key, id);
    tx.commit();
    return id;
  }
  std::optional<std::string> active_conversation(const std::string& channel_key) override {
    auto r = c_.exec(
        "SELECT conversation_id FROM bridge_active_conversations WHERE channel_key = $1",
        {txt(channel_key)});
    if (r.rows() == 0) return std::nullopt;
    return r.text(0, 0);
  }
  void set_active_conversation(const std::string& channel_key, const std::string& id) override {
    set_active(channel_key, id);
  }
  int64_t append_message(const std::string& conversation_id, StoredMessage m) override {
    pg::Transaction tx(c_);
    int64_t seq = next_seq(conversation_id);
    insert_message(conversation_id, seq, m);
    tx.commit();
    return seq;
  }
  std::vector<StoredMessage> messages(const std::string& conversation_id) override {
    auto r = c_.exec(
        "SELECT seq, role, content, tool_calls, tool_call_id, model, post_id, tokens, compacted, "
        "created_at FROM bridge_messages WHERE conversation_id = $1 ORDER BY seq",
        {txt(conversation_id)});
    std::vector<StoredMessage> out;
    for (int i = 0; i < r.rows(); ++i) {
      StoredMessage m;
      m.seq = r.int64(i, 0);
      m.role = r.text(i, 1);
      m.content = r.text(i, 2);
      m.tool_calls = r.text(i, 3);
      m.tool_call_id = r.text(i, 4);
      m.model = r.text(i, 5);
      m.post_id = r.text(i, 6);
      m.tokens = r.int64(i, 7);
      m.compacted = is_true(r, i, 8);
      m.created_at_ms = r.int64(i, 9);
      out.push_back(std::move(m));
    }
    return out;
  }
  void compact(const std::string& conversation_id, int64_t up_to_seq,
               const std::string& summary) override {
    pg::Transaction tx(c_);
    int64_t seq = next_seq(conversation_id);
    c_.exec("UPDATE bridge_messages SET compacted = true WHERE conversation_id = $1 AND seq <= $2",
            {txt(conversation_id), num(up_to_seq)});
    StoredMessage m;
    m.role = "summary";
    m.content = summary;
    m.tokens = static_cast<int64_t>(summary.size() / 4);
    insert_message(conversation_id, seq, m);
    tx.commit();
  }
  void add_usage(const std::string& id, int64_t prompt, int64_t completion) override {
    c_.exec(
        "UPDATE bridge_conversations SET prompt_tokens = prompt_tokens + $1, completion_tokens = "
        "completion_tokens + $2 WHERE id = $3",
        {num(prompt), num(completion), txt(id)});
  }
  std::optional<ConversationInfo> conversation(const std::string& id) override {
    auto list = query_conversations("c.id = $1", id, 1);
    if (list.empty()) return std::nullopt;
    return list.front();
  }
  std::vector<ConversationInfo> conversations(const std::string& channel_key,
                                              size_t limit) override {
    return query_conversations("c.channel_key = $1", channel_key, limit);
  }

  ChannelPrefs prefs(const std::string& channel_key) override {
    auto r = c_.exec(
        "SELECT model, \"verbose\", yolo, agent, disabled_skills, plan_mode, autopilot, "
        "reasoning_effort FROM bridge_channel_prefs WHERE channel_key = $1",
        {txt(channel_key)});
    ChannelPrefs p;
    if (r.rows() == 0) return p;
    if (!r.is_null(0, 0)) p.model = r.text(0, 0);
    if (!r.is_null(0, 1)) p.verbose = is_true(r, 0, 1);
    if (!r.is_null(0, 2)) p.yolo = is_true(r, 0, 2);
    if (!r.is_null(0, 3)) p.agent = r.text(0, 3);
    if (!r.is_null(0, 4)) p.disabled_skills = name_list(r.text(0, 4));
    if (!r.is_null(0, 5)) p.plan_mode = is_true(r, 0, 5);
    if (!r.is_null(0, 6)) p.autopilot = is_true(r, 0, 6);
    if (!r.is_null(0, 7)) p.reasoning_effort = r.text(0, 7);
    return p;
  }
  void set_prefs(const std::string& channel_key, const ChannelPrefs& p) override {
    Param model = txt(p.model.value_or(""));
    model.null = !p.model.has_value();
    Param agent = txt(p.agent.value_or(""));
    agent.null = !p.agent.has_value();
    c_.exec(
        "INSERT INTO bridge_channel_prefs (channel_key, model, \"verbose\", yolo, updated_at, "
        "agent, disabled_skills, plan_mode, autopilot, reasoning_effort) VALUES ($1, $2, $3, $4, "
        "$5, $6, $7, $8, $9, $10) ON CONFLICT (channel_key) "
        "DO UPDATE SET model = excluded.model, \"verbose\" = excluded.\"verbose\", "
        "yolo = excluded.yolo, updated_at = excluded.updated_at, agent = excluded.agent, "
        "disabled_skills = excluded.disabled_skills, plan_mode = excluded.plan_mode, "
        "autopilot = excluded.autopilot, reasoning_effort = excluded.reasoning_effort",
        {txt(channel_key), model, optional_flag(p.verbose), optional_flag(p.yolo),
         num(unix_time_ms()), agent, txt(name_list_json(p.disabled_skills)),
         optional_flag(p.plan_mode), optional_flag(p.autopilot), txt(p.reasoning_effort)});
  }

  std::string plan(const std::string& conversation_id) override {
    auto r = c_.exec("SELECT content FROM bridge_plans WHERE conversation_id = $1",
                     {txt(conversation_id)});
    return r.rows() ? r.text(0, 0) : std::string();
  }
  void set_plan(const std::string& conversation_id, const std::string& text) override {
    if (text.empty()) {
      c_.exec("DELETE FROM bridge_plans WHERE conversation_id = $1", {txt(conversation_id)});
      return;
    }
    c_.exec(
        "INSERT INTO bridge_plans (conversation_id, content, updated_at) VALUES ($1, $2, $3) "
        "ON CONFLICT (conversation_id) DO UPDATE SET content = excluded.content, "
        "updated_at = excluded.updated_at",
        {txt(conversation_id), txt(text), num(unix_time_ms())});
  }

  std::vector<StoredRule> permission_rules(const std::string& tool,
                                           const std::vector<std::string>& scopes) override {
    auto r = c_.exec(
        "SELECT id, scope, tool, command_pattern, action FROM bridge_permission_rules "
        "WHERE tool = $1 AND scope = ANY($2::text[]) ORDER BY array_position($2::text[], scope), id",
        {txt(tool), txt(pg::text_array(scopes))});
    return rules(r);
  }
  int64_t add_permission_rule(const StoredRule& r) override {
    // Replacing means a new id: the replaced rule's place in "newest wins" goes with it.
    pg::Transaction tx(c_);
    c_.exec(
        "DELETE FROM bridge_permission_rules WHERE scope = $1 AND tool = $2 AND command_pattern = $3",
        {txt(r.scope), txt(r.tool), txt(r.pattern)});
    auto res = c_.exec(
        "INSERT INTO bridge_permission_rules (scope, tool, command_pattern, action, created_at) "
        "VALUES ($1, $2, $3, $4, $5) RETURNING id",
        {txt(r.scope), txt(r.tool), txt(r.pattern), txt(r.action), num(unix_time_ms())});
    tx.commit();
    return res.int64(0, 0);
  }
  std::vector<StoredRule> list_permission_rules(const std::string& scope) override {
    auto r = c_.exec(
        "SELECT id, scope, tool, command_pattern, action FROM bridge_permission_rules "
        "WHERE $1::text = '' OR scope = $1 ORDER BY id",
        {txt(scope)});
    return rules(r);
  }
  int clear_permission_rules(const std::string& scope, const std::string& tool,
                             const std::string& pattern) override {
    auto r = c_.exec(
        "DELETE FROM bridge_permission_rules WHERE scope = $1 AND ($2::text = '' OR tool = $2) "
        "AND ($3::text = '' OR command_pattern = $3) RETURNING 1",
        {txt(scope), txt(tool), txt(pattern)});
    return r.rows();
  }

  void save_schedule(const ScheduleRecord& s) override {
    c_.exec(
        "INSERT INTO bridge_schedules (id, channel_key, bot, thread_root, prompt, cron, timezone, "
        "run_at, enabled, created_by, last_run, next_run) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
        "$9, $10, $11, $12) ON CONFLICT (id) DO UPDATE SET channel_key = excluded.channel_key, "
        "bot = excluded.bot, thread_root = excluded.thread_root, prompt = excluded.prompt, "
        "cron = excluded.cron, timezone = excluded.timezone, run_at = excluded.run_at, "
        "enabled = excluded.enabled, created_by = excluded.created_by, "
        "last_run = excluded.last_run, next_run = excluded.next_run",
        {txt(s.id), txt(s.channel_key), txt(s.bot), txt(s.thread_root), txt(s.prompt), txt(s.cron),
         txt(s.timezone), num(s.run_at_ms), flag(s.enabled), txt(s.created_by), num(s.last_run_ms),
         num(s.next_run_ms)});
  }
  std::vector<ScheduleRecord> schedules(const std::string& bot,
                                        const std::string& channel_key) override {
    auto r = c_.exec(
        "SELECT id, channel_key, bot, thread_root, prompt, cron, timezone, run_at, enabled, "
        "created_by, last_run, next_run FROM bridge_schedules WHERE bot = $1 AND ($2::text = '' OR "
        "channel_key = $2) ORDER BY ord",
        {txt(bot), txt(channel_key)});
    std::vector<ScheduleRecord> out;
    for (int i = 0; i < r.rows(); ++i)
      out.push_back({r.text(i, 0), r.text(i, 1), r.text(i, 2), r.text(i, 3), r.text(i, 4),
                     r.text(i, 5), r.text(i, 6), r.int64(i, 7), is_true(r, i, 8), r.text(i, 9),
                     r.int64(i, 10), r.int64(i, 11)});
    return out;
  }
  void delete_schedule(const std::string& id) override {
    c_.exec("DELETE FROM bridge_schedules WHERE id = $1", {txt(id)});
  }
  void add_schedule_run(const ScheduleRun& r) override {
    c_.exec(
        "INSERT INTO bridge_schedule_runs (schedule_id, channel_key, outcome, at) VALUES "
        "($1, $2, $3, $4)",
        {txt(r.schedule_id), txt(r.channel_key), txt(r.outcome), num(r.at_ms)});
  }
  std::optional<std::string> setting(const std::string& key) override {
    auto r = c_.exec("SELECT value FROM bridge_settings WHERE key = $1", {txt(key)});
    if (!r.rows()) return std::nullopt;
    return r.text(0, 0);
  }
  void set_setting(const std::string& key, const std::string& value) override {
    c_.exec(
        "INSERT INTO bridge_settings (key, value, updated_at) VALUES ($1, $2, $3) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        {txt(key), txt(value), num(unix_time_ms())});
  }

  void add_agent_call(const AgentCallRecord& c) override {
    c_.exec(
        "INSERT INTO bridge_agent_calls (caller_bot, target_bot, target_agent, message_summary, "
        "response_summary, duration_ms, success, error, chain_id, depth, created_at) VALUES "
        "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        {txt(c.caller_bot), txt(c.target_bot), txt(c.target_agent), txt(c.message_summary),
         txt(c.response_summary), num(c.duration_ms), flag(c.success), txt(c.error),
         txt(c.chain_id), num(c.depth), num(c.created_at_ms)});
  }
  std::vector<AgentCallRecord> agent_calls(const std::string& bot, size_t limit) override {
    auto r = c_.exec(
        "SELECT caller_bot, target_bot, target_agent, message_summary, response_summary, "
        "duration_ms, success, error, chain_id, depth, created_at FROM bridge_agent_calls "
        "WHERE $1 = '' OR caller_bot = $1 OR target_bot = $1 ORDER BY created_at DESC, id DESC "
        "LIMIT $2",
        {txt(bot), num(static_cast<int64_t>(limit))});
    std::vector<AgentCallRecord> out;
    for (int i = 0; i < r.rows(); ++i)
      out.push_back({r.text(i, 0), r.text(i, 1), r.text(i, 2), r.text(i, 3), r.text(i, 4),
                     r.int64(i, 5), is_true(r, i, 6), r.text(i, 7), r.text(i, 8),
                     r.int64(i, 9), r.int64(i, 10)});
    return out;
  }
  void add_audit(const AuditRecord& a) override {
    c_.exec(
        "INSERT INTO bridge_audit (at, front, place, user_name, bot, tool, target, decision, "
        "decided_by, detail, exit_code, duration_ms, error) VALUES ($1, $2, $3, $4, $5, $6, $7, "
        "$8, $9, $10, $11, $12, $13)",
        {num(a.at_ms), txt(a.front), txt(a.place), txt(a.user), txt(a.bot), txt(a.tool),
         txt(a.target), txt(a.decision), txt(a.decided_by), txt(a.detail),
         Param::text_or_null(a.exit_code ? std::to_string(*a.exit_code) : ""),
         num(a.duration_ms), txt(a.error)});
  }
  std::vector<AuditRecord> audit_records(const AuditQuery& q) override {
    auto r = c_.exec(
        "SELECT * FROM (SELECT id, at, front, place, user_name, bot, tool, target, decision, "
        "decided_by, detail, exit_code, duration_ms, error FROM bridge_audit WHERE at >= $1 AND "
        "($2 = '' OR place = $2) ORDER BY id DESC LIMIT $3) AS newest ORDER BY id",
        {num(q.since_ms), txt(q.place), num(q.limit)});
    std::vector<AuditRecord> out;
    for (int i = 0; i < r.rows(); ++i) {
      AuditRecord a;
      a.id = r.int64(i, 0);
      a.at_ms = r.int64(i, 1);
      a.front = r.text(i, 2), a.place = r.text(i, 3), a.user = r.text(i, 4), a.bot = r.text(i, 5);
      a.tool = r.text(i, 6), a.target = r.text(i, 7), a.decision = r.text(i, 8);
      a.decided_by = r.text(i, 9), a.detail = r.text(i, 10);
      if (!r.is_null(i, 11)) a.exit_code = r.int64(i, 11);
      a.duration_ms = r.int64(i, 12);
      a.error = r.text(i, 13);
      out.push_back(std::move(a));
    }
    return out;
  }

  std::vector<ScheduleRun> schedule_runs(const std::string& channel_key, size_t limit) override {
    auto r = c_.exec(
        "SELECT schedule_id, channel_key, outcome, at FROM bridge_schedule_runs WHERE "
        "channel_key = $1 ORDER BY at DESC, id DESC LIMIT $2",
        {txt(channel_key), num(static_cast<int64_t>(limit))});
    std::vector<ScheduleRun> out;
    for (int i = 0; i < r.rows(); ++i)
      out.push_back({r.text(i, 0), r.text(i, 1), r.text(i, 2), r.int64(i, 3)});
    return out;
  }

  void register_dm(const DmChannel& dm) override {
    c_.exec(
        "INSERT INTO bridge_dm_channels (channel_key, bot, other_user_id, created_at) VALUES "
        "($1, $2, $3, $4) ON CONFLICT (channel_key) DO NOTHING",
        {txt(dm.channel_key), txt(dm.bot), txt(dm.other_user_id), num(unix_time_ms())});
  }
  std::vector<DmChannel> dms(const std::string& bot) override {
    auto r = c_.exec("SELECT channel_key, bot, other_user_id FROM bridge_dm_channels WHERE bot = $1",
                     {txt(bot)});
    std::vector<DmChannel> out;
    for (int i = 0; i < r.rows(); ++i) out.push_back({r.text(i, 0), r.text(i, 1), r.text(i, 2)});
    return out;
  }

  // The server holds the cache; this process keeps only prepared statement names.
  void release_memory() override {}

 private:
  void migrate() {
    c_.exec("SELECT pg_advisory_lock($1, $2)",
            {num(pg::kPgLockClass), num(pg::kPgBridgeMigrationLockKey)});
    struct Unlock {
      pg::Connection& c;
      ~Unlock() {
        try {
          c.exec("SELECT pg_advisory_unlock($1, $2)",
                 {num(pg::kPgLockClass), num(pg::kPgBridgeMigrationLockKey)});
        } catch (const Error&) {
          // A broken connection has let go of its locks.
        }
      }
    } unlock{c_};
    c_.run("CREATE TABLE IF NOT EXISTS bridge_schema_version (version INTEGER NOT NULL)");
    int64_t version = c_.exec("SELECT coalesce(max(version), 0) FROM bridge_schema_version").int64(0, 0);
    const int64_t known = static_cast<int64_t>(std::size(kMigrations));
    if (version > known)
      throw Error("the bridge state at " + c_.where() + " was written by a newer pilotfish (schema " +
                  std::to_string(version) + ", this one knows " + std::to_string(known) + ")");
    for (int64_t v = version; v < known; ++v) {
      pg::Transaction tx(c_);
      c_.run(kMigrations[v]);
      c_.exec("INSERT INTO bridge_schema_version (version) VALUES ($1)", {num(v + 1)});
      tx.commit();
    }
  }

  void set_active(const std::string& channel_key, const std::string& id) {
    c_.exec(
        "INSERT INTO bridge_active_conversations (channel_key, conversation_id) VALUES ($1, $2) "
        "ON CONFLICT (channel_key) DO UPDATE SET conversation_id = excluded.conversation_id",
        {txt(channel_key), txt(id)});
  }

  // In a transaction: locks the conversation's row, so two replicas never number a message
  // the same, and touches its updated_at.
  int64_t next_seq(const std::string& conversation_id) {
    auto locked = c_.exec("SELECT 1 FROM bridge_conversations WHERE id = $1 FOR UPDATE",
                          {txt(conversation_id)});
    if (locked.rows() == 0) throw Error("no conversation " + conversation_id + " in the bridge state");
    return c_.exec(
                 "SELECT coalesce(max(seq), 0) + 1 FROM bridge_messages WHERE conversation_id = $1",
                 {txt(conversation_id)})
        .int64(0, 0);
  }

  void insert_message(const std::string& conversation_id, int64_t seq, const StoredMessage& m) {
    int64_t t = m.created_at_ms ? m.created_at_ms : unix_time_ms();
    c_.exec(
        "INSERT INTO bridge_messages (conversation_id, seq, role, content, tool_calls, "
        "tool_call_id, model, post_id, tokens, compacted, created_at) VALUES "
        "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        {txt(conversation_id), num(seq), txt(m.role), txt(m.content),
         Param::text_or_null(m.tool_calls), Param::text_or_null(m.tool_call_id),
         Param::text_or_null(m.model), Param::text_or_null(m.post_id), num(m.tokens),
         flag(m.compacted), num(t)});
    c_.exec("UPDATE bridge_conversations SET updated_at = $1 WHERE id = $2",
            {num(t), txt(conversation_id)});
  }

  std::vector<ConversationInfo> query_conversations(const char* where, const std::string& arg,
                                                    size_t limit) {
    std::string sql =
        "SELECT c.id, c.channel_key, c.created_at, c.updated_at, c.prompt_tokens, "
        "c.completion_tokens, (SELECT count(*) FROM bridge_messages m WHERE m.conversation_id = "
        "c.id), (SELECT content FROM bridge_messages m WHERE m.conversation_id = c.id AND m.role = "
        "'user' ORDER BY seq LIMIT 1) FROM bridge_conversations c WHERE ";
    sql += where;
    sql += " ORDER BY c.updated_at DESC, c.ord DESC LIMIT $2";
    auto r = c_.exec(sql, {txt(arg), num(static_cast<int64_t>(limit))});
    std::vector<ConversationInfo> out;
    for (int i = 0; i < r.rows(); ++i) {
      ConversationInfo c;
      c.id = r.text(i, 0);
      c.channel_key = r.text(i, 1);
      c.created_at_ms = r.int64(i, 2);
      c.updated_at_ms = r.int64(i, 3);
      c.prompt_tokens = r.int64(i, 4);
      c.completion_tokens = r.int64(i, 5);
      c.messages = r.int64(i, 6);
      std::string first = r.text(i, 7);
      c.first_line = first.substr(0, first.find('\n'));
      out.push_back(std::move(c));
    }
    return out;
  }

  static std::vector<StoredRule> rules(const pg::Result& r) {
    std::vector<StoredRule> out;
    for (int i = 0; i < r.rows(); ++i)
      out.push_back({r.int64(i, 0), r.text(i, 1), r.text(i, 2), r.text(i, 3), r.text(i, 4)});
    return out;
  }

  pg::Connection c_;
};

}  // namespace

std::unique_ptr<StateStore> open_pg_state_store(const std::string& conninfo) {
  return std::make_unique<PgStateStore>(conninfo);
}

}  // namespace pf
