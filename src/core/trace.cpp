// Spans, W3C trace context and the process-wide span sink (see trace.h).
#include "core/trace.h"

#include <atomic>
#include <mutex>
#include <random>

namespace pf {

namespace {

struct Tracer {
  std::mutex mutex;
  std::shared_ptr<SpanSink> sink;
  std::atomic<bool> enabled{false};
  std::atomic<bool> content{false};
};

Tracer& tracer() {
  static Tracer* t = new Tracer();  // never destroyed: spans may end during exit
  return *t;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool lower_hex(std::string_view s, size_t n) {
  if (s.size() != n) return false;
  bool nonzero = false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    nonzero = nonzero || c != '0';
  }
  return nonzero;
}

}  // namespace

std::string random_trace_hex(size_t bytes) {
  thread_local std::mt19937_64 rng{std::random_device{}() ^
                                   static_cast<uint64_t>(now_ns())};
  static const char* digits = "0123456789abcdef";
  std::string out;
  while (out.size() < bytes * 2) {
    uint64_t v = rng();
    for (int i = 0; i < 16 && out.size() < bytes * 2; ++i, v >>= 4) out += digits[v & 15];
  }
  if (out.find_first_not_of('0') == std::string::npos) out.back() = '1';  // never all zero
  return out;
}

std::optional<TraceContext> parse_traceparent(std::string_view h) {
  // version "-" trace-id "-" parent-id "-" flags, each lower-case hex.
  if (h.size() < 55 || h[2] != '-' || h[35] != '-' || h[52] != '-') return std::nullopt;
  std::string_view version = h.substr(0, 2), flags = h.substr(53, 2);
  auto hex = [](std::string_view s) {
    for (char c : s)
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return true;
  };
  if (!hex(version) || version == "ff" || !hex(flags)) return std::nullopt;
  if (version == "00" && h.size() != 55) return std::nullopt;
  if (version != "00" && h.size() > 55 && h[55] != '-') return std::nullopt;
  if (!lower_hex(h.substr(3, 32), 32) || !lower_hex(h.substr(36, 16), 16)) return std::nullopt;
  TraceContext c;
  c.trace_id = std::string(h.substr(3, 32));
  c.span_id = std::string(h.substr(36, 16));
  int f = std::stoi(std::string(flags), nullptr, 16);
  c.sampled = (f & 1) != 0;
  return c;
}

std::string format_traceparent(const TraceContext& c) {
  return "00-" + c.trace_id + "-" + c.span_id + (c.sampled ? "-01" : "-00");
}

void set_span_sink(std::shared_ptr<SpanSink> sink, bool capture_content) {
  Tracer& t = tracer();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.enabled = sink != nullptr;
  t.content = sink != nullptr && capture_content;
  t.sink = std::move(sink);
}

bool tracing_enabled() { return tracer().enabled.load(std::memory_order_relaxed); }
bool trace_content() { return tracer().content.load(std::memory_order_relaxed); }

Span::Span(std::string name, const TraceContext* parent, SpanKind kind) {
  if (!tracing_enabled()) return;
  {
    Tracer& t = tracer();
    std::lock_guard<std::mutex> lock(t.mutex);
    sink_ = t.sink;
  }
  if (!sink_) return;
  // A parent that did not sample its trace: nothing below it is recorded either.
  if (parent && parent->valid() && !parent->sampled) {
    sink_.reset();
    return;
  }
  data_ = std::make_unique<SpanData>();
  data_->name = std::move(name);
  data_->kind = kind;
  data_->start_ns = now_ns();
  bool child = parent && parent->valid();
  data_->context.trace_id = child ? parent->trace_id : random_trace_hex(16);
  data_->parent_span_id = child ? parent->span_id : "";
  data_->context.span_id = random_trace_hex(8);
}

Span::Span(Span&& other) noexcept
    : data_(std::move(other.data_)), sink_(std::move(other.sink_)) {}

Span& Span::operator=(Span&& other) noexcept {
  if (this != &other) {
    end();
    data_ = std::move(other.data_);
    sink_ = std::move(other.sink_);
  }
  return *this;
}

TraceContext Span::context() const { return data_ ? data_->context : TraceContext{}; }

void Span::put(std::string key, SpanValue value) {
  if (!data_) return;
  for (auto& [k, v] : data_->attributes)
    if (k == key) {
      v = std::move(value);
      return;
    }
  data_->attributes.emplace_back(std::move(key), std::move(value));
}

void Span::fail(const std::string& why) {
  if (!data_) return;
  data_->error = true;
  data_->status_message = why.substr(0, 1000);
}

void Span::end() {
  if (!data_) return;
  data_->end_ns = now_ns();
  std::shared_ptr<SpanSink> sink = std::move(sink_);
  std::unique_ptr<SpanData> data = std::move(data_);
  if (sink) sink->add(std::move(*data));
}

}  // namespace pf
