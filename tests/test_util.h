// Helpers shared by the tests: temporary directories, file writing, running commands.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "store/chunk.h"

namespace pf::test {

// A fresh directory under $TMPDIR, removed (recursively) when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(std::string_view rel) const { return path_ + "/" + std::string(rel); }

 private:
  std::string path_;
};

// Writes content to path, creating parent directories.
void write_file(const std::string& path, std::string_view content);

struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};
// Runs argv (no shell) and captures stdout and stderr.
CommandResult run(const std::vector<std::string>& argv);
// A TypeScript repository of `files` files under src/m<N>/ (six handlers each) and a guide.
void write_ts_repo(const std::string& root, int files);
// The pilotfish binary with these arguments.
CommandResult run_pilotfish(std::vector<std::string> args);
// Runs a shell command line; returns its exit code.
int shell(const std::string& command);

std::string pilotfish_bin();
// The checkout's root (for test scripts such as tests/node/*.mjs).
std::string source_dir();

// One of the test servers of tests/servers/ (Python, or Node for a .mjs script; they print
// "PORT <n>" first and exit when their stdin closes), stopped when the object dies.
class PythonServer {
 public:
  PythonServer(const std::string& script, const std::vector<std::string>& args);
  ~PythonServer();
  PythonServer(const PythonServer&) = delete;
  PythonServer& operator=(const PythonServer&) = delete;
  int port() const { return port_; }

 private:
  int pid_ = -1, stdin_fd_ = -1, port_ = 0;
};

// The scripted OpenAI-compatible server of tests/servers/openai_server.py, on a loopback port,
// stopped when the object dies.
class ScriptedModelServer {
 public:
  // script: JSON list of actions (see the server's docstring); require_key: "" for none;
  // extra_args: more of the server's options (--tls-cert/--tls-key: HTTPS as localhost).
  explicit ScriptedModelServer(const std::string& script_json = "[]",
                               const std::string& require_key = "",
                               const std::vector<std::string>& extra_args = {});
  std::string base_url() const {
    return (tls_ ? "https://localhost:" : "http://127.0.0.1:") + std::to_string(server_->port()) +
           "/v1";
  }
  // The requests received so far, in order: {"path", "auth", "body"} each.
  std::vector<nlohmann::json> requests() const;
  // The content of the last tool message in the last chat request (what the model was last
  // told a tool returned), or "".
  std::string last_tool_result() const;
  // How each streamed chat answer ended: {"event": "stream completed" | "client disconnected",
  // "chunks_sent", "chunks_total", ...} each.
  std::vector<nlohmann::json> events() const;

 private:
  TempDir dir_;
  bool tls_ = false;
  std::unique_ptr<PythonServer> server_;
};

// The chat requests model got whose last user message contains fragment, each as its
// messages' JSON text, in order.
std::vector<std::string> requests_asking(const ScriptedModelServer& model,
                                         const std::string& fragment);

// A scripted model action that calls one tool (id "1"), or answers with text; taken only by a
// request one of whose user messages contains match (any request when match is empty).
inline nlohmann::json scripted_call(const std::string& name, const nlohmann::json& args,
                                    const std::string& match = "") {
  nlohmann::json a = {
      {"chat",
       {{"tool_calls",
         nlohmann::json::array({{{"id", "1"}, {"name", name}, {"arguments", args.dump()}}})},
        {"finish", "tool_calls"}}}};
  if (!match.empty()) a["match"] = match;
  return a;
}
inline nlohmann::json scripted_text(const std::string& text, const std::string& match = "") {
  nlohmann::json a = {{"chat", {{"text", {text}}}}};
  if (!match.empty()) a["match"] = match;
  return a;
}

// A scripted model answer streamed as chunks words ("word0 ", "word1 ", ...), delay seconds
// apart; match: taken only by a request whose user message contains it.
inline nlohmann::json slow_chat(int chunks, double delay, const std::string& match = "") {
  nlohmann::json text = nlohmann::json::array();
  for (int i = 0; i < chunks; ++i) text.push_back("word" + std::to_string(i) + " ");
  nlohmann::json a = {{"chat", {{"text", text}, {"chunk_delay", delay}}}};
  if (!match.empty()) a["match"] = match;
  return a;
}

// `pilotfish serve` in a child process on a free loopback port (or, with command "bridge",
// `pilotfish bridge`, ready once it prints "bridge running"); SIGTERM when the object dies.
class ServeProcess {
 public:
  // args: after the command (--db, --config, --repo, ...); serve gets --listen 127.0.0.1:0.
  explicit ServeProcess(const std::vector<std::string>& args, const std::string& command = "serve");
  ~ServeProcess();
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;
  // serve: its URL; bridge: its metrics listener's (bridge.metricsListen), else empty.
  const std::string& url() const { return url_; }
  // Sends SIGTERM and returns the exit status (-1 if it had to be killed).
  int stop();
  // SIGKILL at once, as a crash or an OOM kill would end it.
  void kill_now();
  // What the server wrote to stderr (its log) so far.
  std::string log() const;

 private:
  TempDir dir_;
  int pid_ = -1;
  std::string url_;
};

// The events of an AI SDK UI message stream (or any stream of JSON data events): each "data: <json>\n\n" parsed, [DONE] kept as the
// string "[DONE]", keep-alive comments skipped. Framing faults (no blank line, a raw newline in
// a payload, another field) are test failures.
std::vector<nlohmann::json> ui_stream_events(const std::string& wire);
// Each event's "type" ("[DONE]" for the terminator).
std::vector<std::string> ui_stream_types(const std::vector<nlohmann::json>& events);

// A chunk of a JavaScript function (its name the symbol) at line..line+2 of path, with content;
// for store tests that write chunks without indexing a repository.
Chunk make_chunk(const std::string& path, int line, const std::string& symbol,
                 const std::string& content);

// The record of path among a store's files (Store::list_files); a test failure and an empty
// record when it is not there.
FileRecord file_named(const std::vector<FileRecord>& files, std::string_view path);

// The lines [start, end] (1-based) of text, joined with '\n', as a chunk must hold them.
std::string lines_of(std::string_view text, int start, int end);

// The cosine of two vectors of the same length.
double cosine(const std::vector<float>& a, const std::vector<float>& b);

// Every non-blank line of text lies in some chunk, and each chunk's content equals its lines.
void expect_chunks_cover(std::string_view text, const std::vector<Chunk>& chunks);

// The first column of the first row sql gives on the SQLite file at path, opened read-only, as
// an integer; 0 when there is no row or the query cannot run (a table not made yet).
int64_t sqlite_int(const std::string& path, const std::string& sql);

// The match budgets and limits the lexical rankings are compared under: half and an eighth of
// the matching rows, 20 and 1, each with limits 10 and 60; f runs once for each pair, under a
// SCOPED_TRACE naming it.
void for_each_budget(int64_t matches, const std::function<void(int64_t budget, int limit)>& f);

// Runs argv under a new pseudo-terminal, typing input once the output shows prompt; returns
// the exit code and all output (the child is waited for; output is read for up to 30 s).
std::pair<int, std::string> run_on_terminal(const std::vector<std::string>& argv,
                                            const std::string& prompt, const std::string& input);

}  // namespace pf::test
