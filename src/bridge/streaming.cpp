// The channel outbox and streamed replies (see streaming.h).
#include "bridge/streaming.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "core/log.h"
#include "core/text.h"

namespace pf {

namespace asio = boost::asio;

namespace {

// The byte offset of the first byte after max code points (text.size() if shorter).
size_t byte_offset_of(const std::string& text, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      if (n == max) return i;
      ++n;
    }
  }
  return text.size();
}

}  // namespace

size_t split_point(const std::string& text, size_t max_chars) {
  size_t limit = byte_offset_of(text, max_chars);
  if (limit >= text.size()) return text.size();
  std::string_view span(text.data(), limit);
  for (const char* sep : {"\n## ", "\n\n", "\n", " "}) {
    size_t at = span.rfind(sep);
    // A cut in the first fifth would leave a tiny part: look for a later boundary kind.
    if (at != std::string::npos && at > limit / 5) return at + 1;
  }
  return limit;
}

namespace {

// The opening line of the ``` fence still open at the end of text; empty when none is.
std::string open_fence(std::string_view text) {
  std::string open;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    std::string_view line = text.substr(at, end == std::string_view::npos ? end : end - at);
    size_t indent = line.find_first_not_of(' ');
    if (indent != std::string_view::npos && indent <= 3 && line.substr(indent, 3) == "```")
      open = open.empty() ? std::string(line) : std::string();
    if (end == std::string_view::npos) break;
    at = end + 1;
  }
  return open;
}

}  // namespace

std::pair<std::string, std::string> split_keeping_fences(const std::string& text,
                                                         size_t max_chars) {
  const std::string kClose = "\n```";
  size_t cut = split_point(text, max_chars > kClose.size() ? max_chars - kClose.size() : max_chars);
  std::string head = text.substr(0, cut), rest = text.substr(cut);
  std::string fence = open_fence(head);
  // Only a whole, short opening line is repeated: a fence line cut itself, or one too long to
  // repeat, would make the rest no shorter.
  bool whole = !fence.empty() && head.find(fence + "\n") != std::string::npos;
  if (!whole || fence.size() > max_chars / 4 || rest.empty()) return {head, rest};
  while (!head.empty() && head.back() == '\n') head.pop_back();
  if (!rest.empty() && rest.front() == '\n') rest.erase(0, 1);
  return {head + kClose, fence + "\n" + rest};
}

PostQueue::PostQueue(asio::any_io_executor executor, ChannelAdapter& adapter,
                     std::string channel_id)
    : adapter_executor_(std::move(executor)),
      adapter_(adapter),
      channel_id_(std::move(channel_id)) {}

std::shared_ptr<PostQueue::Post> PostQueue::create(std::string text, std::string thread_root) {
  auto post = std::make_shared<Post>();
  post->text = std::move(text);
  push(Op{Op::kCreate, post, std::move(thread_root), random_id(16)});
  return post;
}

void PostQueue::edit(const std::shared_ptr<Post>& post, std::string text,
                     std::chrono::steady_clock::time_point not_before) {
  // With no edit queued, the server has post->text or is being sent it: nothing to send, and
  // nothing to hold (a final edit that repeats the last one must not keep the turn open).
  if (!post->edit_queued && post->text == text) return;
  post->text = std::move(text);
  if (post->edit_queued) return;  // the queued or held edit will send the newest text
  post->edit_queued = true;
  if (not_before <= std::chrono::steady_clock::now()) {
    push(Op{Op::kEdit, post, {}, {}});
    return;
  }
  ++held_;
  auto timer = std::make_shared<asio::steady_timer>(adapter_executor_, not_before);
  // The handler holds the queue and the timer: a held edit goes out even if its stream is gone.
  timer->async_wait([self = shared_from_this(), post, timer](const boost::system::error_code&) {
    --self->held_;
    self->push(Op{Op::kEdit, post, {}, {}});
  });
}

void PostQueue::remove(const std::shared_ptr<Post>& post) {
  push(Op{Op::kDelete, post, {}, {}});
}

void PostQueue::push(Op op) {
  ops_.push_back(std::move(op));
  if (running_) return;
  running_ = true;
  // Holds the queue alive until the outbox is empty.
  auto self = shared_from_this();
  asio::co_spawn(
      adapter_executor_, [self]() -> asio::awaitable<void> { co_await self->run(); },
      asio::detached);
}

asio::awaitable<void> PostQueue::run() {
  while (!ops_.empty()) {
    Op op = std::move(ops_.front());
    ops_.pop_front();
    Post& p = *op.post;
    try {
      if (op.kind == Op::kCreate) {
        // The newest text goes out: a reply that finished before its placeholder was posted
        // is posted whole, with no edit after it.
        std::string text = p.text;
        p.id = co_await adapter_.send_message(channel_id_, text, op.thread_root, op.key);
        p.sent = text;
        if (p.on_created) p.on_created(p.id);
      } else if (op.kind == Op::kEdit) {
        p.edit_queued = false;
        if (!p.failed && !p.deleted && !p.id.empty() && p.text != p.sent) {
          std::string text = p.text;
          co_await adapter_.update_message(p.id, text);
          p.sent = text;
          ++edits_sent_;
        }
      } else if (!p.failed && !p.deleted && !p.id.empty()) {
        p.deleted = true;
        co_await adapter_.delete_message(p.id);
      }
    } catch (const std::exception& e) {
      ++failures_;
      if (op.kind == Op::kCreate) p.failed = true;
      log::error("bridge", "channel " + channel_id_ + ": " +
                               (op.kind == Op::kCreate ? "posting"
                                : op.kind == Op::kEdit ? "editing"
                                                       : "deleting") +
                               " failed: " + e.what());
    }
  }
  running_ = false;
  wake_waiters();
}

void PostQueue::wake_waiters() {
  if (held_ > 0) return;  // a held edit will run the queue again
  auto waiters = std::move(waiters_);
  waiters_.clear();
  for (auto& w : waiters) w->cancel();
}

asio::awaitable<void> PostQueue::drained() {
  if (!running_ && ops_.empty() && held_ == 0) co_return;
  auto timer = std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor,
                                                    std::chrono::hours(24));
  waiters_.push_back(timer);
  boost::system::error_code ec;
  co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

ReplyStream::ReplyStream(asio::io_context& io, std::shared_ptr<PostQueue> posts,
                         std::string thread_root, StreamOptions options)
    : io_(io), posts_(std::move(posts)), thread_root_(std::move(thread_root)), options_(options) {}

ReplyStream::~ReplyStream() {
  *alive_ = false;
  if (timer_) timer_->cancel();
}

void ReplyStream::start(const std::string& initial) {
  if (!parts_.empty()) return;
  text_ = initial;
  auto post = posts_->create(initial.empty() ? options_.placeholder : initial, thread_root_);
  if (on_first_post_) post->on_created = on_first_post_;
  parts_.push_back(post);
  last_edit_ = std::chrono::steady_clock::now();
}

void ReplyStream::append(const std::string& delta) {
  if (finished_ || delta.empty()) return;
  if (parts_.empty()) {
    start(delta);
    return;
  }
  text_ += delta;
  schedule_flush();
}

void ReplyStream::replace(const std::string& text) {
  if (finished_ || (text.empty() && !text_.empty())) return;
  if (parts_.empty()) {
    start(text);
    return;
  }
  text_ = text;
  schedule_flush();
}

void ReplyStream::schedule_flush() {
  if (timer_) return;  // one flush pending covers every delta until it runs
  auto due = last_edit_ + options_.interval;
  timer_ = std::make_shared<asio::steady_timer>(io_, due);
  auto alive = alive_;
  timer_->async_wait([this, alive](const boost::system::error_code& ec) {
    if (ec || !*alive) return;
    timer_.reset();
    flush();
  });
}

void ReplyStream::roll_over() {
  while (code_points(text_) > options_.max_chars) {
    auto [head, rest] = split_keeping_fences(text_, options_.max_chars);
    posts_->edit(parts_.back(), head);
    ++edits_;
    done_parts_.push_back(head);
    text_ = rest;
    parts_.push_back(posts_->create(text_.empty() ? options_.placeholder : text_, thread_root_));
  }
}

void ReplyStream::flush(std::chrono::steady_clock::time_point not_before) {
  if (finished_ || parts_.empty()) return;
  // Room for the "(Part i of n)" label the final edit adds.
  size_t max = options_.max_chars;
  options_.max_chars = max > 40 ? max - 40 : max;
  roll_over();
  options_.max_chars = max;
  posts_->edit(parts_.back(), text_, not_before);
  ++edits_;
  last_edit_ = std::max(std::chrono::steady_clock::now(), not_before);
}

std::chrono::steady_clock::time_point ReplyStream::final_edit_due() const {
  // Creating the placeholder is not an edit: a reply done before its first edit shows at once.
  if (edits_ == 0) return {};
  return last_edit_ + options_.interval;
}

void ReplyStream::finalize() {
  if (finished_) return;
  if (timer_) {
    timer_->cancel();
    timer_.reset();
  }
  if (parts_.empty()) {
    finished_ = true;
    return;
  }
  if (text_.empty() && done_parts_.empty()) {
    finished_ = true;
    posts_->remove(parts_.front());
    return;
  }
  auto due = final_edit_due();
  flush(due);
  finished_ = true;
  if (parts_.size() > 1) {
    std::vector<std::string> texts = done_parts_;
    texts.push_back(text_);
    size_t n = texts.size();
    for (size_t i = 0; i < n; ++i) {
      posts_->edit(
          parts_[i],
          "(Part " + std::to_string(i + 1) + " of " + std::to_string(n) + ")\n\n" + texts[i], due);
      ++edits_;
    }
  }
}

void ReplyStream::discard() {
  if (finished_) return;
  if (timer_) {
    timer_->cancel();
    timer_.reset();
  }
  finished_ = true;
  for (const auto& part : parts_) posts_->remove(part);
}

void ReplyStream::fail(const std::string& error) {
  if (finished_) return;
  if (timer_) {
    timer_->cancel();
    timer_.reset();
  }
  if (parts_.empty()) start();
  std::string shown = text_.empty() ? "" : text_ + "\n\n";
  posts_->edit(parts_.back(), shown + "\u274C " + error, final_edit_due());
  ++edits_;
  finished_ = true;
}

}  // namespace pf
