// Logger implementation: level filter, timestamp, subsystem tag, one write(2)-sized line at a
// time under a mutex so that lines from worker threads never interleave.
#include "core/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <string>

namespace pf::log {
namespace {
std::atomic<Level> g_level{Level::kWarn};
std::mutex g_mutex;
const char* name(Level l) {
  switch (l) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
    case Level::kError:
      return "error";
    default:
      return "off";
  }
}
}  // namespace

void set_level(Level level) {
  g_level.store(level);
}
Level level() {
  return g_level.load(std::memory_order_relaxed);
}

bool parse_level(std::string_view text, Level* out) {
  for (Level l : {Level::kDebug, Level::kInfo, Level::kWarn, Level::kError, Level::kOff}) {
    if (text == name(l)) {
      *out = l;
      return true;
    }
  }
  return false;
}

void write(Level lvl, std::string_view subsystem, std::string_view message) {
  if (lvl < level()) return;
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
  std::string line;
  line.reserve(message.size() + 48);
  line.append(stamp).append(" ").append(name(lvl)).append(" [");
  line.append(subsystem).append("] ").append(message).append("\n");
  std::lock_guard<std::mutex> lock(g_mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace pf::log
