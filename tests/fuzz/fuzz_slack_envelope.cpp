// libFuzzer entry point: Slack's Socket Mode frames through the envelope, the Events API body
// and the seam's message, reaction and change types (the event stream is untrusted input), and
// the mrkdwn converters and splitter on the same bytes, with the splitter's limit checked.
#include <cstddef>
#include <cstdint>
#include <string>

#include "chat/inbound_json.h"
#include "chat/slack/mrkdwn.h"
#include "chat/slack/slack_events.h"
#include "core/json.h"
#include "core/text.h"

namespace {

void convert(const nlohmann::json& payload) {
  pf::SlackContext context;
  context.platform = "slack";
  context.bot = "pilot";
  context.self = {"UBOT", "BBOT"};
  context.resolve = [](const std::string& id) { return id.size() % 2 ? id : std::string(); };
  pf::SlackEvent ev = pf::parse_event_callback(payload, context.self);
  if (auto m = pf::to_inbound_message(ev, context)) {
    if (!pf::inbound_from_json(pf::inbound_to_json(*m))) __builtin_trap();
  }
  (void)pf::to_inbound_reaction(ev, context);
  (void)pf::to_inbound_change(ev, context);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  pf::SlackFrame frame = pf::parse_socket_frame(text);
  if (frame.kind == pf::SlackFrame::Kind::kEnvelope) {
    (void)pf::socket_ack(frame.envelope_id);
    convert(frame.payload);
  }
  nlohmann::json direct = pf::parse_json(text);
  if (!direct.is_discarded()) convert(direct);
  if (auto ts = pf::parse_ts(text)) {
    if (pf::parse_ts(pf::format_ts(*ts)) != ts) __builtin_trap();
  }
  (void)pf::mrkdwn_to_text(text);
  std::string mrkdwn = pf::markdown_to_mrkdwn(text);
  size_t max = 64 + size % 300;
  for (const std::string* s : {&text, &mrkdwn})
    for (const std::string& part : pf::split_mrkdwn(*s, max))
      if (pf::code_points(part) > max) __builtin_trap();
  return 0;
}
