// Custom agents: `*.agent.md` files, as GitHub Copilot writes them, that give the model a role.
// Front matter `name`, `description`, optional `tools` (which tools the model is offered) and
// `model` (which model answers); the body is the agent's instructions. They are found in
// ~/.config/pilotfish/agents/, ~/.copilot/agents/, <workspace>/.github/agents/ and
// <workspace>/agents/, a later folder's agent replacing an earlier one of the same name. A file
// that cannot be read is a problem to report, never fatal.
//
// Threads: plain values and functions; discovery reads the file system.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pf {

// A definition file that was not loaded, and why (for /agents, /skills and `bridge check`).
struct DefinitionProblem {
  std::string path;
  std::string message;
};

struct AgentDefinition {
  std::string name;         // front matter `name`, else the file name without ".agent.md"
  std::string description;  // front matter `description`, else the body's first line
  // Tool patterns (see agent_allows_tool); unset: every tool.
  std::optional<std::vector<std::string>> tools;
  std::string model;         // a model name as /model takes it; empty: the channel's
  std::string instructions;  // the body
  std::string path;          // the file it came from
};

struct AgentCatalog {
  std::vector<AgentDefinition> agents;  // sorted by name
  std::vector<DefinitionProblem> problems;
  // The agent of that name (case-insensitive); nullptr when none.
  const AgentDefinition* find(std::string_view name) const;
};

// Files and bodies larger than this are refused (an agent's instructions go into every request).
inline constexpr size_t kMaxAgentFileBytes = 64 * 1024;

// The folders searched for a workspace, lowest precedence first (the user's, then the
// workspace's; a folder that does not exist is skipped). workspace may be empty.
std::vector<std::string> agent_dirs(const std::string& workspace);

// Reads one file's text; file_name (e.g. "reviewer.agent.md") gives the default name. Throws
// pf::Error for bad front matter, a name with other than letters, digits, ' ', '.', '-', '_'
// (1-64 of them), a `tools` or `model` of the wrong shape, an empty body or an oversized file.
AgentDefinition parse_agent_file(std::string_view text, const std::string& file_name);

// Every `*.agent.md` directly in the folders, later folders winning by name. Unreadable or
// malformed files (and symlinks that leave their folder) become problems.
AgentCatalog discover_agents(const std::vector<std::string>& dirs);

// Whether a tool pattern of an agent's `tools` names the tool: "*" every tool; an exact name;
// Copilot's aliases (read: read_file, list_directory; search: search_code, grep,
// list_directory; edit: write_file, edit_file; execute, shell, bash: run_command; web, fetch:
// fetch_url); an MCP server's tool as "server/tool" or all of its tools as "server/*"; a
// trailing '*' as a prefix. Case-insensitive.
bool agent_tool_matches(std::string_view pattern, std::string_view tool);

// Whether an agent offers the tool: no `tools` list, or one of its patterns matches.
bool agent_allows_tool(const AgentDefinition& agent, std::string_view tool);

}  // namespace pf
