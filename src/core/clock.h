// Wall-clock time as the chat platforms and the state store count it: milliseconds since the
// Unix epoch.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>

namespace pf {

inline int64_t unix_time_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A time (ms since the Unix epoch) in UTC as strftime's format writes it ("%Y-%m-%d").
inline std::string format_utc(int64_t unix_ms, const char* format) {
  std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  size_t n = std::strftime(buf, sizeof buf, format, &tm);
  return std::string(buf, n);
}

// A time (ms since the Unix epoch) in UTC to the millisecond, as SQLite's
// strftime('%Y-%m-%dT%H:%M:%fZ', ...) writes it: "2026-12-05T18:59:01.123Z".
inline std::string format_utc_ms(int64_t unix_ms) {
  std::string out = format_utc(unix_ms, "%Y-%m-%dT%H:%M:%S");
  char ms[8];
  std::snprintf(ms, sizeof ms, ".%03dZ", static_cast<int>(unix_ms % 1000));
  return out + ms;
}

}  // namespace pf
