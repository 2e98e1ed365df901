// Prometheus metrics (see metrics.h).
#include "api/metrics.h"

#include <chrono>
#include <cstdio>

namespace pf {

void Metrics::request(const std::string& route, int status, double seconds) {
  std::lock_guard lock(mu_);
  ++requests_[{route, status}];
  durations_[route].observe(seconds);
}

void Metrics::stream_started() {
  std::lock_guard lock(mu_);
  ++streams_open_;
}

void Metrics::stream_ended(const std::string& outcome) {
  std::lock_guard lock(mu_);
  --streams_open_;
  ++streams_ended_[outcome];
}

void Metrics::first_token(double seconds) {
  std::lock_guard lock(mu_);
  first_token_.observe(seconds);
}

void Metrics::index_run(bool ok, double seconds, int64_t chunks_written) {
  std::lock_guard lock(mu_);
  (ok ? index_ok_ : index_failed_)++;
  last_index_seconds_ = seconds;
  if (ok) {
    last_index_chunks_ = chunks_written;
    last_index_success_unix_ =
        static_cast<double>(std::chrono::duration_cast<std::chrono::seconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count());
  }
}

std::string Metrics::render(const std::map<std::string, double>& gauges) const {
  std::lock_guard lock(mu_);
  std::string out;
  out += "# HELP pilotfish_http_requests_total HTTP requests by route and status.\n";
  out += "# TYPE pilotfish_http_requests_total counter\n";
  for (const auto& [key, n] : requests_)
    out += "pilotfish_http_requests_total{route=\"" + key.first + "\",status=\"" +
           std::to_string(key.second) + "\"} " + std::to_string(n) + "\n";
  out += "# HELP pilotfish_http_request_duration_seconds Time to answer (or stream) a request.\n";
  out += "# TYPE pilotfish_http_request_duration_seconds histogram\n";
  for (const auto& [route, h] : durations_)
    h.render(out, "pilotfish_http_request_duration_seconds", "route=\"" + route + "\"");
  out += "# HELP pilotfish_chat_streams_open Chat answers being streamed now.\n";
  out += "# TYPE pilotfish_chat_streams_open gauge\n";
  out += "pilotfish_chat_streams_open " + std::to_string(streams_open_) + "\n";
  out += "# HELP pilotfish_chat_streams_total Chat answers by how they ended.\n";
  out += "# TYPE pilotfish_chat_streams_total counter\n";
  for (const char* outcome : {"completed", "error", "cancelled"}) {
    auto it = streams_ended_.find(outcome);
    out += "pilotfish_chat_streams_total{outcome=\"" + std::string(outcome) + "\"} " +
           std::to_string(it == streams_ended_.end() ? 0 : it->second) + "\n";
  }
  out += "# HELP pilotfish_chat_first_token_seconds Time from request to the first answer text.\n";
  out += "# TYPE pilotfish_chat_first_token_seconds histogram\n";
  first_token_.render(out, "pilotfish_chat_first_token_seconds", "");
  out += "# HELP pilotfish_index_runs_total Index runs by result.\n";
  out += "# TYPE pilotfish_index_runs_total counter\n";
  out += "pilotfish_index_runs_total{result=\"ok\"} " + std::to_string(index_ok_) + "\n";
  out += "pilotfish_index_runs_total{result=\"failed\"} " + std::to_string(index_failed_) + "\n";
  out += "# TYPE pilotfish_index_last_duration_seconds gauge\n";
  out += "pilotfish_index_last_duration_seconds " + metric_number(last_index_seconds_) + "\n";
  out += "# TYPE pilotfish_index_last_success_timestamp_seconds gauge\n";
  out +=
      "pilotfish_index_last_success_timestamp_seconds " + metric_number(last_index_success_unix_) + "\n";
  out += "# TYPE pilotfish_index_last_chunks_written gauge\n";
  out += "pilotfish_index_last_chunks_written " + std::to_string(last_index_chunks_) + "\n";
  for (const auto& [name, value] : gauges) {
    out += "# TYPE " + name + " gauge\n";
    out += name + " " + metric_number(value) + "\n";
  }
  return out;
}

}  // namespace pf
