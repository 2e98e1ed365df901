// How a reply reaches a channel while the model writes it (spec §7). A PostQueue is a channel's
// one outbox: posts, edits and deletions go out strictly in order, one at a time, and an edit
// queued while an older edit of the same post waits is merged into it, so an edit never
// overtakes a newer one and a slow server gets the latest text, not every step. A ReplyStream
// is one reply on top of it: a "Working…" placeholder, text deltas coalesced into at most one
// edit per interval (the final edit and an error too: it waits out the interval of the edit
// before it, so a reply is never edited more often than once per interval), an empty replacement
// that never wipes text, the placeholder deleted when the reply stays empty, and text longer than a
// post holds carried over into further posts, labelled "(Part i of n)" when the reply is done.
// Where the platform streams natively (StreamOptions::native) a reply is instead one of the
// platform's streams: a status line ("is thinking…") until the first text, then the text
// started, appended (at most once per interval) and stopped, never replaced; a stream the
// platform refuses falls back to a post and edits.
//
// Threads: the bridge's network thread only. Lifetime: a ReplyStream must not outlive its
// PostQueue; a PostQueue keeps itself alive until its outbox is empty.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chat/channel_adapter.h"
#include "core/trace.h"

namespace pf {

class PostQueue : public std::enable_shared_from_this<PostQueue> {
 public:
  // A post as the outbox knows it: its id once created.
  struct Post {
    std::string id;
    bool failed = false;  // creating it failed for good: edits of it are dropped
    bool deleted = false;
    std::string text;  // the latest text asked for
    std::string sent;  // the text the server has
    bool edit_queued = false;
    std::function<void(const std::string&)> on_created;  // told the id once it exists
    bool native = false;    // a native stream: edits append what was added since the last one
    bool stopped = false;   // a native stream that was ended
    std::string recipient;  // a native stream's addressee
  };

  // adapter must outlive the queue; its operations run on executor (the network thread's).
  PostQueue(boost::asio::any_io_executor executor, ChannelAdapter& adapter, std::string channel_id);

  std::shared_ptr<Post> create(std::string text, std::string thread_root);
  // A native stream (ChannelAdapter::start_stream) started with text, addressed to recipient;
  // falls back to a plain post when the platform refuses. Edits of it must only append.
  std::shared_ptr<Post> create_stream(std::string text, std::string thread_root,
                                      std::string recipient);
  // Ends a native stream with whatever text it was given since its last edit (for a plain post:
  // sends its newest text, as an edit would).
  void end_stream(const std::shared_ptr<Post>& post);
  // Sets the status line of a thread (ChannelAdapter::set_status; "" clears it), best-effort.
  void status(std::string thread_root, std::string text);
  // Queues an edit of post to text. With not_before in the future the edit is held until
  // then (other posts' operations go ahead of it); edits asked for while one is queued or
  // held are merged into it, so the post gets the newest text once. An edit to the text the
  // post already has (sent, in flight, or to be created with) does nothing.
  void edit(const std::shared_ptr<Post>& post, std::string text,
            std::chrono::steady_clock::time_point not_before = {});
  void remove(const std::shared_ptr<Post>& post);
  // Resumes when everything queued or held so far has gone out (or failed).
  boost::asio::awaitable<void> drained();
  size_t edits_sent() const { return edits_sent_; }
  size_t failures() const { return failures_; }
  const std::string& channel_id() const { return channel_id_; }
  // The running turn's span: posts, edits, deletions and stream ends made from now on get a
  // span under it (core/trace.h); an empty context: none.
  void set_trace(TraceContext trace) { trace_ = std::move(trace); }

 private:
  struct Op {
    enum Kind { kCreate, kEdit, kDelete, kStop, kStatus } kind;
    std::shared_ptr<Post> post;
    std::string thread_root;
    std::string key;  // idempotency key of a create
  };
  void push(Op op);
  boost::asio::awaitable<void> run();
  boost::asio::awaitable<void> run_op(Op& op);
  boost::asio::awaitable<void> create_now(Op& op);
  // What a native stream was given since it last sent: "" when nothing, nullopt when the text
  // was replaced rather than appended to (a stream cannot show that).
  static std::optional<std::string> added(const Post& post);
  void wake_waiters();

  boost::asio::any_io_executor adapter_executor_;
  ChannelAdapter& adapter_;
  std::string channel_id_;
  TraceContext trace_;
  std::deque<Op> ops_;
  bool running_ = false;
  size_t held_ = 0;  // edits waiting for their not_before
  size_t edits_sent_ = 0, failures_ = 0;
  std::vector<std::shared_ptr<boost::asio::steady_timer>> waiters_;
};

struct StreamOptions {
  std::chrono::milliseconds interval{500};  // at most one edit per interval
  size_t max_chars = 16000;                 // per post (code points)
  std::string placeholder = "\u23F3 Working\u2026";
  // A native stream instead of a placeholder and edits (needs a thread), for recipient.
  bool native = false;
  std::string recipient;
  std::string thinking = "is thinking\u2026";  // a native reply's status until its first text
};

class ReplyStream {
 public:
  ReplyStream(boost::asio::io_context& io, std::shared_ptr<PostQueue> posts,
              std::string thread_root, StreamOptions options);
  ~ReplyStream();

  // Posts the placeholder (or, with text, starts the reply with it and no placeholder).
  void start(const std::string& initial = {});
  bool started() const { return !parts_.empty(); }
  void append(const std::string& delta);
  // Replaces the text; an empty replacement is ignored once there is text (spec §7, #110).
  void replace(const std::string& text);
  bool has_content() const { return !text_.empty(); }
  const std::string& text() const { return text_; }
  // The final edit: the whole text, split into labelled parts if needed; with no text the
  // placeholder is deleted. Later calls do nothing.
  void finalize();
  // Takes the reply back: every post of it is deleted (no_reply, NO_REPLY). Later calls do
  // nothing.
  void discard();
  // Shows the error in place of the reply ("❌ ...").
  void fail(const std::string& error);
  // What the agent is doing now, on the platform's status line (native streams only).
  void status(const std::string& text);
  const StreamOptions& options() const { return options_; }
  bool finished() const { return finished_; }
  // Told the id of the reply's first post once it exists.
  void on_first_post(std::function<void(const std::string&)> f) { on_first_post_ = std::move(f); }
  size_t edits() const { return edits_; }

 private:
  void schedule_flush();
  // Edits the current post to text_ now, or no earlier than not_before.
  void flush(std::chrono::steady_clock::time_point not_before = {});
  // When the reply's last edit may go out: one interval after the edit before it.
  std::chrono::steady_clock::time_point final_edit_due() const;
  // Moves whole parts that no longer fit out of the current post.
  void roll_over();
  // A native reply's first text: its stream starts.
  void start_stream(const std::string& text);

  boost::asio::io_context& io_;
  std::shared_ptr<PostQueue> posts_;
  std::string thread_root_;
  StreamOptions options_;
  std::string text_;                     // the current part's text
  std::vector<std::string> done_parts_;  // earlier parts' texts, full
  std::vector<std::shared_ptr<PostQueue::Post>> parts_;
  std::shared_ptr<boost::asio::steady_timer> timer_;
  std::chrono::steady_clock::time_point last_edit_{};
  bool finished_ = false;
  size_t edits_ = 0;
  std::function<void(const std::string&)> on_first_post_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// Where to cut text of more than max code points: at the last "\n## " heading, else the last
// blank line, else the last newline, else the last space in the allowed span, else at max
// (never inside a UTF-8 sequence). Returns a byte offset.
size_t split_point(const std::string& text, size_t max_chars);

// Cuts text in two at the byte offset cut (at a character boundary); when a ``` fence is open
// at the cut, the head gets a closing fence and the rest starts with the opening line again.
std::pair<std::string, std::string> cut_keeping_fences(const std::string& text, size_t cut);

// Cuts text of more than max code points in two at split_point, never leaving a code block cut
// open: when the cut falls inside a ``` fence, the head ends with a closing fence and the rest
// starts with the opening line again (its language kept). The head stays within max.
std::pair<std::string, std::string> split_keeping_fences(const std::string& text, size_t max_chars);

}  // namespace pf
