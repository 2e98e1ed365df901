// The orchestrator's side of the bot leases (lease_keeper.h): connecting a bot this process
// holds, answering what its last holder left pending, and stopping when its lease was lost.
#include "bridge/bridge.h"

#include "bridge/bridge_channel.h"
#include "chat/inbound_json.h"
#include "core/clock.h"
#include "core/log.h"

namespace pf {

namespace asio = boost::asio;

void Bridge::set_lease(BotLease* lease, std::chrono::milliseconds poll) {
  leases_.set_lease(lease, poll);
}

bool Bridge::holds(const ChannelAdapter& adapter) const {
  return leases_.holds(adapter);
}

bool Bridge::abandoned(const Channel& channel) const {
  return stopping_ || !holds(*channel.adapter);
}

bool Bridge::still_ours(ChannelAdapter& adapter) {
  return leases_.still_ours(adapter);
}

asio::awaitable<void> Bridge::connect_bot(ChannelAdapter& a) {
  // A channel never seen before is caught up from the replay window's start: posts made while
  // no bridge ran are answered if they are recent enough, as after any other gap.
  int64_t started = unix_time_ms() - settings().replay_window_seconds * 1000;
  merge_registered();  // channels another replica added from chat while it held the bot
  co_await a.connect();
  leases_.hold(a);
  co_await resolve_access(a);
  std::vector<std::pair<std::string, std::string>> dms = co_await a.discover_dm_channels();
  for (const auto& [channel_id, other] : dms) {
    state_.register_dm(DmChannel{a.platform() + ":" + channel_id, a.bot(), other});
    a.track_channel(channel_id, started);
  }
  for (const auto& c : settings().channels)
    if (c.platform == a.platform() && c.bot == a.bot()) a.track_channel(c.id, started);
}

asio::awaitable<void> Bridge::resume_bot(ChannelAdapter& a) {
  // Posts accepted by an earlier run and not finished: a crash, a restart or a lost lease
  // interrupted them.
  for (const InboundRecord& r : state_.pending_inbound(a.bot())) {
    std::optional<InboundMessage> m = inbound_from_json(r.payload);
    if (!m) {
      state_.finish_inbound(r.post_id);
      continue;
    }
    if (!r.reply_post_id.empty()) {
      // Half a reply from before: it goes, and the post is answered afresh.
      try {
        co_await a.delete_message(r.reply_post_id);
      } catch (const std::exception& e) {
        log::warn("bridge", std::string("could not remove an interrupted reply: ") + e.what());
      }
      state_.set_inbound_reply(r.post_id, "");
    }
    log::info("bridge", "resuming post " + r.post_id + " left unanswered before");
    on_message(a, std::move(*m), true);
  }
  scheduler_.start(a);
}

void Bridge::lost_bot(ChannelAdapter& a) {
  a.disconnect();
  // What was queued is recorded as pending: the next holder answers it.
  for (auto& [key, c] : channels_) {
    if (c->adapter != &a) continue;
    for (const InboundMessage& m : c->queue) metrics_.forget(m.post_id);
    c->queue.clear();
    c->steering.clear();
    desk_.resolve_all(c->key, "another pilotfish took this bot over");
    questions_.resolve_all(c->key, "another pilotfish took this bot over");
    if (c->cancel) c->cancel->cancel();
  }
}

}  // namespace pf
