// What the chat bridge must remember across restarts, behind one interface so that the SQLite
// file of the embedded default and PostgreSQL (for replicas) hold it the same way: every post received
// (so each is answered exactly once, even across a crash), the newest post seen per channel (so
// a restart replays what it missed), conversations with every message, tool call and result,
// each channel's preferences and DMs, and the permission rules people asked to remember. No SQL
// crosses this interface.
//
// Threads: an implementation is used from one thread at a time (the bridge's network thread);
// each call is one short transaction. Errors: pf::Error naming what failed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chat/cursor_store.h"
#include "policy/audit.h"
#include "policy/permission.h"

namespace pf {

// A post the bridge accepted for answering, kept until its answer is complete.
struct InboundRecord {
  std::string post_id;
  std::string channel_key;  // "platform:channel id"
  std::string bot;          // the bot that answers it
  std::string payload;      // the normalised message as JSON (the adapter's InboundMessage)
  int64_t created_at_ms = 0;
  std::string reply_post_id;  // the placeholder or reply posted so far, if any
};

// One message of a conversation, in the chat model's terms.
struct StoredMessage {
  int64_t seq = 0;   // order within the conversation, from 1 (set by the store)
  std::string role;  // user, assistant, tool, summary
  std::string content;
  std::string tool_calls;    // assistant: JSON array [{id, name, arguments}], else empty
  std::string tool_call_id;  // tool: the call answered
  std::string model;         // assistant: the model that wrote it
  std::string post_id;       // user: the post it came from
  int64_t tokens = 0;        // estimated size in tokens
  bool compacted = false;    // folded into a later summary; kept, never sent again
  int64_t created_at_ms = 0;
};

struct ConversationInfo {
  std::string id;
  std::string channel_key;
  std::string first_line;  // of the first user message, for /resume
  int64_t created_at_ms = 0, updated_at_ms = 0;
  int64_t messages = 0;
  int64_t prompt_tokens = 0, completion_tokens = 0;
};

// A channel's runtime preferences (/model, /verbose, /yolo, /agent, /skills); unset fields
// fall back to the config.
struct ChannelPrefs {
  std::optional<std::string> model;
  std::optional<bool> verbose;
  std::optional<bool> yolo;
  std::optional<std::string> agent;  // "": deselected (no agent, whatever the config says)
  std::vector<std::string> disabled_skills;  // by name, as /skills disable stored them
  std::optional<bool> plan_mode;  // /plan on|off
  std::optional<bool> autopilot;  // /autopilot on|off
  std::string reasoning_effort;   // /reasoning LEVEL; empty: the provider's default
};

// A scheduled prompt (spec §12): a cron expression in a time zone, or one time.
struct ScheduleRecord {
  std::string id;
  std::string channel_key, bot, thread_root;  // where it fires and answers
  std::string prompt;
  std::string cron;          // five fields; empty for a one-off
  std::string timezone = "UTC";
  int64_t run_at_ms = 0;     // a one-off's time
  bool enabled = true;
  std::string created_by;
  int64_t last_run_ms = 0, next_run_ms = 0;
};

struct ScheduleRun {
  std::string schedule_id, channel_key, outcome;  // outcome: fired, missed, failed
  int64_t at_ms = 0;
};

// One ask_agent call (spec §16 agent_calls): who asked which bot (and agent) what, how it
// ended, and where in its chain of calls it was.
struct AgentCallRecord {
  std::string caller_bot, target_bot, target_agent;
  std::string message_summary, response_summary;  // each at most 500 characters
  int64_t duration_ms = 0;
  bool success = false;
  std::string error;  // why it failed or was refused; empty on success
  std::string chain_id;
  int64_t depth = 1;  // 1: called from a channel's turn; 2: from that call's answer; ...
  int64_t created_at_ms = 0;
};

struct DmChannel {
  std::string channel_key;
  std::string bot;
  std::string other_user_id;
};

// The remembered permission decisions (RuleStore, policy/permission.h), the audit trail
// (AuditLog, policy/audit.h: append-only, records are never changed) and the adapters'
// catch-up cursors (CursorStore, chat/cursor_store.h) live here too: the channel scope is the
// channel key.
class StateStore : public RuleStore, public CursorStore, public AuditLog {
 public:
  virtual ~StateStore() = default;

  // Exactly-once delivery. record_inbound returns false when the post was recorded before (a
  // replay or a duplicate event): the caller must not answer it again.
  virtual bool record_inbound(const InboundRecord& record) = 0;
  // The reply post (placeholder) of a pending post, so a restart can clean it up.
  virtual void set_inbound_reply(const std::string& post_id, const std::string& reply_post_id) = 0;
  // A post edited while it waits to be answered: its payload replaced (a finished post is left
  // as it was), so that a restart answers the edit.
  virtual void set_inbound_payload(const std::string& post_id, const std::string& payload) = 0;
  // The post is answered (or deliberately not): it leaves the pending list for good.
  virtual void finish_inbound(const std::string& post_id) = 0;
  // Posts recorded but not finished (a crash or restart mid-turn), oldest first.
  virtual std::vector<InboundRecord> pending_inbound(const std::string& bot) = 0;
  virtual bool inbound_seen(const std::string& post_id) = 0;
  // Forgets finished posts answered before the time (ms): replays only reach back so far.
  virtual void prune_inbound(int64_t finished_before_ms) = 0;

  // set_cursors / cursors (CursorStore): the adapters' catch-up cursors per channel.

  // Conversations. create_conversation makes it the channel's active one. The key is opaque:
  // a channel's ("platform:channel id") or a thread's ("platform:channel id/thread root").
  virtual std::string create_conversation(const std::string& channel_key) = 0;
  virtual std::optional<std::string> active_conversation(const std::string& channel_key) = 0;
  virtual void set_active_conversation(const std::string& channel_key, const std::string& id) = 0;
  // Appends and returns the message's seq.
  virtual int64_t append_message(const std::string& conversation_id, StoredMessage message) = 0;
  // Every message, oldest first, compacted ones included.
  virtual std::vector<StoredMessage> messages(const std::string& conversation_id) = 0;
  // Marks messages up to seq compacted and appends the summary that replaces them, atomically.
  virtual void compact(const std::string& conversation_id, int64_t up_to_seq,
                       const std::string& summary) = 0;
  virtual void add_usage(const std::string& conversation_id, int64_t prompt_tokens,
                         int64_t completion_tokens) = 0;
  virtual std::optional<ConversationInfo> conversation(const std::string& id) = 0;
  // A channel's conversations, most recently updated first.
  virtual std::vector<ConversationInfo> conversations(const std::string& channel_key,
                                                      size_t limit) = 0;

  // A conversation's plan (plan mode): its text, "" when none; set_plan("") removes it.
  virtual std::string plan(const std::string& conversation_id) = 0;
  virtual void set_plan(const std::string& conversation_id, const std::string& text) = 0;

  virtual ChannelPrefs prefs(const std::string& channel_key) = 0;
  virtual void set_prefs(const std::string& channel_key, const ChannelPrefs& prefs) = 0;

  // Scheduled prompts and their history. schedules("") lists every one of the bot.
  virtual void save_schedule(const ScheduleRecord& schedule) = 0;  // insert or replace by id
  virtual std::vector<ScheduleRecord> schedules(const std::string& bot, const std::string& channel_key) = 0;
  virtual void delete_schedule(const std::string& id) = 0;
  virtual void add_schedule_run(const ScheduleRun& run) = 0;
  virtual std::vector<ScheduleRun> schedule_runs(const std::string& channel_key, size_t limit) = 0;

  // Settings of the whole bridge, not of one channel (/streamer-mode): the value, or nullopt.
  virtual std::optional<std::string> setting(const std::string& key) = 0;
  virtual void set_setting(const std::string& key, const std::string& value) = 0;

  // The ask_agent calls a bot made or received, newest first (bot "": every bot's).
  virtual void add_agent_call(const AgentCallRecord& call) = 0;
  virtual std::vector<AgentCallRecord> agent_calls(const std::string& bot, size_t limit) = 0;

  // DMs found at start-up or on a first message, so their channels are known after a restart.
  virtual void register_dm(const DmChannel& dm) = 0;
  virtual std::vector<DmChannel> dms(const std::string& bot) = 0;

  // Gives back the memory the store caches (pages read before); the store stays usable and
  // reads them again when needed. Called when the bridge has been idle a while.
  virtual void release_memory() = 0;
};

// The state store a location names: a postgres:// or postgresql:// URL (pg_state_store.h), else
// a SQLite file path (sqlite_state_store.h). Throws pf::Error as those do.
std::unique_ptr<StateStore> open_state_store(const std::string& location);

// A list of names as both stores keep it (a JSON array of strings), and back: a value that is not
// one reads as no names.
std::string name_list_json(const std::vector<std::string>& names);
std::vector<std::string> name_list(const std::string& json_text);

}  // namespace pf
