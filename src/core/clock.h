// Wall-clock time as the chat platforms and the state store count it: milliseconds since the
// Unix epoch.
#pragma once

#include <chrono>
#include <cstdint>

namespace pf {

inline int64_t unix_time_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace pf
