// Loop detection (spec §10): the same tool called with the same arguments again and again is a
// model stuck in a loop. Five identical calls within 60 s warn once; ten end the turn and start
// a fresh conversation. Per channel; the network thread only.
#pragma once

#include <chrono>
#include <deque>
#include <string>

namespace pf {

class LoopDetector {
 public:
  enum class Verdict { kOk, kWarn, kCritical };
  static constexpr int kWarnAt = 5;
  static constexpr int kCriticalAt = 10;

  // Records a call (arguments: the model's JSON text, compared with keys sorted).
  Verdict record(const std::string& tool, const std::string& arguments,
                 std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());
  void reset() { calls_.clear(); }

 private:
  struct Call {
    std::string fingerprint;
    std::chrono::steady_clock::time_point at;
  };
  std::deque<Call> calls_;  // the last 60 s, at most 50
};

}  // namespace pf
