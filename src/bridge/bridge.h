// The bridge's orchestrator (spec §1, §2, §7): it takes the adapters' messages, decides which
// to answer (its channel, its trigger, who sent it, whether it was answered before), and runs
// each channel's work in order while channels run side by side on the one network thread —
// retrieval and tools go to the runtime's workers. A turn holds its channel until it is done;
// meanwhile a plain message steers it (taken in at the next step, ⚡), /stop, /new and the
// read-only commands run at once and everything else waits its turn. Replies stream into the
// channel through a ReplyStream per turn. Every post accepted is recorded before it is worked
// on and marked done only once its answer is out, so a restart finishes what a crash left.
//
// Threads: construct, call and destroy on the network thread. The runtime and the state store
// must outlive the bridge.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "agent/action_tools.h"
#include "agent/answer.h"
#include "bridge/admin_tools.h"
#include "bridge/agent_shelf.h"
#include "bridge/attachment_keeper.h"
#include "bridge/bot_lease.h"
#include "bridge/bridge_config.h"
#include "bridge/bridge_metrics.h"
#include "bridge/chat_channels.h"
#include "bridge/command_table.h"
#include "bridge/hook_gate.h"
#include "bridge/inter_agent.h"
#include "bridge/lease_keeper.h"
#include "bridge/memory_keeper.h"
#include "bridge/path_grants.h"
#include "bridge/permission_desk.h"
#include "bridge/plan_board.h"
#include "bridge/precedence.h"
#include "bridge/question_desk.h"
#include "bridge/scheduler.h"
#include "bridge/state_store.h"
#include "bridge/streamer_mode.h"
#include "bridge/streaming.h"
#include "chat/channel_adapter.h"
#include "core/cancel.h"
#include "core/config.h"
#include "mcp/client.h"
#include "policy/permission.h"
#include "runtime/answer_runtime.h"

namespace pf {

struct BridgeChannel;
class TurnRunner;

struct BridgeStats {
  int64_t received = 0, answered = 0, duplicates = 0, denied = 0, ignored = 0, skipped_old = 0;
  int64_t steered = 0, turns_failed = 0;
  int64_t takeovers = 0, leases_lost = 0;  // bots taken over from, or lost to, another process
};

class Bridge {
 public:
  // Re-reads the configuration for `/reload config`: the new config, or a pf::Error.
  using ConfigLoader = std::function<Config()>;

  Bridge(boost::asio::io_context& io, AnswerRuntime& runtime, StateStore& state, Config config,
         ConfigLoader reload = {});
  ~Bridge();
  Bridge(const Bridge&) = delete;
  Bridge& operator=(const Bridge&) = delete;

  // Before start(): the bridge routes the adapter's messages (it keeps the adapter).
  void add_adapter(std::unique_ptr<ChannelAdapter> adapter);
  // Before start(), when several processes share the state store: each bot runs only in the
  // process that holds its lease; the others stand by and try again every poll, and a holder
  // that finds its lease lost stops acting for the bot. The lease must outlive the bridge.
  void set_lease(BotLease* lease, std::chrono::milliseconds poll);
  // Connects every adapter whose bot this process holds, registers DMs, starts indexing channel
  // repositories that need it, and resumes the posts a previous run accepted but did not finish.
  // Throws pf::Error when an adapter cannot connect.
  boost::asio::awaitable<void> start();
  // Whether this process runs the adapter's bot now (always, without a lease).
  bool holds(const ChannelAdapter& adapter) const;
  // Stops taking posts; lets running turns finish for up to grace, then cancels them (their
  // posts stay pending, to be answered after a restart); waits for every outbox to drain.
  boost::asio::awaitable<void> shutdown(std::chrono::milliseconds grace);
  // Applies a new configuration; returns what was applied and what needs a restart.
  std::string apply_config(const Config& config);

  BridgeStats stats() const;
  // The Prometheus text of the bridge's metrics (bridge_metrics.h).
  std::string metrics_text() const;
  const Config& config() const { return config_; }
  // The config's bridge section (bridge_config.h).
  const BridgeConfig& settings() const { return bridge_config(config_); }
  bool idle() const;
  const std::vector<std::unique_ptr<ChannelAdapter>>& adapters() const { return adapters_; }

 private:
  using Channel = BridgeChannel;
  // What a turn keeps alive while it runs: its tools, and the servers behind them (a reload may
  // replace the bridge's own copies meanwhile).
  struct TurnTools {
    ToolRegistry registry;
    std::shared_ptr<ActionTools> actions;
    std::shared_ptr<McpTools> mcp;
    std::unique_ptr<AuditTrail> audit;  // the turn's side of the audit trail (policy/audit.h)
  };
  // What a command acts on: the channel, and the message that asked for it.
  struct CommandContext {
    Channel& channel;
    const InboundMessage& message;
  };

  // Leases (bridge_lease.cpp, with lease_keeper.h). connect_bot opens a held bot's event stream
  // and tracks its channels; resume_bot answers what its last holder left pending and arms its
  // schedules; lost_bot stops acting for a bot whose lease was lost (its pending posts are for
  // the next holder).
  boost::asio::awaitable<void> connect_bot(ChannelAdapter& adapter);
  boost::asio::awaitable<void> resume_bot(ChannelAdapter& adapter);
  void lost_bot(ChannelAdapter& adapter);
  // Checks the lease before a post is recorded or finished: whether the bot is still ours.
  bool still_ours(ChannelAdapter& adapter);
  // Whether a channel's work must stop: shutting down, or its bot is run elsewhere now.
  bool abandoned(const Channel& channel) const;

  void on_message(ChannelAdapter& adapter, InboundMessage message, bool resumed);
  // Whether a message is to be answered here: a served channel, its trigger, who sent it, not
  // answered before (recorded now, unless resumed), not older than the replay window. Gives the
  // text without the triggers, and whether a thread trigger was among them.
  Channel* admit(ChannelAdapter& adapter, const InboundMessage& message, bool resumed,
                 std::string* text, bool* thread);
  // An admitted message to where it goes: a prompt's answer, a command run at once, steering
  // of the running turn, or the channel's queue.
  void route(Channel& channel, ChannelAdapter& adapter, InboundMessage message, std::string text,
             bool thread, bool resumed);
  void on_reaction(ChannelAdapter& adapter, InboundReaction reaction);
  // Who may talk to the adapter's bot (access.h), with its lists as resolve_access left them.
  bool allowed(const ChannelAdapter& adapter, const std::string& username,
               const std::string& user_id) const;
  // Where the platform matches people by id (Slack), the platform's and bot's access lists
  // with each handle replaced by the id it names, an entry naming nobody dropped (and logged);
  // run at connect and at each reload. On failure the lists stay as they were.
  boost::asio::awaitable<void> resolve_access(ChannelAdapter& adapter);
  // An edit or deletion of a message that still waits in its channel's queue: it is answered
  // with the new text, or not at all. Answered or running messages are left alone.
  void on_change(ChannelAdapter& adapter, InboundChange change);
  Channel* channel_for(ChannelAdapter& adapter, const InboundMessage& message);
  void enqueue(Channel& channel, InboundMessage message);
  boost::asio::awaitable<void> work(Channel& channel);
  // A turn (bridge_turn.cpp): the placeholder, then first_index (the repository ready) and
  // answer_turn, whose parts follow: the attachments saved and named in the question, the
  // question stored and the history read, the tools offered, the reply ended by the outcome,
  // and what follows a turn (the fallback notice, usage, the posts finished).
  boost::asio::awaitable<void> run_turn(Channel& channel, InboundMessage message);
  // Waits (up to 2 minutes, or cancel) for a repository's first index run, if it is running.
  boost::asio::awaitable<void> first_index(Repository& repo, CancelSignal& cancel);
  boost::asio::awaitable<void> answer_turn(Channel& channel, InboundMessage message,
                                           CancelSignal& cancel,
                                           std::unique_ptr<ReplyStream> stream);
  // Images (PNG, JPEG, GIF, WebP; at most 4 of 5 MiB) go to *images when the model takes
  // them; otherwise the channel is told which were not shown. Other files are named in the
  // question for read_file.
  boost::asio::awaitable<std::string> take_attachments(Channel& channel, Repository& repo,
                                                       const InboundMessage& message,
                                                       const std::string& model,
                                                       std::vector<ImageContent>* images);
  std::vector<ChatMessage> record_question(const std::string& conversation,
                                           const std::string& post_id, const std::string& question);
  // What shapes a channel's answers (agent_shelf.h): its custom agent, the model (the agent's,
  // resolved as /model resolves, else the channel's) and its skills. Says once in the channel
  // when the agent or the agent's model is not found.
  struct TurnShape {
    std::optional<AgentDefinition> agent;
    std::string model;
    std::vector<Skill> skills;
    bool plan = false;       // plan mode: only reading, and update_plan
    bool autopilot = false;  // the run goes on until the model says done (plan_board.h)
    std::string reasoning_effort;  // /reasoning's level; empty: the provider's default
  };
  TurnShape shape_of(Channel& channel);
  // A turn's tool gate: plan mode's refusal, the preToolUse hooks, then a chat tool run or the
  // permission engine's decision (nullopt runs the call; a JSON value is its result instead).
  boost::asio::awaitable<std::optional<nlohmann::json>> gate_call(
      Channel& channel, Repository& repo, const TurnTools& tools, const TurnShape& shape,
      const ToolCall& call, CancelSignal& cancel, bool* no_reply);
  // The answer's instructions (the channel's, the agent's, the skills', plan mode's and
  // autopilot's), reasoning effort, step cap and autopilot's keep_going (through turn).
  void shape_answer(const Channel& channel, const TurnShape& shape,
                    const std::string& conversation, TurnRunner& turn, AnswerOptions& opt);
  // The turn's tools: the repository's, the channel's actions, the chat tools and the MCP
  // servers', narrowed to the agent's list (the chat tools always stay), and use_skill.
  boost::asio::awaitable<void> offer_tools(Channel& channel, Repository& repo,
                                           const TurnShape& shape, TurnTools& out);
  // limit_seconds: the time the turn was given (named when it ran out).
  void end_reply(Channel& channel, TurnRunner& turn, const std::string& failure, bool timed_out,
                 int64_t limit_seconds, CancelSignal& cancel);
  void after_turn(Channel& channel, const TurnRunner& turn, const std::string& model,
                  const std::string& root, const std::string& conversation, int64_t prompt_tokens);
  boost::asio::awaitable<void> run_command(Channel& channel, const InboundMessage& message,
                                           const CommandCall& command);
  boost::asio::awaitable<void> compact_if_needed(Channel& channel, const std::string& conversation,
                                                 const std::string& model);
  // What the model is sent of a conversation's stored messages: compacted ones left out, the
  // summary as an exchange, tool calls only with their results.
  static std::vector<ChatMessage> history(const std::vector<StoredMessage>& stored);
  // One request to the model (its fallback chain): instruction as the system prompt, text as
  // the question; the answer's text, cut at max_chars. Throws pf::Error as the chain does.
  boost::asio::awaitable<std::string> summarise(const std::string& model,
                                                const std::string& instruction,
                                                const std::string& text, int max_tokens,
                                                size_t max_chars);
  std::string instructions(const Channel& channel) const;
  std::string model_of(const Channel& channel) const;
  // The model's configured contextWindow, else 128,000 tokens.
  int64_t context_window_of(const std::string& model) const;
  std::vector<std::string> fallbacks_of(const Channel& channel) const;
  bool verbose_of(const Channel& channel) const;
  void reply(Channel& channel, const std::string& text);
  void note_skipped(Channel& channel);
  // Starts the quiet spell again (kQuietSpell in bridge.cpp).
  void arm_quiet_timer();
  // The running turn's conversation (in its thread's key when the channel is thread-scoped),
  // created when there is none or the loop detector asked for a new one.
  std::string conversation_of(Channel& channel);
  // Whether each thread of the channel is a conversation of its own (never in a DM).
  bool thread_scoped(const Channel& channel) const;
  // The key the conversation of a thread of the channel is kept under (conversation_key below).
  std::string conversation_key_at(const Channel& channel, const std::string& thread_root) const;
  Repository& repository_of(Channel& channel);
  // The repository at root, indexed now if the store has never seen it and on the schedule;
  // source: the git URL root is a clone of, fetched before each run (once set, it stays).
  Repository& prepare_repository(const std::string& root, const std::string& source = "");
  const PlatformConfig* platform_config(const std::string& name) const;
  const BotConfig* bot_config(const std::string& platform, const std::string& bot) const;
  // The command table (bridge_commands.cpp): each command's entry, and one handler per command.
  void add_commands();
  boost::asio::awaitable<void> new_command(Channel& channel, const CommandCall& c);
  boost::asio::awaitable<void> stop_command(Channel& channel, const CommandCall& c);
  boost::asio::awaitable<void> resume_command(Channel& channel, const CommandCall& c);
  boost::asio::awaitable<void> model_command(Channel& channel, const CommandCall& c);
  boost::asio::awaitable<void> provider_command(Channel& channel, const CommandCall& c);
  boost::asio::awaitable<void> status_command(Channel& channel, const CommandCall& c);
  boost::asio::awaitable<void> config_command(Channel& channel, const CommandCall& c);
  boost::asio::awaitable<void> verbose_command(Channel& channel, const CommandCall& c);
  boost::asio::awaitable<void> mcp_command(Channel& channel, const CommandCall& c);
  boost::asio::awaitable<void> tools_command(Channel& channel, const CommandCall& c);  // /skills
  boost::asio::awaitable<void> agents_command(Channel& channel, const CommandCall& c);  // /agent(s)
  // Plan mode and autopilot (bridge_plan.cpp, over plan_board.h).
  boost::asio::awaitable<void> plan_command(Channel& channel, const CommandCall& c);
  boost::asio::awaitable<void> autopilot_command(Channel& channel, const CommandCall& c);
  // /implement [yolo|interactive]: leaves plan mode and runs the plan as a turn of its own (on
  // autopilot unless interactive; yolo approves prompts for that turn only).
  boost::asio::awaitable<void> implement_command(Channel& channel, const InboundMessage& message,
                                                 const CommandCall& c);
  // A plan-mode turn's refusal of a call that is not read-only; nullopt lets it go on.
  std::optional<nlohmann::json> plan_mode_refusal(const ToolRegistry& tools,
                                                  const ToolCall& call) const;
  boost::asio::awaitable<void> reload_command(Channel& channel, const CommandCall& c);
  boost::asio::awaitable<void> help_command(Channel& channel, const CommandCall& c);

  // Permissions (bridge_permissions.cpp). The action kinds a channel is offered: its own, else
  // its bot's, else bridge.defaults.actions.
  std::vector<std::string> action_kinds_of(const Channel& channel) const;
  // The side-effecting tools of a bot's workspace, made once per root and bot (its granted paths
  // are bound; a turn keeps its copy alive).
  std::shared_ptr<ActionTools> action_tools_for(const std::string& root, const std::string& bot);
  PolicyContext policy_context(const Channel& channel, const std::string& root);
  // The MCP servers of a workspace (the config's and its mcp-config.json), made once per root.
  std::shared_ptr<McpTools> mcp_tools_for(const std::string& root);
  // The before_tool step: nullopt runs the call; a JSON value is its refusal. It may post a
  // prompt and wait for an answer, the timeout, cancel or shutdown.
  // asked: a person approved this very call already (a hook's question), which answers the
  // engine's "ask" too (its denies still hold). audit (may be null) is told the decision.
  boost::asio::awaitable<std::optional<nlohmann::json>> check_permission(
      Channel& channel, const ToolRegistry& tools, const ToolCall& call, const std::string& root,
      CancelSignal& cancel, bool asked = false, AuditTrail* audit = nullptr);
  // Admin notices (bridge_reload.cpp): text to each admin bot's DMs that hold a conversation;
  // the restart notice at start (with what a reload could not apply); a reload's changes that
  // need a restart, told and kept for that notice.
  void tell_admins(const std::string& text);
  void announce_restart();
  void restart_needed(const std::vector<std::string>& changes);
  // Admin tools and channels registered from chat (bridge_admin.cpp, over admin_tools.h,
  // chat_channels.h, path_grants.h). run_admin_tool runs an approved call; the config's channel
  // list gets the registered channels merged in (merge_registered) at construction, at each
  // reload and when one is added or removed; /project lists or removes them.
  boost::asio::awaitable<nlohmann::json> run_admin_tool(Channel& channel, const ToolCall& call);
  boost::asio::awaitable<nlohmann::json> create_project(Channel& channel, ProjectRequest request);
  nlohmann::json agent_access(const std::string& bot);
  boost::asio::awaitable<nlohmann::json> platform_info(Channel& channel);
  void merge_registered();
  boost::asio::awaitable<void> project_command(Channel& channel, const CommandCall& c);
  // Clones (on the worker pool) the configured channels' repositories given by git URL that are
  // not there yet; a failure is logged and the channel's turns say the folder is missing.
  boost::asio::awaitable<void> clone_missing();
  // Where a bot's own folders go: bridge.workspacesDir, else <data dir>/workspaces; then /bot.
  std::string workspaces_of(const std::string& bot) const;
  // A permission prompt's outcome, for the metrics.
  void count_prompt(const PermissionAnswer& answer);
  // The preToolUse hooks (hook_gate.h) before any tool call, chat tools included: nullopt lets
  // it go on (*asked set when a person approved it at a hook's ask); a JSON value refuses it.
  // audit (may be null) is told of a side-effecting call refused here.
  boost::asio::awaitable<std::optional<nlohmann::json>> check_hooks(
      Channel& channel, const ToolRegistry& tools, const ToolCall& call, const std::string& root,
      CancelSignal& cancel, bool* asked, AuditTrail* audit = nullptr);
  // The chat tools (bridge_chat_tools.cpp), run from the turn's before_tool step; *no_reply
  // is set when the model asked for no answer.
  boost::asio::awaitable<nlohmann::json> run_chat_tool(Channel& channel, Repository& repo,
                                                       const ToolCall& call, bool* no_reply);
  // Calls between bots (bridge_agent_calls.cpp, over inter_agent.h). ask_agent from a channel's
  // turn starts a chain of its own; call_agent runs one call of a chain as the target bot, in
  // its workspace, bounded by the origin channel (its rules, and the action kinds every bot of
  // the chain so far has), and records it. The callee's steps show in the origin's feed when
  // it is verbose.
  struct Callee;
  boost::asio::awaitable<nlohmann::json> ask_agent(Channel& channel, const ToolCall& call);
  boost::asio::awaitable<nlohmann::json> call_agent(Channel& origin, AgentChain chain,
                                                    std::vector<std::string> kinds,
                                                    std::string arguments, CancelSignal& cancel);
  // The callee's tool gate: a nested ask_agent, the preToolUse hooks (an ask is refused: nobody
  // can be asked), then the engine in the target bot's scope and the origin channel's, both of
  // which must approve without asking.
  boost::asio::awaitable<std::optional<nlohmann::json>> callee_gate(Channel& origin,
                                                                    const Callee& callee,
                                                                    const ToolCall& call,
                                                                    CancelSignal& cancel);
  // The configured bots' names, and the workspace a bot is called in: its first channel's
  // repository, else its DMs' (bridge.defaults.workingDirectory, server.repository, its folder
  // under the workspaces).
  std::vector<std::string> bot_names() const;
  std::string bot_workspace(const std::string& bot) const;
  // The repository a bot's DMs are about (made when it is the bot's own folder).
  std::string dm_workspace(const std::string& bot) const;
  // show_file_in_chat with diff: the file's uncommitted changes (git diff against HEAD, run in
  // run_command's sandbox) posted as a diff block.
  boost::asio::awaitable<nlohmann::json> show_diff(Channel& channel, Repository& repo,
                                                   const std::string& path);
  // ask_user: the question posted in the channel and the next message its answer (or why none).
  boost::asio::awaitable<nlohmann::json> ask_user(Channel& channel, const ToolCall& call);
  // Where a schedule made in the channel fires (scheduler.h).
  ScheduleSite schedule_site(const Channel& channel) const;
  // A fired schedule's prompt queued in its channel (Scheduler::Fire).
  std::optional<bool> take_scheduled(InboundMessage message);
  void schedule_command(Channel& channel, const InboundMessage& m, const CommandCall& c);
  // /approve /deny /always /remember /yolo /rules.
  void permission_command(Channel& channel, const InboundMessage& m, const CommandCall& c);
  // /rules: lists the channel's stored rules, or clears them ("clear [spec]"); no prompt answered.
  void rules_command(Channel& channel, const std::string& args);

  boost::asio::io_context& io_;
  AnswerRuntime& runtime_;
  StateStore& state_;
  Config config_;
  ConfigLoader reload_;
  CommandTable<CommandContext> commands_;
  std::vector<std::unique_ptr<ChannelAdapter>> adapters_;
  std::map<std::string, std::unique_ptr<Channel>> channels_;  // by "platform:channel id"
  BridgeStats stats_;
  BridgeMetrics metrics_;
  Precedence precedence_{io_.get_executor()};  // placeholders ahead of turn setups
  bool stopping_ = false;
  std::set<std::string> first_index_;  // repositories whose first index run is under way
  std::set<std::string> fetching_;     // repositories whose index runs fetch their git source first
  std::map<std::string, std::shared_ptr<ActionTools>> actions_;  // by workspace root
  std::map<std::string, std::shared_ptr<McpTools>> mcp_;         // by workspace root
  // Restarted whenever a channel's work ends; when it runs out with nothing to do, the state
  // store's cache and the allocator's free pages go back to the system.
  std::shared_ptr<boost::asio::steady_timer> quiet_timer_;
  // Access lists with handles resolved to ids, per adapter (absent: matched as configured).
  std::map<const ChannelAdapter*, std::pair<AccessConfig, AccessConfig>> access_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // false once destroyed
  // The parts that own their state (each header states its contract).
  AgentShelf shelf_{state_};
  PlanBoard plans_{state_};
  HookGate hooks_{io_, runtime_.pool(), config_, runtime_.db_path()};
  PermissionDesk desk_;
  QuestionDesk questions_;  // ask_user
  AttachmentKeeper attachments_;
  StreamerMode streamer_{state_};
  Scheduler scheduler_;
  LeaseKeeper leases_;
  MemoryKeeper memory_;
  ChatChannels registered_{state_};  // channels added from chat
  PathGrants grants_{state_};        // folders granted to bots from chat
};

// What an answer reads of the configuration (providers and model defaults), copied for the
// turn so that a reload cannot change it mid-answer. Not the whole Config: the bridge's own
// section, its channel list above all, is tens of kilobytes with hundreds of channels, and
// every running turn held a copy.
Config answer_config(const Config& config);

// What a workspace tells every answer about it: its AGENTS.md and AGENTS.local.md, and the
// sections of its MEMORY.md (each in a block of its own, after a blank line).
std::string workspace_notes(const std::string& root);

// The chat tools' registry entries (schemas only: the bridge runs them), and their names.
void add_chat_tools(ToolRegistry& tools);
// update_plan, the chat tool of plan mode (plan_board.h).
void add_plan_tool(ToolRegistry& tools);
bool is_bridge_chat_tool(const std::string& name);

// The state store's key for a conversation: the channel's key ("platform:channel id"), or with
// conversationScope "thread" that key, '/' and the thread's root post id. A post outside any
// thread (thread_root empty) keeps the channel's key. The store treats it as opaque.
std::string conversation_key(const std::string& channel_key, const std::string& scope,
                             const std::string& thread_root);

// A duration for people: whole seconds under 2 minutes, minutes under 2 hours, else hours,
// rounded down ("1 second", "90 seconds", "5 minutes", "3 hours"); negative counts as 0.
std::string duration_phrase(int64_t seconds);

// The notice a channel gets when `missed` posts older than the replay window were skipped.
std::string skip_notice(int64_t missed, int64_t window_seconds);

// The text with the bot's @mention and a 🧵 / :thread: trigger removed; *thread says whether
// the trigger was there.
std::string strip_triggers(const std::string& text, const std::string& bot_username, bool* thread);

}  // namespace pf
