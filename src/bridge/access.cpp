// Access control (see access.h).
#include "bridge/access.h"

#include <algorithm>

#include "core/text.h"

namespace pf {

bool access_allowed(const PlatformConfig& platform, const BotConfig& bot,
                    const std::string& username, const std::string& user_id) {
  std::string name = ascii_lower(username), id = ascii_lower(user_id);
  if (!name.empty() && name.front() == '@') name.erase(0, 1);
  if (name.empty() && id.empty()) return false;
  auto listed = [&](const AccessConfig& a) {
    for (const std::string& u : a.users)
      if ((!name.empty() && u == name) || (!id.empty() && u == id)) return true;
    return false;
  };
  const AccessConfig* levels[] = {&platform.access, &bot.access};
  bool configured = false, any_allowlist = false, allowlisted = false;
  for (const AccessConfig* a : levels) {
    if (a->mode.empty()) continue;
    configured = true;
    if (a->mode == "blocklist" && listed(*a)) return false;
    if (a->mode == "allowlist") {
      any_allowlist = true;
      allowlisted = allowlisted || listed(*a);
    }
  }
  // An allowlist at either level admits only the listed; "open" and blocklists admit the rest.
  return configured && (any_allowlist ? allowlisted : true);
}

}  // namespace pf
