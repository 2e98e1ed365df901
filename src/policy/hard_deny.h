// The commands no rule, mode or person may approve (spec §8 check 1), decided on the parsed
// command line (shell_command.h), so quoting, flag spellings, absolute paths, wrappers and
// compound commands do not hide them: recursive rm or chmod/chown of the root, the home folder or
// a system directory, mkfs, writes to disk devices, the fork bomb, `launchctl unload`.
#pragma once

#include <optional>
#include <string>

#include "policy/shell_command.h"

namespace pf {

// Why the command line is refused outright, or nullopt. Thread-safe, never throws.
std::optional<std::string> hard_deny(const ShellParse& parse);

}  // namespace pf
