// The bot leases in the orchestrator (see bridge.h and bot_lease.h): which bots this process
// runs, taking a bot over when its holder is gone, and letting go of one whose lease was lost.
#include "bridge/bridge.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "bridge/bridge_channel.h"
#include "chat/inbound_json.h"
#include "core/clock.h"
#include "core/log.h"

namespace pf {

namespace asio = boost::asio;

void Bridge::set_lease(BotLease* lease, std::chrono::milliseconds poll) {
  lease_ = lease;
  lease_poll_ = poll;
}

bool Bridge::holds(const ChannelAdapter& adapter) const { return held_.count(&adapter) > 0; }

std::string Bridge::lease_key(const ChannelAdapter& a) const { return a.platform() + ":" + a.bot(); }

bool Bridge::abandoned(const Channel& channel) const {
  return stopping_ || !holds(*channel.adapter);
}

bool Bridge::still_ours(ChannelAdapter& adapter) {
  if (!holds(adapter)) return false;
  if (!lease_ || lease_->still_held(lease_key(adapter))) return true;
  let_go(adapter);
  return false;
}

asio::awaitable<void> Bridge::connect_bot(ChannelAdapter& a) {
  // A channel never seen before is caught up from the replay window's start: posts made while
  // no bridge ran are answered if they are recent enough, as after any other gap.
  int64_t started = unix_time_ms() - settings().replay_window_seconds * 1000;
  co_await a.connect();
  held_.insert(&a);
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
  start_schedules(a);
}

void Bridge::let_go(ChannelAdapter& a) {
  if (!held_.erase(&a)) return;
  ++stats_.leases_lost;
  log::warn("bridge", a.bot() + " on " + a.platform() +
                          ": the lease was lost; another pilotfish may run this bot now, so this "
                          "one stops acting for it");
  a.disconnect();
  // What was queued is recorded as pending: the next holder answers it.
  for (auto& [key, c] : channels_) {
    if (c->adapter != &a) continue;
    c->queue.clear();
    c->steering.clear();
    resolve_all_permissions(*c, "another pilotfish took this bot over");
    if (c->cancel) c->cancel->cancel();
  }
  if (lease_) lease_->release(lease_key(a));
}

asio::awaitable<void> Bridge::watch_leases() {
  auto alive = alive_;
  auto timer = lease_timer_;
  while (*alive && !stopping_) {
    timer->expires_after(lease_poll_);
    boost::system::error_code ec;
    co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (!*alive || stopping_) co_return;
    for (auto& a : adapters_) {
      if (holds(*a)) {
        still_ours(*a);
        continue;
      }
      if (!lease_->try_acquire(lease_key(*a))) continue;
      log::warn("bridge", "taking over " + a->bot() + " on " + a->platform() +
                              ": the process that ran it is gone");
      try {
        co_await connect_bot(*a);
        if (!*alive) co_return;
        co_await resume_bot(*a);
        ++stats_.takeovers;
      } catch (const std::exception& e) {
        if (!*alive) co_return;
        log::error("bridge", "could not take over " + a->bot() + ": " + e.what());
        let_go(*a);
        lease_->release(lease_key(*a));
      }
    }
  }
}

}  // namespace pf
