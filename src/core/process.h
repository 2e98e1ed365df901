// Running a program as a child of pilotfish and waiting for it: no shell, the working folder and
// extra environment given, standard input from a file, its output collected up to a cap, and the
// whole process group killed at a deadline. For commands pilotfish runs itself (git, operator
// hooks); what a model asks to run goes through the sandbox (agent/sandbox.h) instead.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace pf {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH when it has no '/'
  std::string cwd;                // empty: pilotfish's own
  // Set on top of pilotfish's environment (replacing a variable of the same name).
  std::vector<std::pair<std::string, std::string>> env;
  std::string stdin_path;   // empty: /dev/null
  std::string stderr_path;  // where standard error goes; empty: into output with stdout
  int64_t timeout_ms = 60000;
  size_t max_output_bytes = 1 << 20;  // the rest is read and dropped
};

struct ProcessResult {
  bool ok = false;     // exited with status 0
  int exit_code = -1;  // when it exited
  int signal = 0;      // the signal that ended it, when one did
  bool timed_out = false;
  std::string output;
  // Empty when ok; else why, in a few words: "exit status 128", "timed out after 30 s",
  // "killed by signal 9", "its cwd /x cannot be entered", "cannot start it: ...".
  std::string error;
};

// Runs spec.argv and waits until it exits and its output closes, or the deadline (then its
// process group is killed). Blocking; callable from several threads at once. Never throws.
ProcessResult run_process(const ProcessSpec& spec);

}  // namespace pf
