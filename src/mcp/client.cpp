// The MCP client (see client.h): a local server's process on a socket pair (so a write to a
// server that died is an error, not SIGPIPE), one JSON-RPC exchange at a time per server, and
// the registry entries that call it.
#include "mcp/client.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/log.h"
#include "mcp/messages.h"
#include "net/http_client.h"
#include "net/sse.h"

namespace pf {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string expand_env(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    size_t close = text[i] == '$' && i + 1 < text.size() && text[i + 1] == '{' ? text.find('}', i) : std::string::npos;
    if (close == std::string::npos) {
      out += text[i];
      continue;
    }
    const char* v = std::getenv(text.substr(i + 2, close - i - 2).c_str());
    out += v ? v : "";
    i = close;
  }
  return out;
}

namespace {

// Sets NAME=value in an environment list, replacing an earlier value of the name.
void set_env(std::vector<std::string>& env, const std::string& name, const std::string& value) {
  for (auto& e : env)
    if (e.compare(0, name.size() + 1, name + "=") == 0) {
      e = name + "=" + value;
      return;
    }
  env.push_back(name + "=" + value);
}

}  // namespace

McpClient::McpClient(McpServerConfig config, std::string workspace)
    : config_(std::move(config)), workspace_(std::move(workspace)) {}

McpClient::~McpClient() {
  std::lock_guard lock(mu_);
  stop_locked("");
}

void McpClient::stop_locked(const std::string& why) {
  if (to_server_ >= 0) ::close(to_server_);
  to_server_ = from_server_ = -1;
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 50 && ::waitpid(pid_, nullptr, WNOHANG) == 0; ++i) ::usleep(10000);
    if (::waitpid(pid_, nullptr, WNOHANG) == 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  pid_ = -1;
  connected_ = false;
  session_id_.clear();
  read_buffer_.clear();
  if (!why.empty()) {
    last_error_ = why;
    ++failures_;
    down_until_ = Clock::now() + std::chrono::milliseconds(backoff_.backoff_ms(failures_));
    log::warn("mcp", config_.name + ": " + why);
  }
}

void McpClient::reset() {
  std::lock_guard lock(mu_);
  stop_locked("");
  failures_ = 0;
  down_until_ = {};
}

std::string McpClient::status() const {
  std::lock_guard lock(mu_);
  std::string where = config_.url.empty() ? "`" + config_.command + "`" : config_.url;
  if (connected_)
    return config_.name + ": running (" + where + ", " + std::to_string(tools_.size()) + " tools)";
  if (!last_error_.empty()) {
    auto wait = std::chrono::duration_cast<std::chrono::seconds>(down_until_ - Clock::now()).count();
    return config_.name + ": down (" + last_error_ + ")" +
           (wait > 0 ? "; next try in " + std::to_string(wait) + " s" : "");
  }
  return config_.name + ": not started (" + where + ")";
}

json McpClient::stdio_exchange_locked(const json& message, int64_t id, bool expect_answer) {
  std::string line = message.dump() + "\n";
  for (size_t sent = 0; sent < line.size();) {
    ssize_t n = ::send(to_server_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) throw Error("the server's input is closed (it exited)");
    sent += static_cast<size_t>(n);
  }
  if (!expect_answer) return nullptr;
  auto deadline = Clock::now() + std::chrono::seconds(config_.timeout_seconds);
  for (;;) {
    size_t nl;
    while ((nl = read_buffer_.find('\n')) != std::string::npos) {
      std::string text = read_buffer_.substr(0, nl);
      read_buffer_.erase(0, nl + 1);
      json m = parse_json(text);
      if (!m.is_object()) continue;  // a log line on stdout: not ours to read
      if (m.contains("method") && m.contains("id")) {
        // A request from the server (roots, sampling, elicitation): we offer none of them.
        json no = {{"jsonrpc", "2.0"}, {"id", m["id"]},
                   {"error", {{"code", -32601}, {"message", "pilotfish does not offer this"}}}};
        std::string reply = no.dump() + "\n";
        ssize_t ignored = ::send(to_server_, reply.data(), reply.size(), MSG_NOSIGNAL);
        (void)ignored;
        continue;
      }
      if (json r = mcp_find_response(m, id); !r.is_null()) return r;
    }
    if (read_buffer_.size() > (16u << 20)) throw Error("the server sent a line over 16 MiB");
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) throw Error("no answer within " + std::to_string(config_.timeout_seconds) + " s");
    pollfd p{from_server_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000))) <= 0) continue;
    char buf[65536];
    ssize_t n = ::recv(from_server_, buf, sizeof buf, 0);
    if (n <= 0) throw Error("the server exited");
    read_buffer_.append(buf, static_cast<size_t>(n));
  }
}

json McpClient::http_exchange_locked(const json& message, int64_t id, bool expect_answer) {
  HttpRequest req;
  req.method = "POST";
  req.url = expand_env(config_.url);
  req.body = message.dump();
  req.timeout = std::chrono::seconds(config_.timeout_seconds);
  req.headers.push_back({"Content-Type", "application/json"});
  req.headers.push_back({"Accept", "application/json, text/event-stream"});
  if (!session_id_.empty()) req.headers.push_back({"Mcp-Session-Id", session_id_});
  if (!protocol_version_.empty()) req.headers.push_back({"MCP-Protocol-Version", protocol_version_});
  for (const auto& [k, v] : config_.headers) req.headers.push_back({k, expand_env(v)});
  HttpResponse res = http_request(req);
  if (std::string sid = res.header("Mcp-Session-Id"); !sid.empty()) session_id_ = sid;
  if (res.status == 404 && !session_id_.empty()) throw Error("the server ended the session");
  if (res.status < 200 || res.status >= 300)
    throw Error("HTTP " + std::to_string(res.status) + ": " + res.body.substr(0, 200));
  if (!expect_answer) return nullptr;
  json found;
  auto take = [&](const json& m) {
    if (json r = mcp_find_response(m, id); !r.is_null()) found = std::move(r);
  };
  if (res.header("Content-Type").find("text/event-stream") != std::string::npos) {
    SseParser parser([&](const SseEvent& e) {
      take(parse_json(e.data));
      return found.is_null();
    });
    parser.feed(res.body);
    parser.feed("\n\n");
  } else {
    take(parse_json(res.body));
  }
  if (found.is_null()) throw Error("the answer held no response to the request");
  return found;
}

json McpClient::rpc_locked(const std::string& method, const json& params) {
  int64_t id = next_id_++;
  json message = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
  json answer = config_.url.empty() ? stdio_exchange_locked(message, id, true)
                                    : http_exchange_locked(message, id, true);
  if (answer.contains("error")) {
    throw Error(mcp_error_text(answer["error"]));
  }
  return answer.contains("result") ? answer["result"] : json::object();
}

void McpClient::notify_locked(const std::string& method) {
  json message = {{"jsonrpc", "2.0"}, {"method", method}};
  if (config_.url.empty())
    stdio_exchange_locked(message, 0, false);
  else
    http_exchange_locked(message, 0, false);
}

void McpClient::connect_locked() {
  if (connected_) return;
  auto now = Clock::now();
  if (!last_error_.empty() && now < down_until_) {
    auto wait = std::chrono::duration_cast<std::chrono::seconds>(down_until_ - now).count() + 1;
    throw Error("the server is down (" + last_error_ + "); next try in " + std::to_string(wait) + " s");
  }
  if (config_.url.empty()) {
    std::string program = find_in_path(expand_env(config_.command));
    if (program.empty()) {
      stop_locked("cannot find the program " + config_.command);
      throw Error(last_error_);
    }
    std::vector<std::string> args = {program};
    for (const auto& a : config_.args) args.push_back(expand_env(a));
    std::vector<std::string> env;
    for (const char* keep : {"PATH", "HOME", "LANG", "TERM", "USER", "TMPDIR"})
      if (const char* v = std::getenv(keep)) env.push_back(std::string(keep) + "=" + v);
    // The workspace's .env (spec §16), then the server's own env, which wins.
    try {
      std::string dotenv = workspace_.empty() ? "" : read_file(workspace_ + "/.env");
      for (size_t start = 0; start < dotenv.size();) {
        size_t end = dotenv.find('\n', start);
        std::string line = dotenv.substr(start, end == std::string::npos ? std::string::npos : end - start);
        start = end == std::string::npos ? dotenv.size() : end + 1;
        if (line.rfind("export ", 0) == 0) line = line.substr(7);
        size_t eq = line.find('=');
        if (line.empty() || line[0] == '#' || eq == std::string::npos || eq == 0) continue;
        std::string value = line.substr(eq + 1);
        if (value.size() >= 2 && (value[0] == '"' || value[0] == '\'') && value.back() == value[0])
          value = value.substr(1, value.size() - 2);
        set_env(env, line.substr(0, eq), value);
      }
    } catch (const Error&) {
      // no .env
    }
    for (const auto& [k, v] : config_.env) set_env(env, k, expand_env(v));
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) throw Error("socketpair failed");
    int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    std::string cwd = workspace_;
    pid_t pid = ::fork();
    if (pid == 0) {
      ::dup2(sv[1], 0);
      ::dup2(sv[1], 1);
      if (devnull >= 0) ::dup2(devnull, 2);
      ::syscall(SYS_close_range, 3, ~0U, 0);
      if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(127);
    }
    ::close(sv[1]);
    if (devnull >= 0) ::close(devnull);
    if (pid < 0) {
      ::close(sv[0]);
      throw Error("cannot start the server (fork failed)");
    }
    pid_ = pid;
    to_server_ = from_server_ = sv[0];
  }
  try {
    json init = rpc_locked("initialize", {{"protocolVersion", "2025-06-18"},
                                          {"capabilities", json::object()},
                                          {"clientInfo", {{"name", "pilotfish"}, {"version", "0.1.0"}}}});
    protocol_version_ = mcp_string(init, "protocolVersion", "2025-06-18");
    notify_locked("notifications/initialized");
    tools_.clear();
    std::string cursor;
    for (int page = 0; page < 20; ++page) {
      json params = cursor.empty() ? json::object() : json{{"cursor", cursor}};
      json list = rpc_locked("tools/list", params);
      for (ToolSpec& t : mcp_tools_of(list, &cursor)) tools_.push_back(std::move(t));
      if (cursor.empty()) break;
    }
  } catch (const std::exception& e) {
    stop_locked(std::string("could not start: ") + e.what());
    throw Error(last_error_);
  }
  connected_ = true;
  failures_ = 0;
  last_error_.clear();
  log::info("mcp", config_.name + ": " + std::to_string(tools_.size()) + " tools");
}

std::vector<ToolSpec> McpClient::tools() {
  std::lock_guard lock(mu_);
  try {
    connect_locked();
  } catch (const Error& e) {
    throw Error("MCP server " + config_.name + ": " + e.what());
  }
  return tools_;
}

json McpClient::call(const std::string& tool, const json& arguments) {
  std::lock_guard lock(mu_);
  try {
    connect_locked();
    return mcp_model_result(rpc_locked("tools/call", {{"name", tool}, {"arguments", arguments}}));
  } catch (const std::exception& e) {
    // A hang or a broken pipe leaves the exchange in an unknown state: start over next time.
    if (connected_) stop_locked(std::string("the call failed: ") + e.what());
    return {{"error", "MCP server " + config_.name + ": " + e.what()}};
  }
}

McpTools::McpTools(const std::vector<McpServerConfig>& servers, const std::string& workspace,
                   const std::string& user_dir) {
  std::vector<McpServerConfig> merged = servers;
  // A file's servers replace those of the same name before them.
  auto merge = [&](const std::string& file) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) return;
    try {
      for (auto& s : parse_mcp_servers(read_file(file), file, "mcpServers")) {
        bool replaced = false;
        for (auto& m : merged)
          if (m.name == s.name) {
            m = s;
            replaced = true;
          }
        if (!replaced) merged.push_back(std::move(s));
      }
    } catch (const Error& e) {
      log::warn("mcp", std::string(e.what()) + "; its servers are left out");
    }
  };
  std::string user = user_dir.empty() ? user_config_dir() : user_dir;
  if (!user.empty()) merge(user + "/mcp-config.json");
  if (!workspace.empty()) merge(workspace + "/mcp-config.json");
  for (auto& s : merged) clients_.push_back(std::make_unique<McpClient>(std::move(s), workspace));
}

void McpTools::add_to(ToolRegistry& registry) {
  for (auto& client : clients_) {
    std::vector<ToolSpec> specs;
    try {
      specs = client->tools();
    } catch (const Error& e) {
      log::warn("mcp", e.what());
      continue;
    }
    const std::string& server = client->config().name;
    for (const ToolSpec& s : specs) {
      std::string tool = s.name;
      McpClient* c = client.get();
      registry.add(ToolEntry{
          ToolSpec{server + "__" + tool, s.description, s.parameters}, ToolPermission::kMcp, 64 * 1024,
          [server, tool](const std::string&) {
            ToolTarget t;
            t.mcp_server = server;
            t.mcp_tool = tool;
            return t;
          },
          [c, tool](const std::string& arguments, Store*) -> json {
            json args = parse_json(arguments);
            if (!args.is_object()) return {{"error", "the arguments must be a JSON object"}};
            return c->call(tool, args);
          }});
    }
  }
}

std::vector<McpServerConfig> McpTools::servers() const {
  std::vector<McpServerConfig> out;
  for (const auto& c : clients_) out.push_back(c->config());
  return out;
}

std::vector<std::string> McpTools::status() const {
  std::vector<std::string> out;
  for (const auto& c : clients_) out.push_back(c->status());
  return out;
}

}  // namespace pf
