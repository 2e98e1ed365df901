// Skills: folders holding a `SKILL.md` (front matter `name`, `description`; the body how to do
// something) and the files it refers to. The model is told only each skill's name and
// description; it loads a skill's text, or a file of its folder, through the read-only
// `use_skill` tool when a task needs it, so fifty skills cost fifty lines of prompt. Found in
// ~/.config/pilotfish/skills/, ~/.agents/skills/, <workspace>/.github/skills/ and
// <workspace>/.agents/skills/, a later folder's skill replacing an earlier one of the same name.
//
// Threads: plain values and functions; discovery and the tool read the file system (the tool
// from any worker thread).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "agent/custom_agents.h"
#include "agent/tool_registry.h"

namespace pf {

struct Skill {
  std::string name;         // front matter `name`, else the folder's name
  std::string description;  // front matter `description` (required)
  std::string dir;          // the skill's folder, resolved (no links)
};

struct SkillCatalog {
  std::vector<Skill> skills;  // sorted by name
  std::vector<DefinitionProblem> problems;
  // The skill of that name (case-insensitive); nullptr when none.
  const Skill* find(std::string_view name) const;
};

inline constexpr size_t kMaxSkillFileBytes = 256 * 1024;  // SKILL.md or a file use_skill reads

// The folders searched for a workspace, lowest precedence first; workspace may be empty.
std::vector<std::string> skill_dirs(const std::string& workspace);

// Reads a SKILL.md's text; folder_name gives the default name. Throws pf::Error for bad front
// matter, a missing or over-1,024-character description, or a name with other than letters,
// digits, '.', '-', '_' (1-64 of them).
Skill parse_skill_file(std::string_view text, const std::string& folder_name);

// Every <dir>/<folder>/SKILL.md, later dirs winning by name; bad ones become problems.
SkillCatalog discover_skills(const std::vector<std::string>& dirs);

// What `/skills enable|disable WORDS` names, against the catalog: "all" every skill; else each
// word an exact name (case-insensitive), else the one skill whose name contains it. Words that
// name none or several are listed in *unmatched with why ("x: no skill", "x: 2 skills match").
std::vector<std::string> match_skill_names(const SkillCatalog& catalog, const std::string& words,
                                           std::vector<std::string>* unmatched);

// The system prompt's block listing the skills (empty when there are none).
std::string skills_prompt(const std::vector<Skill>& skills);

// The `use_skill` tool over these skills: {name, file?}. Without file: SKILL.md's body and the
// folder's other files; with file: that file's text, a path relative to the skill's folder that
// may not leave it (no "..", absolute paths or links out), name a secret or exceed
// kMaxSkillFileBytes. No permission needed: it only reads what the operator put there.
ToolEntry use_skill_tool(std::vector<Skill> skills);

}  // namespace pf
