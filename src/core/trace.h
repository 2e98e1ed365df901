// Tracing: spans of the work behind an answer (a chat turn or HTTP request, its retrieval, each
// model request, tool call and posted message), W3C trace context (`traceparent`) in and out,
// and one process-wide sink that takes each span when it ends. With no sink set (telemetry
// off, the default) a span records nothing and costs a branch. The OTLP/HTTP exporter
// (net/otlp_exporter.h) is the sink `serve` and `bridge` set when telemetry.otlpEndpoint is.
//
// Threads: spans may start and end on any thread; the sink is called on the thread that ends
// a span and must be thread-safe. A span is moved, not copied; it ends when end() is called or
// it is destroyed.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace pf {

// Where a span sits: its trace (32 lower-case hex digits) and its own id (16). Empty: none.
struct TraceContext {
  std::string trace_id, span_id;
  bool sampled = true;
  bool valid() const { return trace_id.size() == 32 && span_id.size() == 16; }
};

// A W3C traceparent header ("00-<trace id>-<span id>-<flags>") read strictly: nullopt for any
// other version-00 shape, upper-case hex, or an all-zero id. Later versions are read by their
// first four fields, as the recommendation says.
std::optional<TraceContext> parse_traceparent(std::string_view header);
std::string format_traceparent(const TraceContext& context);

using SpanValue = std::variant<std::string, int64_t, double, bool>;

enum class SpanKind { kInternal = 1, kServer = 2, kClient = 3 };

// What a sink receives.
struct SpanData {
  TraceContext context;
  std::string parent_span_id;  // empty: a root span
  std::string name;
  SpanKind kind = SpanKind::kInternal;
  int64_t start_ns = 0, end_ns = 0;  // since the Unix epoch
  std::vector<std::pair<std::string, SpanValue>> attributes;
  bool error = false;
  std::string status_message;
};

class SpanSink {
 public:
  virtual ~SpanSink() = default;
  // Takes an ended span. Must not block for long (queue it) nor throw.
  virtual void add(SpanData span) = 0;
};

// Sets (or, with nullptr, clears) where ended spans go, and whether spans may carry content
// (questions, commands: capture_content). Spans started before keep their sink.
void set_span_sink(std::shared_ptr<SpanSink> sink, bool capture_content = false);
// Whether a sink is set and content may be recorded.
bool tracing_enabled();
bool trace_content();

class Span {
 public:
  Span() = default;  // records nothing
  // A span under parent (a new trace when parent is null or not valid); records nothing when
  // no sink is set.
  Span(std::string name, const TraceContext* parent, SpanKind kind = SpanKind::kInternal);
  ~Span() { end(); }
  Span(Span&& other) noexcept;
  Span& operator=(Span&& other) noexcept;
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

  bool recording() const { return data_ != nullptr; }
  // This span's context, for children and outgoing traceparent headers (empty when not
  // recording: children of it start traces of their own, or nothing).
  TraceContext context() const;
  // An attribute (a later one of the same key replaces it). One overload per type, so a bool
  // stays a bool and a size must be cast to int64_t.
  void set(std::string key, std::string value) { put(std::move(key), SpanValue(std::move(value))); }
  void set(std::string key, const char* value) { put(std::move(key), SpanValue(std::string(value))); }
  void set(std::string key, int64_t value) { put(std::move(key), SpanValue(value)); }
  void set(std::string key, int value) { put(std::move(key), SpanValue(int64_t{value})); }
  void set(std::string key, double value) { put(std::move(key), SpanValue(value)); }
  void set(std::string key, bool value) { put(std::move(key), SpanValue(value)); }
  // Marks the span failed with why.
  void fail(const std::string& why);
  // Ends it now (idempotent).
  void end();

 private:
  void put(std::string key, SpanValue value);
  std::unique_ptr<SpanData> data_;
  std::shared_ptr<SpanSink> sink_;
};

// A new random id of n bytes as hex (16 for trace ids, 8 for span ids).
std::string random_trace_hex(size_t bytes);

}  // namespace pf
