// `pilotfish serve` and `pilotfish hash-key`: the command-line side of the HTTP server.
#include <openssl/rand.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>

#include "api/auth.h"
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/signal_set.hpp>
#include <memory>
#include <nlohmann/json.hpp>

#include "api/copilot_server.h"
#include "bridge/service.h"
#include "bridge/state_store.h"
#include "cli/commands.h"
#include "core/config.h"
#include "core/error.h"
#include "core/log.h"
#include "core/text.h"
#include "llm/model_registry.h"
#include "mcp/server.h"
#include "net/http_server.h"
#include "net/otlp_exporter.h"
#include "runtime/answer_runtime.h"

namespace pf::cli {

int run_serve(const ServeArgs& args) {
  Config config = load_config(args.config);
  apply_logging(config);
  std::unique_ptr<Telemetry> telemetry = start_telemetry(config);  // traces, when configured
  ServeOptions options;
  options.db_path = resolve_db(args.db);
  options.repository = args.repo;
  options.listen = args.listen;
  options.no_auth = args.no_auth;
  options.workers = args.workers;
  options.on_listening = [](const std::string& url) {
    // The first line of stdout: scripts and tests wait for it to learn the port.
    std::printf("listening on %s\n", url.c_str());
    std::fflush(stdout);
  };
  // Side-effecting calls are kept in the audit trail, in the bridge state beside the store.
  std::unique_ptr<StateStore> audit;
  if (!config.actions.enabled.empty() || !config.mcp_servers.empty()) {
    audit = open_state_store(bridge_state_path(bridge_config(config), options.db_path));
    options.audit = audit.get();
  }
  // The configured bridges run beside the API, on its network thread and runtime.
  std::shared_ptr<std::unique_ptr<BridgeService>> bridge =
      std::make_shared<std::unique_ptr<BridgeService>>();
  if (!bridge_config(config).platforms.empty()) {
    std::string config_path = config.source;
    options.start_beside = [bridge, config, db = options.db_path, config_path](
                               boost::asio::io_context& io,
                               AnswerRuntime& runtime) -> boost::asio::awaitable<void> {
      *bridge = std::make_unique<BridgeService>(io, runtime, config, db, config_path);
      co_await (*bridge)->start();
    };
    options.stop_beside = [bridge]() -> boost::asio::awaitable<void> {
      if (*bridge) co_await (*bridge)->stop();
    };
    options.end_beside = [bridge] { bridge->reset(); };
    options.extra_metrics = [bridge] { return *bridge ? (*bridge)->bridge().metrics_text() : std::string(); };
  }
  return serve(config, options);
}

int run_bridge(const BridgeArgs& args) {
  Config config = load_config(args.config);
  if (args.check) return check_bridges(config, resolve_db(args.db));
  apply_logging(config);
  std::unique_ptr<Telemetry> telemetry = start_telemetry(config);  // traces, when configured
  if (bridge_config(config).platforms.empty())
    throw UsageError(
        "no bridge is configured: add a \"bridge\" section to the config (see the "
        "README)");
  std::string db = resolve_db(args.db);
  boost::asio::io_context io(1);
  AnswerRuntime runtime(config, db, args.workers);
  BridgeService service(io, runtime, config, db, config.source);
  // GET /metrics on bridge.metricsListen, when set: the bridge's Prometheus text.
  std::unique_ptr<HttpServer> metrics;
  std::string metrics_url;
  if (std::string at = bridge_config(config).metrics_listen; !at.empty()) {
    metrics = std::make_unique<HttpServer>(
        io, HttpServerOptions{},
        [&service](ServerRequest& req, ServerResponse& res) -> boost::asio::awaitable<void> {
          if (req.path == "/metrics" && req.method == "GET") {
            std::string text = service.bridge().metrics_text();
            co_await res.send(200, "text/plain; version=0.0.4; charset=utf-8", std::move(text));
          } else {
            std::string body = R"({"error": "not_found", "message": "only GET /metrics is served here"})";
            co_await res.send(404, "application/json", std::move(body));
          }
        });
    size_t colon = at.rfind(':');
    unsigned short port = metrics->listen(at.substr(0, colon), at.substr(colon + 1));
    metrics->start();
    metrics_url = "http://" + at.substr(0, colon) + ":" + std::to_string(port);
  }
  std::exception_ptr failure;
  boost::asio::co_spawn(io, service.start(), [&](std::exception_ptr e) {
    if (!e) {
      // The first line of stdout, as serve's "listening on": scripts wait for it.
      std::printf("bridge running%s\n", metrics_url.empty() ? "" : ("; metrics on " + metrics_url).c_str());
      std::fflush(stdout);
      return;
    }
    failure = e;
    io.stop();
  });
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    log::info("bridge", "signal " + std::to_string(signal) + ": finishing running turns");
    if (metrics) metrics->stop();
    boost::asio::co_spawn(io, service.stop(), [&](std::exception_ptr) { io.stop(); });
  });
  io.run();
  if (failure) std::rethrow_exception(failure);
  return 0;
}

int run_models(const ModelsArgs& args) {
  Config config = load_config(args.config);
  std::vector<ModelRef> models = configured_models(config);
  if (args.resolve) {  // even empty: an empty name is an error, not a listing
    ModelResolution r = resolve_model(models, *args.resolve);
    if (args.json) {
      nlohmann::json j = {{"input", *args.resolve},
                          {"model", r.model ? nlohmann::json(r.model->id()) : nlohmann::json()},
                          {"alternatives", nlohmann::json::array()}};
      for (const auto& a : r.alternatives) j["alternatives"].push_back(a.id());
      if (!r.model) j["error"] = r.error;
      std::printf("%s\n", j.dump().c_str());
    } else if (r.model) {
      std::printf("%s -> %s\n", args.resolve->c_str(), r.model->id().c_str());
      for (const auto& a : r.alternatives) std::printf("  also matched %s\n", a.id().c_str());
    } else {
      std::fprintf(stderr, "pilotfish: %s\n", r.error.c_str());
    }
    return r.model ? 0 : 1;
  }
  if (args.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& m : models) j.push_back({{"id", m.id()}, {"provider", m.provider}});
    std::printf("%s\n", nlohmann::json{{"models", j}}.dump().c_str());
    return 0;
  }
  for (const auto& p : config.providers) {
    std::printf("%s (%s)\n", p.name.c_str(), p.type.c_str());
    for (const auto& m : p.models) std::printf("  %s:%s\n", p.name.c_str(), m.id.c_str());
  }
  return 0;
}

int run_hash_key(const HashKeyArgs& args) {
  std::string key;
  if (args.generate) {
    unsigned char bytes[24];
    if (RAND_bytes(bytes, sizeof bytes) != 1) throw Error("no random bytes available");
    key = "pf_" + hex_encode(std::string_view(reinterpret_cast<const char*>(bytes), sizeof bytes));
    std::printf("key:  %s\nhash: sha256:%s\n", key.c_str(), sha256_hex(key).c_str());
    return 0;
  }
  if (!std::getline(std::cin, key) || key.empty())
    throw UsageError("give the key on stdin, e.g. `printf %s \"$KEY\" | pilotfish hash-key`");
  if (!key.empty() && key.back() == '\r') key.pop_back();
  std::printf("sha256:%s\n", sha256_hex(key).c_str());
  return 0;
}

int run_mcp(const McpArgs& args) {
  Config config = load_config(args.config);
  apply_logging(config);
  std::string db = resolve_db(args.db);
  if (!std::filesystem::exists(db))
    throw UsageError("no store at " + db + ": index a repository first (pilotfish index DIR)");
  boost::asio::io_context io(1);
  AnswerRuntime runtime(config, db, args.workers);
  McpServer server(runtime, args.repos);
  McpSession session;
  // One JSON-RPC message per line on stdin, each answer one line on stdout (nothing else may
  // write there: the log goes to stderr). Handled one after another, as they arrive.
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::optional<std::string> answer;
    boost::asio::co_spawn(io, server.handle_text(line, session),
                          [&](std::exception_ptr, std::optional<std::string> a) { answer = std::move(a); });
    io.restart();
    io.run();
    if (answer) {
      std::fwrite(answer->data(), 1, answer->size(), stdout);
      std::fputc('\n', stdout);
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace pf::cli
