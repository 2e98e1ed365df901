// Header lookup and requested_wait_ms: every way a server says how long to wait.
#include "net/headers.h"

#include <gtest/gtest.h>

#include <ctime>

namespace pf {
namespace {

TEST(Headers, LookupIgnoresCase) {
  HeaderFields f = {{"Content-Type", "a"}, {"content-type", "b"}};
  EXPECT_EQ(header_value(f, "CONTENT-TYPE"), "a");
  EXPECT_EQ(header_value(f, "missing"), "");
}

TEST(RequestedWait, EachServersWay) {
  EXPECT_EQ(requested_wait_ms({}), -1);
  EXPECT_EQ(requested_wait_ms({{"Retry-After", "2"}}), 2000);
  EXPECT_EQ(requested_wait_ms({{"retry-after", "0.25"}}), 250);
  EXPECT_EQ(requested_wait_ms({{"retry-after-ms", "40"}, {"Retry-After", "9"}}), 40);
  EXPECT_EQ(requested_wait_ms({{"X-Ratelimit-Reset", "3"}}), 3000);  // Mattermost
  EXPECT_EQ(requested_wait_ms({{"x-ratelimit-reset-requests", "20ms"},
                               {"x-ratelimit-reset-tokens", "6m0s"}}),
            360000);  // OpenAI: the longer of the two
  EXPECT_EQ(requested_wait_ms({{"x-ratelimit-reset-tokens", "1.5s"}}), 1500);
  EXPECT_EQ(requested_wait_ms({{"x-ratelimit-reset-requests", "1h2m"}}), -1);  // over an hour
}

TEST(RequestedWait, HttpDatesCountFromNow) {
  char date[64];
  std::time_t later = std::time(nullptr) + 30;
  std::strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", std::gmtime(&later));
  int64_t ms = requested_wait_ms({{"Retry-After", date}});
  EXPECT_GE(ms, 28000);
  EXPECT_LE(ms, 30000);
  std::time_t past = std::time(nullptr) - 100;
  std::strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", std::gmtime(&past));
  EXPECT_EQ(requested_wait_ms({{"Retry-After", date}}), 0);
}

TEST(RequestedWait, NonsenseIsIgnored) {
  for (const char* v : {"soon", "-5", "1e9", "", "5s", "nan", "3 "})
    EXPECT_EQ(requested_wait_ms({{"Retry-After", v}}), -1) << v;
  for (const char* v : {"5", "1m-2s", "ms", "3x", "1.2.3s"})
    EXPECT_EQ(requested_wait_ms({{"x-ratelimit-reset-tokens", v}}), -1) << v;
}

}  // namespace
}  // namespace pf
