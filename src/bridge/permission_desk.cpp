// The permission desk (see permission_desk.h): one prompt queue per channel, the prompt's text
// and its outcome, the answers by reply, command and reaction, and the timeout.
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include "bridge/permission_desk.h"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "core/log.h"
#include "core/text.h"

namespace pf {

namespace asio = boost::asio;
using Result = PermissionAnswer::Result;

struct PermissionDesk::Pending {
  PromptPlace place;
  PermissionRequest request;
  Verdict verdict;                          // the engine's "ask", with what "always" would store
  std::shared_ptr<PostQueue::Post> prompt;  // shown once it is the channel's head
  std::optional<Result> result;             // unset while nobody answered
  bool remember = false;
  std::string by, why;
  std::shared_ptr<asio::steady_timer> wake;  // the timeout; cancelled on an answer
};

namespace {

std::string fenced(const std::string& text, size_t max) {
  std::string t = text.size() > max ? text.substr(0, max) + "\u2026" : text;
  std::string fence = "```";
  while (t.find(fence) != std::string::npos) fence += "`";
  return fence + "\n" + t + "\n" + fence;
}

std::string prompt_text(const PermissionRequest& r, const Verdict& v, size_t waiting) {
  std::string out = "\U0001F510 **Permission needed:** `" + r.tool + "`";
  if (!r.intent.empty()) out += " \u2014 " + r.intent.substr(0, 300);
  out += "\n";
  if (!r.command.empty()) out += fenced(r.command, 500) + "\n";
  if (!r.path.empty()) out += "Path: `" + r.path + "`\n";
  if (!r.url.empty()) out += "URL: " + r.url + "\n";
  if (!r.mcp_server.empty())
    out += "MCP server: `" + r.mcp_server + "`, tool `" + r.mcp_tool + "`\n";
  if (!v.detail.empty() && v.check == "prompt") out += "_(" + v.detail + ")_\n";
  if (!v.detail.empty() && v.check == "hook") out += "A hook asks: " + v.detail.substr(0, 500) + "\n";
  if (v.remember_patterns.empty())
    out += "Reply **yes** or **no**, or react \U0001F44D \U0001F44E (this answer is not remembered).";
  else
    out +=
        "Reply **yes** or **no**, `/always approve` or `/always deny`, or react \U0001F44D "
        "\U0001F44E \U0001F4BE (always) \U0001F6AB (never).";
  if (waiting > 1) out += "\n" + std::to_string(waiting - 1) + " more waiting.";
  return out;
}

std::string outcome_text(const std::string& tool, Result result, bool remember,
                         const std::string& by, const std::string& why) {
  std::string what = "`" + tool + "`";
  std::string who = by.empty() ? "" : " by @" + by;
  if (result == Result::kApproved)
    return "\u2705 " + what + " approved" + (remember ? " and remembered" : "") + who + ".";
  if (result == Result::kRejected)
    return "\u274C " + what + " denied" + (remember ? " and remembered" : "") + who + ".";
  return "\u23ED\uFE0F " + what + " not run: " + (why.empty() ? "nobody answered" : why) + ".";
}

// A reply that answers the head prompt: yes/no and their spellings.
std::optional<Result> yes_no(const std::string& text) {
  std::string t = ascii_lower(trim_space(text));
  while (!t.empty() && (t.back() == '.' || t.back() == '!')) t.pop_back();
  if (t == "yes" || t == "y" || t == "approve") return Result::kApproved;
  if (t == "no" || t == "n" || t == "deny") return Result::kRejected;
  return std::nullopt;
}

}  // namespace

bool is_permission_answer(const std::string& text) {
  return yes_no(text).has_value();
}

PermissionDesk::PermissionDesk(asio::io_context& io, RuleStore& rules) : io_(io), rules_(rules) {}

asio::awaitable<PermissionAnswer> PermissionDesk::ask(PromptPlace place, PermissionRequest request,
                                                      Verdict verdict, CancelSignal& cancel) {
  auto pending = std::make_shared<Pending>();
  std::string key = place.channel_key;
  pending->place = std::move(place);
  pending->request = std::move(request);
  pending->verdict = std::move(verdict);
  pending->wake = std::make_shared<asio::steady_timer>(io_, timeout_);
  int64_t seconds = timeout_.count();
  Queue& queue = queues_[key];
  queue.push_back(pending);
  if (queue.size() == 1) show_head(queue);
  std::weak_ptr<Pending> weak = pending;
  CancelRegistration on_cancel(&cancel, [this, key, weak] {
    if (auto p = weak.lock(); p && !p->result) {
      p->why = "the answer was stopped";
      resolve(queues_[key], *p, Result::kNotAvailable, false, "");
    }
  });
  boost::system::error_code ec;
  co_await pending->wake->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  if (!pending->result) {
    pending->why = "nobody answered within " + std::to_string(seconds) + " s";
    resolve(queues_[key], *pending, Result::kNotAvailable, false, "");
  }
  co_return PermissionAnswer{*pending->result, pending->by, pending->why};
}

bool PermissionDesk::waiting(const std::string& channel_key) const {
  auto it = queues_.find(channel_key);
  return it != queues_.end() && !it->second.empty();
}

void PermissionDesk::show_head(Queue& queue) {
  if (queue.empty()) return;
  Pending& head = *queue.front();
  if (head.prompt) return;
  head.prompt = head.place.posts->create(prompt_text(head.request, head.verdict, queue.size()),
                                         head.place.thread_root);
}

void PermissionDesk::resolve(Queue& queue, Pending& p, Result result, bool remember,
                             const std::string& by) {
  if (p.result) return;
  p.result = result;
  p.remember = remember && result != Result::kNotAvailable && !p.verdict.remember_patterns.empty();
  p.by = by;
  if (p.remember) {
    for (const auto& pattern : p.verdict.remember_patterns) {
      try {
        rules_.add_permission_rule({0, p.place.channel_key, p.verdict.remember_tool, pattern,
                                    result == Result::kApproved ? "allow" : "deny"});
      } catch (const std::exception& e) {
        log::warn("bridge", std::string("could not store the permission rule: ") + e.what());
      }
    }
  }
  if (p.prompt)
    p.place.posts->edit(p.prompt, outcome_text(p.request.tool, result, p.remember, by, p.why));
  if (p.wake) p.wake->cancel();
  bool was_head = !queue.empty() && queue.front().get() == &p;
  for (auto it = queue.begin(); it != queue.end(); ++it)
    if (it->get() == &p) {
      queue.erase(it);
      break;
    }
  if (was_head) show_head(queue);
}

bool PermissionDesk::answer_text(const std::string& channel_key, const std::string& text,
                                 const std::string& by) {
  std::optional<Result> answer = yes_no(text);
  if (!answer || !waiting(channel_key)) return false;
  Queue& queue = queues_[channel_key];
  std::shared_ptr<Pending> head = queue.front();
  resolve(queue, *head, *answer, false, by);
  return true;
}

bool PermissionDesk::answer_head(const std::string& channel_key, bool approve, bool remember,
                                 const std::string& by) {
  if (!waiting(channel_key)) return false;
  Queue& queue = queues_[channel_key];
  std::shared_ptr<Pending> head = queue.front();
  resolve(queue, *head, approve ? Result::kApproved : Result::kRejected, remember, by);
  return true;
}

bool PermissionDesk::answer_reaction(const InboundReaction& r) {
  if (!r.added) return false;
  for (auto& [key, queue] : queues_) {
    if (queue.empty()) continue;
    std::shared_ptr<Pending> head = queue.front();
    if (!head->prompt || head->prompt->id != r.post_id) continue;
    if (r.emoji == "+1" || r.emoji == "thumbsup") {
      resolve(queue, *head, Result::kApproved, false, r.username);
    } else if (r.emoji == "-1" || r.emoji == "thumbsdown") {
      resolve(queue, *head, Result::kRejected, false, r.username);
    } else if (r.emoji == "floppy_disk") {
      resolve(queue, *head, Result::kApproved, true, r.username);
    } else if (r.emoji == "no_entry_sign") {
      resolve(queue, *head, Result::kRejected, true, r.username);
    } else {
      return false;
    }
    return true;
  }
  return false;
}

void PermissionDesk::resolve_all(const std::string& channel_key, const std::string& why) {
  for (auto& [key, queue] : queues_) {
    if (!channel_key.empty() && key != channel_key) continue;
    while (!queue.empty()) {
      std::shared_ptr<Pending> p = queue.front();
      p->why = why;
      resolve(queue, *p, Result::kNotAvailable, false, "");
    }
  }
}

}  // namespace pf
