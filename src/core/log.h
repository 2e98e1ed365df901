// The one logger. Every line is tagged with its subsystem (index, search, store, llm, agent,
// http, bridge, cli) so that logs from all components read alike and can be filtered. Lines
// go to stderr (stdout is reserved for command output: search results, JSON), or to a file
// rotated by size with the older files gzipped (the config's "logging" section). Secrets in a
// message (Authorization headers, bearer tokens, provider and chat tokens, key= query values)
// are masked before any line is written.
//
// Thread-safe: lines from worker threads never interleave.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace pf::log {

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

void set_level(Level level);
Level level();
// Parses "debug", "info", "warn", "error", "off"; returns false on anything else.
bool parse_level(std::string_view text, Level* out);

// Where lines go and how they read: "HH:MM:SS.mmm LEVEL [tag] message" (UTC) or one JSON
// object a line ({"time", "level", "tag", "message"}).
struct Sink {
  std::string file;                  // empty: stderr
  int64_t max_bytes = 10 << 20;      // a file is rotated before a line would take it past this
  int max_files = 3;                 // rotated files kept: file.1.gz (newest) .. file.N.gz
  bool json = false;
};
// Sends later lines to sink. Throws pf::Error when the file cannot be opened (lines keep going
// where they went). A rotation that fails is reported once on stderr and writing goes on.
void set_sink(const Sink& sink);

// text with secrets masked (kept: what kind of secret it was, e.g. "Bearer [redacted]").
std::string redact_secrets(std::string_view text);

void write(Level level, std::string_view subsystem, std::string_view message);

// For messages that cost something to build: check first, build only when it will be written.
inline bool enabled(Level l) {
  return level() <= l;
}

inline void debug(std::string_view sub, std::string_view msg) {
  if (enabled(Level::kDebug)) write(Level::kDebug, sub, msg);
}
inline void info(std::string_view sub, std::string_view msg) {
  write(Level::kInfo, sub, msg);
}
inline void warn(std::string_view sub, std::string_view msg) {
  write(Level::kWarn, sub, msg);
}
inline void error(std::string_view sub, std::string_view msg) {
  write(Level::kError, sub, msg);
}

}  // namespace pf::log
