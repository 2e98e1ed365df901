// The commands no rule, mode or person may approve (spec §8 check 1), decided on the parsed
// command line (shell_command.h), so quoting, flag spellings, absolute paths, wrappers and
// compound commands do not hide them: recursive rm or chmod/chown of the root, the home folder or
// a system directory or anything under one, of a home folder or its dot folders, mkfs, writes
// to disk devices, the fork bomb, `launchctl unload`, and stopping, disabling or removing
// pilotfish's own service (systemctl, service, pkill/killall, `pilotfish uninstall-service`,
// rm of its unit file).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "policy/shell_command.h"

namespace pf {

// Why the command line is refused outright, or nullopt. A target inside one of workspaces
// (absolute, lexically normal paths) is the workspace's own to change, wherever it lies (/srv,
// /var/lib/...), unless that workspace is "/" or a home folder itself. Thread-safe, never throws.
std::optional<std::string> hard_deny(const ShellParse& parse,
                                     const std::vector<std::string>& workspaces = {});

}  // namespace pf
