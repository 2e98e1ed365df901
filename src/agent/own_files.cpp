// pilotfish's own paths (see own_files.h): kept absolute and symlink-free, so that a tool's
// resolved path can be compared with them by prefix.
#include "agent/own_files.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>

namespace pf {
namespace {

bool under(const std::string& path, const std::string& folder) {
  if (folder == "/") return !path.empty() && path[0] == '/';
  return path == folder || (path.size() > folder.size() && path.compare(0, folder.size(), folder) == 0 &&
                            path[folder.size()] == '/');
}

// "/a/./b/../c" -> "/a/c"; path is absolute.
std::string fold(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    std::string seg = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    start = slash == std::string::npos ? path.size() + 1 : slash + 1;
    if (seg.empty() || seg == ".") continue;
    if (seg == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(seg);
  }
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

}  // namespace

std::string absolute_path(const std::string& path) {
  if (path.empty()) return path;
  std::string abs = path;
  if (abs[0] != '/') {
    char cwd[PATH_MAX];
    abs = (::getcwd(cwd, sizeof cwd) ? std::string(cwd) : std::string("/")) + "/" + abs;
  }
  abs = fold(abs);
  // Resolve the longest prefix that exists; keep the rest as written.
  std::string head = abs, tail;
  while (true) {
    char buf[PATH_MAX];
    if (::realpath(head.c_str(), buf)) {
      std::string real = buf;
      return tail.empty() ? real : (real == "/" ? "" : real) + tail;
    }
    size_t slash = head.rfind('/');
    if (slash == std::string::npos || head == "/") return abs;
    tail = head.substr(slash) + tail;
    head = slash == 0 ? "/" : head.substr(0, slash);
  }
}

// Whether path is the store file or named after it in its folder (or under such a folder).
static bool in_family(const std::string& path, const std::string& store) {
  if (path.size() <= store.size()) return path == store;
  if (path.compare(0, store.size(), store) != 0) return false;
  char next = path[store.size()];
  return next == '-' || next == '.';
}

void OwnFiles::add(const std::string& path, Entry::Kind kind) {
  if (path.empty()) return;
  std::string abs = absolute_path(path);
  for (const Entry& e : entries_)
    if (e.path == abs && e.kind == kind) return;
  entries_.push_back({abs, kind});
}

void OwnFiles::add_store(const std::string& path) {
  if (path.empty() || path.find("://") != std::string::npos) return;
  add(path, Entry::kStore);
}

void OwnFiles::add_file(const std::string& path) { add(path, Entry::kFile); }

void OwnFiles::add_folder(const std::string& path) { add(path, Entry::kFolder); }

void OwnFiles::expose(const std::string& folder) {
  if (folder.empty()) return;
  std::string abs = absolute_path(folder);
  if (std::find(exposed_.begin(), exposed_.end(), abs) == exposed_.end()) exposed_.push_back(abs);
}

bool OwnFiles::covers(const std::string& path) const {
  for (const std::string& x : exposed_)
    if (under(path, x)) return false;
  for (const Entry& e : entries_) {
    bool hit = e.kind == Entry::kFolder ? under(path, e.path)
               : e.kind == Entry::kStore ? in_family(path, e.path)
                                         : path == e.path;
    if (hit) return true;
  }
  return false;
}

bool OwnFiles::exposes_under(const std::string& path) const {
  for (const std::string& x : exposed_)
    if (under(x, path)) return true;
  return false;
}

}  // namespace pf
