// Plan mode and autopilot, the orchestrator's side (spec §3 /plan, /implement, /autopilot): the
// commands, a plan's summary from the channel's model, /implement's autonomous turn, and the
// refusal of every call that is not read-only while a channel plans. The modes and plans
// themselves are kept by plan_board.h.
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include "agent/plan_mode.h"
#include "bridge/bridge.h"
#include "bridge/bridge_channel.h"
#include "core/log.h"
#include "core/text.h"

namespace pf {

namespace asio = boost::asio;
using nlohmann::json;

std::optional<json> Bridge::plan_mode_refusal(const ToolRegistry& tools,
                                              const ToolCall& call) const {
  if (const ToolEntry* e = tools.find(call.name); e && plan_mode_keeps(*e)) return std::nullopt;
  return json{{"error", "plan mode: only reading is allowed (" + call.name +
                            " would act); write the plan with update_plan. The user leaves plan "
                            "mode with /plan off or /implement."}};
}

asio::awaitable<void> Bridge::plan_command(Channel& channel, const CommandCall& c) {
  std::optional<std::string> conv =
      state_.active_conversation(conversation_key_at(channel, channel.thread_root));
  if (ascii_lower(trim_space(c.args)) != "summary") {
    reply(channel, plans_.command(channel.key, conv.value_or(""), c.args));
    co_return;
  }
  std::string plan = conv ? state_.plan(*conv) : std::string();
  if (plan.empty()) {
    reply(channel, "No plan yet in this conversation.");
    co_return;
  }
  std::string model = shape_of(channel).model;
  if (model.empty()) {
    reply(channel, "No chat model is configured to summarise with.");
    co_return;
  }
  // Named arguments: GCC 12 destroys the temporaries of a co_await twice.
  std::string summary;
  std::string instruction =
      "Summarise this implementation plan in at most 5 short bullet points: what changes, "
      "where, and how it is checked.";
  std::string text = plan.substr(0, 32 * 1024);
  try {
    summary = co_await summarise(model, instruction, text, 400, 4000);
  } catch (const std::exception& e) {
    reply(channel, "\u274C The summary failed: " + redact_urls(e.what(), "the provider"));
    co_return;
  }
  reply(channel, "\U0001F4CB **Plan, in short**\n" + trim_space(summary));
}

asio::awaitable<void> Bridge::autopilot_command(Channel& channel, const CommandCall& c) {
  bool yolo = policy_context(channel, channel.config.working_directory).yolo;
  reply(channel, plans_.autopilot_command(channel.key, c.args, yolo));
  co_return;
}

asio::awaitable<void> Bridge::implement_command(Channel& channel, const InboundMessage& message,
                                                const CommandCall& c) {
  std::string how = ascii_lower(trim_space(c.args));
  if (!how.empty() && how != "yolo" && how != "interactive") {
    reply(channel, "\u274C `/implement` takes yolo or interactive.");
    co_return;
  }
  std::optional<std::string> conv =
      state_.active_conversation(conversation_key_at(channel, channel.thread_root));
  std::string plan = conv ? state_.plan(*conv) : std::string();
  if (plan.empty()) {
    reply(channel, "No plan to implement: `/plan on`, then ask for one.");
    co_return;
  }
  ChannelPrefs prefs = state_.prefs(channel.key);
  prefs.plan_mode = false;
  state_.set_prefs(channel.key, prefs);
  reply(channel, std::string("\U0001F6E0\uFE0F Implementing the plan") +
                     (how == "interactive" ? "." : " on autopilot (`/stop` stops it).") +
                     (how == "yolo" ? " Prompts are approved for this run only." : ""));
  // The command's own post carries the turn: answered once, and again after a crash.
  InboundMessage run = message;
  run.text = implement_request(plan);
  channel.autopilot_run = how != "interactive";
  channel.yolo_run = how == "yolo";
  try {
    co_await run_turn(channel, run);
  } catch (...) {
    channel.autopilot_run = channel.yolo_run = false;
    throw;
  }
  channel.autopilot_run = channel.yolo_run = false;
}

}  // namespace pf
