// Loop detection (see loop_detector.h).
#include "bridge/loop_detector.h"

#include "core/hash.h"
#include "core/json.h"

namespace pf {

LoopDetector::Verdict LoopDetector::record(const std::string& tool, const std::string& arguments,
                                           std::chrono::steady_clock::time_point now) {
  // nlohmann's objects keep keys sorted, so a re-dump is the canonical form.
  nlohmann::json args = parse_json(arguments.empty() ? "{}" : arguments);
  std::string canonical = args.is_discarded() ? arguments : args.dump();
  std::string fingerprint = hash_hex(tool + '\0' + canonical);
  while (!calls_.empty() &&
         (now - calls_.front().at > std::chrono::seconds(60) || calls_.size() >= 50))
    calls_.pop_front();
  calls_.push_back({fingerprint, now});
  int same = 0;
  for (const Call& c : calls_) same += c.fingerprint == fingerprint;
  if (same >= kCriticalAt) return Verdict::kCritical;
  if (same == kWarnAt) return Verdict::kWarn;
  return Verdict::kOk;
}

}  // namespace pf
