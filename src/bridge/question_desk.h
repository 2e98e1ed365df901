// The question desk: the model's ask_user questions waiting in their channels (agent/ask_user.h).
// A question is posted where the turn replies; the next plain message from an allowed person in
// that thread (needing no mention), or addressed to the bot anywhere in a channel whose
// conversation is the whole channel, is its answer and starts no turn of its own. /stop, shutdown and the timeout answer "the user did not reply".
// Once answered, the post is edited to show the answer and who gave it.
//
// Threads: the network thread only. Lifetime: the desk must outlive every ask() it runs.
// Errors: nothing throws.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "agent/ask_user.h"
#include "bridge/permission_desk.h"
#include "core/cancel.h"

namespace pf {

struct QuestionReply {
  bool answered = false;
  std::string answer;  // answered: the choice picked or the reply's text
  std::string by;      // answered: who
  std::string why;     // not answered: why
};

class QuestionDesk {
 public:
  explicit QuestionDesk(boost::asio::io_context& io);
  QuestionDesk(const QuestionDesk&) = delete;
  QuestionDesk& operator=(const QuestionDesk&) = delete;

  // How long a question waits for an answer (applies to questions asked from now on).
  void set_timeout(std::chrono::seconds timeout) { timeout_ = timeout; }
  // Posts the question at place and resumes with the answer, the timeout, cancel or
  // resolve_all(). any_thread: a message in any thread of the channel answers it. A second
  // question while one waits in the channel is not posted and answered at once as not replied.
  boost::asio::awaitable<QuestionReply> ask(PromptPlace place, UserQuestion question,
                                            bool any_thread, CancelSignal& cancel);
  // Whether a message posted in thread_root ("" outside any thread) answers the channel's
  // question: one in the question's thread does; with any_thread, one elsewhere in the channel
  // does when it is addressed to the bot (a mention, a DM, a channel that takes every message).
  bool answers(const std::string& channel_key, const std::string& thread_root,
               bool addressed) const;
  // Takes the message as the answer when answers() says so and the text is not empty.
  bool answer(const std::string& channel_key, const std::string& thread_root, bool addressed,
              const std::string& text, const std::string& by);
  // Answers the channel's question (every channel's with an empty key) as not replied, why.
  void resolve_all(const std::string& channel_key, const std::string& why);

 private:
  struct Pending;
  void resolve(const std::string& channel_key, QuestionReply reply);

  boost::asio::io_context& io_;
  std::chrono::seconds timeout_{300};
  std::map<std::string, std::shared_ptr<Pending>> pending_;  // by channel key
};

}  // namespace pf
