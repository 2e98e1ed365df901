// Plan mode and autopilot's shared rules and prompts (see plan_mode.h).
#include "agent/plan_mode.h"

namespace pf {

bool plan_mode_keeps(const ToolEntry& entry) {
  return entry.permission == ToolPermission::kNone && !entry.acts;
}

std::string plan_answer_instructions() {
  return "<plan_mode>\nYou are in plan mode: investigate with the read-only tools, change "
         "nothing, and answer with an implementation plan in Markdown: numbered steps, the files "
         "each step touches, and how to check the result. The user will have it carried out "
         "later.\n</plan_mode>";
}

std::string autopilot_instructions() {
  return std::string(
             "<autopilot>\nYou are on autopilot: keep working on the task without waiting for "
             "the user; where you would ask, choose the sensible option and say so. When the "
             "whole task is complete, end your message with the line ") +
         kAutopilotDone + ".\n</autopilot>";
}

std::optional<std::string> autopilot_continue(const std::string& text) {
  if (text.find(kAutopilotDone) != std::string::npos) return std::nullopt;
  return std::string("Continue on your own. When the whole task is complete, end with the line ") +
         kAutopilotDone + ".";
}

std::string implement_request(const std::string& plan, const std::string& note) {
  std::string out =
      "Implement the following plan. Work through every step, check the result, and say what "
      "was done.";
  if (!note.empty()) out += "\n\n" + note;
  return out + "\n\n" + plan;
}

}  // namespace pf
