// A Prometheus histogram of seconds (fixed buckets from 5 ms to 10 s) and the number format of
// the text exposition (0.0.4), shared by the API's and the bridge's /metrics. Not thread-safe:
// the owner locks or keeps it on one thread.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace pf {

class Histogram {
 public:
  static constexpr std::array<double, 10> kBounds = {0.005, 0.01, 0.025, 0.05, 0.1,
                                                     0.25,  0.5,  1,     2.5,  10};
  void observe(double seconds);
  // Appends the _bucket, _sum and _count lines of `name` with the given label text.
  void render(std::string& out, const std::string& name, const std::string& labels) const;
  uint64_t count() const { return count_; }

 private:
  std::array<uint64_t, kBounds.size()> buckets_{};
  uint64_t count_ = 0;
  double sum_ = 0;
};

// A sample value as the exposition writes it ("%.9g").
std::string metric_number(double v);

}  // namespace pf
