// The SQLite store's writer lock file (see store_file_lock.h).
#include "store/store_file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "core/log.h"

namespace pf {
namespace {

class FlockWriterLock : public WriterLock {
 public:
  explicit FlockWriterLock(int fd) : fd_(fd) {}
  ~FlockWriterLock() override { ::close(fd_); }

 private:
  int fd_;
};

}  // namespace

std::unique_ptr<WriterLock> lock_store_file(const std::string& db_path) {
  std::string lock_path = db_path + ".lock";
  int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("cannot open lock file " + lock_path + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char holder[32] = {0};
    ssize_t n = ::pread(fd, holder, sizeof holder - 1, 0);
    ::close(fd);
    std::string who = n > 0 ? std::string(holder, static_cast<size_t>(n)) : "unknown";
    while (!who.empty() && (who.back() == '\n' || who.back() == ' ')) who.pop_back();
    throw BusyError("another pilotfish indexer (pid " + who + ") is writing " + db_path +
                    "; wait for it to finish, or use another --db");
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0)
    log::warn("store", "cannot write pid to " + lock_path);
  return std::make_unique<FlockWriterLock>(fd);
}

}  // namespace pf
