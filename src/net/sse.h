// An incremental parser for server-sent events (the text/event-stream format of the WHATWG
// HTML standard), as model providers stream them: feed it bytes as they arrive, in any split,
// and it calls back once per complete event. Lines end in \n, \r\n or \r; "data" lines of one
// event are joined with \n; lines starting with ':' are comments (keep-alives); a leading BOM
// is skipped.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace pf {

// One event of a stream pilotfish serves: `data: <compact JSON on one line>` and a blank line.
// Invalid UTF-8 (from a model or a file) is replaced, never sent raw or thrown.
std::string sse_json_event(const nlohmann::json& data);

struct SseEvent {
  std::string event;  // "message" when the stream named none
  std::string data;
  std::string id;
};

class SseParser {
 public:
  // No event or line of a real provider comes near this; a peer that sends more without ending
  // the event is cut off instead of filling memory.
  static constexpr size_t kMaxEventBytes = 16 << 20;

  // on_event returns false to stop parsing (the rest of the current feed is ignored).
  explicit SseParser(std::function<bool(const SseEvent&)> on_event)
      : on_event_(std::move(on_event)) {}

  // Returns false once on_event asked to stop or an event grew past kMaxEventBytes.
  bool feed(std::string_view bytes);

  // Whether parsing stopped because an event grew past kMaxEventBytes.
  bool overflowed() const { return overflowed_; }

 private:
  bool line(std::string_view l);

  std::function<bool(const SseEvent&)> on_event_;
  std::string pending_;  // an incomplete line
  SseEvent current_;
  bool has_data_ = false;
  bool started_ = false;
  bool last_was_cr_ = false;
  bool stopped_ = false;
  bool overflowed_ = false;
};

}  // namespace pf
