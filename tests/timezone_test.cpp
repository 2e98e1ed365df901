// IANA time zones from the system's zoneinfo (src/core/timezone.cpp), checked against the C
// library's own conversion (`date` with TZ set, in a child process) across transitions, far
// future rules and a southern-hemisphere zone.
#include "core/timezone.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "test_util.h"

namespace pf {
namespace {

int date_offset(const std::string& zone, std::time_t t) {
  std::string tz = "TZ=";
  tz += zone;
  std::string at = "@";
  at += std::to_string(t);
  auto r = test::run({"env", tz, "date", "-d", at, "+%z"});
  std::string z = r.out.substr(0, 5);  // +hhmm
  int sign = z[0] == '-' ? -1 : 1;
  return sign * (std::stoi(z.substr(1, 2)) * 3600 + std::stoi(z.substr(3, 2)) * 60);
}

TEST(TimeZone, AgreesWithTheCLibraryAcrossYearsAndZones) {
  const char* zones[] = {"Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Kolkata",
                         "America/Sao_Paulo", "Pacific/Auckland", "Europe/London", "UTC"};
  // Around DST changes of 2026 and far beyond the transitions a file lists (2045, 2099).
  std::vector<std::time_t> instants = {1774740000, 1774746000, 1792890000, 1792893600, 1800000000,
                                       1900000000, 2366841600, 2381990400, 4070908800, 4086144000};
  int checked = 0;
  for (const char* zone : zones) {
    TimeZone z = TimeZone::load(zone);
    for (std::time_t t : instants) {
      EXPECT_EQ(z.offset_at(t), date_offset(zone, t)) << zone << " at " << t;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 80);
}

TEST(TimeZone, UnknownOrHostileNamesAreUsageErrors) {
  for (const char* bad : {"Mars/Olympus", "../../etc/passwd", "/etc/localtime", "", "Europe/Berlin\n"})
    EXPECT_THROW(TimeZone::load(bad), UsageError) << bad;
  EXPECT_EQ(TimeZone::load("UTC").offset_at(1800000000), 0);
}

}  // namespace
}  // namespace pf

#include "index/schedule.h"

namespace pf {
namespace {

// Cron times are wall-clock times of the schedule's zone.
TEST(TimeZone, CronRunsOnTheZonesWallClock) {
  TimeZone berlin = TimeZone::load("Europe/Berlin");
  CronSchedule nine = CronSchedule::parse("0 9 * * *");
  EXPECT_EQ(nine.next_after(1782864000, berlin), 1782889200);  // 2026-07-01: 09:00 CEST = 07:00Z
  EXPECT_EQ(nine.next_after(1796083200, berlin), 1796112000);  // 2026-12-01: 09:00 CET = 08:00Z
  // 02:30 does not exist on 2026-03-29 in Berlin (clocks go from 02:00 to 03:00): the next day's.
  CronSchedule gap = CronSchedule::parse("30 2 * * *");
  EXPECT_EQ(gap.next_after(1774735200, berlin), 1774830600);  // 2026-03-30T00:30Z
  TimeZone kolkata = TimeZone::load("Asia/Kolkata");            // +05:30
  EXPECT_EQ(CronSchedule::parse("0 0 * * *").next_after(1782864000, kolkata), 1782930600);
}

}  // namespace
}  // namespace pf
