// Plan mode and autopilot (see plan_board.h).
#include "bridge/plan_board.h"

#include "core/text.h"

namespace pf {

namespace {

std::string plan_post(const std::string& text) { return "\U0001F4CB **Plan**\n" + text; }

}  // namespace

PlanBoard::PlanBoard(StateStore& state, std::chrono::milliseconds interval)
    : state_(state), interval_(interval) {}

bool PlanBoard::plan_mode(const std::string& channel_key) {
  return state_.prefs(channel_key).plan_mode.value_or(false);
}

bool PlanBoard::autopilot(const std::string& channel_key) {
  return state_.prefs(channel_key).autopilot.value_or(false);
}

void PlanBoard::update(const std::string& channel_key, const std::string& conversation,
                       const std::shared_ptr<PostQueue>& posts, const std::string& thread_root,
                       const std::string& text) {
  state_.set_plan(conversation, text);
  auto now = std::chrono::steady_clock::now();
  auto it = shown_.find(channel_key);
  if (it == shown_.end() || it->second.posts != posts) {
    shown_[channel_key] = {posts, posts->create(plan_post(text), thread_root), now};
    return;
  }
  Shown& s = it->second;
  if (now - s.last >= interval_) {
    posts->edit(s.post, plan_post(text));
    s.last = now;
  } else {
    posts->edit(s.post, plan_post(text), s.last + interval_);  // held; later updates merge in
  }
}

std::string PlanBoard::command(const std::string& channel_key, const std::string& conversation,
                               const std::string& args) {
  std::string a = ascii_lower(trim_space(args));
  ChannelPrefs prefs = state_.prefs(channel_key);
  std::string plan = conversation.empty() ? std::string() : state_.plan(conversation);
  if (a.empty() || a == "on") {
    prefs.plan_mode = true;
    state_.set_prefs(channel_key, prefs);
    return "\U0001F4CB Plan mode on: I only read and keep a plan (`/plan show`); nothing is "
           "written or run. `/implement` carries it out, `/plan off` leaves plan mode.";
  }
  if (a == "off") {
    prefs.plan_mode = false;
    state_.set_prefs(channel_key, prefs);
    return std::string("Plan mode off: tools act again (as the permission rules say).") +
           (plan.empty() ? "" : " The plan is kept: `/plan show`, `/implement`.");
  }
  if (a == "show" || a == "view")
    return plan.empty() ? "No plan yet in this conversation." : plan_post(plan);
  if (a == "clear" || a == "delete") {
    if (plan.empty()) return "No plan to clear.";
    state_.set_plan(conversation, "");
    return "\U0001F5D1\uFE0F Plan cleared.";
  }
  return "\u274C `/plan` takes on, off, show, summary or clear.";
}

std::string PlanBoard::autopilot_command(const std::string& channel_key, const std::string& args,
                                         bool yolo) {
  std::string a = ascii_lower(trim_space(args));
  ChannelPrefs prefs = state_.prefs(channel_key);
  bool now = prefs.autopilot.value_or(false);
  if (a.empty()) now = !now;
  else if (a == "on") now = true;
  else if (a == "off") now = false;
  else return "\u274C `/autopilot` takes on or off.";
  prefs.autopilot = now;
  state_.set_prefs(channel_key, prefs);
  if (!now) return "Autopilot off: each answer ends when the model stops.";
  std::string out =
      "\U0001F6EB Autopilot on: I keep working until the task is done, the step or time limit, "
      "or `/stop`.";
  if (!yolo)
    out += "\n\u26A0\uFE0F `/yolo` is off: side-effecting calls will still ask, and wait for an "
           "answer.";
  return out;
}

std::string PlanBoard::instructions(const std::string& plan) {
  return "<plan_mode>\nYou are in plan mode: investigate with the read-only tools and write a "
         "step-by-step plan with the update_plan tool (the whole plan each time; update it as "
         "you learn). Do not try to change files or run commands: such calls are refused until "
         "the user leaves plan mode or runs /implement.\n" +
         (plan.empty() ? std::string("There is no plan yet.") : "The plan so far:\n" + plan) +
         "\n</plan_mode>";
}

}  // namespace pf
