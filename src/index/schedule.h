// When to re-index: a five-field cron expression (minute hour day-of-month month day-of-week),
// as in crontab(5): numbers, `*`, ranges `a-b`, lists `a,b`, steps `*/n` and `a-b/n`; Sunday is
// 0 or 7; when both day fields are restricted a day matching either one counts. Times are local.
#pragma once

#include <bitset>
#include <ctime>
#include <string>

#include "core/timezone.h"

namespace pf {

class CronSchedule {
 public:
  // Throws pf::UsageError naming the bad field.
  static CronSchedule parse(const std::string& expression);

  // The first matching minute strictly after t, in the process's local time.
  std::time_t next_after(std::time_t t) const;
  // The same in a named zone's wall time (scheduled prompts).
  std::time_t next_after(std::time_t t, const TimeZone& zone) const;
  const std::string& expression() const { return expression_; }

 private:
  bool day_matches(const std::tm& tm) const;

  std::string expression_;
  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> days_;     // 1..31
  std::bitset<13> months_;   // 1..12
  std::bitset<7> weekdays_;  // 0 = Sunday
  bool any_day_ = true, any_weekday_ = true;
};

}  // namespace pf
