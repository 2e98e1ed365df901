// The memory keeper (see memory_keeper.h): compaction summaries and idle consolidation.
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include "bridge/memory_keeper.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "bridge/bridge_config.h"
#include "bridge/memory.h"
#include "core/log.h"
#include "llm/fallback.h"
#include "net/run_sync.h"

namespace pf {

namespace asio = boost::asio;

namespace {

// The consolidation's model call, blocking (on a worker), no tools, at most 60 s.
std::optional<std::string> ask_model(const Config& config, const std::string& model,
                                     const std::string& memory) {
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
      co_await async_stream_with_fallback(config, fallback_chain(config, model), req,
                                          [&](const ChatEvent& e) {
                                            if (e.kind == ChatEvent::Kind::kTextDelta)
                                              text += e.text;
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
    case ConsolidateOutcome::kWritten:
      return "rewritten";
    case ConsolidateOutcome::kTooSmall:
      return "left alone (under 100 characters)";
    case ConsolidateOutcome::kBusy:
      return "skipped (the workspace was busy)";
    case ConsolidateOutcome::kModelFailed:
      return "kept (the model gave no answer)";
    case ConsolidateOutcome::kTooLong:
      return "kept (the answer had 200 lines or more)";
    case ConsolidateOutcome::kChanged:
      return "kept (the file changed meanwhile)";
    default:
      return "absent";
  }
}

}  // namespace

MemoryKeeper::MemoryKeeper(asio::io_context& io, AnswerRuntime& runtime, const Config& config)
    : io_(io), runtime_(runtime), config_(config) {}

asio::awaitable<void> MemoryKeeper::save_compaction(const std::string& root,
                                                    const std::string& summary) {
  try {
    co_await runtime_.workspace().run([&](Store&) { append_compaction_summary(root, summary); });
  } catch (const std::exception& e) {
    log::warn("memory",
              std::string("the compaction summary was not saved to MEMORY.md: ") + e.what());
  }
}

void MemoryKeeper::disarm(const std::string& root) {
  if (auto it = idle_.find(root); it != idle_.end()) it->second->cancel();
}

void MemoryKeeper::stop() {
  stopped_ = true;
  for (auto& [root, timer] : idle_) timer->cancel();
}

void MemoryKeeper::arm(const std::string& root, const std::string& model) {
  const MemoryConfig& memory = memory_config(config_);
  if (memory.idle_minutes <= 0 || stopped_) return;
  auto& timer = idle_[root];
  if (timer) timer->cancel();
  timer = std::make_shared<asio::steady_timer>(
      io_, std::chrono::milliseconds(static_cast<int64_t>(memory.idle_minutes * 60000)));
  std::string chosen = memory.consolidation_model.empty() ? model : memory.consolidation_model;
  timer->async_wait([this, root, chosen](const boost::system::error_code& ec) {
    if (ec || stopped_ || chosen.empty()) return;
    asio::co_spawn(io_, consolidate(root, chosen), asio::detached);
  });
}

asio::awaitable<void> MemoryKeeper::consolidate(std::string root, std::string model) {
  ++running_;
  Config config = config_;
  ConsolidateOutcome outcome = ConsolidateOutcome::kMissing;
  try {
    co_await runtime_.workspace().run([&](Store&) {
      outcome = consolidate_memory(
          root, [&](const std::string& memory) { return ask_model(config, model, memory); });
    });
  } catch (const std::exception& e) {
    log::warn("memory", std::string("consolidation failed: ") + e.what());
  }
  --running_;
  if (outcome != ConsolidateOutcome::kMissing)
    log::info("memory", root + "/MEMORY.md " + outcome_name(outcome));
}

}  // namespace pf
