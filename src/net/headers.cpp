// Header lookup (see headers.h).
#include "net/headers.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>

namespace pf {

std::string header_value(const HeaderFields& fields, std::string_view name) {
  for (const auto& [k, v] : fields) {
    if (k.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < k.size() && same; ++i)
      same = std::tolower(static_cast<unsigned char>(k[i])) ==
             std::tolower(static_cast<unsigned char>(name[i]));
    if (same) return v;
  }
  return {};
}

namespace {

constexpr int64_t kMaxWaitMs = 3600 * 1000;

// A plain non-negative number ("2", "0.5") times scale, in whole milliseconds; -1 if it is not
// one or is over an hour.
int64_t number_ms(const std::string& v, double scale) {
  if (v.empty() || v.size() > 16) return -1;
  char* end = nullptr;
  double n = std::strtod(v.c_str(), &end);
  if (end != v.c_str() + v.size() || !(n >= 0) || n * scale > kMaxWaitMs) return -1;
  return static_cast<int64_t>(n * scale);
}

// A Go-style duration ("20ms", "1.5s", "6m0s", "1h2m"); -1 if it is not one.
int64_t duration_ms(const std::string& v) {
  if (v.empty() || v.size() > 32) return -1;
  double total = 0;
  size_t i = 0;
  while (i < v.size()) {
    char* end = nullptr;
    double n = std::strtod(v.c_str() + i, &end);
    size_t used = static_cast<size_t>(end - (v.c_str() + i));
    if (used == 0 || !(n >= 0)) return -1;
    i += used;
    std::string unit;
    while (i < v.size() && std::isalpha(static_cast<unsigned char>(v[i]))) unit += v[i++];
    if (unit == "ms") total += n;
    else if (unit == "s") total += n * 1000;
    else if (unit == "m") total += n * 60000;
    else if (unit == "h") total += n * 3600000;
    else return -1;
  }
  return total > kMaxWaitMs ? -1 : static_cast<int64_t>(total);
}

// An IMF-fixdate ("Wed, 21 Oct 2015 07:28:00 GMT") as milliseconds from now; -1 otherwise.
int64_t http_date_ms(const std::string& v) {
  std::tm tm{};
  const char* end = strptime(v.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (!end || *end) return -1;
  time_t at = timegm(&tm);
  int64_t ms = (static_cast<int64_t>(at) - static_cast<int64_t>(std::time(nullptr))) * 1000;
  return ms > kMaxWaitMs ? -1 : std::max<int64_t>(ms, 0);
}

}  // namespace

int64_t requested_wait_ms(const HeaderFields& fields) {
  if (int64_t ms = number_ms(header_value(fields, "retry-after-ms"), 1); ms >= 0) return ms;
  std::string after = header_value(fields, "retry-after");
  if (int64_t ms = number_ms(after, 1000); ms >= 0) return ms;
  if (int64_t ms = http_date_ms(after); ms >= 0) return ms;
  if (int64_t ms = number_ms(header_value(fields, "x-ratelimit-reset"), 1000); ms >= 0) return ms;
  return std::max(duration_ms(header_value(fields, "x-ratelimit-reset-requests")),
                  duration_ms(header_value(fields, "x-ratelimit-reset-tokens")));
}

}  // namespace pf
