// One turn of a channel's conversation (see bridge.h): the question goes to the agent with the
// conversation so far, and the answer's events become the channel's posts and stored messages.
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <filesystem>

#include "agent/answer.h"
#include "bridge/bridge.h"
#include "bridge/bridge_channel.h"
#include "core/json.h"
#include "core/log.h"
#include "runtime/own_paths.h"
#include "core/text.h"
#include "llm/fallback.h"

namespace pf {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

// The longest a turn's setup waits for other turns' placeholders (precedence.h): a burst of 200
// posts is placeheld within ~150 ms on two cores.
constexpr std::chrono::milliseconds kGiveWayAtMost{250};

std::string safe_name(const std::string& name) {
  std::string base =
      name.substr(name.find_last_of("/\\") == std::string::npos ? 0 : name.find_last_of("/\\") + 1);
  std::string out;
  for (char c : base)
    out +=
        std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ? c : '_';
  while (!out.empty() && out.front() == '.') out.erase(0, 1);
  return out.empty() ? "file" : out.substr(0, 100);
}

// The tool line of the verbose activity feed.
std::string tool_line(const ToolCall& call) {
  json args = parse_json(call.arguments.empty() ? "{}" : call.arguments);
  std::string detail;
  if (args.is_object())
    for (const char* k : {"filePath", "dirPath", "pattern", "query", "path"})
      if (args.contains(k) && args[k].is_string()) {
        detail = args[k].get<std::string>();
        break;
      }
  if (detail.size() > 80) detail = detail.substr(0, 77) + "...";
  return "\U0001F527 `" + call.name + "`" + (detail.empty() ? "" : " " + detail);
}

// What an answer reads of the configuration (providers and model defaults), copied for the
// turn so that a reload cannot change it mid-answer. Not the whole Config: the bridge's own
// section, its channel list above all, is tens of kilobytes with hundreds of channels, and
// every running turn held a copy.
Config answer_config(const Config& c) {
  Config out;
  out.source = c.source;
  out.providers = c.providers;
  out.defaults = c.defaults;
  return out;
}

StreamOptions stream_options(const Config& config, const ChannelAdapter& adapter) {
  StreamOptions so;
  so.interval = std::max(std::chrono::milliseconds(bridge_config(config).edit_interval_ms),
                         adapter.traits().min_edit_interval);
  so.max_chars = adapter.traits().max_post_chars;
  return so;
}

}  // namespace

asio::awaitable<void> Bridge::run_turn(Channel& channel, InboundMessage m) {
  // The placeholder first: whatever the turn does next (history, compaction, indexing), the
  // channel sees at once that its message was taken.
  CancelSignal cancel;
  channel.busy = true;
  channel.cancel = &cancel;
  StreamOptions so = stream_options(config_, *channel.adapter);
  auto stream = std::make_unique<ReplyStream>(io_, channel.posts, channel.thread_root, so);
  std::string post_id = m.post_id;
  // Urgent until the server has the placeholder: other turns' setups give way to it.
  std::shared_ptr<Precedence::Urgent> urgent;
  if (!m.quiet) urgent = precedence_.begin();
  stream->on_first_post([this, post_id, urgent](const std::string& id) {
    if (urgent) urgent->end();
    state_.set_inbound_reply(post_id, id);
  });
  channel.quiet = m.quiet;
  channel.turn_user = m.username;
  // A scheduled prompt posts nothing until it has something to say.
  if (!m.quiet) stream->start();
  if (!m.quiet) {
    ChannelAdapter* a = channel.adapter;
    std::string id = channel.id, root = channel.thread_root;
    asio::co_spawn(
        io_, [a, id, root]() -> asio::awaitable<void> { co_await a->set_typing(id, root); },
        asio::detached);
  }
  co_await precedence_.give_way(urgent.get(), std::chrono::steady_clock::now() + kGiveWayAtMost);
  std::string failure;
  try {
    co_await prepare_turn(channel, m, cancel);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (!failure.empty()) {
    ++stats_.turns_failed;
    log::error("bridge", "channel " + channel.id + ": " + failure);
    stream->fail(redact_urls(failure, "the provider"));
    channel.busy = false;
    channel.cancel = nullptr;
    co_await channel.posts->drained();
    state_.finish_inbound(m.post_id);
    co_return;
  }
  co_await answer_turn(channel, std::move(m), cancel, std::move(stream));
}

asio::awaitable<void> Bridge::prepare_turn(Channel& channel, const InboundMessage& m,
                                           CancelSignal& cancel) {
  (void)m;
  Repository& repo = repository_of(channel);
  if (first_index_.count(repo.root)) {
    // Never indexed before: answering now would search nothing. Wait for the first run (it is
    // incremental and commits as it goes, so a very large repository is not waited for long).
    asio::steady_timer wait(io_);
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (repo.index_job->running() && std::chrono::steady_clock::now() < until && !stopping_ &&
           !cancel.cancelled()) {
      wait.expires_after(std::chrono::milliseconds(100));
      co_await wait.async_wait(asio::use_awaitable);
    }
    first_index_.erase(repo.root);
  }
}

asio::awaitable<void> Bridge::answer_turn(Channel& channel, InboundMessage m, CancelSignal& cancel,
                                          std::unique_ptr<ReplyStream> stream) {
  StreamOptions so = stream_options(config_, *channel.adapter);
  Repository& repo = repository_of(channel);
  disarm_consolidation(repo.root);
  std::string conversation = conversation_of(channel);
  std::string model = model_of(channel);
  co_await compact_if_needed(channel, conversation, model);

  // Attachments go under the repository (the tools can read nothing else), one folder per
  // channel, under names we made: an uploaded name is never a path.
  std::string question = m.text;
  std::vector<std::string> files;
  for (const Attachment& a : m.attachments) {
    std::string rel =
        attachments_folder(safe_name(channel.id)) + "/" + safe_name(a.id) + "-" + safe_name(a.name);
    try {
      co_await channel.adapter->download_file(a.id, repo.root + "/" + rel);
      files.push_back(rel);
    } catch (const std::exception& e) {
      log::warn("bridge", "attachment " + a.id + ": " + e.what());
    }
  }
  if (!files.empty()) {
    if (question.empty()) question = "See the attached file(s).";
    question += "\n\nAttached files (read them with read_file):";
    for (const auto& f : files) question += "\n- " + f;
  }

  // History first, then this message: resuming after a crash must not store the question twice.
  std::vector<StoredMessage> stored = state_.messages(conversation);
  std::vector<ChatMessage> past = history(stored);
  bool already = false;
  for (const auto& s : stored) already = already || (s.role == "user" && s.post_id == m.post_id);
  if (already && !past.empty() && past.back().role == "user") past.pop_back();
  if (!already) {
    StoredMessage um;
    um.role = "user";
    um.content = question;
    um.post_id = m.post_id;
    um.tokens = estimate_tokens(question);
    state_.append_message(conversation, um);
  }

  std::unique_ptr<ReplyStream> feed;  // verbose mode's tool calls, in a post of their own
  bool verbose = verbose_of(channel);

  // The safety timeout: a turn that runs away is cancelled.
  asio::steady_timer deadline(io_, std::chrono::seconds(settings().turn_timeout_seconds));
  bool timed_out = false;
  deadline.async_wait([&](const boost::system::error_code& ec) {
    if (ec) return;
    timed_out = true;
    cancel.cancel();
  });

  // What this step said and called, stored when the step ends (a call with its result).
  std::string step_text, answered_by;
  std::vector<ToolCall> step_calls;
  std::vector<std::pair<std::string, std::string>> step_results;  // call id, result
  int64_t completion_tokens = 0;
  auto store_step = [&] {
    if (step_text.empty() && step_calls.empty()) return;
    StoredMessage am;
    am.role = "assistant";
    am.content = step_text;
    am.model = answered_by;
    am.tokens = estimate_tokens(step_text);
    completion_tokens += am.tokens;
    if (!step_calls.empty()) {
      json calls = json::array();
      for (const auto& c : step_calls)
        calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
      am.tool_calls = calls.dump();
    }
    state_.append_message(conversation, am);
    for (const auto& [id, result] : step_results) {
      StoredMessage tm;
      tm.role = "tool";
      tm.content = result;
      tm.tool_call_id = id;
      tm.tokens = estimate_tokens(result);
      state_.append_message(conversation, tm);
    }
    step_text.clear();
    step_calls.clear();
    step_results.clear();
  };

  Config effective = answer_config(config_);
  effective.defaults.chat_model = model;
  effective.defaults.fallback_models = fallbacks_of(channel);
  AnswerOptions opt;
  opt.search = repo.search;
  // The channel's set, which alone sees the channel's attachments among pilotfish's own files;
  // the bridge's tools join here.
  std::string attachments = repo.root + "/" + attachments_folder(safe_name(channel.id));
  ToolRegistry tools = repo.tools->registry_exposing(attachments);
  std::vector<std::string> kinds = action_kinds_of(channel);
  std::shared_ptr<ActionTools> actions;  // kept for the turn: a reload may replace the map's
  if (!kinds.empty()) {
    actions = action_tools_for(repo.root);
    actions->add_to(tools, kinds, attachments);
  }
  add_chat_tools(tools);
  std::string quiet_text;  // a quiet turn's answer, posted at the end unless it is NO_REPLY
  // MCP servers' tools (starting a server blocks: a worker does it); kept for the turn.
  std::shared_ptr<McpTools> mcp = mcp_tools_for(repo.root);
  if (!mcp->empty()) co_await runtime_.workspace().run([&](Store&) { mcp->add_to(tools); });
  bool no_reply = false;
  opt.tools = &tools;
  opt.cancel = &cancel;
  opt.instructions = instructions(channel);
  opt.steer = [&]() {
    std::vector<std::string> said;
    if (channel.steering.empty()) return said;
    store_step();
    for (InboundMessage& s : channel.steering) {
      StoredMessage um;
      um.role = "user";
      um.content = s.text;
      um.post_id = s.post_id;
      um.tokens = estimate_tokens(s.text);
      state_.append_message(conversation, um);
      channel.steered_posts.push_back(s.post_id);
      said.push_back(s.text);
    }
    channel.steering.clear();
    // What follows answers the steering: a fresh post under it.
    if (stream->has_content()) {
      stream->finalize();
      stream = std::make_unique<ReplyStream>(io_, channel.posts, channel.thread_root, so);
      stream->start();
    }
    return said;
  };
  bool loop_stop = false;
  opt.before_tool = [&](const ToolCall& call) -> asio::awaitable<std::optional<json>> {
    LoopDetector::Verdict v = channel.loops.record(call.name, call.arguments);
    if (v == LoopDetector::Verdict::kWarn)
      reply(channel, "\u26A0\uFE0F The model has called `" + call.name +
                         "` with the same arguments " + std::to_string(LoopDetector::kWarnAt) +
                         " times in a minute; it may be stuck.");
    if (v == LoopDetector::Verdict::kCritical) {
      loop_stop = true;
      cancel.cancel();
      co_return json{{"error", "loop detected: this call was stopped"}};
    }
    if (is_bridge_chat_tool(call.name))
      co_return co_await run_chat_tool(channel, repo, call, &no_reply);
    co_return co_await check_permission(channel, tools, call, repo.root, cancel);
  };

  std::string failure;
  std::vector<std::string> skipped;
  int steps = 0;
  auto on_event = [&](const AnswerEvent& e) {
    using Kind = AnswerEvent::Kind;
    switch (e.kind) {
      case Kind::kStep:
        if (++steps > 1) {
          store_step();
          // Each step's text stays its own post (#108); the next step's starts a new one.
          if (stream->has_content()) {
            stream->finalize();
            stream = std::make_unique<ReplyStream>(io_, channel.posts, channel.thread_root, so);
          }
        }
        break;
      case Kind::kText:
        if (feed && !feed->finished()) feed->finalize();
        step_text += e.text;
        if (channel.quiet)
          quiet_text += e.text;
        else
          stream->append(e.text);
        break;
      case Kind::kToolCall:
        step_calls.push_back(e.call);
        if (verbose) {
          if (!feed) {
            feed = std::make_unique<ReplyStream>(io_, channel.posts, channel.thread_root, so);
            feed->start(tool_line(e.call) + "\n");
          } else {
            feed->append(tool_line(e.call) + "\n");
          }
        }
        break;
      case Kind::kToolResult:
        step_results.emplace_back(e.call.id, e.text);
        break;
      case Kind::kFinish:
        answered_by = e.model;
        skipped = e.skipped_models;
        break;
    }
    return true;
  };
  try {
    co_await async_answer_question(runtime_.workspace(), effective, runtime_.embedder(), question,
                                   past, opt, on_event);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  deadline.cancel();
  store_step();
  if (feed) feed->finalize();
  if (!failure.empty()) {
    ++stats_.turns_failed;
    log::error("bridge", "channel " + channel.id + ": the answer failed: " + failure);
    stream->fail(redact_urls(failure, "the provider"));
  } else if (loop_stop) {
    stream->finalize();
    reply(channel,
          "\U0001F501 Loop detected: the same tool call was made " +
              std::to_string(LoopDetector::kCriticalAt) +
              " times within a minute. I stopped this turn and started a new conversation.");
    channel.new_conversation = conversation_key_at(channel, channel.turn_root);
    channel.loops.reset();
  } else if (timed_out) {
    stream->fail("the answer took longer than " +
                 std::to_string(settings().turn_timeout_seconds) + " s and was stopped");
  } else if (cancel.cancelled()) {
    if (abandoned(channel)) {
      stream->fail(stopping_ ? "pilotfish is restarting; this will be answered when it is back"
                             : "another pilotfish took this bot over; it answers this");
    } else {
      stream->finalize();
      if (!stream->has_content()) reply(channel, "\u23F9\uFE0F Stopped.");
    }
  } else if (no_reply || trim_space(channel.quiet ? quiet_text : stream->text()) == "NO_REPLY" ||
             (channel.quiet && trim_space(quiet_text).empty())) {
    stream->discard();  // the model decided the message needs no answer
  } else {
    if (channel.quiet) stream->append(quiet_text);
    stream->finalize();
  }
  channel.quiet = false;
  // The chain's first choice was unavailable: say so, and keep the model that worked.
  if (failure.empty() && !answered_by.empty() && answered_by != model &&
      answered_by != "retrieval-only") {
    reply(channel,
          "\u26A0\uFE0F Model " + model + " is unavailable, switched to " + answered_by + ".");
    ChannelPrefs prefs = state_.prefs(channel.key);
    prefs.model = answered_by;
    state_.set_prefs(channel.key, prefs);
    channel.loops.reset();
  }
  // Estimated: providers do not report usage in the stream we read (prompt: the history sent).
  state_.add_usage(conversation, channel.context_tokens + estimate_tokens(question),
                   completion_tokens);
  channel.busy = false;
  channel.cancel = nullptr;
  arm_consolidation(repo.root, answered_by == "retrieval-only" ? std::string() : answered_by);
  co_await channel.posts->drained();
  // Interrupted by shutdown, or the bot is run elsewhere now: the post stays pending, to be
  // answered after the restart or by the new holder (which removes this reply first).
  if (!(stopping_ && cancel.cancelled()) && still_ours(*channel.adapter)) {
    state_.finish_inbound(m.post_id);
    for (const auto& p : channel.steered_posts) state_.finish_inbound(p);
    ++stats_.answered;
  }
  channel.steered_posts.clear();
}

int64_t Bridge::context_window_of(const std::string& model) const {
  if (auto parts = split_model_id(model))
    if (const ProviderConfig* p = config_.provider(parts->first))
      for (const auto& mc : p->models)
        if (mc.id == parts->second && mc.context_window) return *mc.context_window;
  return 128000;  // unknown: a common size today
}

asio::awaitable<void> Bridge::compact_if_needed(Channel& channel, const std::string& conversation,
                                                const std::string& model) {
  int64_t window = context_window_of(model);
  std::vector<StoredMessage> stored = state_.messages(conversation);
  int64_t tokens = 0;
  for (const auto& s : stored)
    if (!s.compacted) tokens += s.tokens + 4;
  channel.context_tokens = tokens;
  // Room for the system prompt, the retrieved context and the answer.
  if (tokens <= window / 2) co_return;
  // Keep the newest messages (from the fourth-last user message on); fold the rest.
  size_t keep_from = stored.size(), users = 0;
  for (size_t i = stored.size(); i-- > 0;) {
    if (stored[i].compacted) break;
    if (stored[i].role == "user" && ++users == 4) {
      keep_from = i;
      break;
    }
  }
  int64_t up_to = 0;
  std::string transcript;
  size_t folded = 0;
  for (size_t i = 0; i < keep_from; ++i) {
    if (stored[i].compacted) continue;
    up_to = stored[i].seq;
    ++folded;
    if (stored[i].role == "tool") continue;
    transcript += stored[i].role + ": " + stored[i].content.substr(0, 2000) + "\n\n";
  }
  if (folded == 0) co_return;
  std::string summary;
  if (!model.empty()) {
    ChatRequest req;
    req.max_tokens = 600;
    req.messages.push_back({"system",
                            "Summarise this conversation between a developer and a code "
                            "assistant in at most 15 bullet points: the questions, the answers "
                            "with the file paths and names they cited, and anything still open.",
                            {},
                            {}});
    req.messages.push_back({"user", transcript.substr(0, 60000), {}, {}});
    try {
      Config effective = answer_config(config_);
      co_await async_stream_with_fallback(effective, fallback_chain(effective, model), req,
                                          [&](const ChatEvent& e) {
                                            if (e.kind == ChatEvent::Kind::kTextDelta)
                                              summary += e.text;
                                            return summary.size() < 8000;
                                          });
    } catch (const std::exception& e) {
      log::warn("bridge", std::string("summarising the conversation failed: ") + e.what());
      summary.clear();
    }
  }
  if (summary.empty())
    summary = "(" + std::to_string(folded) +
              " earlier messages were left out to fit the model's context window; their first "
              "lines follow)\n" +
              transcript.substr(0, 4000);
  state_.compact(conversation, up_to, summary);
  co_await save_compaction(repository_of(channel).root, summary);
  reply(channel, "\U0001F5DC\uFE0F This conversation outgrew the model's context window: " +
                     std::to_string(folded) + " earlier messages were folded into a summary.");
}

}  // namespace pf
