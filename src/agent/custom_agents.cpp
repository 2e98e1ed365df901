// Custom agents (see custom_agents.h): `*.agent.md` read through core's front matter reader,
// discovered folder by folder.
#include "agent/custom_agents.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "core/error.h"
#include "core/front_matter.h"
#include "core/fs.h"
#include "core/text.h"

namespace pf {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kSuffix = ".agent.md";

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == ' ' || c == '.' || c == '-' ||
          c == '_'))
      return false;
  return name.front() != ' ' && name.back() != ' ';
}

std::string first_line(std::string_view body) {
  size_t at = 0;
  while (at < body.size()) {
    size_t end = body.find('\n', at);
    std::string line = trim_space(body.substr(at, end == std::string_view::npos ? body.size() - at
                                                                                : end - at));
    while (!line.empty() && line.front() == '#') line.erase(0, 1);
    line = trim_space(line);
    if (!line.empty()) return line.substr(0, 200);
    if (end == std::string_view::npos) break;
    at = end + 1;
  }
  return "";
}

}  // namespace

const AgentDefinition* AgentCatalog::find(std::string_view name) const {
  std::string want = ascii_lower(trim_space(name));
  for (const AgentDefinition& a : agents)
    if (ascii_lower(a.name) == want) return &a;
  return nullptr;
}

std::vector<std::string> agent_dirs(const std::string& workspace) {
  std::vector<std::string> dirs;
  if (std::string c = user_config_dir(); !c.empty()) dirs.push_back(c + "/agents");
  if (std::string h = home_dir(); !h.empty()) dirs.push_back(h + "/.copilot/agents");
  if (!workspace.empty()) {
    dirs.push_back(workspace + "/.github/agents");
    dirs.push_back(workspace + "/agents");
  }
  return dirs;
}

AgentDefinition parse_agent_file(std::string_view text, const std::string& file_name) {
  if (text.size() > kMaxAgentFileBytes)
    throw Error("the file is over " + std::to_string(kMaxAgentFileBytes / 1024) + " KiB");
  FrontMatter fm = parse_front_matter(text);
  AgentDefinition a;
  std::string stem = file_name;
  if (stem.size() > kSuffix.size() && stem.compare(stem.size() - kSuffix.size(), kSuffix.size(),
                                                   kSuffix) == 0)
    stem.resize(stem.size() - kSuffix.size());
  if (fm.lists.count("name") || fm.nested.count("name")) throw Error("`name` must be a string");
  a.name = trim_space(fm.get("name", stem));
  if (!valid_name(a.name))
    throw Error("the name \"" + a.name.substr(0, 80) +
                "\" is not 1-64 letters, digits, spaces, '.', '-' or '_'");
  if (fm.lists.count("description") || fm.nested.count("description"))
    throw Error("`description` must be a string");
  a.instructions = trim_space(fm.body);
  if (a.instructions.empty()) throw Error("the agent has no instructions (the file's body is empty)");
  a.description = trim_space(fm.get("description"));
  if (a.description.empty()) a.description = first_line(a.instructions);
  if (fm.nested.count("tools")) throw Error("`tools` must be a list of tool names");
  if (auto it = fm.lists.find("tools"); it != fm.lists.end()) {
    a.tools = it->second;
  } else if (auto s = fm.scalars.find("tools"); s != fm.scalars.end()) {
    // "tools: read, search" as a convenience; an empty value offers no tools at all.
    std::vector<std::string> list;
    size_t at = 0;
    while (at <= s->second.size()) {
      size_t comma = s->second.find(',', at);
      std::string item = trim_space(std::string_view(s->second).substr(
          at, comma == std::string::npos ? std::string::npos : comma - at));
      if (!item.empty()) list.push_back(item);
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    a.tools = list;
  }
  if (fm.lists.count("model") || fm.nested.count("model")) throw Error("`model` must be a string");
  a.model = trim_space(fm.get("model"));
  return a;
}

AgentCatalog discover_agents(const std::vector<std::string>& dirs) {
  AgentCatalog out;
  std::map<std::string, AgentDefinition> by_name;  // lower-cased name
  for (const std::string& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> files;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (name.size() > kSuffix.size() &&
          name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0)
        files.push_back(it->path());
    }
    if (ec) {
      out.problems.push_back({dir, "cannot list the folder: " + ec.message()});
      continue;
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      try {
        std::error_code fe;
        fs::path real = fs::canonical(f, fe);
        fs::path real_dir = fs::canonical(dir, fe);
        if (fe) throw Error("cannot resolve the path: " + fe.message());
        if (real.parent_path() != real_dir)
          throw Error("a link that leaves its folder is not followed");
        if (!fs::is_regular_file(real, fe)) throw Error("not a regular file");
        if (fs::file_size(real, fe) > kMaxAgentFileBytes)
          throw Error("the file is over " + std::to_string(kMaxAgentFileBytes / 1024) + " KiB");
        AgentDefinition a = parse_agent_file(read_file(real.string()), f.filename().string());
        a.path = f.string();
        by_name[ascii_lower(a.name)] = std::move(a);
      } catch (const Error& e) {
        out.problems.push_back({f.string(), e.what()});
      }
    }
  }
  for (auto& [key, a] : by_name) out.agents.push_back(std::move(a));
  return out;
}

bool agent_tool_matches(std::string_view pattern_in, std::string_view tool_in) {
  std::string pattern = ascii_lower(trim_space(pattern_in)), tool = ascii_lower(tool_in);
  if (pattern == "*" || pattern == tool) return true;
  static const std::map<std::string, std::vector<std::string>> kAliases = {
      {"read", {"read_file", "list_directory"}},
      {"search", {"search_code", "grep", "list_directory"}},
      {"edit", {"write_file", "edit_file"}},
      {"execute", {"run_command"}},
      {"shell", {"run_command"}},
      {"bash", {"run_command"}},
      {"web", {"fetch_url"}},
      {"fetch", {"fetch_url"}},
  };
  if (auto it = kAliases.find(pattern); it != kAliases.end())
    return std::find(it->second.begin(), it->second.end(), tool) != it->second.end();
  // MCP tools are registered as server__tool.
  if (size_t slash = pattern.find('/'); slash != std::string::npos)
    pattern = pattern.substr(0, slash) + "__" + pattern.substr(slash + 1);
  if (!pattern.empty() && pattern.back() == '*')
    return tool.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0;
  return pattern == tool;
}

bool agent_allows_tool(const AgentDefinition& agent, std::string_view tool) {
  if (!agent.tools) return true;
  for (const std::string& p : *agent.tools)
    if (agent_tool_matches(p, tool)) return true;
  return false;
}

}  // namespace pf
