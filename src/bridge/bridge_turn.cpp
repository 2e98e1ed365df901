// One turn of a channel's conversation (see bridge.h): the question goes to the agent with the
// conversation so far and the channel's instructions (AGENTS.md, the MEMORY.md pointer), and a
// TurnRunner turns the answer's events into the channel's posts and stored messages.
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <filesystem>

#include "agent/answer.h"
#include "agent/plan_mode.h"
#include "bridge/bridge.h"
#include "bridge/bridge_channel.h"
#include "bridge/turn_runner.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/log.h"
#include "core/text.h"
#include "llm/fallback.h"
#include "llm/model_registry.h"
#include "runtime/own_paths.h"
#include "search/retrieval_config.h"

namespace pf {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

// The longest a turn's setup waits for other turns' placeholders (precedence.h): a burst of 200
// posts is placeheld within ~150 ms on two cores.
constexpr std::chrono::milliseconds kGiveWayAtMost{250};

StreamOptions stream_options(const Config& config, const ChannelAdapter& adapter) {
  StreamOptions so;
  so.interval = std::max(std::chrono::milliseconds(bridge_config(config).edit_interval_ms),
                         adapter.traits().min_edit_interval);
  so.max_chars = adapter.traits().max_post_chars;
  return so;
}

// The lines of a file that exist, or empty.
std::string read_if_there(const std::string& path, size_t max = 16 * 1024) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return {};
  try {
    std::string text = read_file(path);
    if (text.size() > max)
      text = text.substr(0, max) + "\n[cut at " + std::to_string(max) + " bytes]";
    return text;
  } catch (const Error&) {
    return {};
  }
}

}  // namespace

asio::awaitable<void> Bridge::run_turn(Channel& channel, InboundMessage m) {
  // The placeholder first: whatever the turn does next (history, compaction, indexing), the
  // channel sees at once that its message was taken.
  CancelSignal cancel;
  channel.busy = true;
  channel.cancel = &cancel;
  // The turn's span (core/trace.h): its posts, retrieval, model requests and tool calls go
  // under it. Ended when this frame ends.
  channel.turn_failure.clear();
  Span span("chat.turn", nullptr, SpanKind::kServer);
  span.set("pilotfish.platform", channel.adapter->platform());
  span.set("pilotfish.bot", channel.adapter->bot());
  span.set("pilotfish.channel", channel.key);
  span.set("enduser.id", m.username);
  span.set("pilotfish.post_id", m.post_id);
  span.set("pilotfish.scheduled", m.quiet);
  if (trace_content()) span.set("pilotfish.question", m.text.substr(0, 4000));
  channel.trace = span.context();
  channel.posts->set_trace(channel.trace);
  StreamOptions so = stream_options(config_, *channel.adapter);
  // The platform's own stream where it has one: it needs a thread, and a person to address.
  so.native = channel.adapter->traits().native_streaming && !channel.thread_root.empty() &&
              !m.quiet && !m.user_id.empty();
  so.recipient = m.user_id;
  so.thinking = "is searching the code\u2026";  // retrieval comes first
  auto stream = std::make_unique<ReplyStream>(io_, channel.posts, channel.thread_root, so);
  std::string post_id = m.post_id;
  // Urgent until the server has the placeholder: other turns' setups give way to it (a native
  // stream's first sign is its status line, which is not waited for).
  std::shared_ptr<Precedence::Urgent> urgent;
  if (!m.quiet && !so.native) urgent = precedence_.begin();
  stream->on_first_post([this, post_id, urgent](const std::string& id) {
    if (urgent) urgent->end();
    state_.set_inbound_reply(post_id, id);
  });
  channel.quiet = m.quiet;
  channel.turn_user = m.username;
  channel.turn_user_id = m.user_id;
  // A scheduled prompt posts nothing until it has something to say.
  if (!m.quiet) stream->start();
  if (!m.quiet && !so.native) {
    ChannelAdapter* a = channel.adapter;
    std::string id = channel.id, root = channel.thread_root;
    asio::co_spawn(
        io_, [a, id, root]() -> asio::awaitable<void> { co_await a->set_typing(id, root); },
        asio::detached);
  }
  co_await precedence_.give_way(urgent.get(), std::chrono::steady_clock::now() + kGiveWayAtMost);
  std::string failure;
  try {
    co_await first_index(repository_of(channel), cancel);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (!failure.empty()) {
    ++stats_.turns_failed;
    log::error("bridge", "channel " + channel.id + ": " + failure);
    span.fail(failure);
    stream->fail(redact_urls(failure, "the provider"));
    channel.busy = false;
    channel.cancel = nullptr;
    co_await channel.posts->drained();
    channel.posts->set_trace({});
    state_.finish_inbound(m.post_id);
    co_return;
  }
  co_await answer_turn(channel, std::move(m), cancel, std::move(stream));
  channel.posts->set_trace({});
  if (!channel.turn_failure.empty()) span.fail(channel.turn_failure);
}

asio::awaitable<void> Bridge::first_index(Repository& repo, CancelSignal& cancel) {
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
  Repository& repo = repository_of(channel);
  memory_.disarm(repo.root);
  std::string conversation = conversation_of(channel);
  TurnShape shape = shape_of(channel);
  std::string model = shape.model;
  co_await compact_if_needed(channel, conversation, model);
  std::vector<ImageContent> images;
  std::string question = co_await take_attachments(channel, repo, m, model, &images);
  std::vector<ChatMessage> past = record_question(conversation, m.post_id, question);
  // Named, not braced temporaries: GCC 12 cannot keep those across a co_await.
  json session_start = json::object(), prompt = json::object();
  session_start["source"] = "new";
  session_start["initialPrompt"] = question;
  prompt["prompt"] = question;
  if (past.empty()) co_await hooks_.run(repo.root, HookEvent::kSessionStart, session_start);
  co_await hooks_.run(repo.root, HookEvent::kUserPromptSubmitted, prompt);
  TurnTools tools;
  co_await offer_tools(channel, repo, shape, tools);
  AuditRecord who;
  who.front = "chat";
  who.place = channel.key;
  who.user = channel.turn_user;
  who.bot = channel.adapter->bot();
  tools.audit = std::make_unique<AuditTrail>(&state_, std::move(who));
  StreamOptions so = stream->options();  // the same for the turn's later posts
  channel.turn_conversation = conversation;
  plans_.forget(channel.key);  // this turn's plan updates get a post of their own
  // On autopilot the tool calls stay visible as they happen (the feed), verbose or not.
  TurnRunner turn(
      io_, state_, channel, conversation, so, std::move(stream),
      verbose_of(channel) || shape.autopilot, cancel,
      [this, &channel, &repo, &tools, &cancel, &shape](const ToolCall& call, bool* no_reply) {
        return gate_call(channel, repo, tools, shape, call, cancel, no_reply);
      },
      [this, &channel](const std::string& text) { reply(channel, text); });

  Config effective = answer_config(config_);
  effective.defaults.chat_model = model;
  effective.defaults.fallback_models = fallbacks_of(channel);
  AnswerOptions opt;
  opt.search = repo.search;
  opt.rewrite_query = retrieval_config(config_).rewrite;
  opt.tools = &tools.registry;
  opt.cancel = &cancel;
  opt.question_images = std::move(images);
  shape_answer(channel, shape, conversation, turn, opt);
  opt.steer = [&turn] { return turn.steer(); };
  opt.before_tool = [&turn](const ToolCall& call) { return turn.before_tool(call); };
  opt.after_tool = [&tools](const ToolCall& call, const std::string& result) {
    tools.audit->ran(call, result);
  };
  opt.trace = channel.trace;
  opt.annotate_tool = [&tools](const ToolCall& call, Span& span) { tools.audit->annotate(call, span); };
  // The safety timeout: a turn that runs away is cancelled.
  int64_t limit = shape.autopilot ? settings().autopilot_max_minutes * 60
                                  : settings().turn_timeout_seconds;
  asio::steady_timer deadline(io_, std::chrono::seconds(limit));
  bool timed_out = false;
  deadline.async_wait([&](const boost::system::error_code& ec) {
    if (ec) return;
    timed_out = true;
    cancel.cancel();
  });
  std::string failure;
  try {
    co_await async_answer_question(
        runtime_.workspace(), effective, runtime_.embedder(), question, past, opt,
        [this, &turn, &repo](const AnswerEvent& e) {
          if (e.kind == AnswerEvent::Kind::kToolResult)
            hooks_.fire(repo.root, HookEvent::kPostToolUse,
                        post_tool_payload(e.call.name, e.call.arguments, e.text));
          return turn.on_event(e);
        });
  } catch (const std::exception& e) {
    failure = e.what();
  }
  channel.turn_failure = failure;
  if (!failure.empty())
    hooks_.fire(repo.root, HookEvent::kErrorOccurred,
                {{"error", {{"message", failure}, {"name", "Error"}}}});
  deadline.cancel();
  turn.end_steps();
  end_reply(channel, turn, failure, timed_out, limit, cancel);
  // Estimated: providers do not report usage in the stream we read (prompt: the history sent).
  int64_t prompt_tokens = channel.context_tokens + estimate_tokens(question);
  if (!failure.empty()) model.clear();  // no fallback notice for an answer that failed
  after_turn(channel, turn, model, repo.root, conversation, prompt_tokens);
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

asio::awaitable<std::string> Bridge::take_attachments(Channel& channel, Repository& repo,
                                                      const InboundMessage& m,
                                                      const std::string& model,
                                                      std::vector<ImageContent>* images) {
  // Attachments go under the repository's .pilotfish/ (never indexed, ignored by git; the
  // tools read only there), one folder per channel, under names we made: an uploaded name is
  // never a path.
  std::string question = m.text;
  std::vector<std::string> files, refused;
  bool sees = model_sees_images(config_, model);
  if (!m.attachments.empty()) make_own_folder(repo.root);
  for (const Attachment& a : m.attachments) {
    std::string rel =
        attachments_folder(safe_name(channel.id)) + "/" + safe_name(a.id) + "-" + safe_name(a.name);
    std::string path = repo.root + "/" + rel;
    try {
      co_await channel.adapter->download_file(a.id, path);
    } catch (const std::exception& e) {
      log::warn("bridge", "attachment " + a.id + ": " + e.what());
      continue;
    }
    attachments_.adopt(repo.root);
    attachments_.touch(channel.key, repo.root + "/" + attachments_folder(safe_name(channel.id)));
    std::string media = image_type(path);
    if (media.empty()) {
      files.push_back(rel);
    } else if (!sees) {
      refused.push_back(a.name);
    } else if (images->size() >= kMaxImages ||
               static_cast<int64_t>(std::filesystem::file_size(path)) > kMaxImageBytes) {
      refused.push_back(a.name + " (at most " + std::to_string(kMaxImages) + " images of 5 MiB)");
    } else {
      images->push_back({media, base64_encode(read_file(path))});
      question += "\n\n(Image attached: " + a.name + ")";
    }
  }
  if (!refused.empty()) {
    std::string list;
    for (const auto& r : refused) list += (list.empty() ? "" : ", ") + r;
    reply(channel, "\U0001F5BC\uFE0F Not shown to the model: " + list +
                       (sees ? "." : ". `" + model + "` does not take images (`/model` marks those "
                                     "that do with \U0001F441\uFE0F)."));
  }
  if (!files.empty()) {
    if (question.empty()) question = "See the attached file(s).";
    question += "\n\nAttached files (read them with read_file):";
    for (const auto& f : files) question += "\n- " + f;
  }
  if (question.empty() && !images->empty()) question = "See the attached image(s).";
  co_return question;
}

std::vector<ChatMessage> Bridge::record_question(const std::string& conversation,
                                                 const std::string& post_id,
                                                 const std::string& question) {
  // History first, then this message: resuming after a crash must not store the question twice.
  std::vector<StoredMessage> stored = state_.messages(conversation);
  std::vector<ChatMessage> past = history(stored);
  bool already = false;
  for (const auto& s : stored) already = already || (s.role == "user" && s.post_id == post_id);
  if (already && !past.empty() && past.back().role == "user") past.pop_back();
  if (!already) state_.append_message(conversation, user_message(question, post_id));
  return past;
}

void Bridge::shape_answer(const Channel& channel, const TurnShape& shape,
                          const std::string& conversation, TurnRunner& turn, AnswerOptions& opt) {
  opt.instructions = instructions(channel);
  if (shape.agent)
    opt.instructions += "\n\n<custom_agent name=\"" + shape.agent->name + "\">\n" +
                        shape.agent->instructions + "\n</custom_agent>";
  if (!shape.skills.empty()) opt.instructions += "\n\n" + skills_prompt(shape.skills);
  opt.reasoning_effort = shape.reasoning_effort;  // sent where the model reasons
  opt.max_steps = static_cast<int>(shape.autopilot ? settings().autopilot_max_steps
                                                   : channel_max_steps(settings(), channel.config));
  if (shape.plan) opt.instructions += "\n\n" + PlanBoard::instructions(state_.plan(conversation));
  if (shape.autopilot) {
    opt.instructions += "\n\n" + autopilot_instructions();
    opt.keep_going = [&turn](const std::string& text) { return turn.keep_going(text); };
  }
}

Bridge::TurnShape Bridge::shape_of(Channel& channel) {
  TurnShape shape;
  const std::string& root = channel.config.working_directory;
  std::string missing;
  ChannelPrefs prefs = state_.prefs(channel.key);  // read once: each read is a round trip on PostgreSQL
  shape.agent = shelf_.agent_of(prefs, root, channel_agent(settings(), channel.config),
                                &missing);
  if (!missing.empty() && shelf_.first_notice(channel.key, "agent " + missing))
    reply(channel, "\u26A0\uFE0F The agent `" + missing +
                       "` is not defined in this workspace: answering without it (`/agents` "
                       "lists those that are).");
  shape.model = model_of(channel);
  if (shape.agent && !shape.agent->model.empty()) {
    ModelResolution r = resolve_model(configured_models(config_), shape.agent->model);
    if (r.model) {
      shape.model = r.model->id();
    } else if (shelf_.first_notice(channel.key, "model " + shape.agent->model)) {
      reply(channel, "\u26A0\uFE0F The agent `" + shape.agent->name + "` asks for the model `" +
                         shape.agent->model + "`, which is not configured (" + r.error +
                         "): answering with `" + shape.model + "`.");
    }
  }
  shape.skills = shelf_.active_skills(prefs, root);
  shape.plan = prefs.plan_mode.value_or(false);
  shape.autopilot = prefs.autopilot.value_or(false) || channel.autopilot_run;
  shape.reasoning_effort = prefs.reasoning_effort;
  return shape;
}

void Bridge::end_reply(Channel& channel, TurnRunner& turn, const std::string& failure,
                       bool timed_out, int64_t limit_seconds, CancelSignal& cancel) {
  ReplyStream& stream = turn.stream();
  if (!failure.empty()) {
    ++stats_.turns_failed;
    log::error("bridge", "channel " + channel.id + ": the answer failed: " + failure);
    stream.fail(redact_urls(failure, "the provider"));
  } else if (turn.loop_stopped()) {
    stream.finalize();
    reply(channel,
          "\U0001F501 Loop detected: the same tool call was made " +
              std::to_string(LoopDetector::kCriticalAt) +
              " times within a minute. I stopped this turn and started a new conversation.");
    channel.new_conversation = conversation_key_at(channel, channel.turn_root);
    channel.loops.reset();
  } else if (timed_out) {
    stream.fail("the answer took longer than " + duration_phrase(limit_seconds) +
                " and was stopped");
  } else if (cancel.cancelled()) {
    if (abandoned(channel)) {
      stream.fail(stopping_ ? "pilotfish is restarting; this will be answered when it is back"
                            : "another pilotfish took this bot over; it answers this");
    } else {
      stream.finalize();
      if (!stream.has_content()) reply(channel, "\u23F9\uFE0F Stopped.");
    }
  } else {
    turn.deliver();
  }
  channel.quiet = false;
}

void Bridge::after_turn(Channel& channel, const TurnRunner& turn, const std::string& model,
                        const std::string& root, const std::string& conversation,
                        int64_t prompt_tokens) {
  const std::string& answered_by = turn.answered_by();
  // The channel's attachments stay for keepMinutes after its last turn.
  std::string attached = root + "/" + attachments_folder(safe_name(channel.id));
  if (std::error_code ec; std::filesystem::is_directory(attached, ec)) attachments_.touch(channel.key, attached);
  // The chain's first choice was unavailable: say so, and keep the model that worked.
  if (!model.empty() && !answered_by.empty() && answered_by != model &&
      answered_by != "retrieval-only") {
    reply(channel,
          "\u26A0\uFE0F Model " + model + " is unavailable, switched to " + answered_by + ".");
    ChannelPrefs prefs = state_.prefs(channel.key);
    prefs.model = answered_by;
    state_.set_prefs(channel.key, prefs);
    channel.loops.reset();
  }
  state_.add_usage(conversation, prompt_tokens, turn.completion_tokens());
  channel.busy = false;
  channel.cancel = nullptr;
  memory_.arm(root, answered_by == "retrieval-only" ? std::string() : answered_by);
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
    // Named arguments: GCC 12 destroys the temporaries of a co_await twice.
    std::string instruction =
        "Summarise this conversation between a developer and a code assistant in at most 15 "
        "bullet points: the questions, the answers with the file paths and names they cited, "
        "and anything still open.";
    std::string text = transcript.substr(0, 60000);
    try {
      summary = co_await summarise(model, instruction, text, 600, 8000);
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
  co_await memory_.save_compaction(repository_of(channel).root, summary);
  reply(channel, "\U0001F5DC\uFE0F This conversation outgrew the model's context window: " +
                     std::to_string(folded) + " earlier messages were folded into a summary.");
}

asio::awaitable<std::string> Bridge::summarise(const std::string& model,
                                               const std::string& instruction,
                                               const std::string& text, int max_tokens,
                                               size_t max_chars) {
  ChatRequest req;
  req.max_tokens = max_tokens;
  req.messages.push_back({"system", instruction});
  req.messages.push_back({"user", text});
  std::string out;
  Config effective = answer_config(config_);
  co_await async_stream_with_fallback(effective, fallback_chain(effective, model), req,
                                      [&](const ChatEvent& e) {
                                        if (e.kind == ChatEvent::Kind::kTextDelta) out += e.text;
                                        return out.size() < max_chars;
                                      });
  co_return out;
}

std::string Bridge::instructions(const Channel& channel) const {
  const std::string& root = channel.config.working_directory;
  return "<bridge_instructions>\nYou are answering in a team chat channel (" +
         channel.adapter->platform() + "), about the repository at " + root +
         ". People may read you on a phone: keep answers short, lead with the answer, and cite "
         "path:line. Never print secrets or the contents of .env files.\n</bridge_instructions>" +
         workspace_notes(root);
}

Config answer_config(const Config& c) {
  Config out;
  out.source = c.source;
  out.providers = c.providers;
  out.defaults = c.defaults;
  return out;
}

std::string workspace_notes(const std::string& root) {
  std::string out;
  std::string agents = read_if_there(root + "/AGENTS.md");
  if (!agents.empty()) out += "\n\n<agents_md>\n" + agents + "\n</agents_md>";
  std::string local = read_if_there(root + "/AGENTS.local.md");
  if (!local.empty()) out += "\n\n<local_instructions>\n" + local + "\n</local_instructions>";
  std::string memory = read_if_there(root + "/MEMORY.md", 1 << 20);
  out += "\n\n<memory>\n";
  if (memory.empty()) {
    out += "There is no MEMORY.md in the repository yet.";
  } else {
    out +=
        "MEMORY.md in the repository root holds notes kept across conversations; read it "
        "with read_file when they may help. Its sections:";
    size_t at = 0;
    while ((at = memory.find("## ", at)) != std::string::npos) {
      if (at == 0 || memory[at - 1] == '\n') {
        size_t end = memory.find('\n', at);
        out += "\n- " + memory.substr(at + 3, end == std::string::npos ? end : end - at - 3);
      }
      at += 3;
    }
  }
  out += "\n</memory>";
  return out;
}

std::vector<ChatMessage> Bridge::history(const std::vector<StoredMessage>& stored) {
  std::vector<ChatMessage> out;
  for (size_t i = 0; i < stored.size(); ++i) {
    const StoredMessage& m = stored[i];
    if (m.compacted) continue;
    if (m.role == "summary") {
      out.push_back({"user", "[A summary of the earlier conversation]\n" + m.content, {}, {}});
      out.push_back({"assistant", "Understood; I will keep it in mind.", {}, {}});
    } else if (m.role == "user") {
      out.push_back({"user", m.content, {}, {}});
    } else if (m.role == "assistant") {
      ChatMessage a{"assistant", m.content, {}, {}};
      json calls = m.tool_calls.empty() ? json::array() : parse_json(m.tool_calls);
      // A call is sent again only with its result, as every provider requires.
      size_t results = 0;
      while (i + 1 + results < stored.size() && stored[i + 1 + results].role == "tool") ++results;
      if (calls.is_array() && results == calls.size())
        for (const json& c : calls)
          a.tool_calls.push_back(
              {c.value("id", ""), c.value("name", ""), c.value("arguments", "")});
      if (a.tool_calls.empty() && a.content.empty()) {
        i += results;
        continue;
      }
      out.push_back(a);
      for (size_t k = 0; k < results; ++k) {
        const StoredMessage& t = stored[i + 1 + k];
        if (!a.tool_calls.empty()) out.push_back({"tool", t.content, {}, t.tool_call_id});
      }
      i += results;
    }
  }
  return out;
}

}  // namespace pf
