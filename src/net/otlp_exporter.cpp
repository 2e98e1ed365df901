// OTLP/HTTP trace export and the "telemetry" section (see otlp_exporter.h).
#include "net/otlp_exporter.h"

#include <cstdlib>

#include "core/config_reader.h"
#include "core/error.h"
#include "core/log.h"
#include "net/http_client.h"

namespace pf {

using namespace config_detail;  // its json is the ordered one the loader reads
using Json = nlohmann::json;

namespace {

std::shared_ptr<const ConfigSection> parse_telemetry(const json& v, const Config&,
                                                     const std::string& source) {
  auto out = std::make_shared<TelemetryConfig>();
  if (v.is_null()) return out;
  if (!v.is_object()) fail(source, "telemetry", std::string("expected an object, got ") + kind(v));
  Reader r(source);
  r.only_keys(v, "telemetry", {"otlpEndpoint", "headersEnv", "captureContent", "serviceName"});
  out->otlp_endpoint = r.string(v, "telemetry", "otlpEndpoint", false);
  if (!out->otlp_endpoint.empty() && out->otlp_endpoint.rfind("http://", 0) != 0 &&
      out->otlp_endpoint.rfind("https://", 0) != 0)
    fail(source, "telemetry.otlpEndpoint",
         "expected an http:// or https:// URL, got \"" + out->otlp_endpoint + "\"");
  out->headers_env = r.string(v, "telemetry", "headersEnv", false);
  if (v.contains("captureContent")) {
    if (!v["captureContent"].is_boolean())
      fail(source, "telemetry.captureContent", "expected true or false");
    out->capture_content = v["captureContent"].get<bool>();
  }
  std::string name = r.string(v, "telemetry", "serviceName", false);
  if (!name.empty()) out->service_name = name;
  return out;
}

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

std::string percent_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    auto hex = [](char c) {
      return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                            : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    };
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

Json any_value(const SpanValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return {{"stringValue", *s}};
  if (const auto* i = std::get_if<int64_t>(&v)) return {{"intValue", std::to_string(*i)}};
  if (const auto* d = std::get_if<double>(&v)) return {{"doubleValue", *d}};
  return {{"boolValue", std::get<bool>(v)}};
}

}  // namespace

const TelemetryConfig& telemetry_config(const Config& config) {
  static const TelemetryConfig kNone;
  const TelemetryConfig* c = config.section<TelemetryConfig>("telemetry");
  return c ? *c : kNone;
}

std::vector<std::pair<std::string, std::string>> parse_otlp_headers(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t at = 0;
  while (at <= text.size()) {
    size_t comma = text.find(',', at);
    std::string_view item = text.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    size_t eq = item.find('=');
    if (eq != std::string_view::npos) {
      std::string key = trim(item.substr(0, eq)), value = percent_decode(trim(item.substr(eq + 1)));
      if (!key.empty()) out.emplace_back(std::move(key), std::move(value));
    }
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  return out;
}

Json otlp_json(const std::vector<SpanData>& spans, const std::string& service_name) {
  Json list = Json::array();
  for (const SpanData& s : spans) {
    Json attrs = Json::array();
    for (const auto& [k, v] : s.attributes) attrs.push_back({{"key", k}, {"value", any_value(v)}});
    Json span = {{"traceId", s.context.trace_id},
                 {"spanId", s.context.span_id},
                 {"name", s.name},
                 {"kind", static_cast<int>(s.kind)},
                 {"startTimeUnixNano", std::to_string(s.start_ns)},
                 {"endTimeUnixNano", std::to_string(s.end_ns)},
                 {"attributes", std::move(attrs)},
                 {"status", s.error ? Json{{"code", 2}, {"message", s.status_message}}
                                    : Json{{"code", 0}}}};
    if (!s.parent_span_id.empty()) span["parentSpanId"] = s.parent_span_id;
    list.push_back(std::move(span));
  }
  Json resource = {{"attributes",
                    Json::array({{{"key", "service.name"}, {"value", {{"stringValue", service_name}}}},
                                 {{"key", "telemetry.sdk.name"}, {"value", {{"stringValue", "pilotfish"}}}},
                                 {{"key", "telemetry.sdk.language"}, {"value", {{"stringValue", "cpp"}}}}})}};
  return {{"resourceSpans",
           Json::array({{{"resource", std::move(resource)},
                         {"scopeSpans",
                          Json::array({{{"scope", {{"name", "pilotfish"}}}, {"spans", std::move(list)}}})}}})}};
}

OtlpExporter::OtlpExporter(OtlpOptions options) : options_(std::move(options)) {
  thread_ = std::thread([this] { loop(); });
}

OtlpExporter::~OtlpExporter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void OtlpExporter::add(SpanData span) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (queue_.size() >= options_.max_queue) {
      ++dropped_;
      return;
    }
    queue_.push_back(std::move(span));
    if (queue_.size() < options_.batch) return;
  }
  wake_.notify_all();
}

void OtlpExporter::flush(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  flushing_ = true;
  wake_.notify_all();
  idle_.wait_for(lock, timeout, [&] { return queue_.empty() && !sending_; });
  flushing_ = false;
}

int64_t OtlpExporter::exported() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return exported_;
}

int64_t OtlpExporter::dropped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_;
}

void OtlpExporter::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    // Woken early by a full batch, a flush or the end; else every interval. (An empty queue
    // always waits: a predicate that stayed true would spin holding the lock.)
    wake_.wait_for(lock, options_.interval, [&] {
      return stopping_ || (!queue_.empty() && (flushing_ || queue_.size() >= options_.batch));
    });
    if (queue_.empty()) {
      idle_.notify_all();
      if (stopping_) return;
      continue;
    }
    std::vector<SpanData> batch;
    while (!queue_.empty() && batch.size() < options_.batch) {
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    sending_ = true;
    lock.unlock();
    send(std::move(batch));
    lock.lock();
    sending_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
}

void OtlpExporter::send(std::vector<SpanData> batch) {
  HttpRequest r;
  r.method = "POST";
  r.url = options_.url;
  r.timeout = options_.timeout;
  r.headers.emplace_back("Content-Type", "application/json");
  for (const auto& h : options_.headers) r.headers.push_back(h);
  r.body = otlp_json(batch, options_.service_name).dump();
  std::string why;
  int64_t rejected = 0;
  try {
    HttpResponse res = http_request(r);
    if (res.status >= 200 && res.status < 300) {
      // A collector that took only part says how many it rejected (partialSuccess).
      Json body = Json::parse(res.body.empty() ? "{}" : res.body, nullptr, false);
      if (body.is_object() && body.contains("partialSuccess") && body["partialSuccess"].is_object()) {
        const Json& p = body["partialSuccess"];
        if (p.contains("rejectedSpans")) {
          const Json& n = p["rejectedSpans"];
          rejected = n.is_string() ? std::atoll(n.get<std::string>().c_str())
                     : n.is_number() ? n.get<int64_t>() : 0;
        }
        if (rejected > 0) why = "the collector rejected " + std::to_string(rejected) + " spans: " +
                                p.value("errorMessage", "");
      }
    } else {
      why = "the collector answered HTTP " + std::to_string(res.status);
      rejected = static_cast<int64_t>(batch.size());
    }
  } catch (const std::exception& e) {
    why = e.what();
    rejected = static_cast<int64_t>(batch.size());
  }
  std::lock_guard<std::mutex> lock(mutex_);
  exported_ += static_cast<int64_t>(batch.size()) - rejected;
  dropped_ += rejected;
  if (!why.empty() && !warned_) {
    warned_ = true;  // once: a collector that is down would otherwise fill the log
    log::warn("telemetry", "spans not exported to " + options_.url + ": " + why);
  }
}

Telemetry::Telemetry(std::shared_ptr<OtlpExporter> exporter) : exporter_(std::move(exporter)) {}

Telemetry::~Telemetry() {
  set_span_sink(nullptr);  // spans still open keep the exporter until they end
  exporter_->flush();
}

std::unique_ptr<Telemetry> start_telemetry(const Config& config) {
  const TelemetryConfig& t = telemetry_config(config);
  if (t.otlp_endpoint.empty()) return nullptr;
  OtlpOptions o;
  o.url = t.otlp_endpoint;
  while (!o.url.empty() && o.url.back() == '/') o.url.pop_back();
  if (o.url.size() < 10 || o.url.compare(o.url.size() - 10, 10, "/v1/traces") != 0) o.url += "/v1/traces";
  o.service_name = t.service_name;
  if (!t.headers_env.empty()) {
    const char* v = std::getenv(t.headers_env.c_str());
    if (!v) throw ConfigError("telemetry.headersEnv names " + t.headers_env + ", which is not set");
    o.headers = parse_otlp_headers(v);
  }
  auto exporter = std::make_shared<OtlpExporter>(std::move(o));
  set_span_sink(exporter, t.capture_content);
  log::info("telemetry", "tracing to " + t.otlp_endpoint);
  return std::make_unique<Telemetry>(std::move(exporter));
}

bool register_telemetry_config() {
  static const bool once = register_config_section("telemetry", parse_telemetry);
  return once;
}

}  // namespace pf
