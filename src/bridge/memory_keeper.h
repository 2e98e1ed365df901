// The memory keeper: the bridge's side of MEMORY.md (memory.h). It appends a compaction's
// summary (on a worker: the workspace lock may be held by a consolidation) and consolidates a
// workspace's MEMORY.md once it has been quiet for memory.idleMinutes: armed when a turn there
// ends, disarmed when one starts.
//
// Threads: the network thread only; the file work runs on the runtime's workers. Lifetime: the
// runtime and the config are borrowed and must outlive the keeper; the config is read when a
// timer is armed and when it fires, so a reload applies to later ones. The keeper must not be
// destroyed while busy(). Errors: failures are logged, never thrown.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <map>
#include <memory>
#include <string>

#include "core/config.h"
#include "runtime/answer_runtime.h"

namespace pf {

class MemoryKeeper {
 public:
  MemoryKeeper(boost::asio::io_context& io, AnswerRuntime& runtime, const Config& config);
  MemoryKeeper(const MemoryKeeper&) = delete;
  MemoryKeeper& operator=(const MemoryKeeper&) = delete;

  // Appends a compaction's summary to root/MEMORY.md.
  boost::asio::awaitable<void> save_compaction(const std::string& root, const std::string& summary);
  // A turn in root ended (model: the one that answered, "" for none): consolidation is due
  // after the idle spell, with memory.consolidationModel or that model.
  void arm(const std::string& root, const std::string& model);
  // A turn in root starts: no consolidation while it runs.
  void disarm(const std::string& root);
  // Whether a consolidation runs now.
  bool busy() const { return running_ > 0; }
  // Cancels every armed timer; running consolidations finish.
  void stop();

 private:
  boost::asio::awaitable<void> consolidate(std::string root, std::string model);

  boost::asio::io_context& io_;
  AnswerRuntime& runtime_;
  const Config& config_;
  bool stopped_ = false;
  int running_ = 0;
  std::map<std::string, std::shared_ptr<boost::asio::steady_timer>> idle_;  // by workspace root
};

}  // namespace pf
