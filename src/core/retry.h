// The one retry policy: capped exponential backoff with jitter, for anything that retries a
// remote peer (a chat server's REST calls, a dropped WebSocket). Jitter spreads the retries of
// many clients that failed together, so they do not come back in one wave.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>

namespace pf {

struct RetryPolicy {
  int max_attempts = 5;    // tries in all, the first included (0: forever)
  int64_t base_ms = 500;   // the wait before the second try
  int64_t max_ms = 30000;  // no wait is longer
  double jitter = 0.25;    // each wait is moved by up to this fraction, either way

  // The wait before try number attempt + 1 (attempt counts from 1).
  int64_t backoff_ms(int attempt) const {
    int64_t wait = base_ms;
    for (int i = 1; i < attempt && wait < max_ms; ++i) wait *= 2;
    wait = std::min(wait, max_ms);
    thread_local std::mt19937_64 rng{std::random_device{}()};
    std::uniform_real_distribution<double> spread(1.0 - jitter, 1.0 + jitter);
    return std::clamp<int64_t>(static_cast<int64_t>(static_cast<double>(wait) * spread(rng)), 0,
                               max_ms);
  }
  bool gives_up_after(int attempt) const { return max_attempts > 0 && attempt >= max_attempts; }
};

}  // namespace pf
