// The side-effecting tools: where write_file and edit_file may write and how edits refuse
// ambiguity, run_command's result shape, fetch_url's caps and its refusal of private addresses,
// and the registry entries' descriptions of what a call would touch.
#include "agent/action_tools.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

#include "loopback_server.h"
#include "test_util.h"

namespace pf {
namespace {

std::string slurp(const std::string& path) { return test::run({"cat", path}).out; }

class ActionToolsTest : public ::testing::Test {
 protected:
  ActionToolsTest() {
    test::write_file(dir / "a.txt", "one\ntwo\none\n");
    test::write_file(dir / "src/main.c", "int main() { return 0; }\n");
    ::symlink("/etc", (dir / "etc-link").c_str());
    ::symlink("/etc/hostname", (dir / "file-link").c_str());
    ::symlink("src", (dir / "src-link").c_str());
  }
  test::TempDir dir;
  ActionTools tools{dir.path(), ActionsConfig{}};
};

TEST_F(ActionToolsTest, WriteFileCreatesAndOverwritesInsideTheWorkspace) {
  auto r = tools.write_file("docs/new/notes.md", "# Notes\n");
  EXPECT_EQ(r["path"], "docs/new/notes.md");
  EXPECT_EQ(r["created"], true);
  EXPECT_EQ(slurp(dir / "docs/new/notes.md"), "# Notes\n");
  EXPECT_EQ(tools.write_file(dir / "a.txt", "x")["created"], false);  // an absolute path inside
  EXPECT_EQ(slurp(dir / "a.txt"), "x");
  EXPECT_EQ(tools.write_file("src-link/b.c", "b")["path"], "src/b.c");
}

TEST_F(ActionToolsTest, WriteFileRefusesToLeaveTheWorkspaceOrTouchSecrets) {
  // Beside the workspace, under a name nothing else in the temp folder has.
  std::string beside = "../" + std::filesystem::path(dir.path()).filename().string() + "-escaped";
  for (const std::string& bad : {beside, "a/../" + beside, std::string("/etc/../etc/x"),
                                 std::string("etc-link/.hidden"), std::string("file-link"),
                                 std::string(".git/config"), std::string(".env"),
                                 std::string("keys/id_rsa"), std::string(), std::string(".")}) {
    auto r = tools.write_file(bad, "x");
    EXPECT_TRUE(r.contains("error")) << bad << ": " << r.dump();
  }
  struct stat st {};
  EXPECT_EQ(::stat((dir / beside).c_str(), &st), -1);
  EXPECT_TRUE(tools.write_file("big", std::string(2 << 20, 'x')).contains("error"));
}

TEST_F(ActionToolsTest, EditFileReplacesExactlyOneMatchUnlessToldOtherwise) {
  auto ambiguous = tools.edit_file("a.txt", "one", "1", false);
  ASSERT_TRUE(ambiguous.contains("error"));
  EXPECT_NE(ambiguous["error"].get<std::string>().find("appears 2 times"), std::string::npos);
  EXPECT_EQ(slurp(dir / "a.txt"), "one\ntwo\none\n");
  EXPECT_EQ(tools.edit_file("a.txt", "one\ntwo", "uno\ndos", false)["replacements"], 1);
  EXPECT_EQ(slurp(dir / "a.txt"), "uno\ndos\none\n");
  EXPECT_TRUE(tools.edit_file("a.txt", "absent", "x", false).contains("error"));
  EXPECT_TRUE(tools.edit_file("a.txt", "", "x", false).contains("error"));
  EXPECT_TRUE(tools.edit_file("missing.txt", "a", "b", false).contains("error"));
  test::write_file(dir / "run.sh", "echo a; echo a\n");
  ::chmod((dir / "run.sh").c_str(), 0755);
  EXPECT_EQ(tools.edit_file("run.sh", "echo a", "echo b", true)["replacements"], 2);
  EXPECT_EQ(slurp(dir / "run.sh"), "echo b; echo b\n");
  struct stat st {};
  ::stat((dir / "run.sh").c_str(), &st);
  EXPECT_EQ(st.st_mode & 0777, 0755u);  // the mode survives the rewrite
}

TEST_F(ActionToolsTest, RunCommandReturnsExitCodeOutputAndCuts) {
  ActionsConfig cfg;
  cfg.max_output_bytes = 1024;
  cfg.command_timeout_seconds = 2;
  ActionTools small(dir.path(), cfg);
  auto r = small.run_command("cat src/main.c; exit 4", 0);
  ASSERT_FALSE(r.contains("error")) << r.dump();
  EXPECT_EQ(r["exit_code"], 4);
  EXPECT_EQ(r["output"], "int main() { return 0; }\n");
  auto big = small.run_command("head -c 5000 /dev/zero | tr '\\0' y", 0);
  EXPECT_EQ(big["output"].get<std::string>().size(), 1024u);
  EXPECT_TRUE(big.contains("truncated"));
  auto slow = small.run_command("sleep 10", 60);  // capped at the configured 2 s
  EXPECT_TRUE(slow.contains("timed_out"));
  EXPECT_LT(slow["duration_ms"].get<int64_t>(), 6000);
}

TEST(ActionTools, PrivateAndLoopbackAddressesAreRecognised) {
  for (const char* ip : {"127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1",
                         "169.254.169.254", "0.0.0.0", "100.64.0.1", "::1", "::", "fe80::1",
                         "fd00::1", "::ffff:127.0.0.1", "224.0.0.1", "not-an-ip"})
    EXPECT_TRUE(is_private_address(ip)) << ip;
  for (const char* ip : {"8.8.8.8", "1.1.1.1", "172.32.0.1", "192.169.0.1", "2606:4700::1111",
                         "::ffff:8.8.8.8"})
    EXPECT_FALSE(is_private_address(ip)) << ip;
}

// An HTTP server on loopback answering every request with the given response.
test::LoopbackServer http_server(std::string response) {
  return test::LoopbackServer([response](boost::asio::ip::tcp::socket& s) {
    boost::asio::streambuf buf;
    boost::system::error_code ec;
    boost::asio::read_until(s, buf, "\r\n\r\n", ec);
    boost::asio::write(s, boost::asio::buffer(response), ec);
    s.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ec);
  });
}

TEST(ActionTools, FetchUrlRefusesLoopbackUnlessAllowedAndCapsTheBody) {
  test::TempDir dir;
  std::string body(5000, 'z');
  auto server = http_server("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5000\r\n"
                            "Connection: close\r\n\r\n" + body);
  std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/page";
  ActionTools strict(dir.path(), ActionsConfig{});
  auto refused = strict.fetch_url(url);
  ASSERT_TRUE(refused.contains("error"));
  EXPECT_NE(refused["error"].get<std::string>().find("private"), std::string::npos);
  EXPECT_EQ(server.connections(), 0);
  EXPECT_TRUE(strict.fetch_url("http://localhost:" + std::to_string(server.port())).contains("error"));
  ActionsConfig open;
  open.allow_private_urls = true;
  open.fetch_max_bytes = 1024;
  ActionTools loose(dir.path(), open);
  auto r = loose.fetch_url(url);
  EXPECT_EQ(r["status"], 200);
  EXPECT_EQ(r["body"].get<std::string>(), std::string(1024, 'z'));
  EXPECT_TRUE(r.contains("truncated"));
  EXPECT_TRUE(loose.fetch_url("file:///etc/passwd").contains("error"));
}

TEST(ActionTools, FetchUrlChecksEveryRedirectTarget) {
  test::TempDir dir;
  auto server = http_server("HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:1/admin\r\n"
                            "Content-Length: 0\r\nConnection: close\r\n\r\n");
  ActionsConfig open;
  open.allow_private_urls = true;
  ActionTools loose(dir.path(), open);
  // Followed (allowed here), then the refused port fails the fetch.
  EXPECT_TRUE(loose.fetch_url("http://127.0.0.1:" + std::to_string(server.port())).contains("error"));
  EXPECT_EQ(server.connections(), 1);
}

TEST_F(ActionToolsTest, EntriesAreAddedPerKindAndDescribeTheirTarget) {
  ToolRegistry reg;
  tools.add_to(reg, {"write"});
  EXPECT_NE(reg.find("write_file"), nullptr);
  EXPECT_NE(reg.find("edit_file"), nullptr);
  EXPECT_EQ(reg.find("run_command"), nullptr);
  tools.add_to(reg, {"shell", "url"});
  const ToolEntry* write = reg.find("write_file");
  EXPECT_EQ(write->permission, ToolPermission::kWrite);
  ToolTarget t = write->describe(R"({"path": "src/x.c", "content": "", "intent": "add x"})");
  EXPECT_EQ(t.path, tools.root() + "/src/x.c");
  EXPECT_EQ(t.intent, "add x");
  EXPECT_FALSE(write->describe(R"({"path": "../x"})").error.empty());
  EXPECT_FALSE(write->describe("not json").error.empty());
  EXPECT_EQ(reg.find("run_command")->describe(R"({"command": "ls -la"})").command, "ls -la");
  EXPECT_EQ(reg.find("run_command")->permission, ToolPermission::kShell);
  EXPECT_EQ(reg.find("fetch_url")->describe(R"({"url": "https://x.io"})").url, "https://x.io");
  auto result = reg.call("write_file", R"({"path": "via-registry.txt", "content": "ok"})", nullptr);
  EXPECT_EQ(result["created"], true) << result.dump();
  EXPECT_TRUE(reg.call("write_file", R"({"path": 3})", nullptr).contains("error"));
}

// Issue 23: an absolute path outside the workspace is resolved (symlinks on the way followed)
// and written where the permission engine approved it; hidden and secret names there, "..",
// and pilotfish's own files never are.
TEST_F(ActionToolsTest, WritesOutsideTheWorkspaceReachTheEngineButNeverOwnOrHiddenFiles) {
  test::TempDir out;
  char buf[PATH_MAX];
  std::string outside = ::realpath(out.path().c_str(), buf);
  ::symlink(outside.c_str(), (dir / "out-link").c_str());
  OwnFiles own;
  own.add_store(outside + "/index.db");
  own.add_folder(dir / ".pilotfish");
  ActionTools guarded(dir.path(), ActionsConfig{}, own);
  auto r = guarded.write_file(outside + "/new/report.txt", "one");
  ASSERT_FALSE(r.contains("error")) << r.dump();
  EXPECT_EQ(r["path"], outside + "/new/report.txt");  // absolute: it is not in the workspace
  EXPECT_EQ(slurp(outside + "/new/report.txt"), "one");
  EXPECT_EQ(guarded.edit_file(outside + "/new/report.txt", "one", "two", false)["path"], outside + "/new/report.txt");
  EXPECT_EQ(slurp(outside + "/new/report.txt"), "two");
  std::string why;
  EXPECT_EQ(guarded.resolve_for_write("out-link/x.txt", &why).value_or(why), outside + "/x.txt");
  for (const std::string& bad : {outside + "/index.db", outside + "/index.db-wal", outside + "/index.db.lock",
                                 outside + "/index.db.vectors/graph", dir / ".pilotfish/state",
                                 outside + "/.ssh/authorized_keys", outside + "/.bashrc",
                                 std::string("out-link/.profile"), outside + "/keys/id_rsa",
                                 outside + "/.git/config", outside + "/new/../x", std::string("/")}) {
    EXPECT_FALSE(guarded.resolve_for_write(bad, &why).has_value()) << bad;
    EXPECT_TRUE(guarded.write_file(bad, "x").contains("error")) << bad;
  }
  EXPECT_NE(guarded.write_file(outside + "/index.db", "x")["error"].get<std::string>().find("pilotfish's own"),
            std::string::npos);
  struct stat st {};
  EXPECT_NE(::stat((outside + "/index.db").c_str(), &st), 0);
  EXPECT_NE(::stat((outside + "/.bashrc").c_str(), &st), 0);
  // The registry entry describes the absolute path, for the engine and the prompt.
  ToolRegistry reg;
  guarded.add_to(reg, {"write"});
  ToolTarget t = reg.find("write_file")->describe(nlohmann::json{{"path", outside + "/a.txt"}, {"content", ""}}.dump());
  EXPECT_EQ(t.path, outside + "/a.txt");
  EXPECT_FALSE(reg.find("write_file")->describe(nlohmann::json{{"path", outside + "/.env"}}.dump()).error.empty());
}

// Issue 23: the folders the permissions open outside the workspace are bound into run_command's
// sandbox; missing ones, "/", the workspace, hidden ones and pilotfish's own are not.
TEST(ActionTools, PermittedBindsComeFromAllowPathsAndWriteRules) {
  test::TempDir ws, a, b, own_dir;
  char buf[PATH_MAX];
  std::string ra = ::realpath(a.path().c_str(), buf), rb = ::realpath(b.path().c_str(), buf);
  std::string rown = ::realpath(own_dir.path().c_str(), buf);
  ::mkdir((ra + "/.secret").c_str(), 0700);
  ::symlink(rb.c_str(), (ra + "/to-b").c_str());
  PermissionsConfig p;
  std::string why;
  p.allow_paths = {a.path(), "/no/such/place", ws.path(), "/", own_dir.path(), ra + "/.secret", ra};
  p.allow = {*parse_permission_spec("write(" + ra + "/to-b)", &why), *parse_permission_spec("write(relative)", &why),
             *parse_permission_spec("write", &why), *parse_permission_spec("shell(/bin/ls)", &why)};
  SandboxOptions o;
  o.workspace = ::realpath(ws.path().c_str(), buf);
  o.own.add_folder(rown);
  add_permitted_binds(p, o);
  EXPECT_EQ(o.writable_binds, (std::vector<std::string>{ra, rb}));
  EXPECT_TRUE(o.read_only_binds.empty());
}

// Issue 23: run_command writes into an allowPaths folder only when the permissions name it, and
// pilotfish's store kept there stays hidden.
TEST_F(ActionToolsTest, RunCommandWritesWhereAllowPathsOpenedAndNowhereElse) {
  test::TempDir out;
  char buf[PATH_MAX];
  std::string outside = ::realpath(out.path().c_str(), buf);
  test::write_file(outside + "/pf/index.db", "store");
  OwnFiles own;
  own.add_store(outside + "/pf/index.db");
  ActionsConfig cfg;
  ActionTools closed(dir.path(), cfg, own);
  auto r = closed.run_command("(echo one > " + outside + "/made.txt) 2>/dev/null || echo refused", 0);
  EXPECT_EQ(r.value("output", ""), "refused\n") << r.dump();
  PermissionsConfig p;
  p.allow_paths = {outside};
  ActionTools opened(dir.path(), cfg, own, p);
  r = opened.run_command("echo two > " + outside + "/made.txt && ls -A " + outside + "/pf; cat " + outside +
                             "/pf/index.db 2>/dev/null; echo end",
                         0);
  EXPECT_EQ(r.value("output", ""), "end\n") << r.dump();
  EXPECT_EQ(slurp(outside + "/made.txt"), "two\n");
}

}  // namespace
}  // namespace pf
