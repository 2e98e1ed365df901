// Plan mode and autopilot as every front end shares them (spec §3 /plan, /implement,
// /autopilot): which tools a planning agent keeps (only those that read and act nowhere), the
// autopilot's prompt and its end marker, and the request that implements a plan. The chat
// bridge keeps each channel's modes and plans (bridge/plan_board.h); `pilotfish ask --plan` and
// `--implement FILE` are the command line's one-shot forms.
#pragma once

#include <optional>
#include <string>

#include "agent/tool_registry.h"

namespace pf {

// The line an autopilot answer ends with when the whole task is done.
inline constexpr const char* kAutopilotDone = "AUTOPILOT: DONE";

// Whether plan mode offers the entry: it needs no permission and does not act later or
// elsewhere (ToolEntry::acts). Whatever the rules or /yolo say.
bool plan_mode_keeps(const ToolEntry& entry);

// The system prompt's part for a one-shot plan: investigate read-only and answer with the plan.
std::string plan_answer_instructions();

// The system prompt's part for autopilot: keep working, end with kAutopilotDone.
std::string autopilot_instructions();

// What autopilot says when a step ends without the marker (text: that step's text): the nudge
// that continues the work, or nullopt when the marker is there.
std::optional<std::string> autopilot_continue(const std::string& text);

// The user message that implements plan (Markdown), with the person's own note when not empty.
std::string implement_request(const std::string& plan, const std::string& note = {});

}  // namespace pf
