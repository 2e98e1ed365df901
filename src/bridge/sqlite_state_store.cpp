// The bridge's SQLite state store (see sqlite_state_store.h and state_store.h).
#include "bridge/sqlite_state_store.h"

#include <chrono>
#include <filesystem>

#include "core/clock.h"
#include "core/text.h"
#include "store/sqlite_util.h"

namespace pf {
namespace {

using sqlite::Statement;

// Each entry is applied once, in order, in a transaction of its own; the file records how many
// have been. Append only: a released migration is never edited.
const char* const kMigrations[] = {
    // 1: the first schema.
    "CREATE TABLE inbound (post_id TEXT PRIMARY KEY, channel_key TEXT NOT NULL, bot TEXT NOT NULL,"
    "  payload TEXT NOT NULL, created_at INTEGER NOT NULL, received_at INTEGER NOT NULL,"
    "  reply_post_id TEXT, done_at INTEGER);"
    "CREATE INDEX inbound_pending ON inbound(bot, done_at, created_at);"
    "CREATE TABLE cursors (bot TEXT NOT NULL, channel_key TEXT NOT NULL,"
    "  created_at INTEGER NOT NULL, PRIMARY KEY (bot, channel_key));"
    "CREATE TABLE conversations (id TEXT PRIMARY KEY, channel_key TEXT NOT NULL,"
    "  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,"
    "  prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX conversations_channel ON conversations(channel_key, updated_at);"
    "CREATE TABLE messages (conversation_id TEXT NOT NULL REFERENCES conversations(id),"
    "  seq INTEGER NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL,"
    "  tool_calls TEXT, tool_call_id TEXT, model TEXT, post_id TEXT,"
    "  tokens INTEGER NOT NULL DEFAULT 0, compacted INTEGER NOT NULL DEFAULT 0,"
    "  created_at INTEGER NOT NULL, PRIMARY KEY (conversation_id, seq));"
    "CREATE TABLE active_conversations (channel_key TEXT PRIMARY KEY,"
    "  conversation_id TEXT NOT NULL REFERENCES conversations(id));"
    "CREATE TABLE channel_prefs (channel_key TEXT PRIMARY KEY, model TEXT, verbose INTEGER,"
    "  updated_at INTEGER NOT NULL);"
    "CREATE TABLE dm_channels (channel_key TEXT PRIMARY KEY, bot TEXT NOT NULL,"
    "  other_user_id TEXT NOT NULL, created_at INTEGER NOT NULL);",
    // 2: remembered permission decisions (spec §13 permission_rules) and the /yolo preference.
    "CREATE TABLE permission_rules (id INTEGER PRIMARY KEY AUTOINCREMENT, scope TEXT NOT NULL,"
    "  tool TEXT NOT NULL, command_pattern TEXT NOT NULL DEFAULT '*',"
    "  action TEXT NOT NULL CHECK (action IN ('allow', 'deny')), created_at INTEGER NOT NULL,"
    "  UNIQUE (scope, tool, command_pattern));"
    "CREATE INDEX permission_rules_tool ON permission_rules(tool, scope);"
    "ALTER TABLE channel_prefs ADD COLUMN yolo INTEGER;",
    // 3: scheduled prompts and their history (spec §12).
    "CREATE TABLE schedules (id TEXT PRIMARY KEY, channel_key TEXT NOT NULL, bot TEXT NOT NULL,"
    "  thread_root TEXT, prompt TEXT NOT NULL, cron TEXT, timezone TEXT NOT NULL,"
    "  run_at INTEGER, enabled INTEGER NOT NULL, created_by TEXT, last_run INTEGER,"
    "  next_run INTEGER);"
    "CREATE INDEX schedules_bot ON schedules(bot, channel_key);"
    "CREATE TABLE schedule_runs (id INTEGER PRIMARY KEY AUTOINCREMENT, schedule_id TEXT NOT NULL,"
    "  channel_key TEXT NOT NULL, outcome TEXT NOT NULL, at INTEGER NOT NULL);"
    "CREATE INDEX schedule_runs_channel ON schedule_runs(channel_key, at);",
    // 4: /agent and /skills (spec §13 channel_prefs: agent, disabled_skills as a JSON array).
    "ALTER TABLE channel_prefs ADD COLUMN agent TEXT;"
    "ALTER TABLE channel_prefs ADD COLUMN disabled_skills TEXT;",
    // 5: plan mode and autopilot (spec §13 channel_prefs session_mode), and each conversation's plan.
    "ALTER TABLE channel_prefs ADD COLUMN plan_mode INTEGER;"
    "ALTER TABLE channel_prefs ADD COLUMN autopilot INTEGER;"
    "CREATE TABLE plans (conversation_id TEXT PRIMARY KEY, content TEXT NOT NULL,"
    "  updated_at INTEGER NOT NULL);",
    // 6: /reasoning (spec §13 channel_prefs reasoning_effort).
    "ALTER TABLE channel_prefs ADD COLUMN reasoning_effort TEXT;",
    // 7: ask_agent's audit (spec §13 agent_calls).
    "CREATE TABLE agent_calls (id INTEGER PRIMARY KEY AUTOINCREMENT, caller_bot TEXT NOT NULL,"
    "  target_bot TEXT NOT NULL, target_agent TEXT NOT NULL, message_summary TEXT NOT NULL,"
    "  response_summary TEXT NOT NULL, duration_ms INTEGER NOT NULL, success INTEGER NOT NULL,"
    "  error TEXT NOT NULL, chain_id TEXT NOT NULL, depth INTEGER NOT NULL,"
    "  created_at INTEGER NOT NULL);"
    "CREATE INDEX agent_calls_at ON agent_calls(created_at);",
    // 8: settings of the whole bridge (/streamer-mode).
    "CREATE TABLE bridge_settings (key TEXT PRIMARY KEY, value TEXT NOT NULL,"
    "  updated_at INTEGER NOT NULL);",
    // 9: the audit trail of side-effecting tool calls (policy/audit.h).
    "CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL,"
    "  front TEXT NOT NULL, place TEXT NOT NULL, user_name TEXT NOT NULL, bot TEXT NOT NULL,"
    "  tool TEXT NOT NULL, target TEXT NOT NULL, decision TEXT NOT NULL,"
    "  decided_by TEXT NOT NULL, detail TEXT NOT NULL, exit_code INTEGER,"
    "  duration_ms INTEGER NOT NULL, error TEXT NOT NULL);"
    "CREATE INDEX audit_at ON audit(at);",
};

class SqliteStateStore : public StateStore {
 public:
  explicit SqliteStateStore(const std::string& path) {
    std::error_code ec;
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
        SQLITE_OK) {
      std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      throw Error("cannot open the bridge state " + path + ": " + why);
    }
    sqlite3_busy_timeout(db_, 10000);
    try {
      sqlite::exec(db_,
                   "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; "
                   "PRAGMA foreign_keys = ON;");
      migrate(path);
    } catch (...) {
      stmts_.clear();
      sqlite3_close(db_);
      throw;
    }
  }
  ~SqliteStateStore() override {
    stmts_.clear();
    sqlite3_close(db_);
  }

  bool record_inbound(const InboundRecord& r) override {
    auto st = stmts_.use(
        "INSERT OR IGNORE INTO inbound (post_id, channel_key, bot, payload, created_at, "
        "received_at, reply_post_id) VALUES (?, ?, ?, ?, ?, ?, ?)");
    st->bind(1, r.post_id).bind(2, r.channel_key).bind(3, r.bot).bind(4, r.payload);
    st->bind(5, r.created_at_ms).bind(6, unix_time_ms()).bind_text_or_null(7, r.reply_post_id);
    st->step();
    return sqlite3_changes(db_) == 1;
  }
  void set_inbound_reply(const std::string& post_id, const std::string& reply) override {
    auto st = stmts_.use("UPDATE inbound SET reply_post_id = ? WHERE post_id = ?");
    st->bind_text_or_null(1, reply).bind(2, post_id).step();
  }
  void set_inbound_payload(const std::string& post_id, const std::string& payload) override {
    auto st = stmts_.use("UPDATE inbound SET payload = ? WHERE post_id = ? AND done_at IS NULL");
    st->bind(1, payload).bind(2, post_id).step();
  }
  void finish_inbound(const std::string& post_id) override {
    auto st = stmts_.use("UPDATE inbound SET done_at = ? WHERE post_id = ? AND done_at IS NULL");
    st->bind(1, unix_time_ms()).bind(2, post_id).step();
  }
  std::vector<InboundRecord> pending_inbound(const std::string& bot) override {
    auto st = stmts_.use(
        "SELECT post_id, channel_key, bot, payload, created_at, reply_post_id FROM "
        "inbound WHERE bot = ? AND done_at IS NULL ORDER BY created_at, received_at");
    st->bind(1, bot);
    std::vector<InboundRecord> out;
    while (st->step())
      out.push_back(
          {st->text(0), st->text(1), st->text(2), st->text(3), st->int64(4), st->text(5)});
    return out;
  }
  bool inbound_seen(const std::string& post_id) override {
    auto st = stmts_.use("SELECT 1 FROM inbound WHERE post_id = ?");
    st->bind(1, post_id);
    return st->step();
  }

  void prune_inbound(int64_t before) override {
    auto st = stmts_.use("DELETE FROM inbound WHERE done_at IS NOT NULL AND done_at < ?");
    st->bind(1, before).step();
  }

  void set_cursors(const std::string& bot,
                   const std::vector<std::pair<std::string, int64_t>>& cursors) override {
    Transaction tx(stmts_);
    for (const auto& [channel_key, t] : cursors) {
      auto st = stmts_.use(
          "INSERT INTO cursors (bot, channel_key, created_at) VALUES (?, ?, ?) "
          "ON CONFLICT (bot, channel_key) DO UPDATE SET created_at = "
          "max(created_at, excluded.created_at)");
      st->bind(1, bot).bind(2, channel_key).bind(3, t).step();
    }
    tx.commit();
  }
  std::vector<std::pair<std::string, int64_t>> cursors(const std::string& bot) override {
    auto st = stmts_.use("SELECT channel_key, created_at FROM cursors WHERE bot = ?");
    st->bind(1, bot);
    std::vector<std::pair<std::string, int64_t>> out;
    while (st->step()) out.emplace_back(st->text(0), st->int64(1));
    return out;
  }

  std::string create_conversation(const std::string& channel_key) override {
    std::string id = random_id(12);
    int64_t t = unix_time_ms();
    Transaction tx(stmts_);
    auto st = stmts_.use(
        "INSERT INTO conversations (id, channel_key, created_at, updated_at) VALUES "
        "(?, ?, ?, ?)");
    st->bind(1, id).bind(2, channel_key).bind(3, t).bind(4, t).step();
    set_active(channel_key, id);
    tx.commit();
    return id;
  }
  std::optional<std::string> active_conversation(const std::string& channel_key) override {
    auto st = stmts_.use("SELECT conversation_id FROM active_conversations WHERE channel_key = ?");
    st->bind(1, channel_key);
    if (!st->step()) return std::nullopt;
    return st->text(0);
  }
  void set_active_conversation(const std::string& channel_key, const std::string& id) override {
    set_active(channel_key, id);
  }
  int64_t append_message(const std::string& conversation_id, StoredMessage m) override {
    Transaction tx(stmts_);
    int64_t seq = next_seq(conversation_id);
    insert_message(conversation_id, seq, m);
    tx.commit();
    return seq;
  }
  std::vector<StoredMessage> messages(const std::string& conversation_id) override {
    auto st = stmts_.use(
        "SELECT seq, role, content, tool_calls, tool_call_id, model, post_id, tokens, "
        "compacted, created_at FROM messages WHERE conversation_id = ? ORDER BY seq");
    st->bind(1, conversation_id);
    std::vector<StoredMessage> out;
    while (st->step()) {
      StoredMessage m;
      m.seq = st->int64(0);
      m.role = st->text(1);
      m.content = st->text(2);
      m.tool_calls = st->text(3);
      m.tool_call_id = st->text(4);
      m.model = st->text(5);
      m.post_id = st->text(6);
      m.tokens = st->int64(7);
      m.compacted = st->int64(8) != 0;
      m.created_at_ms = st->int64(9);
      out.push_back(std::move(m));
    }
    return out;
  }
  void compact(const std::string& conversation_id, int64_t up_to_seq,
               const std::string& summary) override {
    Transaction tx(stmts_);
    auto st =
        stmts_.use("UPDATE messages SET compacted = 1 WHERE conversation_id = ? AND seq <= ?");
    st->bind(1, conversation_id).bind(2, up_to_seq).step();
    StoredMessage m;
    m.role = "summary";
    m.content = summary;
    m.tokens = static_cast<int64_t>(summary.size() / 4);
    insert_message(conversation_id, next_seq(conversation_id), m);
    tx.commit();
  }
  void add_usage(const std::string& id, int64_t prompt, int64_t completion) override {
    auto st = stmts_.use(
        "UPDATE conversations SET prompt_tokens = prompt_tokens + ?, completion_tokens "
        "= completion_tokens + ? WHERE id = ?");
    st->bind(1, prompt).bind(2, completion).bind(3, id).step();
  }
  std::optional<ConversationInfo> conversation(const std::string& id) override {
    auto list = query_conversations("c.id = ?", id, 1);
    if (list.empty()) return std::nullopt;
    return list.front();
  }
  std::vector<ConversationInfo> conversations(const std::string& channel_key,
                                              size_t limit) override {
    return query_conversations("c.channel_key = ?", channel_key, limit);
  }

  ChannelPrefs prefs(const std::string& channel_key) override {
    auto st = stmts_.use(
        "SELECT model, verbose, yolo, agent, disabled_skills, plan_mode, autopilot, "
        "reasoning_effort FROM channel_prefs WHERE channel_key = ?");
    st->bind(1, channel_key);
    ChannelPrefs p;
    if (!st->step()) return p;
    if (sqlite3_column_type(st->handle(), 0) != SQLITE_NULL) p.model = st->text(0);
    if (sqlite3_column_type(st->handle(), 1) != SQLITE_NULL) p.verbose = st->int64(1) != 0;
    if (sqlite3_column_type(st->handle(), 2) != SQLITE_NULL) p.yolo = st->int64(2) != 0;
    if (sqlite3_column_type(st->handle(), 3) != SQLITE_NULL) p.agent = st->text(3);
    if (sqlite3_column_type(st->handle(), 4) != SQLITE_NULL)
      p.disabled_skills = name_list(st->text(4));
    if (sqlite3_column_type(st->handle(), 5) != SQLITE_NULL) p.plan_mode = st->int64(5) != 0;
    if (sqlite3_column_type(st->handle(), 6) != SQLITE_NULL) p.autopilot = st->int64(6) != 0;
    if (sqlite3_column_type(st->handle(), 7) != SQLITE_NULL) p.reasoning_effort = st->text(7);
    return p;
  }
  void set_prefs(const std::string& channel_key, const ChannelPrefs& p) override {
    auto st = stmts_.use(
        "INSERT INTO channel_prefs (channel_key, model, verbose, updated_at, yolo, agent, "
        "disabled_skills, plan_mode, autopilot, reasoning_effort) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (channel_key) DO UPDATE SET "
        "model = excluded.model, verbose = excluded.verbose, updated_at = excluded.updated_at, "
        "yolo = excluded.yolo, agent = excluded.agent, "
        "disabled_skills = excluded.disabled_skills, plan_mode = excluded.plan_mode, "
        "autopilot = excluded.autopilot, reasoning_effort = excluded.reasoning_effort");
    st->bind(1, channel_key);
    if (p.model)
      st->bind(2, *p.model);
    else
      sqlite3_bind_null(st->handle(), 2);
    if (p.verbose)
      st->bind(3, int64_t{*p.verbose ? 1 : 0});
    else
      sqlite3_bind_null(st->handle(), 3);
    st->bind(4, unix_time_ms());
    if (p.yolo)
      st->bind(5, int64_t{*p.yolo ? 1 : 0});
    else
      sqlite3_bind_null(st->handle(), 5);
    if (p.agent)
      st->bind(6, *p.agent);
    else
      sqlite3_bind_null(st->handle(), 6);
    st->bind(7, name_list_json(p.disabled_skills));
    for (auto [column, flag] : {std::pair{8, p.plan_mode}, std::pair{9, p.autopilot}}) {
      if (flag)
        st->bind(column, int64_t{*flag ? 1 : 0});
      else
        sqlite3_bind_null(st->handle(), column);
    }
    st->bind(10, p.reasoning_effort);
    st->step();
  }

  std::string plan(const std::string& conversation_id) override {
    auto st = stmts_.use("SELECT content FROM plans WHERE conversation_id = ?");
    st->bind(1, conversation_id);
    return st->step() ? st->text(0) : std::string();
  }
  void set_plan(const std::string& conversation_id, const std::string& text) override {
    if (text.empty()) {
      auto st = stmts_.use("DELETE FROM plans WHERE conversation_id = ?");
      st->bind(1, conversation_id);
      st->step();
      return;
    }
    auto st = stmts_.use(
        "INSERT INTO plans (conversation_id, content, updated_at) VALUES (?, ?, ?) "
        "ON CONFLICT (conversation_id) DO UPDATE SET content = excluded.content, "
        "updated_at = excluded.updated_at");
    st->bind(1, conversation_id);
    st->bind(2, text);
    st->bind(3, unix_time_ms());
    st->step();
  }

  std::vector<StoredRule> permission_rules(const std::string& tool,
                                           const std::vector<std::string>& scopes) override {
    std::vector<StoredRule> out;
    auto st = stmts_.use(
        "SELECT id, scope, tool, command_pattern, action FROM permission_rules "
        "WHERE tool = ? AND scope = ?");
    for (const auto& scope : scopes) {
      st->reset();
      st->bind(1, tool).bind(2, scope);
      while (st->step())
        out.push_back({st->int64(0), st->text(1), st->text(2), st->text(3), st->text(4)});
    }
    return out;
  }
  int64_t add_permission_rule(const StoredRule& r) override {
    // Replacing means a new id: the replaced rule's place in "newest wins" goes with it.
    Transaction tx(stmts_);
    auto del = stmts_.use(
        "DELETE FROM permission_rules WHERE scope = ? AND tool = ? AND command_pattern = ?");
    del->bind(1, r.scope).bind(2, r.tool).bind(3, r.pattern).step();
    auto ins = stmts_.use(
        "INSERT INTO permission_rules (scope, tool, command_pattern, action, created_at) "
        "VALUES (?, ?, ?, ?, ?)");
    ins->bind(1, r.scope).bind(2, r.tool).bind(3, r.pattern).bind(4, r.action);
    ins->bind(5, unix_time_ms()).step();
    int64_t id = sqlite3_last_insert_rowid(db_);
    tx.commit();
    return id;
  }
  std::vector<StoredRule> list_permission_rules(const std::string& scope) override {
    auto st = stmts_.use(
        scope.empty()
            ? "SELECT id, scope, tool, command_pattern, action FROM permission_rules ORDER BY id"
            : "SELECT id, scope, tool, command_pattern, action FROM permission_rules "
              "WHERE scope = ? ORDER BY id");
    if (!scope.empty()) st->bind(1, scope);
    std::vector<StoredRule> out;
    while (st->step())
      out.push_back({st->int64(0), st->text(1), st->text(2), st->text(3), st->text(4)});
    return out;
  }
  int clear_permission_rules(const std::string& scope, const std::string& tool,
                             const std::string& pattern) override {
    auto st = stmts_.use(
        "DELETE FROM permission_rules WHERE scope = ? AND (? = '' OR tool = ?) "
        "AND (? = '' OR command_pattern = ?)");
    st->bind(1, scope).bind(2, tool).bind(3, tool).bind(4, pattern).bind(5, pattern).step();
    return sqlite3_changes(db_);
  }

  void save_schedule(const ScheduleRecord& s) override {
    auto st = stmts_.use(
        "INSERT INTO schedules (id, channel_key, bot, thread_root, prompt, cron, "
        "timezone, run_at, enabled, created_by, last_run, next_run) VALUES "
        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
        "channel_key = excluded.channel_key, bot = excluded.bot, "
        "thread_root = excluded.thread_root, prompt = excluded.prompt, "
        "cron = excluded.cron, timezone = excluded.timezone, run_at = excluded.run_at, "
        "enabled = excluded.enabled, created_by = excluded.created_by, "
        "last_run = excluded.last_run, next_run = excluded.next_run");
    st->bind(1, s.id)
        .bind(2, s.channel_key)
        .bind(3, s.bot)
        .bind(4, s.thread_root)
        .bind(5, s.prompt);
    st->bind(6, s.cron)
        .bind(7, s.timezone)
        .bind(8, s.run_at_ms)
        .bind(9, int64_t{s.enabled ? 1 : 0});
    st->bind(10, s.created_by).bind(11, s.last_run_ms).bind(12, s.next_run_ms).step();
  }
  std::vector<ScheduleRecord> schedules(const std::string& bot,
                                        const std::string& channel_key) override {
    auto st = stmts_.use(
        "SELECT id, channel_key, bot, thread_root, prompt, cron, timezone, run_at, enabled, "
        "created_by, last_run, next_run FROM schedules WHERE bot = ? AND (? = '' OR "
        "channel_key = ?) ORDER BY rowid");
    st->bind(1, bot).bind(2, channel_key).bind(3, channel_key);
    std::vector<ScheduleRecord> out;
    while (st->step())
      out.push_back({st->text(0), st->text(1), st->text(2), st->text(3), st->text(4), st->text(5),
                     st->text(6), st->int64(7), st->int64(8) != 0, st->text(9), st->int64(10),
                     st->int64(11)});
    return out;
  }
  void delete_schedule(const std::string& id) override {
    auto st = stmts_.use("DELETE FROM schedules WHERE id = ?");
    st->bind(1, id).step();
  }
  void add_schedule_run(const ScheduleRun& r) override {
    auto st = stmts_.use(
        "INSERT INTO schedule_runs (schedule_id, channel_key, outcome, at) VALUES (?, ?, ?, ?)");
    st->bind(1, r.schedule_id).bind(2, r.channel_key).bind(3, r.outcome).bind(4, r.at_ms).step();
  }
  std::vector<ScheduleRun> schedule_runs(const std::string& channel_key, size_t limit) override {
    auto st = stmts_.use(
        "SELECT schedule_id, channel_key, outcome, at FROM schedule_runs WHERE channel_key = ? "
        "ORDER BY at DESC, id DESC LIMIT ?");
    st->bind(1, channel_key).bind(2, static_cast<int64_t>(limit));
    std::vector<ScheduleRun> out;
    while (st->step()) out.push_back({st->text(0), st->text(1), st->text(2), st->int64(3)});
    return out;
  }

  std::optional<std::string> setting(const std::string& key) override {
    auto st = stmts_.use("SELECT value FROM bridge_settings WHERE key = ?");
    st->bind(1, key);
    if (!st->step()) return std::nullopt;
    return st->text(0);
  }
  void set_setting(const std::string& key, const std::string& value) override {
    auto st = stmts_.use(
        "INSERT INTO bridge_settings (key, value, updated_at) VALUES (?, ?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at");
    st->bind(1, key).bind(2, value).bind(3, unix_time_ms()).step();
  }

  void add_agent_call(const AgentCallRecord& c) override {
    auto st = stmts_.use(
        "INSERT INTO agent_calls (caller_bot, target_bot, target_agent, message_summary, "
        "response_summary, duration_ms, success, error, chain_id, depth, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    st->bind(1, c.caller_bot).bind(2, c.target_bot).bind(3, c.target_agent);
    st->bind(4, c.message_summary).bind(5, c.response_summary).bind(6, c.duration_ms);
    st->bind(7, int64_t{c.success ? 1 : 0}).bind(8, c.error).bind(9, c.chain_id);
    st->bind(10, c.depth).bind(11, c.created_at_ms).step();
  }
  std::vector<AgentCallRecord> agent_calls(const std::string& bot, size_t limit) override {
    auto st = stmts_.use(
        "SELECT caller_bot, target_bot, target_agent, message_summary, response_summary, "
        "duration_ms, success, error, chain_id, depth, created_at FROM agent_calls "
        "WHERE ?1 = '' OR caller_bot = ?1 OR target_bot = ?1 ORDER BY created_at DESC, id DESC "
        "LIMIT ?2");
    st->bind(1, bot).bind(2, static_cast<int64_t>(limit));
    std::vector<AgentCallRecord> out;
    while (st->step())
      out.push_back({st->text(0), st->text(1), st->text(2), st->text(3), st->text(4), st->int64(5),
                     st->int64(6) != 0, st->text(7), st->text(8), st->int64(9), st->int64(10)});
    return out;
  }

  void add_audit(const AuditRecord& a) override {
    auto st = stmts_.use(
        "INSERT INTO audit (at, front, place, user_name, bot, tool, target, decision, decided_by, "
        "detail, exit_code, duration_ms, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    st->bind(1, a.at_ms).bind(2, a.front).bind(3, a.place).bind(4, a.user).bind(5, a.bot);
    st->bind(6, a.tool).bind(7, a.target).bind(8, a.decision).bind(9, a.decided_by);
    st->bind(10, a.detail).bind_text_or_null(11, a.exit_code ? std::to_string(*a.exit_code) : "");
    st->bind(12, a.duration_ms).bind(13, a.error).step();
  }
  std::vector<AuditRecord> audit_records(const AuditQuery& q) override {
    auto st = stmts_.use(
        "SELECT * FROM (SELECT id, at, front, place, user_name, bot, tool, target, decision, "
        "decided_by, detail, exit_code, duration_ms, error FROM audit WHERE at >= ?1 AND "
        "(?2 = '' OR place = ?2) ORDER BY id DESC LIMIT ?3) ORDER BY id");
    st->bind(1, q.since_ms).bind(2, q.place).bind(3, q.limit);
    std::vector<AuditRecord> out;
    while (st->step()) {
      AuditRecord a;
      a.id = st->int64(0);
      a.at_ms = st->int64(1);
      a.front = st->text(2), a.place = st->text(3), a.user = st->text(4), a.bot = st->text(5);
      a.tool = st->text(6), a.target = st->text(7), a.decision = st->text(8);
      a.decided_by = st->text(9), a.detail = st->text(10);
      if (std::string code = st->text(11); !code.empty()) a.exit_code = std::stoll(code);
      a.duration_ms = st->int64(12);
      a.error = st->text(13);
      out.push_back(std::move(a));
    }
    return out;
  }

  void register_dm(const DmChannel& dm) override {
    auto st = stmts_.use(
        "INSERT OR IGNORE INTO dm_channels (channel_key, bot, other_user_id, created_at) "
        "VALUES (?, ?, ?, ?)");
    st->bind(1, dm.channel_key)
        .bind(2, dm.bot)
        .bind(3, dm.other_user_id)
        .bind(4, unix_time_ms())
        .step();
  }
  std::vector<DmChannel> dms(const std::string& bot) override {
    auto st = stmts_.use("SELECT channel_key, bot, other_user_id FROM dm_channels WHERE bot = ?");
    st->bind(1, bot);
    std::vector<DmChannel> out;
    while (st->step()) out.push_back({st->text(0), st->text(1), st->text(2)});
    return out;
  }

  void release_memory() override { sqlite3_db_release_memory(db_); }

 private:
  // BEGIN IMMEDIATE ... COMMIT, rolled back if not committed (statements from the cache too).
  class Transaction {
   public:
    explicit Transaction(sqlite::StatementCache& stmts) : stmts_(stmts) {
      stmts_.use("BEGIN IMMEDIATE")->step();
    }
    ~Transaction() {
      if (done_) return;
      try {
        stmts_.use("ROLLBACK")->step();
      } catch (const std::exception&) {  // nothing to roll back: the transaction is gone
      }
    }
    void commit() {
      stmts_.use("COMMIT")->step();
      done_ = true;
    }

   private:
    sqlite::StatementCache& stmts_;
    bool done_ = false;
  };

  void migrate(const std::string& path) {
    sqlite::exec(db_, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
    int64_t version = 0;
    {
      auto st = stmts_.use("SELECT max(version) FROM schema_version");
      if (st->step()) version = st->int64(0);
    }
    const int64_t known = static_cast<int64_t>(std::size(kMigrations));
    if (version > known)
      throw Error("the bridge state " + path + " was written by a newer pilotfish (schema " +
                  std::to_string(version) + ", this one knows " + std::to_string(known) + ")");
    for (int64_t v = version; v < known; ++v) {
      Transaction tx(stmts_);
      sqlite::exec(db_, kMigrations[v]);
      auto st = stmts_.use("INSERT INTO schema_version (version) VALUES (?)");
      st->bind(1, v + 1).step();
      tx.commit();
    }
  }

  void set_active(const std::string& channel_key, const std::string& id) {
    auto st = stmts_.use(
        "INSERT INTO active_conversations (channel_key, conversation_id) VALUES (?, ?) "
        "ON CONFLICT (channel_key) DO UPDATE SET conversation_id = "
        "excluded.conversation_id");
    st->bind(1, channel_key).bind(2, id).step();
  }

  int64_t next_seq(const std::string& conversation_id) {
    auto st =
        stmts_.use("SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE conversation_id = ?");
    st->bind(1, conversation_id);
    st->step();
    return st->int64(0);
  }

  void insert_message(const std::string& conversation_id, int64_t seq, const StoredMessage& m) {
    int64_t t = m.created_at_ms ? m.created_at_ms : unix_time_ms();
    auto st = stmts_.use(
        "INSERT INTO messages (conversation_id, seq, role, content, tool_calls, "
        "tool_call_id, model, post_id, tokens, compacted, created_at) VALUES "
        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    st->bind(1, conversation_id).bind(2, seq).bind(3, m.role).bind(4, m.content);
    st->bind_text_or_null(5, m.tool_calls).bind_text_or_null(6, m.tool_call_id);
    st->bind_text_or_null(7, m.model).bind_text_or_null(8, m.post_id);
    st->bind(9, m.tokens).bind(10, int64_t{m.compacted ? 1 : 0}).bind(11, t).step();
    auto touch = stmts_.use("UPDATE conversations SET updated_at = ? WHERE id = ?");
    touch->bind(1, t).bind(2, conversation_id).step();
  }

  std::vector<ConversationInfo> query_conversations(const char* where, const std::string& arg,
                                                    size_t limit) {
    std::string sql =
        "SELECT c.id, c.channel_key, c.created_at, c.updated_at, c.prompt_tokens, "
        "c.completion_tokens, (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id), "
        "(SELECT content FROM messages m WHERE m.conversation_id = c.id AND m.role = 'user' "
        "ORDER BY seq LIMIT 1) FROM conversations c WHERE " +
        std::string(where) + " ORDER BY c.updated_at DESC, c.rowid DESC LIMIT ?";
    auto st = stmts_.use(sql);
    st->bind(1, arg).bind(2, static_cast<int64_t>(limit));
    std::vector<ConversationInfo> out;
    while (st->step()) {
      ConversationInfo c;
      c.id = st->text(0);
      c.channel_key = st->text(1);
      c.created_at_ms = st->int64(2);
      c.updated_at_ms = st->int64(3);
      c.prompt_tokens = st->int64(4);
      c.completion_tokens = st->int64(5);
      c.messages = st->int64(6);
      std::string first = st->text(7);
      c.first_line = first.substr(0, first.find('\n'));
      out.push_back(std::move(c));
    }
    return out;
  }

  sqlite3* db_ = nullptr;
  sqlite::StatementCache stmts_{&db_};  // after db_: cleared before it is closed
};

}  // namespace

std::unique_ptr<StateStore> open_sqlite_state_store(const std::string& path) {
  return std::make_unique<SqliteStateStore>(path);
}

}  // namespace pf
