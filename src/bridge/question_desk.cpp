// The question desk (see question_desk.h): one waiting question per channel, its post, and the
// answer by message, timeout, cancel or shutdown.
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include "bridge/question_desk.h"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "core/text.h"

namespace pf {

namespace asio = boost::asio;

struct QuestionDesk::Pending {
  PromptPlace place;
  UserQuestion question;
  bool any_thread = false;
  std::shared_ptr<PostQueue::Post> post;
  std::optional<QuestionReply> reply;  // unset while nobody answered
  std::shared_ptr<asio::steady_timer> wake;
};

QuestionDesk::QuestionDesk(asio::io_context& io) : io_(io) {}

asio::awaitable<QuestionReply> QuestionDesk::ask(PromptPlace place, UserQuestion question,
                                                 bool any_thread, CancelSignal& cancel) {
  std::string key = place.channel_key;
  if (pending_.count(key)) co_return QuestionReply{false, "", "", "another question is waiting; ask one at a time"};
  if (cancel.cancelled()) co_return QuestionReply{false, "", "", "the answer was stopped"};
  auto p = std::make_shared<Pending>();
  p->place = std::move(place);
  p->question = std::move(question);
  p->any_thread = any_thread;
  p->wake = std::make_shared<asio::steady_timer>(io_, timeout_);
  p->post = p->place.posts->create(question_text(p->question), p->place.thread_root);
  pending_[key] = p;
  int64_t seconds = timeout_.count();
  std::weak_ptr<Pending> weak = p;
  CancelRegistration on_cancel(&cancel, [this, key, weak] {
    if (auto live = weak.lock(); live && !live->reply)
      resolve(key, QuestionReply{false, "", "", "the answer was stopped"});
  });
  boost::system::error_code ec;
  co_await p->wake->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  if (!p->reply)
    resolve(key, QuestionReply{false, "", "", "nobody answered within " + std::to_string(seconds) + " s"});
  co_return *p->reply;
}

bool QuestionDesk::answers(const std::string& channel_key, const std::string& thread_root,
                           bool addressed) const {
  auto it = pending_.find(channel_key);
  if (it == pending_.end()) return false;
  const Pending& p = *it->second;
  return thread_root == p.place.thread_root || (p.any_thread && addressed);
}

bool QuestionDesk::answer(const std::string& channel_key, const std::string& thread_root,
                          bool addressed, const std::string& text, const std::string& by) {
  if (!answers(channel_key, thread_root, addressed) || trim_space(text).empty()) return false;
  const Pending& p = *pending_.at(channel_key);
  resolve(channel_key, QuestionReply{true, chosen_answer(p.question, text), by, ""});
  return true;
}

void QuestionDesk::resolve_all(const std::string& channel_key, const std::string& why) {
  std::vector<std::string> keys;
  for (const auto& [key, p] : pending_)
    if (channel_key.empty() || key == channel_key) keys.push_back(key);
  for (const auto& key : keys) resolve(key, QuestionReply{false, "", "", why});
}

void QuestionDesk::resolve(const std::string& channel_key, QuestionReply reply) {
  auto it = pending_.find(channel_key);
  if (it == pending_.end()) return;
  std::shared_ptr<Pending> p = it->second;
  pending_.erase(it);
  if (p->reply) return;
  std::string shown = "\u2753 " + p->question.question + "\n";
  shown += reply.answered ? "\u2705 @" + reply.by + ": " + reply.answer.substr(0, 500)
                          : "\u23ED\uFE0F No answer: " + reply.why + ".";
  p->place.posts->edit(p->post, std::move(shown));
  p->reply = std::move(reply);
  p->wake->cancel();
}

}  // namespace pf
