// The turn runner: what one answer in a channel does between the model and the channel (spec
// §7). It records what each step said and called in the conversation when the step ends (a
// call always with its result), takes steering messages in at the next step boundary (stored
// as user messages; the reply so far is closed and a fresh post opened under them), gates each
// tool call (the loop detector first: a warning at 5 identical calls within a minute, the turn
// cancelled at 10; then the owner's gate: chat tools and permissions) and sinks the answer's
// events into the channel: one reply post per step, verbose mode's tool calls in a feed post of
// their own, the tool being run on the status line of a native stream, a quiet (scheduled)
// turn's text held back until it is known not to be NO_REPLY.
//
// Threads: the network thread only. Lifetime: the channel, the state store and the cancel
// signal are borrowed and must outlive the runner. Errors: the state store's pf::Error passes
// through; the gate's exceptions pass through before_tool().
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/answer.h"
#include "bridge/bridge_channel.h"
#include "bridge/state_store.h"
#include "bridge/streaming.h"
#include "core/cancel.h"
#include "core/json.h"

namespace pf {

class TurnRunner {
 public:
  // The owner's part of the tool gate: nullopt runs the call, a JSON value is its result
  // instead; *no_reply is set when the model asked that nothing be posted.
  using Gate = std::function<boost::asio::awaitable<std::optional<nlohmann::json>>(
      const ToolCall& call, bool* no_reply)>;
  // Posts a notice in the channel (the loop detector's warning).
  using Notice = std::function<void(const std::string& text)>;

  // stream: the turn's reply, already started (its placeholder posted) unless the turn is quiet.
  TurnRunner(boost::asio::io_context& io, StateStore& state, BridgeChannel& channel,
             std::string conversation, StreamOptions options, std::unique_ptr<ReplyStream> stream,
             bool verbose, CancelSignal& cancel, Gate gate, Notice notice);
  TurnRunner(const TurnRunner&) = delete;
  TurnRunner& operator=(const TurnRunner&) = delete;

  // AnswerOptions::steer: the channel's steering messages, stored and taken in.
  std::vector<std::string> steer();
  // AnswerOptions::keep_going on autopilot (agent/plan_mode.h): nullopt when the step's text
  // ends the run (it says done) or the turn was stopped; else the message that sends the model
  // on, stored as a user message, the reply so far closed and a fresh post opened for what
  // follows.
  std::optional<std::string> keep_going(const std::string& text);
  // AnswerOptions::before_tool.
  boost::asio::awaitable<std::optional<nlohmann::json>> before_tool(const ToolCall& call);
  // The answer's event sink; always true (the answer goes on).
  bool on_event(const AnswerEvent& event);
  // After the answer: stores the last step and closes the feed.
  void end_steps();
  // Ends the reply of an answer that was not stopped or failed: delivered, or taken back when
  // the model asked for no reply, said NO_REPLY, or (quiet) said nothing.
  void deliver();

  ReplyStream& stream() { return *stream_; }
  bool loop_stopped() const { return loop_stopped_; }
  // The model that answered ("retrieval-only" without one; empty before the answer finished).
  const std::string& answered_by() const { return answered_by_; }
  int64_t completion_tokens() const { return completion_tokens_; }

 private:
  // Stores what the step said and called (each call with its result), once per step.
  void store_step();
  // Closes the current reply post and opens a fresh one (started when start is set).
  void next_post(bool start);

  boost::asio::io_context& io_;
  StateStore& state_;
  BridgeChannel& channel_;
  std::string conversation_;
  StreamOptions options_;
  std::unique_ptr<ReplyStream> stream_;
  std::unique_ptr<ReplyStream> feed_;  // verbose mode's tool calls
  bool verbose_;
  CancelSignal& cancel_;
  Gate gate_;
  Notice notice_;
  std::string step_text_;
  std::vector<ToolCall> step_calls_;
  std::vector<std::pair<std::string, std::string>> step_results_;  // call id, result
  std::string quiet_text_;  // a quiet turn's answer, posted at the end unless it is NO_REPLY
  std::string answered_by_;
  int64_t completion_tokens_ = 0;
  int steps_ = 0;
  bool no_reply_ = false;
  bool loop_stopped_ = false;
};

// A person's message as a conversation stores it (its size estimated).
StoredMessage user_message(const std::string& text, const std::string& post_id);

}  // namespace pf
