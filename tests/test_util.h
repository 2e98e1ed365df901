// Helpers shared by the tests: temporary directories, file writing, running commands.
#pragma once

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
// Runs a shell command line; returns its exit code.
int shell(const std::string& command);

std::string pilotfish_bin();

// The lines [start, end] (1-based) of text, joined with '\n', as a chunk must hold them.
std::string lines_of(std::string_view text, int start, int end);

// Every non-blank line of text lies in some chunk, and each chunk's content equals its lines.
void expect_chunks_cover(std::string_view text, const std::vector<Chunk>& chunks);

}  // namespace pf::test
