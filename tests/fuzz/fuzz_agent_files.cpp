// libFuzzer entry point: the readers of files people write to shape the agent (front matter,
// `*.agent.md`, `SKILL.md`) on arbitrary text: a clear pf::Error or a value, nothing else.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "agent/custom_agents.h"
#include "agent/skills.h"
#include "core/error.h"
#include "core/front_matter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    pf::FrontMatter fm = pf::parse_front_matter(text);
    (void)fm.get("name");
  } catch (const pf::Error&) {
  }
  try {
    pf::AgentDefinition a = pf::parse_agent_file(text, "f.agent.md");
    if (a.name.empty() || a.instructions.empty()) __builtin_trap();
    (void)pf::agent_allows_tool(a, "run_command");
  } catch (const pf::Error&) {
  }
  try {
    pf::Skill s = pf::parse_skill_file(text, "folder");
    if (s.name.empty() || s.description.empty()) __builtin_trap();
  } catch (const pf::Error&) {
  }
  return 0;
}
