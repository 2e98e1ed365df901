// Who may talk to a bot (spec §4): allowlists and blocklists at the platform and the bot level.
// Deny by default: with neither level configured nobody may. A blocklist at either level wins;
// then, if either level has an allowlist, only users on one of them (the union) get in; else
// ("open", blocklists) everyone does.
#pragma once

#include <string>

#include "bridge/bridge_config.h"

namespace pf {

// username as the platform gives it (case-insensitive, a leading '@' ignored); a list entry
// also matches the user's id (Slack's U..., stable where a username can change). An empty name
// and id (a lookup that failed) is denied.
bool access_allowed(const PlatformConfig& platform, const BotConfig& bot,
                    const std::string& username, const std::string& user_id = "");

}  // namespace pf
