// `pilotfish serve`: the codebase copilot over HTTP.
//
//   POST /v1/platform-copilot/chat    user   a question in, the answer out as the AI SDK's UI
//                                            message stream (either request body; chat_request.h)
//   POST /v1/platform-copilot/index   admin  start a re-index: {"status": "indexing_started"} or
//                                            {"status": "already_running"}
//   GET  /v1/platform-copilot/index   admin  what the indexer is doing and how its last run went
//   GET  /v1/search?q=&limit=&mode=   user   the same results as `pilotfish search --json`
//   GET  /metrics                     user   Prometheus text
//   GET  /healthz                     none   liveness, for load balancers: {"status": "ok"}
//
// Every other route, and every one of these but /healthz without a valid bearer key, is refused
// with a JSON {"error", "message"} body. One network thread carries every connection; retrieval
// and tools run on worker threads (worker_pool.h); indexing on a thread of its own (index_job.h).
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <string>

#include "core/config.h"
#include "net/awaitable.h"
#include "policy/audit.h"

namespace pf {

class AnswerRuntime;

struct ServeOptions {
  std::string db_path;
  std::string repository;  // what to index and what the tools read; empty: config, then store
  std::string listen;      // host:port; empty: the config's
  bool no_auth = false;    // only on a loopback address: every caller is an admin
  int workers = 2;         // threads for retrieval and tools
  // Called once the socket listens, with the URL (tests and scripts read it from stdout).
  std::function<void(const std::string& url)> on_listening;
  // Where side-effecting tool calls are recorded (policy/audit.h: the bridge state); null:
  // nowhere. Must outlive serve().
  AuditLog* audit = nullptr;
  // More Prometheus text for /metrics (the bridge's, when it runs beside); called on the
  // network thread. Empty: none.
  std::function<std::string()> extra_metrics;
  // Another transport on the same network thread and runtime (the chat bridge): started once
  // the server listens (a failure stops the server), stopped when a signal arrives, before the
  // open streams are waited for.
  std::function<boost::asio::awaitable<void>(boost::asio::io_context&, AnswerRuntime&)>
      start_beside;
  std::function<boost::asio::awaitable<void>()> stop_beside;
  // Called once the loop has ended, while the io_context and the runtime still exist: the other
  // transport must let go of both here.
  std::function<void()> end_beside;
};

// Runs until SIGINT or SIGTERM, then stops accepting, lets open streams finish (up to 10 s) and
// returns the exit code. Throws pf::Error (UsageError for bad settings) when it cannot start.
int serve(const Config& config, const ServeOptions& options);

}  // namespace pf
