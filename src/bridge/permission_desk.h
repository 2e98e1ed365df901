// The permission desk (spec §8): tool calls waiting for a person's answer. Each channel has one
// FIFO of prompts and only its head is shown; a yes/no reply, /approve, /deny, /always and the
// reactions 👍 👎 💾 🚫 answer the head; any other message, /stop, shutdown and the timeout
// answer as user-not-available. An answer that is to be remembered stores a rule for the
// channel. The engine's decision (approve, deny or ask) is the caller's: the desk only asks.
//
// Threads: the network thread only. Lifetime: the desk must outlive every ask() it runs; the
// rule store is borrowed and must outlive the desk. Errors: nothing throws; a rule that cannot
// be stored is logged and the answer still counts.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "bridge/streaming.h"
#include "chat/channel_adapter.h"
#include "core/cancel.h"
#include "policy/permission.h"

namespace pf {

// Where a prompt is shown: the channel (its key names the rules' scope), its outbox, the thread.
struct PromptPlace {
  std::string channel_key;
  std::shared_ptr<PostQueue> posts;
  std::string thread_root;
};

struct PermissionAnswer {
  enum class Result { kApproved, kRejected, kNotAvailable };
  Result result = Result::kNotAvailable;
  std::string by;   // who answered; empty when nobody did
  std::string why;  // kNotAvailable: why nobody answered
};

class PermissionDesk {
 public:
  PermissionDesk(boost::asio::io_context& io, RuleStore& rules);
  PermissionDesk(const PermissionDesk&) = delete;
  PermissionDesk& operator=(const PermissionDesk&) = delete;

  // How long a shown prompt waits for an answer (applies to prompts asked from now on).
  void set_timeout(std::chrono::seconds timeout) { timeout_ = timeout; }
  // Queues a prompt for the request (verdict: the engine's "ask", with what "always" would
  // store) and resumes with its answer: from a person, the timeout, cancel or resolve_all().
  boost::asio::awaitable<PermissionAnswer> ask(PromptPlace place, PermissionRequest request,
                                               Verdict verdict, CancelSignal& cancel);
  // Whether a prompt waits in the channel.
  bool waiting(const std::string& channel_key) const;
  // A yes/no reply to the channel's head prompt; false when text is not one or none waits.
  bool answer_text(const std::string& channel_key, const std::string& text, const std::string& by);
  // A reaction on a head prompt of any channel; false when it is not one.
  bool answer_reaction(const InboundReaction& reaction);
  // /approve, /deny, /always: answers the channel's head prompt; false when none waits.
  bool answer_head(const std::string& channel_key, bool approve, bool remember,
                   const std::string& by);
  // Answers every prompt of the channel (every channel's with an empty key) as
  // user-not-available, giving why.
  void resolve_all(const std::string& channel_key, const std::string& why);

 private:
  struct Pending;
  using Queue = std::deque<std::shared_ptr<Pending>>;
  void show_head(Queue& queue);
  void resolve(Queue& queue, Pending& p, PermissionAnswer::Result result, bool remember,
               const std::string& by);

  boost::asio::io_context& io_;
  RuleStore& rules_;
  std::chrono::seconds timeout_{600};
  std::map<std::string, Queue> queues_;  // by channel key; only the head is shown
};

// Whether a message answers a permission prompt ("yes", "y", "approve", "no", "n", "deny").
bool is_permission_answer(const std::string& text);

}  // namespace pf
