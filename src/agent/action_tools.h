// The tools with side effects, over one workspace: write_file, edit_file (exact-string
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
  // root: the workspace (a directory); hidden: paths to keep out of the sandbox (the store and
  // the config, when they are inside the workspace).
  ActionTools(std::string root, ActionsConfig config, std::vector<std::string> hidden = {});

  // Adds the entries of these kinds ("write", "shell", "url") to registry. The entries call
  // back into this object, which must outlive every copy of the registry.
  void add_to(ToolRegistry& registry, const std::vector<std::string>& kinds) const;

  nlohmann::json write_file(const std::string& path, const std::string& content) const;
  nlohmann::json edit_file(const std::string& path, const std::string& old_text,
                           const std::string& new_text, bool replace_all) const;
  nlohmann::json run_command(const std::string& command, int64_t timeout_seconds) const;
  nlohmann::json fetch_url(const std::string& url) const;

  // The absolute path a workspace-relative path names, for writing (it need not exist yet), or
  // nullopt with *why: "..", absolute paths, symlinks out, .git and secret names are refused.
  std::optional<std::string> resolve_for_write(const std::string& path, std::string* why) const;

  const std::string& root() const { return root_; }

 private:
  std::string root_;  // realpath
  ActionsConfig config_;
  std::vector<std::string> hidden_;
};

// Whether an IP address (text) is loopback, private, link-local or otherwise not public.
bool is_private_address(const std::string& ip);

}  // namespace pf
