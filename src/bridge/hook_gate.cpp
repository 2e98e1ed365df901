// The bridge's hooks (see hook_gate.h).
#include "bridge/hook_gate.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "runtime/own_paths.h"
#include "runtime/worker_pool.h"

namespace pf {

namespace asio = boost::asio;

HookGate::HookGate(asio::io_context& io, asio::thread_pool& pool, const Config& config,
                   std::string db_path)
    : io_(io), pool_(pool), config_(config), db_path_(std::move(db_path)) {}

std::shared_ptr<const HookSet> HookGate::hooks(const std::string& root) {
  auto& slot = sets_[root];
  if (!slot) slot = std::make_shared<const HookSet>(load_hooks(config_, root));
  return slot;
}

HookContext HookGate::context(const std::string& root) const {
  return hook_context(config_, db_path_, root);
}

asio::awaitable<HookDecision> HookGate::before_tool(const std::string& root,
                                                    const std::string& tool,
                                                    const std::string& arguments) {
  std::shared_ptr<const HookSet> set = hooks(root);
  HookDecision decision;
  if (set->of(HookEvent::kPreToolUse).empty()) co_return decision;
  HookContext ctx = context(root);
  co_await offload(pool_, [&] { decision = run_pre_tool_hooks(*set, tool, arguments, ctx); });
  co_return decision;
}

asio::awaitable<void> HookGate::run(const std::string& root, HookEvent event,
                                    nlohmann::json payload) {
  std::shared_ptr<const HookSet> set = hooks(root);
  if (set->of(event).empty()) co_return;
  HookContext ctx = context(root);
  co_await offload(pool_, [&] { run_event_hooks(*set, event, std::move(payload), ctx); });
}

void HookGate::fire(const std::string& root, HookEvent event, nlohmann::json payload) {
  std::shared_ptr<const HookSet> set = hooks(root);
  if (set->of(event).empty()) return;
  // Everything the run needs is owned by the closure: the bridge may reload or stop meanwhile.
  asio::post(pool_, [set, event, payload = std::move(payload), ctx = context(root)]() mutable {
    run_event_hooks(*set, event, std::move(payload), ctx);
  });
}

std::string HookGate::describe(const std::string& root) {
  std::shared_ptr<const HookSet> set = hooks(root);
  std::string out;
  for (size_t i = 0; i < kHookEvents; ++i) {
    const auto& list = set->commands[i];
    if (list.empty()) continue;
    out += (out.empty() ? "" : ", ") + std::string(hook_event_name(static_cast<HookEvent>(i))) +
           " " + std::to_string(list.size());
  }
  out = "**Hooks**: " + (out.empty() ? std::string("none") : out);
  for (const DefinitionProblem& p : set->problems)
    out += "\n- \u26A0\uFE0F `" + p.path + "`: " + p.message + " (not loaded)";
  return out;
}

}  // namespace pf
