// libFuzzer entry point: the readers of files people write to shape the agent (front matter,
// `*.agent.md`, `SKILL.md`, `hooks.json` and a hook's answer), and of what the model writes to
// ask_user and a reply to it, on arbitrary text: a clear pf::Error or a value, nothing else.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "agent/ask_user.h"
#include "agent/custom_agents.h"
#include "agent/hooks.h"
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
  try {
    pf::HookSet h = pf::parse_hooks_json(text, "fuzz.json", false);
    for (size_t e = 0; e < pf::kHookEvents; ++e)
      for (const pf::HookCommand& c : h.commands[e])
        if (c.bash.empty() || c.timeout_sec < 1) __builtin_trap();
  } catch (const pf::Error&) {
  }
  pf::HookDecision d;
  pf::read_pre_tool_answer(std::string(text), "fuzz", d);
  std::string error;
  std::optional<pf::UserQuestion> q = pf::parse_user_question(std::string(text), &error);
  if (q && (q->question.empty() || q->choices.size() > 10 || !error.empty())) __builtin_trap();
  if (!q && error.empty()) __builtin_trap();
  if (q) (void)pf::question_text(*q);
  pf::UserQuestion two{"q", {"a", "b"}};
  (void)pf::chosen_answer(two, std::string(text));
  return 0;
}
