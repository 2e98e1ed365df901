// pilotfish's own paths (see own_paths.h).
#include "runtime/own_paths.h"

#include <dirent.h>

#include <filesystem>

#include "agent/action_tools.h"
#include "core/error.h"
#include "core/fs.h"
#include "index/file_filter.h"
#include "store/store.h"

namespace pf {

std::string attachments_folder(const std::string& channel_id) {
  return ".pilotfish/attachments/" + channel_id;
}

void make_own_folder(const std::string& workspace) {
  std::string folder = workspace + "/.pilotfish";
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec || std::filesystem::exists(folder + "/.gitignore", ec)) return;
  try {
    write_file_atomic(folder + "/.gitignore", "# pilotfish's own files: never committed\n*\n");
  } catch (const Error&) {
  }
}

OwnFiles own_paths(const Config& config, const std::string& db_path, const std::string& workspace) {
  OwnFiles own;
  if (!config.source.empty()) own.add_file(config.source);
  own.add_store(db_path);
  // What the components above keep beside the store (the bridge's state).
  for (const auto& [key, section] : config.sections)
    for (const std::string& store : section->own_stores(db_path)) own.add_store(store);
  if (workspace.empty()) return own;
  own.add_folder(workspace + "/.pilotfish");
  own.add_file(workspace + "/mcp-config.json");
  // The workspace's own secrets at its top (.env, .env.local, ...): deeper ones are refused by
  // name by every tool, but the sandbox sees only what it is told to hide.
  if (DIR* d = ::opendir(workspace.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      if (is_secret_dir(name)) own.add_folder(workspace + "/" + name);
      else if (is_secret_file(name)) own.add_file(workspace + "/" + name);
    }
    ::closedir(d);
  }
  return own;
}

HookContext hook_context(const Config& config, const std::string& db_path,
                         const std::string& workspace) {
  HookContext c;
  c.workspace = workspace;
  c.sandbox.workspace = workspace;
  c.sandbox.own = own_paths(config, db_path, workspace);
  add_permitted_binds(config.permissions, c.sandbox);
  c.sandbox.network = config.actions.network;
  return c;
}

}  // namespace pf
