// libFuzzer entry point: W3C traceparent headers from HTTP callers on arbitrary bytes. One that
// is accepted must write back to a header that reads the same (the ids are copied verbatim).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::optional<pf::TraceContext> c = pf::parse_traceparent(text);
  if (!c) return 0;
  if (!c->valid()) __builtin_trap();
  std::optional<pf::TraceContext> again = pf::parse_traceparent(pf::format_traceparent(*c));
  if (!again || again->trace_id != c->trace_id || again->span_id != c->span_id ||
      again->sampled != c->sampled)
    __builtin_trap();
  return 0;
}
