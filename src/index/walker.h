// Walks a repository root the way git sees it: nested .gitignore files (and .pilotfishignore,
// same syntax, higher priority), .git/info/exclude, the ignore files of enclosing directories
// when the root is inside a git work tree. Also applies the name-based secure defaults of
// file_filter.h. Symlinks are never followed, so the walk cannot leave the root or loop.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "index/file_filter.h"

namespace pf {

struct WalkOptions {
  bool include_tests = false;
  int64_t max_file_bytes = 1 << 20;
  // false: report what git would ignore without pilotfish's own rules (for parity tests).
  bool secure_defaults = true;
};

struct WalkEntry {
  std::string rel;  // '/'-separated, relative to the root
  int64_t size = 0;
  int64_t mtime_ns = 0;
};

struct WalkResult {
  std::string root;              // absolute, symlinks resolved
  std::vector<WalkEntry> files;  // sorted by rel
  std::array<int64_t, static_cast<size_t>(SkipReason::kCount)> skipped{};
};

// Throws pf::UsageError if root is missing or not a directory.
WalkResult walk_repository(const std::string& root, const WalkOptions& options);

// The root a walk of root would report (absolute, symlinks resolved), with the same errors.
std::string resolve_walk_root(const std::string& root);

}  // namespace pf
