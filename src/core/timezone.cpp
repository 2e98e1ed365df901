// TZif reading and POSIX TZ rules (see timezone.h).
#include "core/timezone.h"

#include <cctype>
#include <cstring>

#include "core/error.h"
#include "core/fs.h"

namespace pf {
namespace {

int64_t be(const std::string& d, size_t at, int bytes) {
  if (at + static_cast<size_t>(bytes) > d.size()) throw Error("truncated");
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(d[at + static_cast<size_t>(i)]);
  if (bytes == 4) return static_cast<int32_t>(static_cast<uint32_t>(v));
  return static_cast<int64_t>(v);
}

// Parses "[+-]hh[:mm[:ss]]" at p; returns seconds.
int posix_time(const char*& p) {
  int sign = 1;
  if (*p == '+' || *p == '-') sign = *p++ == '-' ? -1 : 1;
  int h = 0, m = 0, s = 0;
  while (std::isdigit(static_cast<unsigned char>(*p))) h = h * 10 + (*p++ - '0');
  if (*p == ':') {
    ++p;
    while (std::isdigit(static_cast<unsigned char>(*p))) m = m * 10 + (*p++ - '0');
    if (*p == ':') {
      ++p;
      while (std::isdigit(static_cast<unsigned char>(*p))) s = s * 10 + (*p++ - '0');
    }
  }
  return sign * (h * 3600 + m * 60 + s);
}

void skip_name(const char*& p) {
  if (*p == '<') {
    while (*p && *p != '>') ++p;
    if (*p) ++p;
  } else {
    while (std::isalpha(static_cast<unsigned char>(*p))) ++p;
  }
}

int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {  // Howard Hinnant's algorithm
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

}  // namespace

TimeZone TimeZone::load(const std::string& name) {
  TimeZone z;
  z.name_ = name;
  if (name == "UTC" || name == "Etc/UTC" || name == "Z") return z;
  if (name.empty() || name[0] == '/' || name.find("..") != std::string::npos ||
      name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/_+-") != std::string::npos)
    throw UsageError("unknown time zone \"" + name + "\" (use an IANA name such as Europe/Berlin)");
  std::string data;
  try {
    data = read_file("/usr/share/zoneinfo/" + name);
  } catch (const Error&) {
    throw UsageError("unknown time zone \"" + name + "\" (use an IANA name such as Europe/Berlin)");
  }
  try {
    if (data.compare(0, 4, "TZif") != 0) throw Error("not TZif");
    // Skip the version-1 block (32-bit times) to the version-2 one when there is one.
    auto counts = [&](size_t at, int64_t c[6]) {
      for (int i = 0; i < 6; ++i) c[i] = be(data, at + 20 + 4 * static_cast<size_t>(i), 4);
    };
    int64_t c[6];  // isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
    counts(0, c);
    size_t at = 44;
    int tsize = 4;
    if (data[4] >= '2') {
      at += static_cast<size_t>(c[3] * 5 + c[4] * 6 + c[5] + c[2] * 8 + c[1] + c[0]);
      counts(at, c);
      at += 44;
      tsize = 8;
    }
    int64_t timecnt = c[3], typecnt = c[4];
    std::vector<int> types;
    for (int64_t i = 0; i < timecnt; ++i) z.transitions_.push_back(be(data, at + static_cast<size_t>(i * tsize), tsize));
    at += static_cast<size_t>(timecnt * tsize);
    for (int64_t i = 0; i < timecnt; ++i) types.push_back(static_cast<unsigned char>(data.at(at + static_cast<size_t>(i))));
    at += static_cast<size_t>(timecnt);
    std::vector<int> type_offsets;
    for (int64_t i = 0; i < typecnt; ++i) type_offsets.push_back(static_cast<int>(be(data, at + static_cast<size_t>(i * 6), 4)));
    at += static_cast<size_t>(typecnt * 6 + c[5] + c[2] * (tsize + 4) + c[1] + c[0]);
    if (type_offsets.empty()) throw Error("no local time types");
    z.initial_offset_ = type_offsets[0];
    for (int t : types) z.offsets_.push_back(type_offsets.at(static_cast<size_t>(t)));
    // The footer: "\nTZ-rule\n".
    z.std_offset_ = z.offsets_.empty() ? z.initial_offset_ : z.offsets_.back();
    if (tsize == 8 && at < data.size() && data[at] == '\n') {
      std::string footer = data.substr(at + 1, data.find('\n', at + 1) - at - 1);
      const char* p = footer.c_str();
      skip_name(p);
      if (*p) {
        z.std_offset_ = -posix_time(p);
        if (*p && *p != ',') {
          skip_name(p);
          z.dst_offset_ = z.std_offset_ + 3600;
          if (*p && *p != ',') z.dst_offset_ = -posix_time(p);
          auto rule = [&](Rule& r) {
            if (*p != ',' || *(p + 1) != 'M') return false;
            p += 2;
            r.month = static_cast<int>(std::strtol(p, const_cast<char**>(&p), 10));
            if (*p++ != '.') return false;
            r.week = static_cast<int>(std::strtol(p, const_cast<char**>(&p), 10));
            if (*p++ != '.') return false;
            r.weekday = static_cast<int>(std::strtol(p, const_cast<char**>(&p), 10));
            if (*p == '/') r.seconds = posix_time(++p);
            return r.month >= 1 && r.month <= 12 && r.week >= 1 && r.week <= 5 && r.weekday >= 0 && r.weekday <= 6;
          };
          z.has_dst_ = rule(z.dst_start_) && rule(z.dst_end_);
        }
      }
    }
  } catch (const Error& e) {
    throw UsageError("time zone " + name + ": its zoneinfo file is not usable (" + e.what() + ")");
  }
  return z;
}

std::time_t TimeZone::rule_change(int year, const Rule& r, int offset_before) const {
  // The w-th (5: last) weekday d of month m, at the rule's local time.
  int64_t first = days_from_civil(year, static_cast<unsigned>(r.month), 1);
  int first_wd = static_cast<int>(((first % 7) + 11) % 7);  // 1970-01-01 was a Thursday (4)
  int64_t day = first + (r.weekday - first_wd + 7) % 7 + 7 * (r.week - 1);
  int next_month_year = r.month == 12 ? year + 1 : year;
  int64_t next_first = days_from_civil(next_month_year, static_cast<unsigned>(r.month % 12 + 1), 1);
  while (day >= next_first) day -= 7;
  return static_cast<std::time_t>(day * 86400 + r.seconds - offset_before);
}

int TimeZone::offset_at(std::time_t t) const {
  if (!transitions_.empty() && t < transitions_.front()) return initial_offset_;
  if (!transitions_.empty() && t < transitions_.back()) {
    size_t lo = 0, hi = transitions_.size() - 1;  // the last transition at or before t
    while (lo < hi) {
      size_t mid = (lo + hi + 1) / 2;
      if (transitions_[mid] <= t) lo = mid; else hi = mid - 1;
    }
    return offsets_[lo];
  }
  if (!has_dst_) return std_offset_;
  std::tm tm{};
  std::time_t shifted = t + std_offset_;
  gmtime_r(&shifted, &tm);
  int year = tm.tm_year + 1900;
  std::time_t start = rule_change(year, dst_start_, std_offset_);
  std::time_t end = rule_change(year, dst_end_, dst_offset_);
  bool dst = start < end ? (t >= start && t < end) : !(t >= end && t < start);  // southern zones
  return dst ? dst_offset_ : std_offset_;
}

}  // namespace pf
