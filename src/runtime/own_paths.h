// The one place that knows every file and folder pilotfish creates or reads as its own: the
// index store and its side files, what the config's sections keep beside it (the bridge's
// state: ConfigSection::own_stores), the config file, each workspace's .pilotfish folder (chat
// attachments), its MCP config and its .env. The agent's tools and the sandbox refuse or hide
// exactly this list (agent/own_files.h); a new kind of own file is added here, or by its
// section's own_stores, and nowhere else.
#pragma once

#include <string>

#include "agent/hooks.h"
#include "agent/own_files.h"
#include "core/config.h"

namespace pf {

// pilotfish's own paths as seen from one workspace (the repository or channel working
// directory an agent's tools act in): config.source, the store at db_path, each section's own
// stores, and the workspace's .pilotfish/, mcp-config.json and top-level .env files. Never
// throws.
OwnFiles own_paths(const Config& config, const std::string& db_path, const std::string& workspace);

// Where a workspace's hooks run (agent/hooks.h): in the workspace, a workspace's own hooks in
// run_command's sandbox (the own paths above hidden, the permitted paths bound, the network as
// actions.network says). Never throws.
HookContext hook_context(const Config& config, const std::string& db_path,
                         const std::string& workspace);

// The folder under workspace where the bridge puts one channel's attachments (relative).
std::string attachments_folder(const std::string& channel_id);

// Creates workspace/.pilotfish/ (pilotfish's folder in a workspace, never indexed) with a
// .gitignore of "*" in it, so that git neither shows nor adds what is kept there. Never throws:
// a folder that cannot be made is left to the write that follows to report.
void make_own_folder(const std::string& workspace);

}  // namespace pf
