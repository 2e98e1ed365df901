// The one logger. Every line is tagged with its subsystem (index, search, store, llm, agent,
// http, bridge, cli) so that logs from all components read alike and can be filtered.
// Logs go to stderr; stdout is reserved for command output (search results, JSON).
#pragma once

#include <string_view>

namespace pf::log {

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

void set_level(Level level);
Level level();
// Parses "debug", "info", "warn", "error", "off"; returns false on anything else.
bool parse_level(std::string_view text, Level* out);

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
