// run_process (see process.h): fork and execve with pipes made close-on-exec, a second pipe that
// carries the child's errno when chdir or execve fails (so "cannot start" is told apart from the
// program's own exit status), and a poll loop that reads the output until the deadline.
#include "core/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string_view>

#include "core/fs.h"

extern char** environ;

namespace pf {
namespace {

using Clock = std::chrono::steady_clock;

std::string seconds_text(int64_t ms) {
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
}

std::vector<std::string> child_environment(const ProcessSpec& spec) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view v(*e);
    bool replaced = false;
    for (const auto& [k, val] : spec.env) replaced = replaced || v.substr(0, v.find('=')) == k;
    if (!replaced) env.emplace_back(v);
  }
  for (const auto& [k, v] : spec.env) env.push_back(k + "=" + v);
  return env;
}

// Reads out_fd until it closes or the deadline; true if it closed.
bool read_output(int out_fd, Clock::time_point deadline, const ProcessSpec& spec,
                 std::string* output) {
  char buf[16384];
  while (true) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{out_fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 100))) <= 0) continue;
    ssize_t n = ::read(out_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;  // closed: the program (and what it started) is done with it
    size_t room = spec.max_output_bytes - std::min(spec.max_output_bytes, output->size());
    output->append(buf, std::min(static_cast<size_t>(n), room));
  }
}

// Waits for pid until the deadline (killing its group then); fills r's status fields.
void wait_until(pid_t pid, Clock::time_point deadline, bool output_closed, const ProcessSpec& spec,
                ProcessResult* r) {
  int status = 0;
  while (output_closed && ::waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() >= deadline) {
      output_closed = false;
      break;
    }
    ::usleep(5000);
  }
  if (!output_closed) {
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    r->timed_out = true;
    r->error = "timed out after " + seconds_text(spec.timeout_ms);
    return;
  }
  if (WIFEXITED(status)) {
    r->exit_code = WEXITSTATUS(status);
    r->ok = r->exit_code == 0;
    if (!r->ok) r->error = "exit status " + std::to_string(r->exit_code);
  } else if (WIFSIGNALED(status)) {
    r->signal = WTERMSIG(status);
    r->error = "killed by signal " + std::to_string(r->signal);
  }
}

}  // namespace

ProcessResult run_process(const ProcessSpec& spec) {
  ProcessResult r;
  if (spec.argv.empty()) {
    r.error = "cannot start it: no program";
    return r;
  }
  std::string program = find_in_path(spec.argv[0]);
  if (program.empty()) {
    r.error = "cannot start it: " + spec.argv[0] +
              (spec.argv[0].find('/') == std::string::npos ? " is not installed"
                                                           : " is not an executable file");
    return r;
  }
  std::vector<std::string> args = spec.argv, env = child_environment(spec);
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  int in_fd = ::open(spec.stdin_path.empty() ? "/dev/null" : spec.stdin_path.c_str(),
                     O_RDONLY | O_CLOEXEC);
  int err_fd = spec.stderr_path.empty()
                   ? -1
                   : ::open(spec.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  int out[2] = {-1, -1}, failed[2] = {-1, -1};
  if (in_fd < 0 || (!spec.stderr_path.empty() && err_fd < 0) || ::pipe2(out, O_CLOEXEC) != 0 ||
      ::pipe2(failed, O_CLOEXEC) != 0) {
    r.error = std::string("cannot start it: ") + std::strerror(errno);
    for (int fd : {in_fd, err_fd, out[0], out[1], failed[0], failed[1]})
      if (fd >= 0) ::close(fd);
    return r;
  }
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(in_fd, 0);
    ::dup2(out[1], 1);
    ::dup2(err_fd >= 0 ? err_fd : out[1], 2);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    char what = 'x';
    if (!spec.cwd.empty() && ::chdir(spec.cwd.c_str()) != 0) {
      what = 'd';
    } else {
      ::execve(program.c_str(), argv.data(), envp.data());
    }
    int e = errno;
    char msg[1 + sizeof e];
    msg[0] = what;
    std::memcpy(msg + 1, &e, sizeof e);
    (void)!::write(failed[1], msg, sizeof msg);
    ::_exit(127);
  }
  for (int fd : {in_fd, err_fd, out[1], failed[1]})
    if (fd >= 0) ::close(fd);
  if (pid < 0) {
    r.error = std::string("cannot start it: ") + std::strerror(errno);
    ::close(out[0]);
    ::close(failed[0]);
    return r;
  }
  char msg[1 + sizeof(int)];
  ssize_t n;
  do n = ::read(failed[0], msg, sizeof msg);  // closed by a successful execve
  while (n < 0 && errno == EINTR);
  ::close(failed[0]);
  if (n == static_cast<ssize_t>(sizeof msg)) {
    ::close(out[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    int e;
    std::memcpy(&e, msg + 1, sizeof e);
    r.error = msg[0] == 'd' ? "its cwd " + spec.cwd + " cannot be entered: " + std::strerror(e)
                            : "cannot start it: " + program + ": " + std::strerror(e);
    return r;
  }
  auto deadline = Clock::now() + std::chrono::milliseconds(spec.timeout_ms);
  bool closed = read_output(out[0], deadline, spec, &r.output);
  ::close(out[0]);
  wait_until(pid, deadline, closed, spec, &r);
  return r;
}

}  // namespace pf
