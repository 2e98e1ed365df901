// core/process.h: a child's exit status, output, standard error apart, environment, working
// folder, a program that cannot start, the output cap, and the deadline killing its whole group.
#include "core/process.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "core/fs.h"
#include "test_util.h"

namespace pf {
namespace {

ProcessSpec bash(const std::string& script) {
  ProcessSpec s;
  s.argv = {"bash", "-c", script};
  return s;
}

TEST(ProcessTest, ExitStatusOutputAndEnvironment) {
  ProcessSpec s = bash("echo out; echo err >&2; echo \"$PF_PROCESS_TEST $HOME\"; exit 3");
  s.env = {{"PF_PROCESS_TEST", "set"}, {"HOME", "/nowhere"}};
  ProcessResult r = run_process(s);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.error, "exit status 3");
  EXPECT_EQ(r.output, "out\nerr\nset /nowhere\n");  // stderr interleaved when not split off

  ProcessResult ok = run_process(bash("true"));
  EXPECT_TRUE(ok.ok);
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_EQ(ok.error, "");
}

TEST(ProcessTest, StandardInputFromAFileAndStandardErrorToAnother) {
  test::TempDir dir;
  test::write_file(dir / "in", "from the file\n");
  ProcessSpec s = bash("cat; echo oops >&2; pwd");
  s.stdin_path = dir / "in";
  s.stderr_path = dir / "err";
  s.cwd = dir.path();
  ProcessResult r = run_process(s);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.output, "from the file\n" + std::filesystem::canonical(dir.path()).string() + "\n");
  EXPECT_EQ(read_file(dir / "err"), "oops\n");
}

TEST(ProcessTest, WhatCannotStartIsToldApartFromAFailedProgram) {
  ProcessSpec missing;
  missing.argv = {"pilotfish-no-such-program"};
  ProcessResult r = run_process(missing);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_EQ(r.error, "cannot start it: pilotfish-no-such-program is not installed");

  ProcessSpec nowhere = bash("true");
  nowhere.cwd = "/nonexistent/folder";
  r = run_process(nowhere);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_NE(r.error.find("its cwd /nonexistent/folder cannot be entered"), std::string::npos) << r.error;

  test::TempDir dir;
  test::write_file(dir / "not-executable", "#!/bin/sh\n");
  ProcessSpec denied;
  denied.argv = {dir / "not-executable"};
  r = run_process(denied);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("not-executable is not an executable file"), std::string::npos) << r.error;

  EXPECT_EQ(run_process(ProcessSpec{}).error, "cannot start it: no program");
}

TEST(ProcessTest, OutputIsCutAtTheCapAndTheProgramStillFinishes) {
  ProcessSpec s = bash("head -c 100000 /dev/zero | tr '\\0' x; echo; exit 0");
  s.max_output_bytes = 1000;
  ProcessResult r = run_process(s);
  EXPECT_TRUE(r.ok) << r.error;  // read to the end, so the writer never blocks
  EXPECT_EQ(r.output, std::string(1000, 'x'));
}

TEST(ProcessTest, TheDeadlineKillsTheWholeGroup) {
  test::TempDir dir;
  // The grandchild keeps the output open; killing only bash would leave the read hanging.
  ProcessSpec s = bash("sleep 30 & echo $! > " + (dir / "pid") + "; echo started; wait");
  s.timeout_ms = 300;
  auto t0 = std::chrono::steady_clock::now();
  ProcessResult r = run_process(s);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "timed out after 300 ms");
  EXPECT_EQ(r.output, "started\n");
  EXPECT_LT(seconds, 10);
  // The sleep was killed with its group: gone, or a zombie until its new parent reaps it.
  std::string pid = read_file(dir / "pid");
  while (!pid.empty() && pid.back() == '\n') pid.pop_back();
  EXPECT_EQ(test::shell("for i in $(seq 50); do s=$(cut -d' ' -f3 /proc/" + pid +
                        "/stat 2>/dev/null); [ -z \"$s\" ] || [ \"$s\" = Z ] && exit 0; "
                        "sleep 0.05; done; exit 1"),
            0);

  ProcessSpec killed = bash("kill -9 $$");
  ProcessResult k = run_process(killed);
  EXPECT_EQ(k.signal, 9);
  EXPECT_EQ(k.error, "killed by signal 9");
}

}  // namespace
}  // namespace pf
