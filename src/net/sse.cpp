// Server-sent events parsing (see sse.h).
#include "net/sse.h"

namespace pf {

std::string sse_json_event(const nlohmann::json& data) {
  // dump() escapes line breaks inside strings, so the event stays on one data line.
  return "data: " + data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n\n";
}

bool SseParser::feed(std::string_view bytes) {
  if (stopped_) return false;
  if (!started_) {
    pending_.append(bytes);
    if (pending_.size() < 3 &&
        std::string_view("\xEF\xBB\xBF").substr(0, pending_.size()) == pending_)
      return true;  // could still be a BOM
    started_ = true;
    if (pending_.rfind("\xEF\xBB\xBF", 0) == 0) pending_.erase(0, 3);
    bytes = {};
    std::string first;
    first.swap(pending_);
    return feed(first);
  }
  for (char c : bytes) {
    if (c == '\n' && last_was_cr_) {  // the \n of a \r\n pair
      last_was_cr_ = false;
      continue;
    }
    last_was_cr_ = c == '\r';
    if (c == '\n' || c == '\r') {
      bool go_on = line(pending_);
      pending_.clear();
      if (!go_on) {
        stopped_ = true;
        return false;
      }
    } else {
      pending_ += c;
    }
  }
  if (pending_.size() + current_.data.size() > kMaxEventBytes) {
    overflowed_ = stopped_ = true;
    pending_.clear();
    current_ = SseEvent{};
    return false;
  }
  return true;
}

bool SseParser::line(std::string_view l) {
  if (l.empty()) {  // dispatch
    if (!has_data_) {
      current_ = SseEvent{};
      return true;
    }
    if (current_.event.empty()) current_.event = "message";
    bool go_on = on_event_(current_);
    std::string id = current_.id;  // the last event id persists across events
    current_ = SseEvent{};
    current_.id = id;
    has_data_ = false;
    return go_on;
  }
  if (l.front() == ':') return true;  // comment
  size_t colon = l.find(':');
  std::string_view field = l.substr(0, colon);
  std::string_view value =
      colon == std::string_view::npos ? std::string_view() : l.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field == "data") {
    if (has_data_) current_.data += '\n';
    current_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    current_.event = std::string(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) current_.id = std::string(value);
  }  // "retry" and unknown fields are ignored
  return true;
}

}  // namespace pf
