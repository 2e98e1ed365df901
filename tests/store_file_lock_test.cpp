// The lock file that keeps a second indexer out of a SQLite store (store/store_file_lock.h): a
// second holder is refused with the first one's pid, the lock is free again once released or
// once its holder is killed, and a lock file that cannot be made is an error, not "busy".
#include "store/store_file_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "core/error.h"
#include "test_util.h"

namespace pf {
namespace {

// The message of the BusyError lock_store_file throws for path, or "" when it takes the lock.
std::string refusal(const std::string& path) {
  try {
    lock_store_file(path);
  } catch (const BusyError& e) {
    return e.what();
  }
  return "";
}

TEST(StoreFileLock, ASecondHolderIsRefusedWithTheFirstOnesPid) {
  test::TempDir dir;
  std::string db = dir / "s.db";
  {
    auto lock = lock_store_file(db);
    std::string why = refusal(db);
    EXPECT_NE(why.find("pid " + std::to_string(getpid()) + ")"), std::string::npos) << why;
    EXPECT_NE(why.find(db), std::string::npos) << why;
  }
  EXPECT_EQ(refusal(db), "");  // released with the object
}

TEST(StoreFileLock, AKilledHoldersLockIsFree) {
  test::TempDir dir;
  std::string db = dir / "s.db";
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto lock = lock_store_file(db);
    ssize_t w = write(ready[1], "x", 1);
    (void)w;
    pause();
    _exit(0);
  }
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  EXPECT_NE(refusal(db).find("pid " + std::to_string(child) + ")"), std::string::npos);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  close(ready[0]);
  close(ready[1]);
  EXPECT_EQ(refusal(db), "");
}

TEST(StoreFileLock, ALockFileThatCannotBeMadeIsAnError) {
  test::TempDir dir;
  try {
    lock_store_file(dir / "missing/s.db");
    FAIL() << "no error";
  } catch (const BusyError&) {
    FAIL() << "reported as busy";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open lock file"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pf
