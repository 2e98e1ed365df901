// The orchestrator (see bridge.h): intake, per-channel order, turns and their streams.
#include "bridge/bridge.h"

#include "agent/sandbox.h"

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <filesystem>

#include "bridge/access.h"
#include "bridge/bridge_channel.h"
#include "bridge/workspace_templates.h"
#include "chat/inbound_json.h"
#include "core/allocator.h"
#include "core/clock.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/log.h"
#include "core/text.h"
#include "index/git_source.h"
#include "index/schedule.h"

namespace pf {

namespace asio = boost::asio;
using nlohmann::json;

std::string strip_triggers(const std::string& text, const std::string& bot_username, bool* thread) {
  std::string out = text;
  if (!bot_username.empty()) {
    std::string mention = "@" + ascii_lower(bot_username);
    for (size_t at = ascii_lower(out).find(mention); at != std::string::npos;
         at = ascii_lower(out).find(mention)) {
      size_t end = at + mention.size();
      if (end < out.size() && (std::isalnum(static_cast<unsigned char>(out[end])) ||
                               out[end] == '_' || out[end] == '-'))
        break;  // a longer name that starts with ours
      out.erase(at, mention.size());
    }
  }
  *thread = false;
  // A trigger counts at the start or the end of the text (in any case), and the punctuation
  // that joined it to the rest goes with it ("reply in thread: explain").
  auto edge = [](const std::string& s) {
    size_t b = 0, e = s.size();
    while (b < e && std::strchr(" \t\n:,;-", s[b])) ++b;
    while (e > b && std::strchr(" \t\n:,;-", s[e - 1])) --e;
    return s.substr(b, e - b);
  };
  for (std::string_view trigger : {"\U0001F9F5", ":thread:", "reply in thread"}) {
    std::string t = trim_space(out), low = ascii_lower(t);
    if (low.rfind(trigger, 0) == 0) {
      out = edge(t.substr(trigger.size()));
      *thread = true;
    } else if (low.size() >= trigger.size() &&
               low.compare(low.size() - trigger.size(), trigger.size(), trigger) == 0) {
      out = edge(t.substr(0, t.size() - trigger.size()));
      *thread = true;
    }
  }
  return trim_space(out);
}

Bridge::Bridge(asio::io_context& io, AnswerRuntime& runtime, StateStore& state, Config config,
               ConfigLoader reload)
    : io_(io),
      runtime_(runtime),
      state_(state),
      config_(std::move(config)),
      reload_(std::move(reload)),
      desk_(io, state),
      questions_(io),
      attachments_(io,
                   [this](const std::string& key) {
                     auto it = channels_.find(key);
                     return it != channels_.end() && it->second->busy;
                   }),
      scheduler_(io, state, [this](InboundMessage m) { return take_scheduled(std::move(m)); }),
      leases_(io, {[this](ChannelAdapter& a) -> asio::awaitable<void> {
                     co_await connect_bot(a);
                     co_await resume_bot(a);
                   },
                   [this](ChannelAdapter& a) { lost_bot(a); }}),
      memory_(io, runtime, config_) {
  desk_.set_timeout(std::chrono::seconds(settings().permission_timeout_seconds));
  questions_.set_timeout(std::chrono::seconds(settings().ask_user_timeout_seconds));
  attachments_.set_keep(keep_of(settings()));
  add_commands();
  merge_registered();  // the channels added from chat join the configured ones
}

Bridge::~Bridge() {
  *alive_ = false;
  leases_.stop();
  scheduler_.stop();
  memory_.stop();
  attachments_.stop();
  for (auto& a : adapters_) a->disconnect();
  if (quiet_timer_) quiet_timer_->cancel();
}

BridgeStats Bridge::stats() const {
  BridgeStats s = stats_;
  s.takeovers = leases_.takeovers();
  s.leases_lost = leases_.lost();
  return s;
}

std::string Bridge::metrics_text() const {
  std::vector<const ChannelAdapter*> adapters;
  for (const auto& a : adapters_) adapters.push_back(a.get());
  int64_t busy = 0, queued = 0;
  for (const auto& [key, c] : channels_) {
    busy += c->busy ? 1 : 0;
    queued += static_cast<int64_t>(c->queue.size());
  }
  return metrics_.render(stats(), adapters, busy, queued);
}

void Bridge::add_adapter(std::unique_ptr<ChannelAdapter> adapter) {
  ChannelAdapter* a = adapter.get();
  a->on_message([this, a](InboundMessage m) { on_message(*a, std::move(m), false); });
  a->on_reaction([this, a](InboundReaction r) { on_reaction(*a, std::move(r)); });
  a->on_change([this, a](InboundChange c) { on_change(*a, std::move(c)); });
  adapters_.push_back(std::move(adapter));
}

const PlatformConfig* Bridge::platform_config(const std::string& name) const {
  for (const auto& p : settings().platforms)
    if (p.name == name) return &p;
  return nullptr;
}

const BotConfig* Bridge::bot_config(const std::string& platform, const std::string& bot) const {
  const PlatformConfig* p = platform_config(platform);
  if (!p) return nullptr;
  for (const auto& b : p->bots)
    if (b.name == bot) return &b;
  return nullptr;
}

asio::awaitable<void> Bridge::start() {
  // A week of finished posts is far more than any replay reaches back.
  state_.prune_inbound(unix_time_ms() - 7 * 24 * 3600 * 1000LL);
  // Commands are offered somewhere but cannot run: said once, at start, not at the first call.
  for (const auto& c : settings().channels) {
    const auto& kinds = channel_actions(settings(), c);
    std::string why;
    if (std::find(kinds.begin(), kinds.end(), "shell") != kinds.end() &&
        !sandbox_available("bwrap", &why)) {
      log::warn("bridge", "run_command is offered but every command will be refused: " + why);
      break;
    }
  }
  for (auto& a : adapters_) {
    if (!leases_.try_acquire(*a)) {
      log::info("bridge", a->bot() + " on " + a->platform() +
                              " is run by another pilotfish on the same state; standing by");
      continue;
    }
    co_await connect_bot(*a);
  }
  // Configured channels' repositories (cloned first when given by git URL) are indexed now if
  // the store has never seen them.
  co_await clone_missing();
  for (const auto& c : settings().channels) {
    try {
      prepare_repository(c.working_directory, c.source);
      attachments_.adopt(c.working_directory);  // what an earlier run saved, deleted in time
    } catch (const Error& e) {
      log::error("bridge", "channel " + c.id + ": " + e.what());
    }
  }
  for (auto& a : adapters_)
    if (holds(*a)) co_await resume_bot(*a);
  leases_.watch(adapters_);
  announce_restart();
}

Bridge::Channel* Bridge::channel_for(ChannelAdapter& adapter, const InboundMessage& m) {
  std::string key = adapter.platform() + ":" + m.channel_id;
  auto it = channels_.find(key);
  if (it != channels_.end())
    return it->second->adapter == &adapter && !it->second->removed ? it->second.get() : nullptr;
  auto c = std::make_unique<Channel>();
  c->key = key;
  c->id = m.channel_id;
  c->adapter = &adapter;
  bool found = false;
  for (const auto& cc : settings().channels)
    if (cc.platform == adapter.platform() && cc.id == m.channel_id) {
      if (cc.bot != adapter.bot()) return nullptr;  // another bot's channel
      c->config = cc;
      found = true;
    }
  if (!found) {
    if (!m.is_dm) return nullptr;
    // A DM: answered in "all" mode, top level, about the default repository.
    c->dm = true;
    c->config.id = m.channel_id;
    c->config.platform = adapter.platform();
    c->config.bot = adapter.bot();
    c->config.trigger_mode = "all";
    c->config.threaded_replies = false;
    c->config.conversation_scope = "channel";
    c->config.working_directory = dm_workspace(adapter.bot());
    state_.register_dm(DmChannel{key, adapter.bot(), m.user_id});
  }
  c->posts = std::make_shared<PostQueue>(io_.get_executor(), adapter, m.channel_id);
  return channels_.emplace(key, std::move(c)).first->second.get();
}

void Bridge::on_message(ChannelAdapter& adapter, InboundMessage m, bool resumed) {
  ++stats_.received;
  if (m.replayed) metrics_.replayed();
  bool thread = false;
  std::string text;
  Channel* channel = admit(adapter, m, resumed, &text, &thread);
  if (channel) route(*channel, adapter, std::move(m), std::move(text), thread, resumed);
}

Bridge::Channel* Bridge::admit(ChannelAdapter& adapter, const InboundMessage& m, bool resumed,
                               std::string* text_out, bool* thread_out) {
  for (const auto& a : adapters_)
    if (a->platform() == adapter.platform() && a->identity().user_id == m.user_id) {
      ++stats_.ignored;  // never answer a bot we run, ourselves included
      return nullptr;
    }
  Channel* channel = channel_for(adapter, m);
  if (!channel) {
    ++stats_.ignored;
    log::debug("bridge",
               "post " + m.post_id + " is in a channel " + adapter.bot() + " does not serve");
    if (resumed) state_.finish_inbound(m.post_id);
    return nullptr;
  }
  std::string text = strip_triggers(m.text, adapter.identity().username, thread_out);
  std::string mode = channel->config.trigger_mode.value_or(settings().defaults.trigger_mode);
  // A yes or no to a waiting prompt, and the answer to a question in its thread, need no mention.
  bool prompt_answer = (desk_.waiting(channel->key) && is_permission_answer(text)) ||
                       questions_.answers(channel->key, m.thread_root_id, false);
  if (!channel->dm && mode == "mention" && !m.mentions_bot && !prompt_answer) {
    ++stats_.ignored;
    if (resumed) state_.finish_inbound(m.post_id);
    return nullptr;
  }
  if (!allowed(adapter, m.username, m.user_id)) {
    ++stats_.denied;
    log::info("bridge", "@" + m.username + " may not talk to " + adapter.bot() + "; ignored");
    if (resumed) state_.finish_inbound(m.post_id);
    return nullptr;
  }
  if (!resumed) {
    // Recorded only while the bot is ours: a post recorded here is this process's to answer.
    if (!still_ours(adapter)) return nullptr;
    InboundRecord record{m.post_id,          channel->key,    adapter.bot(),
                         inbound_to_json(m), m.created_at_ms, ""};
    if (!state_.record_inbound(record)) {
      ++stats_.duplicates;
      return nullptr;
    }
  }
  // Missed while away for longer than the window: not answered, and the channel is told once.
  int64_t window = settings().replay_window_seconds * 1000;
  if ((m.replayed || resumed) && m.created_at_ms > 0 && unix_time_ms() - m.created_at_ms > window) {
    ++stats_.skipped_old;
    state_.finish_inbound(m.post_id);
    note_skipped(*channel);
    return nullptr;
  }
  *text_out = std::move(text);
  return channel;
}

void Bridge::route(Channel& ch, ChannelAdapter& adapter, InboundMessage m, std::string text,
                   bool thread, bool resumed) {
  Channel* channel = &ch;
  std::string posted_in = m.thread_root_id;  // the thread it was posted in ("" outside any)
  // The thread: the post's own, a 🧵 trigger or threadedReplies (a new thread at this post;
  // implied where each thread is a conversation). From here on thread_root_id is where the
  // answer goes, and the conversation it belongs to.
  bool threaded = channel->config.threaded_replies.value_or(settings().defaults.threaded_replies) ||
                  thread_scoped(*channel);
  if (m.thread_root_id.empty() && (thread || (threaded && !channel->dm)))
    m.thread_root_id = m.post_id;
  m.text = text;
  // Shutting down: recorded above, so the next start answers it.
  if (stopping_) return;
  std::optional<CommandCall> command = commands_.parse(text);
  // A prompt waits: yes/no answers it; any other message (not a command that runs at once)
  // answers every prompt as user-not-available and is then taken as a message (spec §8, #67).
  if (desk_.waiting(channel->key) && !m.replayed && !resumed) {
    if (!command && desk_.answer_text(channel->key, text, m.username)) {
      state_.finish_inbound(m.post_id);
      return;
    }
    if (!command || !commands_.runs_at_once(*command))
      desk_.resolve_all(channel->key, "@" + m.username + " sent another message instead");
  }
  // A question of the model waits: a plain message where it was asked is its answer.
  bool addressed = channel->dm || m.mentions_bot ||
                   channel->config.trigger_mode.value_or(settings().defaults.trigger_mode) == "all";
  if (!command && !m.replayed && !resumed &&
      questions_.answer(channel->key, posted_in, addressed, text, m.username)) {
    state_.finish_inbound(m.post_id);
    return;
  }
  if (command && commands_.runs_at_once(*command)) {
    asio::co_spawn(
        io_,
        [this, channel, m, cmd = *command]() -> asio::awaitable<void> {
          // Answered where it was asked, even while a turn runs elsewhere in the channel.
          std::string turn_root = channel->thread_root;
          channel->thread_root = m.thread_root_id;
          co_await run_command(*channel, m, cmd);
          if (channel->busy) channel->thread_root = turn_root;
          state_.finish_inbound(m.post_id);
        },
        asio::detached);
    return;
  }
  // Steering: a live follow-up in the running turn's thread (not a replayed backlog, not a new
  // thread, not files, which need a turn of their own), with nothing queued before it: a
  // message never overtakes an older one.
  if (channel->busy && channel->queue.empty() && !command && m.attachments.empty() && !m.replayed &&
      !resumed && m.thread_root_id == channel->turn_root) {
    ++stats_.steered;
    channel->steering.push_back(m);
    ChannelAdapter* a = &adapter;
    std::string post = m.post_id;
    asio::co_spawn(
        io_, [a, post]() -> asio::awaitable<void> { co_await a->add_reaction(post, "zap"); },
        asio::detached);
    return;
  }
  enqueue(*channel, std::move(m));
}

std::optional<bool> Bridge::take_scheduled(InboundMessage m) {
  ChannelAdapter* adapter = nullptr;
  for (auto& a : adapters_)
    if (a->platform() == m.platform && a->bot() == m.bot) adapter = a.get();
  if (adapter && !holds(*adapter)) return std::nullopt;  // the bot runs in another process now
  Channel* channel = adapter ? channel_for(*adapter, m) : nullptr;
  if (!channel) return false;
  enqueue(*channel, std::move(m));
  return true;
}

void Bridge::on_reaction(ChannelAdapter& adapter, InboundReaction r) {
  if (!allowed(adapter, r.username, r.user_id)) {
    ++stats_.denied;
    return;
  }
  if (desk_.answer_reaction(r)) return;
  log::debug("bridge", "reaction :" + r.emoji + ": by @" + r.username + " on " + r.post_id);
}

bool Bridge::allowed(const ChannelAdapter& adapter, const std::string& username,
                     const std::string& user_id) const {
  const PlatformConfig* platform = platform_config(adapter.platform());
  const BotConfig* bot = bot_config(adapter.platform(), adapter.bot());
  if (!platform || !bot) return false;
  auto resolved = access_.find(&adapter);
  if (resolved == access_.end()) return access_allowed(*platform, *bot, username, user_id);
  PlatformConfig p;
  BotConfig b;
  p.access = resolved->second.first;
  b.access = resolved->second.second;
  // Matched by id only: a name can be changed to one on the list.
  return access_allowed(p, b, "", user_id);
}

asio::awaitable<void> Bridge::resolve_access(ChannelAdapter& adapter) {
  const PlatformConfig* platform = platform_config(adapter.platform());
  const BotConfig* bot = bot_config(adapter.platform(), adapter.bot());
  if (!platform || !bot) co_return;
  std::pair<AccessConfig, AccessConfig> lists{platform->access, bot->access};
  std::vector<std::string> handles = lists.first.users;
  handles.insert(handles.end(), lists.second.users.begin(), lists.second.users.end());
  std::optional<std::map<std::string, std::string>> ids;
  auto alive = alive_;
  try {
    ids = co_await adapter.resolve_handles(handles);
  } catch (const std::exception& e) {
    if (!*alive) co_return;
    log::warn("bridge", adapter.bot() + ": the access lists' names could not be looked up (" +
                            e.what() + "); they are kept as they were");
    co_return;
  }
  if (!*alive || !ids) co_return;  // !ids: names are matched as written on this platform
  for (AccessConfig* list : {&lists.first, &lists.second}) {
    std::vector<std::string> kept;
    for (const std::string& u : list->users) {
      auto it = ids->find(u);
      if (it != ids->end()) {
        kept.push_back(ascii_lower(it->second));
      } else {
        log::warn("bridge", adapter.bot() + " on " + adapter.platform() + ": no user is called \"" +
                                u + "\"; the access list entry is ignored");
      }
    }
    list->users = std::move(kept);
  }
  access_[&adapter] = std::move(lists);
}

void Bridge::on_change(ChannelAdapter& adapter, InboundChange c) {
  auto it = channels_.find(adapter.platform() + ":" + c.channel_id);
  if (it == channels_.end()) return;
  std::deque<InboundMessage>& queue = it->second->queue;
  for (auto m = queue.begin(); m != queue.end(); ++m) {
    if (m->post_id != c.post_id) continue;
    if (c.deleted) {
      // Deleted before its turn: not answered, and not answered after a restart either.
      state_.finish_inbound(m->post_id);
      metrics_.forget(m->post_id);
      queue.erase(m);
      log::info("bridge", "a queued message was deleted before its turn: " + c.post_id);
    } else {
      // Recorded as edited too: a restart before its turn answers the new text.
      InboundMessage raw = *m;
      raw.text = c.text;
      state_.set_inbound_payload(m->post_id, inbound_to_json(raw));
      bool thread = false;
      m->text = strip_triggers(c.text, adapter.identity().username, &thread);
    }
    return;
  }
}

void Bridge::enqueue(Channel& channel, InboundMessage message) {
  metrics_.queued(message.post_id);
  channel.queue.push_back(std::move(message));
  if (channel.working) return;
  channel.working = true;
  asio::co_spawn(io_, work(channel), asio::detached);
}

asio::awaitable<void> Bridge::work(Channel& channel) {
  while (!channel.queue.empty() && !abandoned(channel)) {
    InboundMessage m = std::move(channel.queue.front());
    channel.queue.pop_front();
    metrics_.dequeued(m.post_id);
    auto started = std::chrono::steady_clock::now();
    std::optional<CommandCall> command = commands_.parse(m.text);
    channel.thread_root = m.thread_root_id;
    channel.turn_root = m.thread_root_id;
    std::string failure;
    try {
      if (command) {
        co_await run_command(channel, m, *command);
        state_.finish_inbound(m.post_id);
      } else {
        co_await run_turn(channel, m);
      }
    } catch (const std::exception& e) {
      failure = e.what();
    }
    if (!command)
      metrics_.turn(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
                    failure.empty());
    if (!failure.empty()) {
      // Said in the channel and not retried at every restart.
      ++stats_.turns_failed;
      channel.busy = false;
      channel.cancel = nullptr;
      log::error("bridge", "channel " + channel.id + ": " + failure);
      reply(channel, "\u274C " + redact_urls(failure, "the provider"));
      state_.finish_inbound(m.post_id);
      for (const auto& p : channel.steered_posts) state_.finish_inbound(p);  // told the same
    }
    // Messages that came too late for the turn, or for a turn that failed, get turns of
    // their own, in order, ahead of what arrived after them.
    channel.steered_posts.clear();
    for (auto it = channel.steering.rbegin(); it != channel.steering.rend(); ++it)
      channel.queue.push_front(std::move(*it));
    channel.steering.clear();
  }
  channel.working = false;
  arm_quiet_timer();
}

namespace {
// After a burst the allocator holds the pages of its busiest moment and SQLite its page cache;
// 10 s without a turn is long past a burst's gaps (a turn's own pauses are shorter: it holds
// its channel's work until it ends).
constexpr std::chrono::seconds kQuietSpell{10};
}  // namespace

void Bridge::arm_quiet_timer() {
  if (stopping_) return;
  if (!quiet_timer_) quiet_timer_ = std::make_shared<asio::steady_timer>(io_);
  quiet_timer_->expires_after(kQuietSpell);  // a pending wait is cancelled: the spell restarts
  quiet_timer_->async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopping_ || !idle()) return;
    size_t before = resident_bytes();
    state_.release_memory();
    release_free_memory();
    log::info("bridge", "idle: gave cached memory back (resident " + std::to_string(before >> 20) +
                            " -> " + std::to_string(resident_bytes() >> 20) + " MiB)");
  });
}

void Bridge::reply(Channel& channel, const std::string& text) {
  size_t max = channel.adapter->traits().max_post_chars;
  std::string rest = streamer_.mask(config_, text);
  std::vector<std::string> parts;
  while (code_points(rest) > max - 40) {
    auto [head, tail] = split_keeping_fences(rest, max - 40);
    parts.push_back(std::move(head));
    rest = std::move(tail);
  }
  parts.push_back(rest);
  for (size_t i = 0; i < parts.size(); ++i)
    channel.posts->create(parts.size() == 1 ? parts[i]
                                            : "(Part " + std::to_string(i + 1) + " of " +
                                                  std::to_string(parts.size()) + ")\n\n" + parts[i],
                          channel.thread_root);
}

std::string duration_phrase(int64_t seconds) {
  seconds = std::max<int64_t>(seconds, 0);
  auto count = [](int64_t n, const char* unit) {
    return std::to_string(n) + " " + unit + (n == 1 ? "" : "s");
  };
  // Whole units, rounded down: "older than" stays true for every post it covers.
  if (seconds < 120) return count(seconds, "second");
  if (seconds < 2 * 3600) return count(seconds / 60, "minute");
  return count(seconds / 3600, "hour");
}

std::string skip_notice(int64_t missed, int64_t window_seconds) {
  return "\u26A0\uFE0F I was away and missed " + std::to_string(missed) + " message" +
         (missed == 1 ? "" : "s") + " older than " + duration_phrase(window_seconds) +
         "; I have not answered " + (missed == 1 ? "it" : "them") +
         ". Ask again if you still need an answer.";
}

void Bridge::note_skipped(Channel& channel) {
  ++channel.skipped;
  if (channel.skip_notice_pending) return;
  channel.skip_notice_pending = true;
  // One notice per gap: the replay delivers its posts together, so wait for the rest.
  auto timer = std::make_shared<asio::steady_timer>(io_, std::chrono::seconds(1));
  timer->async_wait([this, &channel, timer](const boost::system::error_code&) {
    channel.skip_notice_pending = false;
    int64_t n = channel.skipped;
    channel.skipped = 0;
    std::string saved_root = channel.thread_root;
    channel.thread_root.clear();
    reply(channel, skip_notice(n, settings().replay_window_seconds));
    channel.thread_root = saved_root;
  });
}

bool Bridge::idle() const {
  if (memory_.busy()) return false;  // a consolidation's coroutine refers to the keeper
  for (const auto& [key, c] : channels_)
    if (c->busy || c->working || !c->queue.empty()) return false;
  return true;
}

std::string Bridge::model_of(const Channel& channel) const {
  ChannelPrefs prefs = state_.prefs(channel.key);
  if (prefs.model) return *prefs.model;
  if (!channel.config.model.empty()) return channel.config.model;
  if (!settings().defaults.model.empty()) return settings().defaults.model;
  return config_.defaults.chat_model;
}

std::vector<std::string> Bridge::fallbacks_of(const Channel& channel) const {
  if (!channel.config.fallback_models.empty()) return channel.config.fallback_models;
  if (!settings().defaults.fallback_models.empty()) return settings().defaults.fallback_models;
  return config_.defaults.fallback_models;
}

bool Bridge::verbose_of(const Channel& channel) const {
  ChannelPrefs prefs = state_.prefs(channel.key);
  if (prefs.verbose) return *prefs.verbose;
  return channel.config.verbose.value_or(settings().defaults.verbose);
}

std::string conversation_key(const std::string& channel_key, const std::string& scope,
                             const std::string& thread_root) {
  if (scope != "thread" || thread_root.empty()) return channel_key;
  return channel_key + "/" + thread_root;
}

bool Bridge::thread_scoped(const Channel& channel) const {
  return !channel.dm && channel.config.conversation_scope.value_or(
                            settings().defaults.conversation_scope) == "thread";
}

std::string Bridge::conversation_key_at(const Channel& channel,
                                        const std::string& thread_root) const {
  return conversation_key(channel.key, thread_scoped(channel) ? "thread" : "channel", thread_root);
}

std::string Bridge::conversation_of(Channel& channel) {
  std::string key = conversation_key_at(channel, channel.turn_root);
  std::optional<std::string> id = state_.active_conversation(key);
  if (id && channel.new_conversation != key) return *id;
  if (channel.new_conversation == key) channel.new_conversation.clear();
  channel.loops.reset();
  return state_.create_conversation(key);
}

}  // namespace pf
