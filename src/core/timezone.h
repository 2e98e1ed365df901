// IANA time zones, read from the system's TZif files (/usr/share/zoneinfo, RFC 8536): the UTC
// offset in force at any instant, from the file's transitions and, past the last one, its POSIX
// TZ rule (the usual "Mm.w.d/time" daylight-saving form). For scheduled prompts, whose cron
// times are wall-clock times in a named zone; the process's own TZ is never touched.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

namespace pf {

class TimeZone {
 public:
  // "UTC", or a zone name such as "Europe/Berlin". Throws pf::UsageError for an unknown name
  // (or one that tries to leave the zoneinfo directory) and for a file that is not TZif.
  static TimeZone load(const std::string& name);

  // Seconds east of UTC in force at t.
  int offset_at(std::time_t t) const;
  const std::string& name() const { return name_; }

 private:
  struct Rule {  // a POSIX TZ "Mm.w.d/time" change
    int month = 0, week = 0, weekday = 0, seconds = 7200;
  };
  std::time_t rule_change(int year, const Rule& rule, int offset_before) const;

  std::string name_;
  std::vector<int64_t> transitions_;  // UTC seconds, ascending
  std::vector<int> offsets_;          // the offset from each transition on
  int initial_offset_ = 0;
  // Past the last transition: standard and daylight offsets and when daylight time starts/ends.
  int std_offset_ = 0, dst_offset_ = 0;
  bool has_dst_ = false;
  Rule dst_start_, dst_end_;
};

}  // namespace pf
