// HTTP header fields as both the client and the server hand them over: (name, value) pairs in
// the order received, looked up without regard to case as RFC 9110 says names compare.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pf {

using HeaderFields = std::vector<std::pair<std::string, std::string>>;

// The first value of the named field, or empty.
std::string header_value(const HeaderFields& fields, std::string_view name);

}  // namespace pf

namespace pf {

// How long a refusing server (429, 503) asked the client to wait, in milliseconds, or -1 when it
// did not say. Read in this order: retry-after-ms (OpenAI), Retry-After (seconds or an HTTP
// date, RFC 9110), X-Ratelimit-Reset (Mattermost: seconds), x-ratelimit-reset-requests and
// x-ratelimit-reset-tokens (OpenAI: durations such as "20ms", "1s", "6m0s"; the longer of the
// two). Values that do not parse, are negative or ask for more than an hour are ignored.
int64_t requested_wait_ms(const HeaderFields& fields);

}  // namespace pf
