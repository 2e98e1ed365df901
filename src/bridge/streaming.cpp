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

namespace {

// The cut of cut_keeping_fences; an opening line longer than max_fence is not repeated.
std::pair<std::string, std::string> cut_at(const std::string& text, size_t cut, size_t max_fence) {
  std::string head = text.substr(0, cut), rest = text.substr(cut);
  std::string fence = open_fence(head);
  // Only a whole, short opening line is repeated: a fence line cut itself, or one too long to
  // repeat, would make the rest no shorter.
  bool whole = !fence.empty() && head.find(fence + "\n") != std::string::npos;
  if (!whole || fence.size() > max_fence || rest.empty()) return {head, rest};
  while (!head.empty() && head.back() == '\n') head.pop_back();
  if (!rest.empty() && rest.front() == '\n') rest.erase(0, 1);
  return {head + "\n```", fence + "\n" + rest};
}

}  // namespace

std::pair<std::string, std::string> cut_keeping_fences(const std::string& text, size_t cut) {
  return cut_at(text, std::min(cut, text.size()), text.size());
}

std::pair<std::string, std::string> split_keeping_fences(const std::string& text,
                                                         size_t max_chars) {
  const size_t kClose = 4;  // "\n```"
  size_t cut = split_point(text, max_chars > kClose ? max_chars - kClose : max_chars);
  return cut_at(text, cut, max_chars / 4);
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

std::shared_ptr<PostQueue::Post> PostQueue::create_stream(std::string text, std::string thread_root,
                                                          std::string recipient) {
  auto post = std::make_shared<Post>();
  post->text = std::move(text);
  post->native = true;
  post->recipient = std::move(recipient);
  push(Op{Op::kCreate, post, std::move(thread_root), random_id(16)});
  return post;
}

void PostQueue::end_stream(const std::shared_ptr<Post>& post) {
  push(Op{Op::kStop, post, {}, {}});
}

void PostQueue::status(std::string thread_root, std::string text) {
  auto line = std::make_shared<Post>();
  line->text = std::move(text);
  push(Op{Op::kStatus, line, std::move(thread_root), {}});
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
    static const char* kSpan[] = {"chat.post", "chat.edit", "chat.delete", "chat.stream_stop",
                                  "chat.status"};
    Span span = trace_.valid() && op.kind != Op::kStatus ? Span(kSpan[op.kind], &trace_, SpanKind::kClient)
                                                         : Span();
    span.set("pilotfish.platform", adapter_.platform());
    span.set("pilotfish.channel", channel_id_);
    try {
      co_await run_op(op);
      span.set("pilotfish.post_id", op.post->id);
    } catch (const std::exception& e) {
      span.fail(e.what());
      ++failures_;
      if (op.kind == Op::kCreate) op.post->failed = true;
      static const char* kWhat[] = {"posting", "editing", "deleting", "ending a stream",
                                    "setting the status"};
      log::error("bridge",
                 "channel " + channel_id_ + ": " + kWhat[op.kind] + " failed: " + e.what());
    }
  }
  running_ = false;
  wake_waiters();
}

std::optional<std::string> PostQueue::added(const Post& p) {
  if (p.text.compare(0, p.sent.size(), p.sent) != 0) return std::nullopt;
  return p.text.substr(p.sent.size());
}

asio::awaitable<void> PostQueue::create_now(Op& op) {
  Post& p = *op.post;
  // The newest text goes out: a reply that finished before its placeholder was posted is
  // posted whole, with no edit after it.
  std::string text = p.text;
  if (p.native) {
    std::string refused;
    try {
      p.id = co_await adapter_.start_stream(channel_id_, op.thread_root, p.recipient, text);
    } catch (const std::exception& e) {
      refused = e.what();
    }
    if (!refused.empty()) {
      log::info("bridge", "channel " + channel_id_ + ": no native stream (" + refused +
                              "); a post and edits instead");
      p.native = false;
    }
  }
  if (!p.native) p.id = co_await adapter_.send_message(channel_id_, text, op.thread_root, op.key);
  p.sent = text;
  if (p.on_created) p.on_created(p.id);
}

asio::awaitable<void> PostQueue::run_op(Op& op) {
  Post& p = *op.post;
  bool live = !p.failed && !p.deleted && !p.id.empty();
  switch (op.kind) {
    case Op::kCreate:
      co_await create_now(op);
      break;
    case Op::kEdit:
    case Op::kStop: {
      if (op.kind == Op::kEdit) p.edit_queued = false;
      if (!live || (p.native && p.stopped)) break;
      std::string text = p.text;
      if (!p.native) {
        if (text == p.sent) break;
        co_await adapter_.update_message(p.id, text);
        ++edits_sent_;
      } else if (std::optional<std::string> more = added(p); !more) {
        log::warn("bridge", "channel " + channel_id_ + ": a native stream cannot be rewritten");
        break;
      } else if (op.kind == Op::kStop) {
        p.stopped = true;
        co_await adapter_.stop_stream(p.id, *more);
      } else if (!more->empty()) {
        co_await adapter_.append_stream(p.id, *more);
        ++edits_sent_;
      }
      p.sent = text;
      break;
    }
    case Op::kDelete:
      if (!live) break;
      p.deleted = true;
      if (p.native && !p.stopped) {
        p.stopped = true;
        try {
          co_await adapter_.stop_stream(p.id, "");
        } catch (const std::exception&) {  // deleted next in any case
        }
      }
      co_await adapter_.delete_message(p.id);
      break;
    case Op::kStatus:
      co_await adapter_.set_status(channel_id_, op.thread_root, p.text);
      break;
  }
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
  if (options_.native) {
    // No placeholder: the status line says it is working until the first text starts a stream.
    if (initial.empty())
      posts_->status(thread_root_, options_.thinking);
    else
      start_stream(initial);
    return;
  }
  text_ = initial;
  auto post = posts_->create(initial.empty() ? options_.placeholder : initial, thread_root_);
  if (on_first_post_) post->on_created = on_first_post_;
  parts_.push_back(post);
  last_edit_ = std::chrono::steady_clock::now();
}

void ReplyStream::start_stream(const std::string& text) {
  text_ = text;
  auto post = posts_->create_stream(text, thread_root_, options_.recipient);
  if (on_first_post_) post->on_created = on_first_post_;
  parts_.push_back(post);
  last_edit_ = std::chrono::steady_clock::now();
  if (code_points(text_) > options_.max_chars) flush();
}

void ReplyStream::status(const std::string& text) {
  if (options_.native && !finished_) posts_->status(thread_root_, text);
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
  while (options_.native && code_points(text_) > options_.max_chars) {
    // A stream only grows: the cut falls no earlier than what it was already given.
    size_t given = parts_.back()->text.size();
    auto [head, rest] =
        cut_keeping_fences(text_, std::max(split_point(text_, options_.max_chars - 4), given));
    posts_->edit(parts_.back(), head);
    posts_->end_stream(parts_.back());
    ++edits_;
    done_parts_.push_back(head);
    text_ = rest;
    auto next = posts_->create_stream(text_, thread_root_, options_.recipient);
    parts_.push_back(next);
  }
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
  // Room for the "(Part i of n)" label the final edit adds (a native stream gets none).
  size_t max = options_.max_chars;
  if (!options_.native) options_.max_chars = max > 40 ? max - 40 : max;
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
    if (options_.native) posts_->status(thread_root_, "");  // nothing was said
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
  if (options_.native) {
    posts_->end_stream(parts_.back());
    return;
  }
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
  if (parts_.empty() && options_.native) posts_->status(thread_root_, "");
  for (const auto& part : parts_) posts_->remove(part);
}

void ReplyStream::fail(const std::string& error) {
  if (finished_) return;
  if (timer_) {
    timer_->cancel();
    timer_.reset();
  }
  if (options_.native) {
    // Said after the text so far: a stream can only grow.
    std::string shown = text_.empty() ? "" : text_ + "\n\n";
    if (parts_.empty()) {
      start_stream(shown + "\u274C " + error);
    } else {
      posts_->edit(parts_.back(), shown + "\u274C " + error, final_edit_due());
    }
    posts_->end_stream(parts_.back());
    finished_ = true;
    return;
  }
  if (parts_.empty()) start();
  std::string shown = text_.empty() ? "" : text_ + "\n\n";
  posts_->edit(parts_.back(), shown + "\u274C " + error, final_edit_due());
  ++edits_;
  finished_ = true;
}

}  // namespace pf
