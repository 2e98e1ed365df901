// Directory walk with git ignore semantics. An explicit stack (not recursion) keeps deep trees
// from exhausting the call stack; a directory git would ignore is never entered, which is also
// why a negation cannot re-include a file below an ignored directory (as in git).
#include "index/walker.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "index/ignore.h"

namespace pf {
namespace {

using IgnoreChain = std::vector<std::shared_ptr<const IgnoreFile>>;

struct Frame {
  std::string rel;  // relative to the walk root
  IgnoreChain chain;
};

bool is_dir_path(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool exists(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0;
}

// Loads .gitignore then .pilotfishignore of dir (so the latter is checked first).
void load_ignore_files(const std::string& abs_dir, const std::string& base, IgnoreChain* chain) {
  for (const char* name : {".gitignore", ".pilotfishignore"}) {
    std::string p = abs_dir + "/" + name;
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    try {
      auto f = std::make_shared<IgnoreFile>(base, read_file(p));
      if (!f->empty()) chain->push_back(std::move(f));
    } catch (const Error& e) {
      log::warn("index", e.what());
    }
  }
}

IgnoreVerdict check(const IgnoreChain& chain, const std::string& path_from_top, bool is_dir) {
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    IgnoreVerdict v = (*it)->match(path_from_top, is_dir);
    if (v != IgnoreVerdict::kNone) return v;
  }
  return IgnoreVerdict::kNone;
}

std::string join(const std::string& a, const std::string& b) {
  return a.empty() ? b : a + "/" + b;
}

}  // namespace

WalkResult walk_repository(const std::string& root_arg, const WalkOptions& opt) {
  char resolved[PATH_MAX];
  if (!::realpath(root_arg.c_str(), resolved))
    throw UsageError("cannot index " + root_arg + ": " + std::strerror(errno));
  WalkResult result;
  result.root = resolved;
  if (!is_dir_path(result.root)) throw UsageError("cannot index " + root_arg + ": not a directory");

  auto count = [&](SkipReason r) { ++result.skipped[static_cast<size_t>(r)]; };

  // Find the enclosing git work tree, if any: its info/exclude and the .gitignore files of the
  // directories between it and the root apply too. Ignore paths are matched relative to it.
  std::string top = result.root;
  std::string prefix;  // root relative to top
  for (std::string dir = result.root;;) {
    if (exists(dir + "/.git")) {
      top = dir;
      prefix = result.root.size() > dir.size() ? result.root.substr(dir.size() + 1) : "";
      break;
    }
    size_t slash = dir.rfind('/');
    if (slash == std::string::npos || dir == "/") break;
    dir = slash == 0 ? "/" : dir.substr(0, slash);
    if (dir == "/") break;
  }
  Frame first;
  first.rel = "";
  if (is_dir_path(top + "/.git")) {
    try {
      std::string exclude = top + "/.git/info/exclude";
      if (exists(exclude))
        first.chain.push_back(std::make_shared<IgnoreFile>("", read_file(exclude)));
    } catch (const Error& e) {
      log::warn("index", e.what());
    }
  }
  if (!prefix.empty()) {
    // Ignore files above the root, from the top down to the root's parent.
    std::string rel;
    load_ignore_files(top, "", &first.chain);
    size_t start = 0;
    while (true) {
      size_t slash = prefix.find('/', start);
      if (slash == std::string::npos) break;
      rel = prefix.substr(0, slash);
      load_ignore_files(top + "/" + rel, rel, &first.chain);
      start = slash + 1;
    }
  }

  std::vector<Frame> stack;
  stack.push_back(std::move(first));
  while (!stack.empty()) {
    Frame frame = std::move(stack.back());
    stack.pop_back();
    std::string abs_dir = frame.rel.empty() ? result.root : result.root + "/" + frame.rel;
    std::string dir_from_top = join(prefix, frame.rel);
    load_ignore_files(abs_dir, dir_from_top, &frame.chain);

    DIR* d = ::opendir(abs_dir.c_str());
    if (!d) {
      log::warn("index", "cannot read directory " + abs_dir + ": " + std::strerror(errno));
      count(SkipReason::kUnreadable);
      continue;
    }
    std::vector<Frame> subdirs;
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      std::string rel = join(frame.rel, name);
      std::string abs = abs_dir + "/" + name;
      struct stat st {};
      if (::fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        count(SkipReason::kUnreadable);
        continue;
      }
      bool is_dir = S_ISDIR(st.st_mode);
      if (is_dir && name == ".git") {
        count(SkipReason::kDefaultDir);
        continue;
      }
      if (S_ISLNK(st.st_mode)) {
        // git matches a symlink as a file; we never follow it either way.
        if (check(frame.chain, join(prefix, rel), false) == IgnoreVerdict::kIgnore)
          count(SkipReason::kIgnored);
        else
          count(SkipReason::kSymlink);
        continue;
      }
      if (!is_dir && !S_ISREG(st.st_mode)) continue;  // sockets, fifos, devices
      if (check(frame.chain, join(prefix, rel), is_dir) == IgnoreVerdict::kIgnore) {
        count(SkipReason::kIgnored);
        continue;
      }
      if (is_dir) {
        if (opt.secure_defaults) {
          if (is_default_skipped_dir(name)) {
            count(SkipReason::kDefaultDir);
            continue;
          }
          if (is_secret_dir(name)) {
            count(SkipReason::kSecretName);
            continue;
          }
          if (!opt.include_tests && is_test_dir(name)) {
            count(SkipReason::kTest);
            continue;
          }
        }
        subdirs.push_back(Frame{rel, frame.chain});
        continue;
      }
      if (opt.secure_defaults) {
        SkipReason r = SkipReason::kNone;
        if (is_secret_file(name))
          r = SkipReason::kSecretName;
        else if (!opt.include_tests && is_test_file(name))
          r = SkipReason::kTest;
        else if (is_generated_name(name))
          r = SkipReason::kGenerated;
        else if (st.st_size > opt.max_file_bytes)
          r = SkipReason::kTooLarge;
        else if (::access(abs.c_str(), R_OK) != 0)
          r = SkipReason::kUnreadable;
        if (r != SkipReason::kNone) {
          count(r);
          continue;
        }
      }
      int64_t mtime = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
      result.files.push_back(WalkEntry{rel, st.st_size, mtime});
    }
    ::closedir(d);
    // Push in reverse so directories are visited in name order (deterministic progress).
    std::sort(subdirs.begin(), subdirs.end(),
              [](const Frame& a, const Frame& b) { return a.rel > b.rel; });
    for (auto& s : subdirs) stack.push_back(std::move(s));
  }
  std::sort(result.files.begin(), result.files.end(),
            [](const WalkEntry& a, const WalkEntry& b) { return a.rel < b.rel; });
  return result;
}

}  // namespace pf
