// The tools with side effects, over one workspace (write_file and edit_file also take absolute
// paths outside it, which the permission engine decides on): write_file, edit_file (exact-string
// replacement that refuses ambiguous matches), run_command (bash in the bubblewrap sandbox,
// sandbox.h) and fetch_url (GET with size and time caps; loopback and private addresses refused
// unless allowed). They are offered only where the config enables their kind, and every call
// passes the permission engine first (the transport's before_tool hook): these entries only
// carry out an approved call. Failures are {"error": "..."} results, never exceptions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/sandbox.h"
#include "agent/tool_registry.h"
#include "core/config.h"

namespace pf {

class ActionTools {
 public:
  // root: the workspace (a directory); own: pilotfish's own paths (runtime/own_paths.h), which
  // the write tools refuse and the sandbox hides; permissions: what the sandbox binds writable
  // besides the workspace (add_permitted_binds).
  ActionTools(std::string root, ActionsConfig config, OwnFiles own = {},
              PermissionsConfig permissions = {});

  // Adds the entries of these kinds ("write", "shell", "url") to registry. The entries call
  // back into this object, which must outlive every copy of the registry. exposed: a folder
  // under the own paths that run_command sees read-only (a channel's attachments), or empty.
  void add_to(ToolRegistry& registry, const std::vector<std::string>& kinds,
              const std::string& exposed = {}) const;

  nlohmann::json write_file(const std::string& path, const std::string& content) const;
  nlohmann::json edit_file(const std::string& path, const std::string& old_text,
                           const std::string& new_text, bool replace_all) const;
  nlohmann::json run_command(const std::string& command, int64_t timeout_seconds,
                             const std::string& exposed = {}) const;
  nlohmann::json fetch_url(const std::string& url) const;

  // The absolute path a write names (it need not exist yet), symlinks in its existing part
  // followed: a path relative to the workspace, or an absolute one (outside the workspace too:
  // the permission engine decides on those). nullopt with *why for "..", a symlink as the file,
  // .git, secret names, hidden names outside the workspace and pilotfish's own files.
  std::optional<std::string> resolve_for_write(const std::string& path, std::string* why) const;
  // abs relative to the workspace when inside it, else as is.
  std::string shown_path(const std::string& abs) const;

  const std::string& root() const { return root_; }

 private:
  std::string root_;  // realpath
  ActionsConfig config_;
  OwnFiles own_;
  PermissionsConfig permissions_;
};

// Adds to options the places outside the workspace that the permissions open to run_command:
// permissions.allowPaths and the allow rules write(/absolute) are bound writable, and
// permissions.readPaths read-only (each at its real path). Left out: paths that do not exist, "/", ones inside options.workspace, ones with a
// hidden or secret name, and pilotfish's own (options.own, set first). Never throws.
void add_permitted_binds(const PermissionsConfig& permissions, SandboxOptions& options);

// Whether an IP address (text) is loopback, private, link-local or otherwise not public.
bool is_private_address(const std::string& ip);

}  // namespace pf
