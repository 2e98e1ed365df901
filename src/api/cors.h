// Cross-origin use of the API from a page on another origin (CORS, the Fetch standard): off
// unless the config lists the page's origin (server.corsOrigins; "*" for any). The API's only
// credential is the bearer key a page sends itself, so no cookie rides along and credentials
// are never allowed.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace pf {

struct CorsAnswer {
  bool preflight = false;  // an OPTIONS request asking whether the real one may be sent
  bool allowed = false;    // the origin may read the answer
  std::vector<std::pair<std::string, std::string>> headers;  // for the response, allowed or not
};

// What to answer a request with this Origin header ("" for none: not a cross-origin request),
// method and Access-Control-Request-Method (a preflight's) to, given the configured origins.
CorsAnswer cors_answer(const std::vector<std::string>& allowed_origins, const std::string& origin,
                       const std::string& method, const std::string& requested_method);

}  // namespace pf
