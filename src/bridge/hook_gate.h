// The hooks of each workspace (agent/hooks.h) as the bridge runs them: loaded once per
// workspace and kept until a reload, run on the worker pool (a hook is a process, which must
// never block the network thread), with the sandbox of run_command for a workspace's own hooks.
// preToolUse's decision is the caller's to carry out (a deny refused, an ask put to a person);
// the other events are fired and forgotten, their failures logged.
//
// Threads: construct, call and destroy on the network thread; hooks run on the pool. The
// config (reassigned in place by a reload), the pool and the io_context must outlive the gate.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "agent/hooks.h"
#include "core/config.h"
#include "net/awaitable.h"

namespace pf {

class HookGate {
 public:
  // db_path: the index store's, whose side files the sandbox hides (runtime/own_paths.h).
  HookGate(boost::asio::io_context& io, boost::asio::thread_pool& pool, const Config& config,
           std::string db_path);

  // The workspace's hooks, read on first use and then kept.
  std::shared_ptr<const HookSet> hooks(const std::string& root);
  // Read again at next use (after a config reload or /reload).
  void forget() { sets_.clear(); }

  // The preToolUse hooks' decision for a call (none when there are no such hooks).
  boost::asio::awaitable<HookDecision> before_tool(const std::string& root,
                                                   const std::string& tool,
                                                   const std::string& arguments);
  // Runs the event's hooks and waits for them (userPromptSubmitted, sessionStart: before the
  // model is asked).
  boost::asio::awaitable<void> run(const std::string& root, HookEvent event, nlohmann::json payload);
  // Runs the event's hooks without waiting (postToolUse, errorOccurred, sessionEnd).
  void fire(const std::string& root, HookEvent event, nlohmann::json payload);

  // For /skills: how many hooks of each event the workspace has, and the files that did not load.
  std::string describe(const std::string& root);

 private:
  HookContext context(const std::string& root) const;

  boost::asio::io_context& io_;
  boost::asio::thread_pool& pool_;
  const Config& config_;
  std::string db_path_;
  std::map<std::string, std::shared_ptr<const HookSet>> sets_;  // by workspace root
};

}  // namespace pf
