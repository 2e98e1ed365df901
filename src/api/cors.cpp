// CORS answers (see cors.h).
#include "api/cors.h"

#include <algorithm>

namespace pf {

CorsAnswer cors_answer(const std::vector<std::string>& allowed_origins, const std::string& origin,
                       const std::string& method, const std::string& requested_method) {
  CorsAnswer a;
  a.preflight = method == "OPTIONS" && !requested_method.empty();
  if (origin.empty()) return a;
  // The answer depends on Origin, so no cache may give one origin's answer to another.
  a.headers.emplace_back("Vary", "Origin");
  bool any = std::find(allowed_origins.begin(), allowed_origins.end(), "*") != allowed_origins.end();
  a.allowed = any || std::find(allowed_origins.begin(), allowed_origins.end(), origin) !=
                         allowed_origins.end();
  if (!a.allowed) return a;
  a.headers.emplace_back("Access-Control-Allow-Origin", any ? "*" : origin);
  if (a.preflight) {
    a.headers.emplace_back("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
    a.headers.emplace_back("Access-Control-Allow-Headers",
                           "Authorization, Content-Type, X-Pilotfish-Tool-Approvals");
    a.headers.emplace_back("Access-Control-Max-Age", "600");
  } else {
    // What a page's script may read besides the basic headers (the AI SDK checks this one).
    a.headers.emplace_back("Access-Control-Expose-Headers", "x-vercel-ai-ui-message-stream");
  }
  return a;
}

}  // namespace pf
