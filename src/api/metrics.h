// What the server counts, exposed at GET /metrics in the Prometheus text format (0.0.4):
// requests by route and status, request durations, chat streams (open, finished, failed,
// cancelled by the client), time to the first answer token, and index runs. Safe to update from
// any thread: the network thread counts requests, the indexing thread its runs.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "core/histogram.h"

namespace pf {

class Metrics {
 public:
  void request(const std::string& route, int status, double seconds);
  void stream_started();
  // outcome: "completed", "error" or "cancelled"
  void stream_ended(const std::string& outcome);
  void first_token(double seconds);
  void index_run(bool ok, double seconds, int64_t chunks_written);

  // gauges: extra name -> value lines (open connections and the like, read at scrape time).
  std::string render(const std::map<std::string, double>& gauges) const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  std::map<std::string, Histogram> durations_;  // by route
  int64_t streams_open_ = 0;
  std::map<std::string, uint64_t> streams_ended_;
  Histogram first_token_;
  uint64_t index_ok_ = 0, index_failed_ = 0;
  double last_index_seconds_ = 0, last_index_success_unix_ = 0;
  int64_t last_index_chunks_ = 0;
};

}  // namespace pf
