// The bubblewrap sandbox: the bwrap command line, a fork and exec that only uses
// async-signal-safe calls in the child (the server is multithreaded), and a wait loop that
// collects the output, enforces the timeout and counts the processes in the sandbox's pid
// namespace (bwrap --info-fd names its first process), killing it all when a limit is passed.
#include "agent/sandbox.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/fs.h"
#include "core/json.h"

namespace pf {
namespace {

using Clock = std::chrono::steady_clock;

// The /etc entries a command may need (names, certificates, the dynamic linker, git and bash
// settings); the rest of /etc (shadow files, ssh keys, service configs) is not there.
const char* const kEtc[] = {
    "alternatives", "ssl", "ca-certificates", "passwd", "group", "hosts", "nsswitch.conf",
    "localtime", "timezone", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "bash.bashrc",
    "profile", "mime.types", "gitconfig", "os-release", "debian_version", "services",
    "protocols", "inputrc", "magic", "java-17-openjdk", "npmrc", "pip.conf", "environment"};

bool is_dir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool under(const std::string& path, const std::string& folder) {
  if (folder == "/") return !path.empty() && path[0] == '/';
  return path == folder || (path.size() > folder.size() && path.compare(0, folder.size(), folder) == 0 &&
                            path[folder.size()] == '/');
}

std::string parent_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

// The trees the sandbox binds from the host (besides the workspace), read-only.
std::vector<std::string> host_trees() {
  std::vector<std::string> out = {"/usr", "/opt", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
  for (const char* e : kEtc) out.push_back(std::string("/etc/") + e);
  return out;
}

// An empty read-only file in a folder only this process may change: what a hidden file that
// cannot be hidden by its folder is replaced with. Removed with its folder at exit.
char empty_dir[64];
void remove_empty_file() {
  std::string dir = empty_dir;
  ::unlink((dir + "/empty").c_str());
  ::rmdir(dir.c_str());
}
const std::string& empty_file() {
  static const std::string path = [] {
    std::snprintf(empty_dir, sizeof empty_dir, "/tmp/pilotfish-sandbox-XXXXXX");
    if (!::mkdtemp(empty_dir)) return std::string("/dev/null");
    std::atexit(remove_empty_file);
    std::string file = std::string(empty_dir) + "/empty";
    int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
    if (fd < 0) return std::string("/dev/null");
    ::close(fd);
    return file;
  }();
  return path;
}

// Where the sandbox sees pilotfish's own paths: what it binds from the host.
struct View {
  const SandboxOptions& o;
  std::vector<std::string> trees;
  explicit View(const SandboxOptions& options) : o(options), trees(host_trees()) {
    trees.insert(trees.end(), o.read_only_binds.begin(), o.read_only_binds.end());
    trees.insert(trees.end(), o.writable_binds.begin(), o.writable_binds.end());
  }
  bool visible(const std::string& p) const {
    if (under(p, o.workspace)) return true;
    for (const auto& t : trees)
      if (under(p, t)) return true;
    return false;
  }
  // A folder that may not vanish: the workspace, a host tree's top, or one above them.
  bool keeps_open(const std::string& folder) const {
    if (under(o.workspace, folder)) return true;
    for (const auto& t : trees)
      if (under(t, folder)) return true;
    return false;
  }
};

// A store whose folder cannot be hidden (it lies directly in the workspace's top folder): its
// side files cannot be kept from being read or planted, so no command runs beside it.
std::string unhidable_store(const SandboxOptions& o) {
  View view(o);
  for (const OwnFiles::Entry& e : o.own.entries())
    if (e.kind == OwnFiles::Entry::kStore && view.visible(e.path) && view.keeps_open(parent_of(e.path)))
      return "pilotfish's store " + e.path + " lies directly in " + parent_of(e.path) +
             ", where the sandbox cannot hide it; move it into a folder of its own (for example "
             ".pilotfish/index.db) to run commands here";
  return {};
}

// The mounts that keep pilotfish's own paths out of sight (sandbox.h): the folder holding each
// one becomes an empty read-only folder, unless that folder is the workspace itself or a folder
// above it or a host tree's top, where the file is replaced with an empty read-only file. Paths
// the sandbox would not see anyway are left alone. Exposed folders are bound back read-only.
void hide_own(std::vector<std::string>& a, const SandboxOptions& o) {
  View view(o);
  std::vector<std::string> folders, files;
  for (const OwnFiles::Entry& e : o.own.entries()) {
    if (!view.visible(e.path)) continue;
    std::string folder = e.kind == OwnFiles::Entry::kFolder ? e.path : parent_of(e.path);
    if (!view.keeps_open(folder)) {
      folders.push_back(folder);
    } else if (e.kind == OwnFiles::Entry::kFile && ::access(e.path.c_str(), F_OK) == 0) {
      files.push_back(e.path);
    }
  }
  std::sort(folders.begin(), folders.end());
  folders.erase(std::unique(folders.begin(), folders.end()), folders.end());
  std::vector<std::string> hidden;
  for (const auto& f : folders) {
    if (!hidden.empty() && under(f, hidden.back())) continue;  // inside a folder already hidden
    // A folder that does not exist yet is made (empty) on the host, so that the sandbox cannot
    // make it there with content of its own.
    if (!is_dir(f) && under(f, o.workspace)) ::mkdir(f.c_str(), 0700);
    if (!is_dir(f)) continue;
    a.insert(a.end(), {"--tmpfs", f});
    hidden.push_back(f);
  }
  for (const auto& x : o.own.exposed())
    if (is_dir(x)) a.insert(a.end(), {"--ro-bind", x, x});
  for (const auto& f : files) a.insert(a.end(), {"--ro-bind", empty_file(), f});
  // Read-only last: the exposed folders' mount points are made inside the empty folders first.
  for (const auto& f : hidden) a.insert(a.end(), {"--remount-ro", f});
}

// The bwrap arguments before the command; info_fd is where bwrap writes its child's pid.
std::vector<std::string> bwrap_args(const std::string& bwrap, const SandboxOptions& o, int info_fd) {
  std::vector<std::string> a = {bwrap, "--die-with-parent", "--new-session", "--unshare-all"};
  if (o.network) a.push_back("--share-net");
  a.insert(a.end(), {"--ro-bind", "/usr", "/usr"});
  for (const char* top : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt"}) {
    char target[4096];
    ssize_t n = ::readlink(top, target, sizeof target - 1);
    if (n > 0) {
      a.insert(a.end(), {"--symlink", std::string(target, static_cast<size_t>(n)), top});
    } else if (is_dir(top)) {
      a.insert(a.end(), {"--ro-bind", top, top});
    }
  }
  for (const char* e : kEtc) a.insert(a.end(), {"--ro-bind-try", std::string("/etc/") + e, std::string("/etc/") + e});
  if (o.network) a.insert(a.end(), {"--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf"});
  a.insert(a.end(), {"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--bind", o.workspace, o.workspace});
  for (const auto& p : o.read_only_binds) a.insert(a.end(), {"--ro-bind-try", p, p});
  for (const auto& p : o.writable_binds) a.insert(a.end(), {"--bind-try", p, p});
  hide_own(a, o);
  // The sandbox's own root (where bwrap made the mount points) becomes read-only too; /tmp and
  // the workspace stay writable.
  a.insert(a.end(), {"--remount-ro", "/", "--chdir", o.workspace, "--info-fd", std::to_string(info_fd), "--"});
  return a;
}

const char* const kEnv[] = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                            "HOME=/tmp", "LANG=C.UTF-8", "TERM=dumb", "USER=sandbox",
                            "SHELL=/bin/bash", nullptr};

// Processes whose pid namespace is that of pid (pid included), or -1 when it is gone.
int processes_in_namespace_of(pid_t pid) {
  char link[300], ns[128], other[128];
  std::snprintf(link, sizeof link, "/proc/%d/ns/pid", static_cast<int>(pid));
  ssize_t n = ::readlink(link, ns, sizeof ns - 1);
  if (n <= 0) return -1;
  ns[n] = '\0';
  DIR* proc = ::opendir("/proc");
  if (!proc) return -1;
  int count = 0;
  while (dirent* e = ::readdir(proc)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::snprintf(link, sizeof link, "/proc/%s/ns/pid", e->d_name);
    ssize_t m = ::readlink(link, other, sizeof other - 1);
    if (m == n && std::memcmp(ns, other, static_cast<size_t>(n)) == 0) ++count;
  }
  ::closedir(proc);
  return count;
}

// A pids cgroup that caps the sandbox's processes in the kernel (fork fails past the cap), when
// this process may make one: a writable cgroup v1 pids hierarchy, or a cgroup v2 one whose
// parent delegates the pids controller. Without one the watchdog's count is the only cap.
class PidsCgroup {
 public:
  explicit PidsCgroup(int max) {
    {
      std::lock_guard lock(stale_mu());
      auto& list = stale();
      list.erase(std::remove_if(list.begin(), list.end(),
                                [](const std::string& d) { return ::rmdir(d.c_str()) == 0 || errno != EBUSY; }),
                 list.end());
    }
    static std::atomic<int> serial{0};
    std::string name = "pilotfish-sandbox-" + std::to_string(::getpid()) + "-" + std::to_string(++serial);
    for (const std::string& base : candidates()) {
      std::string dir = base + "/" + name;
      if (::mkdir(dir.c_str(), 0755) != 0) continue;
      if (write(dir + "/pids.max", std::to_string(max))) {
        procs_fd_ = ::open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
        if (procs_fd_ >= 0) {
          dir_ = dir;
          return;
        }
      }
      ::rmdir(dir.c_str());
    }
  }
  ~PidsCgroup() {
    if (procs_fd_ >= 0) ::close(procs_fd_);
    // Empty once the sandbox's pid namespace is gone, which the kernel may finish a moment
    // after bwrap exits: a busy one is removed by a later sandbox, never waited for.
    if (!dir_.empty() && ::rmdir(dir_.c_str()) != 0 && errno == EBUSY) {
      std::lock_guard lock(stale_mu());
      stale().push_back(dir_);
    }
  }
  bool active() const { return !dir_.empty(); }
  int procs_fd() const { return procs_fd_; }
  // Processes in it now, or -1.
  int current() const {
    std::string v = read(dir_ + "/pids.current");
    return v.empty() ? -1 : std::atoi(v.c_str());
  }

 private:
  static bool write(const std::string& path, const std::string& value) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool ok = ::write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
    ::close(fd);
    return ok;
  }
  static std::string read(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return "";
    char buf[64];
    ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  }
  // Our own cgroup in the v1 pids hierarchy and in the v2 one, from /proc/self/cgroup.
  static std::vector<std::string> candidates() {
    std::vector<std::string> out;
    std::string self = read_all("/proc/self/cgroup");
    size_t start = 0;
    while (start < self.size()) {
      size_t end = self.find('\n', start);
      std::string line = self.substr(start, end == std::string::npos ? std::string::npos : end - start);
      start = end == std::string::npos ? self.size() : end + 1;
      size_t a = line.find(':'), b = line.find(':', a + 1);
      if (a == std::string::npos || b == std::string::npos) continue;
      std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
      if (path == "/") path.clear();
      if (controllers == "pids") out.push_back("/sys/fs/cgroup/pids" + path);
      if (controllers.empty() && read_all("/sys/fs/cgroup" + path + "/cgroup.subtree_control").find("pids") != std::string::npos)
        out.push_back("/sys/fs/cgroup" + path);
    }
    return out;
  }
  static std::string read_all(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return "";
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
    ::close(fd);
    return out;
  }

  static std::mutex& stale_mu() {
    static std::mutex mu;
    return mu;
  }
  static std::vector<std::string>& stale() {
    static std::vector<std::string> dirs;  // emptied cgroups the kernel had not released yet
    return dirs;
  }

  std::string dir_;
  int procs_fd_ = -1;
};

// Writes the calling process's pid to fd (async-signal-safe: for the child after fork).
void write_own_pid(int fd) {
  char buf[24];
  int n = 0;
  for (long v = ::getpid(); v > 0 && n < 23; v /= 10) buf[n++] = static_cast<char>('0' + v % 10);
  char out[24];
  for (int i = 0; i < n; ++i) out[i] = buf[n - 1 - i];
  ssize_t ignored = ::write(fd, out, static_cast<size_t>(n));
  (void)ignored;
}

struct Spawned {
  pid_t pid = -1;
  int out = -1, info = -1;
  std::string error;
};

Spawned spawn(const std::vector<std::string>& args, int info_fd_in_child, int cgroup_procs_fd,
              const SandboxOptions& o) {
  Spawned s;
  // The environment, built before fork (the child may only make async-signal-safe calls).
  std::vector<std::string> env_text;
  for (const char* const* e = kEnv; *e; ++e) env_text.emplace_back(*e);
  for (const auto& [k, v] : o.env) {
    bool fixed = false;
    for (const char* const* e = kEnv; *e; ++e)
      fixed = fixed || std::string_view(*e).substr(0, std::string_view(*e).find('=')) == k;
    if (!fixed && !k.empty() && k.find('=') == std::string::npos) env_text.push_back(k + "=" + v);
  }
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  int in_fd = ::open(o.stdin_path.empty() ? "/dev/null" : o.stdin_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in_fd < 0) return {-1, -1, -1, "cannot open " + o.stdin_path + ": " + std::strerror(errno)};
  int err_fd = -1;
  if (!o.stderr_path.empty()) {
    err_fd = ::open(o.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (err_fd < 0) {
      ::close(in_fd);
      return {-1, -1, -1, "cannot open " + o.stderr_path + ": " + std::strerror(errno)};
    }
  }
  int out[2], info[2];
  auto close_files = [&] {
    ::close(in_fd);
    if (err_fd >= 0) ::close(err_fd);
  };
  if (::pipe2(out, O_CLOEXEC) != 0) {
    close_files();
    return {-1, -1, -1, std::string("pipe: ") + std::strerror(errno)};
  }
  if (::pipe2(info, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    close_files();
    return {-1, -1, -1, std::string("pipe: ") + std::strerror(errno)};
  }
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    // The child: only async-signal-safe calls from here to exec.
    ::setpgid(0, 0);
    if (cgroup_procs_fd >= 0) write_own_pid(cgroup_procs_fd);  // bwrap and all it starts
    ::dup2(in_fd, 0);
    ::dup2(out[1], 1);
    ::dup2(err_fd >= 0 ? err_fd : out[1], 2);
    ::dup2(info[1], info_fd_in_child);
    ::syscall(SYS_close_range, info_fd_in_child + 1, ~0U, 0);
    rlimit core{0, 0};
    ::setrlimit(RLIMIT_CORE, &core);
    rlimit fsize{1ull << 30, 1ull << 30};  // no file over 1 GiB
    ::setrlimit(RLIMIT_FSIZE, &fsize);
    // The lowest CPU class: a command (a fork bomb most of all) never starves the server, or
    // the watchdog below that counts its processes.
    sched_param idle{};
    ::sched_setscheduler(0, SCHED_IDLE, &idle);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(info[1]);
  close_files();
  if (pid < 0) {
    ::close(out[0]);
    ::close(info[0]);
    return {-1, -1, -1, std::string("fork: ") + std::strerror(errno)};
  }
  s.pid = pid;
  s.out = out[0];
  s.info = info[0];
  return s;
}

CommandResult run(const std::vector<std::string>& args, const SandboxOptions& o) {
  CommandResult r;
  auto start = Clock::now();
  constexpr int kInfoFd = 3;
  PidsCgroup cgroup(o.max_processes + 2);  // bwrap and its pid 1 come first
  Spawned s = spawn(args, kInfoFd, cgroup.procs_fd(), o);
  if (s.pid < 0) {
    r.error = s.error;
    return r;
  }
  auto deadline = start + std::chrono::milliseconds(o.timeout_ms);
  std::string info;
  pid_t sandbox_pid = -1;
  bool out_open = true, info_open = true, killed = false;
  // Killing the sandbox's first process ends its pid namespace: the kernel kills the rest.
  auto kill_all = [&] {
    if (!killed) {
      if (sandbox_pid > 0) ::kill(sandbox_pid, SIGKILL);
      ::kill(-s.pid, SIGKILL);
    }
    killed = true;
  };
  auto last_count = Clock::now();
  while (out_open || info_open) {
    pollfd fds[2] = {{out_open ? s.out : -1, POLLIN, 0}, {info_open ? s.info : -1, POLLIN, 0}};
    ::poll(fds, 2, 25);
    char buf[16384];
    if (out_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t n = ::read(s.out, buf, sizeof buf);
      if (n <= 0) {
        out_open = false;
      } else {
        r.output_bytes += static_cast<size_t>(n);
        size_t room = o.max_output_bytes > r.output.size() ? o.max_output_bytes - r.output.size() : 0;
        r.output.append(buf, std::min(room, static_cast<size_t>(n)));
      }
    }
    if (info_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t n = ::read(s.info, buf, sizeof buf);
      if (n <= 0) {
        info_open = false;
      } else {
        info.append(buf, static_cast<size_t>(n));
        nlohmann::json j = parse_json(info);
        if (j.is_object() && j.contains("child-pid") && j["child-pid"].is_number_integer())
          sandbox_pid = j["child-pid"].get<pid_t>();
      }
    }
    auto now = Clock::now();
    if (now >= deadline && !killed) {
      r.timed_out = true;
      kill_all();
    }
    if (sandbox_pid > 0 && !killed && now - last_count >= std::chrono::milliseconds(25)) {
      last_count = now;
      int count = cgroup.active() ? cgroup.current() - 2 : processes_in_namespace_of(sandbox_pid);
      if (count >= o.max_processes) {
        r.too_many_processes = true;
        kill_all();
      }
    }
    // The command's own children may keep the output open after it ended: bwrap's exit (the
    // sandbox's pid namespace goes with it) ends the wait.
    int status = 0;
    if (::waitpid(s.pid, &status, WNOHANG) == s.pid) {
      r.ran = true;
      if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
      // Drain what is already in the pipe, then stop.
      ::fcntl(s.out, F_SETFL, O_NONBLOCK);
      while (out_open) {
        ssize_t n = ::read(s.out, buf, sizeof buf);
        if (n <= 0) break;
        r.output_bytes += static_cast<size_t>(n);
        size_t room = o.max_output_bytes > r.output.size() ? o.max_output_bytes - r.output.size() : 0;
        r.output.append(buf, std::min(room, static_cast<size_t>(n)));
      }
      s.pid = -1;
      break;
    }
  }
  if (s.pid > 0) {
    int status = 0;
    ::waitpid(s.pid, &status, 0);
    r.ran = true;
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  }
  ::close(s.out);
  ::close(s.info);
  if (killed) r.exit_code = -1;
  r.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  return r;
}

}  // namespace

bool sandbox_available(const std::string& bwrap, std::string* why) {
  static std::mutex mu;
  static std::map<std::string, std::string> checked;  // binary -> "" (works) or why not
  std::lock_guard lock(mu);
  auto it = checked.find(bwrap);
  if (it == checked.end()) {
    std::string path = find_in_path(bwrap);
    std::string reason;
    if (path.empty()) {
      reason = "bubblewrap (" + bwrap + ") is not installed; install it (apt-get install bubblewrap)";
    } else {
      SandboxOptions o;
      o.workspace = "/tmp";
      o.timeout_ms = 10000;
      std::vector<std::string> args = bwrap_args(path, o, 3);
      args.insert(args.end(), {"/usr/bin/true"});
      CommandResult r = run(args, o);
      if (!r.ran || r.exit_code != 0)
        reason = "bubblewrap cannot start a sandbox here (" +
                 (r.error.empty() ? r.output.substr(0, 300) : r.error) +
                 "); it needs unprivileged user namespaces or root";
    }
    it = checked.emplace(bwrap, reason).first;
  }
  if (why) *why = it->second;
  return it->second.empty();
}

CommandResult run_sandboxed(const std::string& command, const SandboxOptions& options) {
  CommandResult r;
  std::string why;
  if (!sandbox_available(options.bwrap, &why)) {
    r.error = "commands run only inside a sandbox, and there is none: " + why;
    return r;
  }
  if (options.workspace.empty() || options.workspace[0] != '/' || !is_dir(options.workspace)) {
    r.error = "the workspace " + options.workspace + " is not a directory";
    return r;
  }
  if (std::string store = unhidable_store(options); !store.empty()) {
    r.error = store;
    return r;
  }
  // Own files at the workspace's top cannot be hidden by their folder, and one that does not
  // exist yet (an mcp-config.json) must not be planted by the command: one that appears is
  // removed.
  std::vector<std::string> absent;
  for (const OwnFiles::Entry& e : options.own.entries())
    if (e.kind == OwnFiles::Entry::kFile && parent_of(e.path) == options.workspace &&
        ::access(e.path.c_str(), F_OK) != 0)
      absent.push_back(e.path);
  std::vector<std::string> args = bwrap_args(find_in_path(options.bwrap), options, 3);
  args.insert(args.end(), {"/bin/bash", "-c", command});
  CommandResult result = run(args, options);
  for (const std::string& p : absent) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) continue;
    std::error_code ec;
    std::filesystem::remove_all(p, ec);
    result.removed.push_back(p.substr(options.workspace.size() + 1));
  }
  return result;
}

}  // namespace pf
