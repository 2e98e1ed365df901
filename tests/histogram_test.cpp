// Prometheus histograms (src/core/histogram.cpp): cumulative buckets, +Inf equal to the count,
// the sum, labels joined with le, and the exposition's number format.
#include "core/histogram.h"

#include <gtest/gtest.h>

namespace pf {
namespace {

TEST(Histogram, BucketsAreCumulativeAndLabelled) {
  Histogram h;
  for (double s : {0.001, 0.02, 0.02, 3.0, 60.0}) h.observe(s);
  EXPECT_EQ(h.count(), 5u);
  std::string out;
  h.render(out, "x_seconds", "route=\"chat\"");
  EXPECT_NE(out.find("x_seconds_bucket{route=\"chat\",le=\"0.005\"} 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x_seconds_bucket{route=\"chat\",le=\"0.025\"} 3\n"), std::string::npos);
  EXPECT_NE(out.find("x_seconds_bucket{route=\"chat\",le=\"2.5\"} 3\n"), std::string::npos);
  EXPECT_NE(out.find("x_seconds_bucket{route=\"chat\",le=\"10\"} 4\n"), std::string::npos);
  EXPECT_NE(out.find("x_seconds_bucket{route=\"chat\",le=\"+Inf\"} 5\n"), std::string::npos);
  EXPECT_NE(out.find("x_seconds_sum{route=\"chat\"} 63.041\n"), std::string::npos);
  EXPECT_NE(out.find("x_seconds_count{route=\"chat\"} 5\n"), std::string::npos);
  std::string bare;
  Histogram().render(bare, "y", "");
  EXPECT_NE(bare.find("y_bucket{le=\"+Inf\"} 0\ny_sum 0\ny_count 0\n"), std::string::npos) << bare;
  EXPECT_EQ(metric_number(2.5e-05), "2.5e-05");
  EXPECT_EQ(metric_number(1234567), "1234567");
}

}  // namespace
}  // namespace pf
