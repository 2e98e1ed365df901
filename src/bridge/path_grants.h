// Paths outside its workspaces that an admin opened to a bot from chat (grant_path_access,
// admin_tools.h): "read" binds the folder read-only into run_command's sandbox; "write" also
// binds it writable and lets write_file and edit_file write there without asking (as
// permissions.allowPaths does for every bot). Kept in the state store's settings, one JSON list
// per bot ("pathGrants:<bot>"), so they survive restarts; revoke_path_access removes one.
// Home folders themselves, hidden folders (~/.ssh), system folders (/etc, /proc, ...), "/" and
// anything holding or inside pilotfish's own files are never granted.
//
// Threads: the bridge's network thread. Errors: the state store's pf::Error; an unreadable
// stored list reads as no grants (and is logged).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/own_files.h"
#include "bridge/state_store.h"
#include "core/config.h"

namespace pf {

struct PathGrant {
  std::string path;  // absolute, symlinks resolved
  std::string mode;  // "read" or "write"
  std::string granted_by;
  int64_t at_ms = 0;
};

class PathGrants {
 public:
  explicit PathGrants(StateStore& state) : state_(state) {}

  // The bot's grants, oldest first.
  std::vector<PathGrant> of(const std::string& bot);
  // Adds a grant (a checked path: grantable_path), replacing the mode of one for the same path.
  void grant(const std::string& bot, const PathGrant& grant);
  // false when the bot had no grant for the path.
  bool revoke(const std::string& bot, const std::string& path);
  // base with the bot's grants added (write: allowPaths; read: readPaths). The reference stays
  // valid until the next grant, revoke or forget() (a turn copies what it keeps).
  const PermissionsConfig& permissions_for(const std::string& bot, const PermissionsConfig& base);
  // Drops what permissions_for made (the config's permissions changed).
  void forget() { cache_.clear(); }

 private:
  void write(const std::string& bot, const std::vector<PathGrant>& grants);

  StateStore& state_;
  std::map<std::string, PermissionsConfig> cache_;  // by bot
};

// The real path a grant of path would open, or nullopt with *why: not absolute, not an existing
// folder, "/", a system folder or one under it, a home folder itself, a hidden folder or one
// under it, or a folder that holds or lies under one of own's paths. home: the user's home
// folder ($HOME), refused itself.
std::optional<std::string> grantable_path(const std::string& path, const OwnFiles& own,
                                          const std::string& home, std::string* why);

}  // namespace pf
