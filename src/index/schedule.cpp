// Cron expressions (see schedule.h).
#include "index/schedule.h"

#include <sstream>
#include <vector>

#include "core/error.h"

namespace pf {
namespace {

int parse_number(const std::string& text, const std::string& field) {
  if (text.empty() || text.size() > 3 || text.find_first_not_of("0123456789") != std::string::npos)
    throw UsageError("cron " + field + ": \"" + text + "\" is not a number");
  return std::stoi(text);
}

// Sets the bits of one field; lo..hi is the field's range.
template <size_t N>
bool parse_field(const std::string& text, const std::string& field, int lo, int hi,
                 std::bitset<N>& bits) {
  bool star = false;
  std::stringstream parts(text);
  std::string part;
  while (std::getline(parts, part, ',')) {
    int step = 1;
    if (size_t slash = part.find('/'); slash != std::string::npos) {
      step = parse_number(part.substr(slash + 1), field);
      if (step < 1) throw UsageError("cron " + field + ": a step must be at least 1");
      part = part.substr(0, slash);
    }
    int from = lo, to = hi;
    if (part == "*") {
      star = star || step == 1;
    } else if (size_t dash = part.find('-'); dash != std::string::npos) {
      from = parse_number(part.substr(0, dash), field);
      to = parse_number(part.substr(dash + 1), field);
    } else {
      from = parse_number(part, field);
      to = step > 1 ? hi : from;
    }
    if (from < lo || to > hi || from > to)
      throw UsageError("cron " + field + ": \"" + part + "\" is outside " + std::to_string(lo) +
                       "-" + std::to_string(hi));
    for (int v = from; v <= to; v += step) bits.set(static_cast<size_t>(v));
  }
  if (text.empty() || text.back() == ',') throw UsageError("cron " + field + ": empty value");
  return star;
}

}  // namespace

CronSchedule CronSchedule::parse(const std::string& expression) {
  std::istringstream in(expression);
  std::vector<std::string> fields;
  for (std::string f; in >> f;) fields.push_back(f);
  if (fields.size() != 5)
    throw UsageError("cron \"" + expression +
                     "\": expected 5 fields (minute hour day-of-month month day-of-week)");
  CronSchedule s;
  s.expression_ = expression;
  parse_field(fields[0], "minute", 0, 59, s.minutes_);
  parse_field(fields[1], "hour", 0, 23, s.hours_);
  s.any_day_ = parse_field(fields[2], "day-of-month", 1, 31, s.days_);
  parse_field(fields[3], "month", 1, 12, s.months_);
  std::bitset<8> weekdays;
  s.any_weekday_ = parse_field(fields[4], "day-of-week", 0, 7, weekdays);
  for (size_t d = 0; d < 7; ++d) s.weekdays_[d] = weekdays[d];
  if (weekdays[7]) s.weekdays_[0] = true;
  return s;
}

std::time_t CronSchedule::next_after(std::time_t t) const {
  std::tm tm{};
  localtime_r(&t, &tm);
  tm.tm_sec = 0;
  tm.tm_min += 1;
  tm.tm_isdst = -1;
  // At most four years of days (29 February) at one step per non-matching day or hour.
  for (int guard = 0; guard < 4 * 366 * 24 * 60; ++guard) {
    std::time_t candidate = std::mktime(&tm);
    localtime_r(&candidate, &tm);
    if (!months_[static_cast<size_t>(tm.tm_mon + 1)]) {
      tm.tm_mon += 1;
      tm.tm_mday = 1;
      tm.tm_hour = 0;
      tm.tm_min = 0;
      continue;
    }
    if (!day_matches(tm)) {
      tm.tm_mday += 1;
      tm.tm_hour = 0;
      tm.tm_min = 0;
      continue;
    }
    if (!hours_[static_cast<size_t>(tm.tm_hour)]) {
      tm.tm_hour += 1;
      tm.tm_min = 0;
      continue;
    }
    if (!minutes_[static_cast<size_t>(tm.tm_min)]) {
      tm.tm_min += 1;
      continue;
    }
    return candidate;
  }
  throw Error("cron \"" + expression_ + "\" never matches");
}

bool CronSchedule::day_matches(const std::tm& tm) const {
  bool day_ok = days_[static_cast<size_t>(tm.tm_mday)];
  bool weekday_ok = weekdays_[static_cast<size_t>(tm.tm_wday)];
  return any_day_ && any_weekday_ ? true
         : any_day_               ? weekday_ok
         : any_weekday_           ? day_ok
                                  : day_ok || weekday_ok;
}

std::time_t CronSchedule::next_after(std::time_t t, const TimeZone& zone) const {
  // Minutes in UTC, each read as the zone's wall time: a time a DST change skips never
  // matches, and whole local days and hours that cannot match are stepped over.
  std::time_t c = (t / 60 + 1) * 60;
  for (int guard = 0; guard < 4 * 366 * 24 * 60; ++guard) {
    std::time_t local = c + zone.offset_at(c);
    std::tm tm{};
    gmtime_r(&local, &tm);
    if (!months_[static_cast<size_t>(tm.tm_mon + 1)] || !day_matches(tm)) {
      c += 86400 - local % 86400;
    } else if (!hours_[static_cast<size_t>(tm.tm_hour)]) {
      c += 3600 - local % 3600;
    } else if (!minutes_[static_cast<size_t>(tm.tm_min)]) {
      c += 60;
    } else {
      return c;
    }
  }
  throw Error("cron \"" + expression_ + "\" never matches");
}

}  // namespace pf
