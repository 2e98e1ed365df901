// The bubblewrap sandbox of run_command: what a command can see, write and reach, and that a
// command that runs too long, starts too many processes or writes too much is stopped while the
// process that ran it carries on.
#include "agent/sandbox.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <boost/asio/write.hpp>
#include <fstream>
#include <thread>

#include "loopback_server.h"
#include "test_util.h"

namespace pf {
namespace {

class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    // CI installs bubblewrap (scripts/install-deps.sh): a missing sandbox is a failure there.
    ASSERT_TRUE(sandbox_available("bwrap", &why)) << why;
    ::mkdir(ws.c_str(), 0755);
    test::write_file(ws + "/README.md", "hello from the workspace\n");
    test::write_file(outside.path() + "/secret.txt", "top secret\n");
  }
  CommandResult run(const std::string& command, SandboxOptions o = {}) {
    o.workspace = ws;
    if (o.timeout_ms == 60000) o.timeout_ms = 20000;
    return run_sandboxed(command, o);
  }
  test::TempDir outside;  // the workspace's parent: nothing of it but the workspace is visible
  std::string ws = outside.path() + "/ws";
};

TEST_F(SandboxTest, RunsInTheWorkspaceAndReportsTheExitCode) {
  auto r = run("pwd; cat README.md; echo err >&2; exit 3");
  ASSERT_TRUE(r.ran) << r.error;
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.output, ws + "\nhello from the workspace\nerr\n");
  EXPECT_FALSE(r.timed_out);
}

TEST_F(SandboxTest, WritesStayInTheWorkspace) {
  auto r = run("echo made > new.txt && mkdir -p d && touch d/x; "
               "touch /usr/pf-test 2>/dev/null && echo usr-writable; "
               "touch /etc/pf-test 2>/dev/null && echo etc-writable; "
               "touch /pf-test 2>/dev/null && echo root-writable; "
               "touch " + outside.path() + "/escaped 2>/dev/null; "
               "echo tmp > /tmp/t && cat /tmp/t");
  ASSERT_TRUE(r.ran) << r.error;
  EXPECT_EQ(r.output, "tmp\n");  // /tmp is the sandbox's own scratch space
  std::ifstream made(ws + "/new.txt");
  std::string line;
  std::getline(made, line);
  EXPECT_EQ(line, "made");
  struct stat st {};
  EXPECT_EQ(::stat((outside.path() + "/escaped").c_str(), &st), -1);
  EXPECT_EQ(::stat("/usr/pf-test", &st), -1);
}

TEST_F(SandboxTest, TheHostsHomeTheParentAndSecretsAreNotThere) {
  auto r = run("for p in " + outside.path() + "/secret.txt /root /home /etc/shadow /etc/ssh /work /srv /var; do "
               "test -e $p && echo visible $p; done; ls /usr/bin/bash >/dev/null && echo system-readable");
  ASSERT_TRUE(r.ran) << r.error;
  EXPECT_EQ(r.output, "system-readable\n");
}

TEST_F(SandboxTest, AnOwnFoldersContentIsNeitherListedReadNorWritten) {
  test::write_file(ws + "/.store/index.db", "store");
  test::write_file(ws + "/.store/index.db.lock", "12345\n");
  SandboxOptions o;
  o.own.add_store(ws + "/.store/index.db");
  auto r = run("ls -A .store; cat .store/index.db.lock 2>/dev/null; stat -c %F .store; echo end", o);
  ASSERT_TRUE(r.ran) << r.error;
  EXPECT_EQ(r.output, "directory\nend\n");
  auto w = run("(echo x > .store/new) 2>/dev/null || echo refused; rm -rf .store 2>/dev/null; "
               "mv .store moved 2>/dev/null; test -d .store && echo still-there", o);
  EXPECT_EQ(w.output, "refused\nstill-there\n");
  struct stat st {};
  EXPECT_EQ(::stat((ws + "/.store/new").c_str(), &st), -1);
  EXPECT_EQ(test::run({"cat", ws + "/.store/index.db.lock"}).out, "12345\n");
}

TEST_F(SandboxTest, AnOwnFileAtTheWorkspacesTopIsAnEmptyReadOnlyFile) {
  test::write_file(ws + "/pilotfish.json", "{\"config\": 1}");
  SandboxOptions o;
  o.own.add_file(ws + "/pilotfish.json");
  // A plain empty file, not a device: nothing odd in a listing, nothing to read or write.
  auto r = run("stat -c '%F %s' pilotfish.json; cat pilotfish.json; "
               "(echo y > pilotfish.json) 2>/dev/null || echo refused; "
               "rm -f pilotfish.json 2>/dev/null || echo kept", o);
  ASSERT_TRUE(r.ran) << r.error;
  EXPECT_EQ(r.output, "regular empty file 0\nrefused\nkept\n");
  EXPECT_EQ(test::run({"cat", ws + "/pilotfish.json"}).out, "{\"config\": 1}");
}

TEST_F(SandboxTest, AnOwnFileTheCommandCreatesAtTheTopIsRemoved) {
  SandboxOptions o;
  o.own.add_file(ws + "/mcp-config.json");
  auto r = run("echo '{\"mcpServers\": {}}' > mcp-config.json && echo written", o);
  ASSERT_TRUE(r.ran) << r.error;
  EXPECT_EQ(r.output, "written\n");
  ASSERT_EQ(r.removed, std::vector<std::string>{"mcp-config.json"});
  struct stat st {};
  EXPECT_EQ(::stat((ws + "/mcp-config.json").c_str(), &st), -1);
}

TEST_F(SandboxTest, NoCommandRunsBesideAStoreInTheWorkspacesTopFolder) {
  // Its side files could be read, and a -wal planted before pilotfish opens it would be replayed.
  test::write_file(ws + "/index.db", "store");
  SandboxOptions o;
  o.own.add_store(ws + "/index.db");
  auto r = run("touch index.db-wal", o);
  EXPECT_FALSE(r.ran);
  EXPECT_NE(r.error.find("move it into a folder of its own"), std::string::npos) << r.error;
  struct stat st {};
  EXPECT_EQ(::stat((ws + "/index.db-wal").c_str(), &st), -1);
}

TEST_F(SandboxTest, AnExposedFolderUnderAnOwnOneIsReadOnly) {
  test::write_file(ws + "/.pilotfish/attachments/mine/a.txt", "mine\n");
  test::write_file(ws + "/.pilotfish/attachments/theirs/b.txt", "theirs\n");
  SandboxOptions o;
  o.own.add_folder(ws + "/.pilotfish");
  o.own.expose(ws + "/.pilotfish/attachments/mine");
  auto r = run("ls -A .pilotfish/attachments; cat .pilotfish/attachments/mine/a.txt; "
               "(echo x > .pilotfish/attachments/mine/a.txt) 2>/dev/null || echo refused", o);
  ASSERT_TRUE(r.ran) << r.error;
  EXPECT_EQ(r.output, "mine\nmine\nrefused\n");
}

TEST_F(SandboxTest, AnOwnFolderOutsideTheWorkspaceButUnderAHostTreeIsHidden) {
  // /opt is bound from the host: a store kept there would be readable without hiding.
  test::TempDir opt_dir;
  std::string store = opt_dir.path() + "/pf/index.db";
  test::write_file(store, "store");
  test::write_file(opt_dir.path() + "/other.txt", "other\n");
  SandboxOptions o;
  o.own.add_store(store);
  o.read_only_binds = {opt_dir.path()};  // stands in for a host tree the sandbox sees
  auto r = run("cat " + opt_dir.path() + "/other.txt; ls -A " + opt_dir.path() + "/pf; echo end", o);
  ASSERT_TRUE(r.ran) << r.error;
  EXPECT_EQ(r.output, "other\nend\n");
}

TEST_F(SandboxTest, TheEnvironmentIsFreshAndHoldsNoSecrets) {
  ::setenv("PF_SANDBOX_TEST_SECRET", "hunter2", 1);
  auto r = run("env");
  ::unsetenv("PF_SANDBOX_TEST_SECRET");
  ASSERT_TRUE(r.ran) << r.error;
  EXPECT_EQ(r.output.find("hunter2"), std::string::npos);
  EXPECT_NE(r.output.find("PATH=/usr/local/sbin"), std::string::npos);
  EXPECT_NE(r.output.find("HOME=/tmp"), std::string::npos);
}

TEST_F(SandboxTest, NoNetworkUnlessAllowed) {
  test::LoopbackServer server([](boost::asio::ip::tcp::socket& s) {
    boost::system::error_code ec;
    boost::asio::write(s, boost::asio::buffer(std::string("pong\n")), ec);
  });
  std::string probe = "exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(server.port()) +
                      " && head -n1 <&3 || echo unreachable";
  auto closed = run(probe);
  ASSERT_TRUE(closed.ran) << closed.error;
  EXPECT_NE(closed.output.find("unreachable"), std::string::npos) << closed.output;
  SandboxOptions o;
  o.network = true;
  auto open = run(probe, o);
  EXPECT_EQ(open.output, "pong\n");
}

TEST_F(SandboxTest, ATimeoutKillsTheCommandAndWhatItStarted) {
  SandboxOptions o;
  o.timeout_ms = 500;
  auto r = run("sleep 30 & sleep 30", o);
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(r.duration_ms, 5000);
  auto leftover = test::run({"pgrep", "-f", "^sleep 30$"});
  EXPECT_NE(leftover.exit_code, 0) << "left running: " << leftover.out;
  // A background process outliving its shell is ended with the sandbox.
  auto bg = run("sleep 40 & echo started");
  EXPECT_EQ(bg.output, "started\n");
  EXPECT_LT(bg.duration_ms, 5000);
}

TEST_F(SandboxTest, AForkBombIsStoppedAndTheCallerCarriesOn) {
  std::atomic<bool> done{false};
  int served = 0;
  std::thread other([&] {  // the "server": keeps running commands meanwhile
    while (!done) {
      if (run("echo ok").output == "ok\n") ++served;
    }
  });
  SandboxOptions o;
  o.max_processes = 64;
  auto r = run(":(){ :|:& };:; sleep 20", o);  // the shell stays, so only the cap can end it
  done = true;
  other.join();
  EXPECT_TRUE(r.too_many_processes);
  EXPECT_LT(r.duration_ms, 10000);
  EXPECT_GE(served, 1);
  EXPECT_EQ(run("echo still fine").output, "still fine\n");
}

TEST_F(SandboxTest, OutputIsCutButCounted) {
  SandboxOptions o;
  o.max_output_bytes = 1000;
  auto r = run("head -c 100000 /dev/zero | tr '\\0' x", o);
  EXPECT_EQ(r.output.size(), 1000u);
  EXPECT_EQ(r.output_bytes, 100000u);
}

TEST(Sandbox, AMissingSandboxIsSaidClearlyAndNothingRuns) {
  test::TempDir ws;
  SandboxOptions o;
  o.workspace = ws.path();
  o.bwrap = "/nonexistent/bwrap";
  auto r = run_sandboxed("touch ran", o);
  EXPECT_FALSE(r.ran);
  EXPECT_NE(r.error.find("bubblewrap"), std::string::npos) << r.error;
  struct stat st {};
  EXPECT_EQ(::stat((ws.path() + "/ran").c_str(), &st), -1);
}

}  // namespace
}  // namespace pf
