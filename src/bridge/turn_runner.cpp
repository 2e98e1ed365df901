// The turn runner (see turn_runner.h): step recording, steering, the tool gate and the reply
// sink of one answer.
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include "bridge/turn_runner.h"

#include "agent/plan_mode.h"
#include "core/text.h"

namespace pf {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

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

}  // namespace

StoredMessage user_message(const std::string& text, const std::string& post_id) {
  StoredMessage um;
  um.role = "user";
  um.content = text;
  um.post_id = post_id;
  um.tokens = estimate_tokens(text);
  return um;
}

TurnRunner::TurnRunner(asio::io_context& io, StateStore& state, BridgeChannel& channel,
                       std::string conversation, StreamOptions options,
                       std::unique_ptr<ReplyStream> stream, bool verbose, CancelSignal& cancel,
                       Gate gate, Notice notice)
    : io_(io),
      state_(state),
      channel_(channel),
      conversation_(std::move(conversation)),
      options_(std::move(options)),
      stream_(std::move(stream)),
      verbose_(verbose),
      cancel_(cancel),
      gate_(std::move(gate)),
      notice_(std::move(notice)) {}

void TurnRunner::store_step() {
  if (step_text_.empty() && step_calls_.empty()) return;
  StoredMessage am;
  am.role = "assistant";
  am.content = step_text_;
  am.model = answered_by_;
  am.tokens = estimate_tokens(step_text_);
  completion_tokens_ += am.tokens;
  if (!step_calls_.empty()) {
    json calls = json::array();
    for (const auto& c : step_calls_)
      calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
    am.tool_calls = calls.dump();
  }
  state_.append_message(conversation_, am);
  for (const auto& [id, result] : step_results_) {
    StoredMessage tm;
    tm.role = "tool";
    tm.content = result;
    tm.tool_call_id = id;
    tm.tokens = estimate_tokens(result);
    state_.append_message(conversation_, tm);
  }
  step_text_.clear();
  step_calls_.clear();
  step_results_.clear();
}

void TurnRunner::next_post(bool start) {
  stream_->finalize();
  stream_ = std::make_unique<ReplyStream>(io_, channel_.posts, channel_.thread_root, options_);
  if (start) stream_->start();
}

std::vector<std::string> TurnRunner::steer() {
  std::vector<std::string> said;
  if (channel_.steering.empty()) return said;
  store_step();
  for (InboundMessage& s : channel_.steering) {
    state_.append_message(conversation_, user_message(s.text, s.post_id));
    channel_.steered_posts.push_back(s.post_id);
    said.push_back(s.text);
  }
  channel_.steering.clear();
  // What follows answers the steering: a fresh post under it.
  if (stream_->has_content()) next_post(true);
  return said;
}

std::optional<std::string> TurnRunner::keep_going(const std::string& text) {
  std::optional<std::string> nudge = autopilot_continue(text);
  if (!nudge || cancel_.cancelled()) return std::nullopt;
  store_step();
  state_.append_message(conversation_, user_message(*nudge, ""));
  if (stream_->has_content()) next_post(true);
  return nudge;
}

asio::awaitable<std::optional<json>> TurnRunner::before_tool(const ToolCall& call) {
  LoopDetector::Verdict v = channel_.loops.record(call.name, call.arguments);
  if (v == LoopDetector::Verdict::kWarn)
    notice_("\u26A0\uFE0F The model has called `" + call.name + "` with the same arguments " +
            std::to_string(LoopDetector::kWarnAt) + " times in a minute; it may be stuck.");
  if (v == LoopDetector::Verdict::kCritical) {
    loop_stopped_ = true;
    cancel_.cancel();
    co_return json{{"error", "loop detected: this call was stopped"}};
  }
  co_return co_await gate_(call, &no_reply_);
}

bool TurnRunner::on_event(const AnswerEvent& e) {
  using Kind = AnswerEvent::Kind;
  switch (e.kind) {
    case Kind::kStep:
      if (++steps_ > 1) {
        store_step();
        // Each step's text stays its own post (#108); the next step's starts a new one.
        if (stream_->has_content()) next_post(false);
      }
      break;
    case Kind::kText:
      if (feed_ && !feed_->finished()) feed_->finalize();
      step_text_ += e.text;
      if (channel_.quiet)
        quiet_text_ += e.text;
      else
        stream_->append(e.text);
      break;
    case Kind::kToolCall:
      step_calls_.push_back(e.call);
      stream_->status("is running " + e.call.name + "\u2026");
      if (!verbose_) break;
      if (!feed_) {
        feed_ = std::make_unique<ReplyStream>(io_, channel_.posts, channel_.thread_root, options_);
        feed_->start(tool_line(e.call) + "\n");
      } else {
        feed_->append(tool_line(e.call) + "\n");
      }
      break;
    case Kind::kToolResult:
      step_results_.emplace_back(e.call.id, e.text);
      break;
    case Kind::kFinish:
      answered_by_ = e.model;
      break;
  }
  return true;
}

void TurnRunner::end_steps() {
  store_step();
  if (feed_) feed_->finalize();
}

void TurnRunner::deliver() {
  const std::string& said = channel_.quiet ? quiet_text_ : stream_->text();
  if (no_reply_ || trim_space(said) == "NO_REPLY" ||
      (channel_.quiet && trim_space(quiet_text_).empty())) {
    stream_->discard();  // the model decided the message needs no answer
    return;
  }
  if (channel_.quiet) stream_->append(quiet_text_);
  stream_->finalize();
}

}  // namespace pf
