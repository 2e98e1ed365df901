// Prometheus histograms (see histogram.h).
#include "core/histogram.h"

#include <cstdio>

namespace pf {

std::string metric_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

void Histogram::observe(double seconds) {
  for (size_t i = 0; i < kBounds.size(); ++i)
    if (seconds <= kBounds[i]) ++buckets_[i];
  ++count_;
  sum_ += seconds;
}

void Histogram::render(std::string& out, const std::string& name, const std::string& labels) const {
  std::string sep = labels.empty() ? "" : ",";
  for (size_t i = 0; i < kBounds.size(); ++i)
    out += name + "_bucket{" + labels + sep + "le=\"" + metric_number(kBounds[i]) + "\"} " +
           std::to_string(buckets_[i]) + "\n";
  out += name + "_bucket{" + labels + sep + "le=\"+Inf\"} " + std::to_string(count_) + "\n";
  std::string braces = labels.empty() ? "" : "{" + labels + "}";
  out += name + "_sum" + braces + " " + metric_number(sum_) + "\n";
  out += name + "_count" + braces + " " + std::to_string(count_) + "\n";
}

}  // namespace pf
