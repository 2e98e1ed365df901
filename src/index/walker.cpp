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
#include <exception>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

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

// Loads .gitignore then .pilotfishignore of dir (so the latter is checked first). dir_fd, when
// not -1, is abs_dir opened: the look-up is then one name, not a whole path, per directory.
void load_ignore_files(const std::string& abs_dir, const std::string& base, IgnoreChain* chain,
                       int dir_fd = -1) {
  for (const char* name : {".gitignore", ".pilotfishignore"}) {
    std::string p = abs_dir + "/" + name;
    struct stat st {};
    int found = dir_fd >= 0 ? ::fstatat(dir_fd, name, &st, 0) : ::stat(p.c_str(), &st);
    if (found != 0 || !S_ISREG(st.st_mode)) continue;
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

std::string resolve_walk_root(const std::string& root_arg) {
  char resolved[PATH_MAX];
  if (!::realpath(root_arg.c_str(), resolved))
    throw UsageError("cannot index " + root_arg + ": " + std::strerror(errno));
  if (!is_dir_path(resolved)) throw UsageError("cannot index " + root_arg + ": not a directory");
  return resolved;
}

namespace {

using Skipped = decltype(WalkResult::skipped);

// What a walk shares between its threads: read-only but for the queue of directories.
struct Walk {
  std::string root, prefix;  // prefix: root relative to the git work tree's top
  const WalkOptions* opt = nullptr;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Frame> pending;  // directories not yet read
  int busy = 0;                // threads reading a directory (which may add more)
  std::exception_ptr failure;  // the first error a thread met; rethrown once all have stopped
};

// What one thread found.
struct WalkPart {
  std::vector<WalkEntry> files;
  Skipped skipped{};
  void count(SkipReason r) { ++skipped[static_cast<size_t>(r)]; }
};

// The frame of the root: .git/info/exclude and the ignore files of the directories between the
// enclosing git work tree's top and the root (matched relative to the top); sets w->prefix.
Frame root_frame(Walk* w) {
  std::string top = w->root;
  for (std::string dir = w->root;;) {
    if (exists(dir + "/.git")) {
      top = dir;
      w->prefix = w->root.size() > dir.size() ? w->root.substr(dir.size() + 1) : "";
      break;
    }
    size_t slash = dir.rfind('/');
    if (slash == std::string::npos || dir == "/") break;
    dir = slash == 0 ? "/" : dir.substr(0, slash);
    if (dir == "/") break;
  }
  Frame first;
  if (is_dir_path(top + "/.git")) {
    try {
      std::string exclude = top + "/.git/info/exclude";
      if (exists(exclude))
        first.chain.push_back(std::make_shared<IgnoreFile>("", read_file(exclude)));
    } catch (const Error& e) {
      log::warn("index", e.what());
    }
  }
  if (!w->prefix.empty()) {
    load_ignore_files(top, "", &first.chain);
    for (size_t start = 0;;) {
      size_t slash = w->prefix.find('/', start);
      if (slash == std::string::npos) break;
      std::string rel = w->prefix.substr(0, slash);
      load_ignore_files(top + "/" + rel, rel, &first.chain);
      start = slash + 1;
    }
  }
  return first;
}

// Why a file the ignore rules keep is still left out by the secure defaults (kNone: it is not).
SkipReason file_verdict(const WalkOptions& opt, const std::string& name, const struct stat& st,
                        int dir_fd) {
  if (!opt.secure_defaults) return SkipReason::kNone;
  if (is_secret_file(name)) return SkipReason::kSecretName;
  if (!opt.include_tests && is_test_file(name)) return SkipReason::kTest;
  if (is_generated_name(name)) return SkipReason::kGenerated;
  if (st.st_size > opt.max_file_bytes) return SkipReason::kTooLarge;
  // A file anyone may read needs no access(2) call (a name look-up per file); others are asked
  // (owner, group, ACLs).
  if ((st.st_mode & S_IROTH) == 0 && ::faccessat(dir_fd, name.c_str(), R_OK, 0) != 0)
    return SkipReason::kUnreadable;
  return SkipReason::kNone;
}

SkipReason dir_verdict(const WalkOptions& opt, const std::string& name) {
  if (!opt.secure_defaults) return SkipReason::kNone;
  if (is_default_skipped_dir(name)) return SkipReason::kDefaultDir;
  if (is_secret_dir(name)) return SkipReason::kSecretName;
  if (!opt.include_tests && is_test_dir(name)) return SkipReason::kTest;
  return SkipReason::kNone;
}

// Reads one directory: its files into part, its subdirectories into *subdirs.
void read_dir(const Walk& w, Frame& frame, WalkPart* part, std::vector<Frame>* subdirs) {
  std::string abs_dir = frame.rel.empty() ? w.root : w.root + "/" + frame.rel;
  DIR* d = ::opendir(abs_dir.c_str());
  if (!d) {
    log::warn("index", "cannot read directory " + abs_dir + ": " + std::strerror(errno));
    part->count(SkipReason::kUnreadable);
    return;
  }
  load_ignore_files(abs_dir, join(w.prefix, frame.rel), &frame.chain, dirfd(d));
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    std::string rel = join(frame.rel, name);
    struct stat st {};
    if (::fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      part->count(SkipReason::kUnreadable);
      continue;
    }
    bool is_dir = S_ISDIR(st.st_mode);
    if (is_dir && name == ".git") {
      part->count(SkipReason::kDefaultDir);
      continue;
    }
    if (S_ISLNK(st.st_mode)) {
      // git matches a symlink as a file; we never follow it either way.
      bool ignored = check(frame.chain, join(w.prefix, rel), false) == IgnoreVerdict::kIgnore;
      part->count(ignored ? SkipReason::kIgnored : SkipReason::kSymlink);
      continue;
    }
    if (!is_dir && !S_ISREG(st.st_mode)) continue;  // sockets, fifos, devices
    if (check(frame.chain, join(w.prefix, rel), is_dir) == IgnoreVerdict::kIgnore) {
      part->count(SkipReason::kIgnored);
      continue;
    }
    SkipReason r = is_dir ? dir_verdict(*w.opt, name) : file_verdict(*w.opt, name, st, dirfd(d));
    if (r != SkipReason::kNone) {
      part->count(r);
    } else if (is_dir) {
      subdirs->push_back(Frame{rel, frame.chain});
    } else {
      int64_t mtime = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
      part->files.push_back(WalkEntry{rel, st.st_size, mtime});
    }
  }
  ::closedir(d);
}

// One walking thread: takes directories from the shared queue until none is left and no other
// thread is reading one (which could add more).
void walk_thread(Walk* w, WalkPart* part) {
  std::vector<Frame> subdirs;
  std::unique_lock lock(w->mu);
  while (true) {
    w->cv.wait(lock, [&] { return !w->pending.empty() || w->busy == 0; });
    if (w->pending.empty()) return;
    Frame frame = std::move(w->pending.back());
    w->pending.pop_back();
    ++w->busy;
    lock.unlock();
    subdirs.clear();
    std::exception_ptr failed;
    try {
      read_dir(*w, frame, part, &subdirs);
    } catch (...) {  // kept for walk_repository, so that no thread ends the process
      failed = std::current_exception();
    }
    lock.lock();
    if (failed && !w->failure) w->failure = failed;
    if (w->failure) {  // stop: what is left is not read
      w->pending.clear();
      subdirs.clear();
    }
    --w->busy;
    for (auto& f : subdirs) w->pending.push_back(std::move(f));
    w->cv.notify_all();
  }
}

}  // namespace

WalkResult walk_repository(const std::string& root_arg, const WalkOptions& opt) {
  Walk w;
  w.root = resolve_walk_root(root_arg);
  w.opt = &opt;
  w.pending.push_back(root_frame(&w));
  // Reading directories is system calls, mostly: two threads halve a big tree's walk. The order
  // they go in does not matter: the files are sorted at the end.
  int threads = std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 2);
  std::vector<WalkPart> parts(static_cast<size_t>(threads));
  std::vector<std::thread> helpers;
  for (int t = 1; t < threads; ++t) helpers.emplace_back(walk_thread, &w, &parts[size_t(t)]);
  walk_thread(&w, &parts[0]);
  for (auto& h : helpers) h.join();
  if (w.failure) std::rethrow_exception(w.failure);
  WalkResult result;
  result.root = w.root;
  for (WalkPart& part : parts) {
    for (size_t i = 0; i < part.skipped.size(); ++i) result.skipped[i] += part.skipped[i];
    result.files.insert(result.files.end(), std::make_move_iterator(part.files.begin()),
                        std::make_move_iterator(part.files.end()));
  }
  std::sort(result.files.begin(), result.files.end(),
            [](const WalkEntry& a, const WalkEntry& b) { return a.rel < b.rel; });
  return result;
}

}  // namespace pf
