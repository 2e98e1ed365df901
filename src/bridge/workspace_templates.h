// Starting files for a new workspace (a channel's folder made by create_project, a bot's own
// folder for its DMs): AGENTS.md (what the agent is for, read into every answer) and MEMORY.md
// (its notes, kept by memory.h), filled from templates with placeholders: {{bot}}, {{channel}},
// {{workspace}}, {{repository}}, {{purpose}} and {{date}} (an unknown one stays as written).
// A file that exists is never overwritten. A template of the same name in the templates folder
// (by default <user config>/templates, ~/.config/pilotfish/templates/) replaces the built-in one.
#pragma once

#include <string>
#include <vector>

namespace pf {

struct WorkspaceVars {
  std::string bot, channel, workspace, repository, purpose;
};

// The text with each known {{name}} replaced.
std::string fill_template(const std::string& text, const WorkspaceVars& vars);

// Writes AGENTS.md and MEMORY.md into dir (made if missing) where they are not there yet;
// returns the names written. template_dir empty: the default folder. Throws pf::Error when the
// folder or a file cannot be written, or a template cannot be read.
std::vector<std::string> init_workspace(const std::string& dir, const WorkspaceVars& vars,
                                        const std::string& template_dir = "");

// <user config>/templates, or "" when there is no user config folder.
std::string default_template_dir();

}  // namespace pf
