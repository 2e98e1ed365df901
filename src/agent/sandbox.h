// Running a model's shell command inside a bubblewrap sandbox: the workspace is the only
// writable place (and the working directory), the system's directories are read-only, the
// host's home folders, the store, the config and other workspaces are not there at all, the
// network is absent unless allowed, the environment is a fresh minimal one (never the server's
// secrets), and the command is killed at its timeout or when it starts too many processes.
// Without bubblewrap nothing runs: the result says so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent/own_files.h"

namespace pf {

struct SandboxOptions {
  std::string workspace;             // absolute; bound read-write and the working directory
  // pilotfish's own paths: the folders holding them are not there at all (an empty read-only
  // folder in their place; a file directly in the workspace's top folder is an empty read-only
  // file), except the exposed folders, bound read-only.
  OwnFiles own;
  // Paths outside the workspace a permission rule opened (permissions.allowPaths): bound
  // read-only or read-write at the same place. Never one of the own paths.
  std::vector<std::string> read_only_binds;
  std::vector<std::string> writable_binds;
  bool network = false;              // share the host's network
  int64_t timeout_ms = 60000;
  size_t max_output_bytes = 32 * 1024;  // stdout and stderr together; the rest is counted
  int max_processes = 256;           // more at once in the sandbox and it is killed
  std::string bwrap = "bwrap";       // the bubblewrap binary (a path, or looked up in PATH)
  // A host file the command reads as its standard input (a hook's event); empty: /dev/null.
  std::string stdin_path;
  // A host file that takes the command's standard error apart from its output (a hook's
  // diagnostics, apart from its JSON answer); empty: interleaved with the output.
  std::string stderr_path;
  // Added to the fresh environment (a hook's env); the fixed entries cannot be replaced.
  std::vector<std::pair<std::string, std::string>> env;
};

struct CommandResult {
  bool ran = false;         // false: the sandbox could not start (error says why)
  int exit_code = -1;       // the command's exit status, when it exited
  int signal = 0;           // the signal that ended it, when one did
  bool timed_out = false;
  bool too_many_processes = false;
  std::string output;       // stdout and stderr interleaved, cut at max_output_bytes
  size_t output_bytes = 0;  // all it wrote
  int64_t duration_ms = 0;
  std::string error;
  // pilotfish's own files the command created where they could not be hidden (workspace
  // paths), removed after it ended.
  std::vector<std::string> removed;
};

// Runs `bash -c command` in the sandbox and waits for it. Blocking; callable from several
// threads at once. Never throws.
CommandResult run_sandboxed(const std::string& command, const SandboxOptions& options);

// Whether bubblewrap can start a sandbox here (checked once per binary and cached); *why says
// what is missing when not.
bool sandbox_available(const std::string& bwrap, std::string* why);

}  // namespace pf
