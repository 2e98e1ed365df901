// The bridge's side of MEMORY.md (memory.h): a compaction's summary appended on a worker (the
// workspace lock may be held by a consolidation), and the idle consolidation of a workspace,
// armed when a turn there ends and disarmed when one starts.
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "bridge/bridge.h"
#include "bridge/bridge_channel.h"
#include "bridge/memory.h"
#include "core/log.h"
#include "llm/fallback.h"
#include "net/run_sync.h"

namespace pf {

namespace asio = boost::asio;

namespace {

// The consolidation's model call, blocking (on a worker), no tools, at most 60 s.
std::optional<std::string> ask_model(const Config& config, const std::string& model, const std::string& memory) {
  auto work = [&]() -> asio::awaitable<std::optional<std::string>> {
    auto executor = co_await asio::this_coro::executor;
    CancelSignal cancel;
    ChatRequest req;
    req.cancel = &cancel;
    req.max_tokens = 4000;
    req.messages.push_back({"system", consolidation_prompt(), {}, {}});
    req.messages.push_back({"user", memory.substr(0, 100000), {}, {}});
    asio::steady_timer limit(executor, std::chrono::seconds(60));
    limit.async_wait([&](const boost::system::error_code& ec) {
      if (!ec) cancel.cancel();
    });
    std::string text;
    try {
      co_await async_stream_with_fallback(config, fallback_chain(config, model), req, [&](const ChatEvent& e) {
        if (e.kind == ChatEvent::Kind::kTextDelta) text += e.text;
        return text.size() < 200000;
      });
    } catch (const std::exception& e) {
      log::warn("memory", std::string("consolidation: the model failed: ") + e.what());
      limit.cancel();
      co_return std::nullopt;
    }
    limit.cancel();
    if (cancel.cancelled()) co_return std::nullopt;
    co_return text;
  };
  return run_sync(work());
}

const char* outcome_name(ConsolidateOutcome o) {
  switch (o) {
    case ConsolidateOutcome::kWritten: return "rewritten";
    case ConsolidateOutcome::kTooSmall: return "left alone (under 100 characters)";
    case ConsolidateOutcome::kBusy: return "skipped (the workspace was busy)";
    case ConsolidateOutcome::kModelFailed: return "kept (the model gave no answer)";
    case ConsolidateOutcome::kTooLong: return "kept (the answer had 200 lines or more)";
    case ConsolidateOutcome::kChanged: return "kept (the file changed meanwhile)";
    default: return "absent";
  }
}

}  // namespace

asio::awaitable<void> Bridge::save_compaction(const std::string& root, const std::string& summary) {
  try {
    co_await runtime_.workspace().run([&](Store&) { append_compaction_summary(root, summary); });
  } catch (const std::exception& e) {
    log::warn("memory", std::string("the compaction summary was not saved to MEMORY.md: ") + e.what());
  }
}

void Bridge::disarm_consolidation(const std::string& root) {
  if (auto it = idle_.find(root); it != idle_.end()) it->second->cancel();
}

void Bridge::arm_consolidation(const std::string& root, const std::string& model) {
  double minutes = memory_config(config_).idle_minutes;
  if (minutes <= 0 || stopping_) return;
  auto& timer = idle_[root];
  if (timer) timer->cancel();
  timer = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(static_cast<int64_t>(minutes * 60000)));
  std::string chosen = memory_config(config_).consolidation_model.empty() ? model : memory_config(config_).consolidation_model;
  std::shared_ptr<asio::steady_timer> mine = timer;
  mine->async_wait([this, root, chosen](const boost::system::error_code& ec) {
    if (ec || stopping_ || chosen.empty()) return;
    asio::co_spawn(
        io_,
        [this, root, chosen]() -> asio::awaitable<void> {
          ++consolidating_;
          Config config = config_;
          ConsolidateOutcome outcome = ConsolidateOutcome::kMissing;
          try {
            co_await runtime_.workspace().run([&](Store&) {
              outcome = consolidate_memory(root, [&](const std::string& memory) {
                return ask_model(config, chosen, memory);
              });
            });
          } catch (const std::exception& e) {
            log::warn("memory", std::string("consolidation failed: ") + e.what());
          }
          --consolidating_;
          if (outcome != ConsolidateOutcome::kMissing)
            log::info("memory", root + "/MEMORY.md " + outcome_name(outcome));
        },
        asio::detached);
  });
}

}  // namespace pf
