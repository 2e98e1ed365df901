// OpenTelemetry traces over OTLP/HTTP: the spans of core/trace.h batched on a thread of their
// own and POSTed as OTLP/JSON (ExportTraceServiceRequest) to a collector's /v1/traces. The
// "telemetry" section of the config (including this header registers it):
//
//   "telemetry": {"otlpEndpoint": "http://otel-collector:4318", "headersEnv": "OTLP_HEADERS",
//                 "captureContent": false, "serviceName": "pilotfish"}
//
// otlpEndpoint: the collector (its /v1/traces is added unless the URL ends with it); unset,
// nothing is traced. headersEnv names a variable holding "key=value,key2=value2" (as
// OTEL_EXPORTER_OTLP_HEADERS: an API key for a hosted collector), never written in the file.
// captureContent: spans also carry questions, commands and tool arguments (off: only names,
// sizes, models, decisions and times).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/trace.h"

namespace pf {

struct TelemetryConfig : ConfigSection {
  std::string otlp_endpoint;  // empty: off
  std::string headers_env;
  bool capture_content = false;
  std::string service_name = "pilotfish";
};

const TelemetryConfig& telemetry_config(const Config& config);

// "k=v,k2=v2" as OTEL_EXPORTER_OTLP_HEADERS writes it (keys and values trimmed, values
// percent-decoded); entries without '=' are left out.
std::vector<std::pair<std::string, std::string>> parse_otlp_headers(std::string_view text);

// The spans as one OTLP/JSON ExportTraceServiceRequest (ids in hex, times in nanoseconds as
// strings, attributes as typed AnyValues).
nlohmann::json otlp_json(const std::vector<SpanData>& spans, const std::string& service_name);

struct OtlpOptions {
  std::string url;  // the full /v1/traces URL
  std::vector<std::pair<std::string, std::string>> headers;
  std::string service_name = "pilotfish";
  size_t max_queue = 4096;      // more waiting and the newest are dropped (counted)
  size_t batch = 256;           // spans per request at most
  std::chrono::milliseconds interval{1000};  // a batch goes at least this often
  std::chrono::milliseconds timeout{10000};  // per request
};

class OtlpExporter : public SpanSink {
 public:
  explicit OtlpExporter(OtlpOptions options);
  // Sends what is queued (for at most the request timeout) and stops the thread.
  ~OtlpExporter() override;
  OtlpExporter(const OtlpExporter&) = delete;
  OtlpExporter& operator=(const OtlpExporter&) = delete;

  void add(SpanData span) override;
  // Sends everything queued now; returns when it is sent or failed (or after timeout).
  void flush(std::chrono::milliseconds timeout = std::chrono::milliseconds(10000));
  int64_t exported() const;  // spans the collector took
  int64_t dropped() const;   // spans lost: a full queue, or a collector that refused them

 private:
  void loop();
  void send(std::vector<SpanData> batch);

  OtlpOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<SpanData> queue_;
  bool stopping_ = false, flushing_ = false, sending_ = false;
  int64_t exported_ = 0, dropped_ = 0;
  bool warned_ = false;
  std::thread thread_;
};

// Tracing for this process while it lives: its exporter is the span sink (core/trace.h);
// destroying it clears the sink and sends what is queued.
class Telemetry {
 public:
  explicit Telemetry(std::shared_ptr<OtlpExporter> exporter);
  ~Telemetry();
  Telemetry(const Telemetry&) = delete;
  Telemetry& operator=(const Telemetry&) = delete;
  OtlpExporter& exporter() { return *exporter_; }

 private:
  std::shared_ptr<OtlpExporter> exporter_;
};

// Starts tracing when telemetry.otlpEndpoint is set; nullptr when it is not. Throws ConfigError
// when headersEnv names a variable that is not set.
std::unique_ptr<Telemetry> start_telemetry(const Config& config);

bool register_telemetry_config();
inline const bool kTelemetryConfigRegistered = register_telemetry_config();

}  // namespace pf
