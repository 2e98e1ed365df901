// Test helpers: temp directories, files, subprocesses, chunk coverage checks.
#include "test_util.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char** environ;

namespace pf::test {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/pilotfish-test-XXXXXX";
  char* p = ::mkdtemp(tmpl.data());
  if (!p) throw std::runtime_error("mkdtemp failed");
  path_ = p;
}

TempDir::~TempDir() {
  std::error_code ec;
  // Restore permissions a test may have removed, then delete.
  shell("chmod -R u+rwx '" + path_ + "' 2>/dev/null");
  std::filesystem::remove_all(path_, ec);
}

void write_file(const std::string& path, std::string_view content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

namespace {
std::string slurp_fd(int fd) {
  std::string out;
  char buf[65536];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  return out;
}
}  // namespace

void write_ts_repo(const std::string& root, int files) {
  for (int i = 0; i < files; ++i) {
    std::string body = "// module " + std::to_string(i) + "\n";
    for (int f = 0; f < 6; ++f) {
      body += "export function handler" + std::to_string(i) + "_" + std::to_string(f) +
              "(req: Request) {\n  const value = req.headers['x-" + std::to_string(f) + "']\n";
      for (int l = 0; l < 8; ++l)
        body += "  if (value === " + std::to_string(l) + ") return dispatch(value)\n";
      body += "  return null\n}\n\n";
    }
    write_file(
        root + "/src/m" + std::to_string(i / 100) + "/file" + std::to_string(i) + ".ts", body);
  }
  write_file(root + "/docs/guide.md",
                   "# Guide\n\n## Dispatch\n\nHow requests are dispatched.\n");
}

CommandResult run_pilotfish(std::vector<std::string> args) {
  args.insert(args.begin(), pilotfish_bin());
  return run(args);
}

CommandResult run(const std::vector<std::string>& argv) {
  // stdout and stderr go to temporary files, which avoids pipe deadlocks on large output.
  TempDir dir;
  std::string out_path = dir / "out", err_path = dir / "err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  CommandResult r;
  if (posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ) != 0) {
    posix_spawn_file_actions_destroy(&actions);
    r.err = "spawn failed";
    return r;
  }
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  int fo = ::open(out_path.c_str(), O_RDONLY), fe = ::open(err_path.c_str(), O_RDONLY);
  r.out = slurp_fd(fo);
  r.err = slurp_fd(fe);
  ::close(fo);
  ::close(fe);
  return r;
}

int shell(const std::string& command) {
  int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string source_dir() { return PILOTFISH_SOURCE_DIR; }

FileRecord file_named(const std::vector<FileRecord>& files, std::string_view path) {
  for (const FileRecord& f : files)
    if (f.path == path) return f;
  ADD_FAILURE() << "the store lists no file " << path;
  return {};
}

Chunk make_chunk(const std::string& path, int line, const std::string& symbol,
                 const std::string& content) {
  Chunk c;
  c.path = path;
  c.language = "javascript";
  c.start_line = line;
  c.end_line = line + 2;
  c.chunk_type = "function";
  c.function_name = symbol;
  c.symbol = symbol;
  c.content = content;
  c.tokens = 10;
  c.content_hash = "h" + std::to_string(line) + symbol;
  return c;
}

std::string pilotfish_bin() {
  return PILOTFISH_BIN;
}

PythonServer::PythonServer(const std::string& script, const std::vector<std::string>& args) {
  int in[2], out[2];
  if (pipe(in) != 0 || pipe(out) != 0) throw std::runtime_error("pipe failed");
  bool node = script.size() > 4 && script.compare(script.size() - 4, 4, ".mjs") == 0;
  std::string interpreter = node ? "node" : "python3";
  std::vector<std::string> argv = {interpreter,
                                   std::string(PILOTFISH_SOURCE_DIR) + "/tests/servers/" + script};
  argv.insert(argv.end(), args.begin(), args.end());
  pid_t pid = fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // as in ServeProcess: an aborted test leaves no server
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[1]);
    close(out[0]);
    std::vector<char*> cargs;
    for (auto& a : argv) cargs.push_back(a.data());
    cargs.push_back(nullptr);
    execvp(interpreter.c_str(), cargs.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  pid_ = pid;
  stdin_fd_ = in[1];
  std::string line;
  char c;
  while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
  close(out[0]);
  if (line.rfind("PORT ", 0) != 0) throw std::runtime_error(script + " did not start: " + line);
  port_ = std::stoi(line.substr(5));
}

PythonServer::~PythonServer() {
  if (stdin_fd_ >= 0) close(stdin_fd_);  // the server exits when its stdin closes
  if (pid_ > 0) {
    for (int i = 0; i < 50; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) return;
      usleep(20000);
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

ScriptedModelServer::ScriptedModelServer(const std::string& script_json,
                                         const std::string& require_key,
                                         const std::vector<std::string>& extra_args)
    : tls_(std::find(extra_args.begin(), extra_args.end(), "--tls-cert") != extra_args.end()) {
  write_file(dir_ / "script.json", script_json);
  std::vector<std::string> args = {"--script", dir_ / "script.json", "--log", dir_ / "requests.log",
                                   "--events", dir_ / "events.log"};
  if (!require_key.empty()) args.insert(args.end(), {"--require-key", require_key});
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  server_ = std::make_unique<PythonServer>("openai_server.py", args);
}

std::vector<nlohmann::json> ScriptedModelServer::requests() const {
  std::ifstream in(dir_ / "requests.log");
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

std::string ScriptedModelServer::last_tool_result() const {
  std::vector<nlohmann::json> all = requests();
  std::string out;
  if (all.empty() || !all.back()["body"].contains("messages")) return out;
  for (const nlohmann::json& m : all.back()["body"]["messages"])
    if (m["role"] == "tool" && m["content"].is_string()) out = m["content"].get<std::string>();
  return out;
}

std::vector<nlohmann::json> ScriptedModelServer::events() const {
  std::ifstream in(dir_ / "events.log");
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

ServeProcess::ServeProcess(const std::vector<std::string>& args, const std::string& command) {
  int out[2];
  if (pipe(out) != 0) throw std::runtime_error("pipe failed");
  bool serve = command == "serve";
  std::vector<std::string> argv = {pilotfish_bin(), command};
  if (serve) argv.insert(argv.end(), {"--listen", "127.0.0.1:0"});
  argv.insert(argv.end(), args.begin(), args.end());
  std::string log_path = dir_ / "serve.log";
  pid_t pid = fork();
  if (pid == 0) {
    // A test that aborts leaves no server behind to hold ctest's output pipe open.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(out[1], 1);
    int err = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err >= 0) dup2(err, 2);
    close(out[0]);
    std::vector<char*> cargs;
    for (auto& a : argv) cargs.push_back(a.data());
    cargs.push_back(nullptr);
    execv(cargs[0], cargs.data());
    _exit(127);
  }
  close(out[1]);
  pid_ = pid;
  std::string line;
  char c;
  while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
  close(out[0]);
  std::string ready = serve ? "listening on " : "bridge running";
  if (line.rfind(ready, 0) != 0) {
    stop();
    throw std::runtime_error("pilotfish " + command + " did not start: " + line + " / " + log());
  }
  if (serve) url_ = line.substr(13);
  // `bridge running; metrics on http://host:port`: the metrics listener's address.
  if (size_t at = line.find("metrics on "); !serve && at != std::string::npos) url_ = line.substr(at + 11);
}

int ServeProcess::stop() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  int status = 0;
  for (int i = 0; i < 750; ++i) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    usleep(20000);
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
  return -1;
}

void ServeProcess::kill_now() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

ServeProcess::~ServeProcess() {
  stop();
}

std::string ServeProcess::log() const {
  std::ifstream in(dir_ / "serve.log");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<nlohmann::json> ui_stream_events(const std::string& wire) {
  std::vector<nlohmann::json> out;
  size_t at = 0;
  while (at < wire.size()) {
    size_t end = wire.find("\n\n", at);
    if (end == std::string::npos) {
      ADD_FAILURE() << "an unterminated event at the end: " << wire.substr(at);
      break;
    }
    std::string event = wire.substr(at, end - at);
    at = end + 2;
    if (event.rfind(":", 0) == 0) continue;  // a keep-alive comment
    EXPECT_EQ(event.rfind("data: ", 0), 0u) << event;
    EXPECT_EQ(event.find('\n'), std::string::npos) << "a raw newline inside: " << event;
    std::string data = event.substr(6);
    out.push_back(data == "[DONE]" ? nlohmann::json("[DONE]") : nlohmann::json::parse(data));
  }
  return out;
}

std::vector<std::string> ui_stream_types(const std::vector<nlohmann::json>& events) {
  std::vector<std::string> out;
  for (const auto& e : events)
    out.push_back(e.is_string() ? e.get<std::string>() : e["type"].get<std::string>());
  return out;
}

std::string lines_of(std::string_view text, int start, int end) {
  std::string out;
  int line = 1;
  size_t pos = 0;
  while (pos <= text.size() && line <= end) {
    size_t nl = text.find('\n', pos);
    std::string_view l = text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos);
    if (line >= start) {
      if (line > start) out += '\n';
      out += l;
    }
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
    ++line;
  }
  while (!out.empty() && (out.back() == '\r' || out.back() == '\n')) out.pop_back();
  return out;
}

void expect_chunks_cover(std::string_view text, const std::vector<Chunk>& chunks) {
  // Where each line starts (1-based; one past the last line: the end), found once: a chunk's
  // lines are then one substring, where lines_of per chunk scanned from the top (a 300,000-line
  // file in 5,000 windows took 40 s).
  std::vector<size_t> starts = {0, 0};
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') starts.push_back(i + 1);
  int nlines = static_cast<int>(starts.size()) - 1;
  starts.push_back(text.size() + 1);
  std::vector<bool> covered(static_cast<size_t>(nlines) + 2, false);
  for (const Chunk& c : chunks) {
    ASSERT_GE(c.start_line, 1);
    ASSERT_LE(c.start_line, c.end_line);
    ASSERT_LE(c.end_line, nlines);
    if (c.chunk_type != "module" || c.language != "json") {  // the package.json summary is derived
      size_t from = starts[static_cast<size_t>(c.start_line)];
      size_t to = std::min(text.size(), starts[static_cast<size_t>(c.end_line) + 1] - 1);
      std::string_view want = text.substr(from, to - from);
      while (!want.empty() && (want.back() == '\r' || want.back() == '\n')) want.remove_suffix(1);
      EXPECT_EQ(c.content, want) << c.path << ":" << c.start_line << "-" << c.end_line;
    }
    for (int l = c.start_line; l <= c.end_line; ++l) covered[static_cast<size_t>(l)] = true;
  }
  int line = 1;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view l = text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos);
    bool blank = l.find_first_not_of(" \t\r") == std::string_view::npos;
    if (!blank) {
      EXPECT_TRUE(covered[static_cast<size_t>(line)]) << "line " << line << " dropped: " << l;
    }
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
    ++line;
  }
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) d += a[i] * b[i], na += a[i] * a[i], nb += b[i] * b[i];
  return d / std::sqrt(na * nb);
}

std::vector<std::string> requests_asking(const ScriptedModelServer& model,
                                         const std::string& fragment) {
  std::vector<std::string> out;
  for (const nlohmann::json& r : model.requests()) {
    if (!r["body"].contains("messages")) continue;
    std::string last;
    for (const nlohmann::json& m : r["body"]["messages"])
      if (m["role"] == "user" && m["content"].is_string()) last = m["content"];
    if (last.find(fragment) != std::string::npos) out.push_back(r["body"]["messages"].dump());
  }
  return out;
}

int64_t sqlite_int(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr);
  int64_t n = st && sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

void for_each_budget(int64_t matches, const std::function<void(int64_t budget, int limit)>& f) {
  for (int64_t budget : {matches / 2, matches / 8, int64_t{20}, int64_t{1}}) {
    for (int limit : {10, 60}) {
      SCOPED_TRACE("budget " + std::to_string(budget) + " limit " + std::to_string(limit));
      f(budget, limit);
    }
  }
}

std::pair<int, std::string> run_on_terminal(const std::vector<std::string>& argv, const std::string& prompt,
                                            const std::string& input) {
  int master = -1;
  pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    std::vector<char*> a;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    ::execv(a[0], a.data());
    ::_exit(127);
  }
  std::string out;
  bool typed = false;
  for (int i = 0; i < 600; ++i) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 50) > 0) {
      char buf[4096];
      ssize_t n = ::read(master, buf, sizeof buf);
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    if (!typed && out.find(prompt) != std::string::npos) {
      typed = ::write(master, input.data(), input.size()) == static_cast<ssize_t>(input.size());
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(master);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace pf::test
