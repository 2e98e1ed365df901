// The MCP client against a real MCP server from npm (@modelcontextprotocol/server-everything,
// pinned in tests/node/package.json), over stdio and Streamable HTTP: its tools listed and
// called, the environment it gets, a server that cannot start, one that hangs (stopped, then
// started again after the backoff), and the registry entries of a workspace's servers.
#include "mcp/client.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "test_util.h"

namespace pf {
namespace {

using nlohmann::json;

std::string everything() {
  return test::source_dir() + "/tests/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
}

McpServerConfig stdio_server(int64_t timeout = 30) {
  McpServerConfig c;
  c.name = "everything";
  c.command = "node";
  c.args = {everything(), "stdio"};
  c.timeout_seconds = timeout;
  return c;
}

std::vector<std::string> names(const std::vector<ToolSpec>& specs) {
  std::vector<std::string> out;
  for (const auto& s : specs) out.push_back(s.name);
  return out;
}

TEST(McpClient, ListsAndCallsToolsOverStdio) {
  test::TempDir ws;
  McpClient client(stdio_server(), ws.path());
  EXPECT_NE(client.status().find("not started"), std::string::npos);
  auto tools = names(client.tools());
  EXPECT_NE(std::find(tools.begin(), tools.end(), "echo"), tools.end());
  EXPECT_NE(std::find(tools.begin(), tools.end(), "get-sum"), tools.end());
  EXPECT_EQ(client.call("echo", {{"message", "hi there"}})["content"], "Echo: hi there");
  EXPECT_EQ(client.call("get-sum", {{"a", 2}, {"b", 3}})["content"], "The sum of 2 and 3 is 5.");
  json bad = client.call("get-sum", {{"a", "two"}});
  EXPECT_TRUE(bad.value("isError", false) || bad.contains("error")) << bad;
  EXPECT_NE(client.status().find("running"), std::string::npos) << client.status();
}

TEST(McpClient, TheServerGetsOnlyTheEnvironmentItsConfigNames) {
  test::TempDir ws;
  ::setenv("PF_MCP_TEST_SECRET", "hunter2", 1);
  ::setenv("PF_MCP_TEST_TOKEN", "tok-123", 1);
  McpServerConfig c = stdio_server();
  c.env = {{"GITHUB_TOKEN", "${PF_MCP_TEST_TOKEN}"}};
  test::write_file(ws / ".env", "# the workspace's own\nexport WORKSPACE_FLAG=\"on\"\nGITHUB_TOKEN=overridden\n");
  McpClient client(c, ws.path());
  std::string env = client.call("get-env", json::object())["content"];
  EXPECT_NE(env.find("\"WORKSPACE_FLAG\": \"on\""), std::string::npos) << env;
  ::unsetenv("PF_MCP_TEST_SECRET");
  EXPECT_EQ(env.find("hunter2"), std::string::npos);
  EXPECT_NE(env.find("tok-123"), std::string::npos) << env;
  EXPECT_NE(env.find("\"PATH\""), std::string::npos);
}

TEST(McpClient, AServerThatCannotStartFailsCleanlyAndBacksOff) {
  test::TempDir ws;
  McpServerConfig c;
  c.name = "broken";
  c.command = "sh";
  c.args = {"-c", "echo not json; exit 3"};
  McpClient client(c, ws.path());
  json r = client.call("anything", json::object());
  ASSERT_TRUE(r.contains("error"));
  EXPECT_NE(r["error"].get<std::string>().find("MCP server broken: could not start"), std::string::npos) << r;
  json again = client.call("anything", json::object());
  EXPECT_NE(again["error"].get<std::string>().find("next try in"), std::string::npos) << again;
  EXPECT_NE(client.status().find("down"), std::string::npos);
  McpServerConfig missing = c;
  missing.command = "no-such-mcp-server";
  EXPECT_THROW(McpClient(missing, ws.path()).tools(), Error);
}

// A server whose answers have members of unexpected types (found writing fuzz_mcp_messages): a
// description or protocolVersion that is no string, content entries that are no objects, an
// isError that is no boolean. These threw inside the client, so the server could never be
// used ("could not start") or was stopped after each call; now what is unreadable is left out.
TEST(McpClient, AnswersWithOddMemberTypesAreReadNotFatal) {
  const char* server = R"(
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m: continue
    result = {"initialize": {"protocolVersion": 5},
              "tools/list": {"tools": [{"name": "t", "description": 7, "inputSchema": 3}]},
              "tools/call": {"content": [1, {"type": "text", "text": "ok"}], "isError": "yes"}}[m["method"]]
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": result}), flush=True)
)";
  test::TempDir ws;
  McpServerConfig c;
  c.name = "odd";
  c.command = "/usr/bin/python3";
  c.args = {"-c", server};
  McpClient client(c, ws.path());
  std::vector<ToolSpec> tools = client.tools();
  ASSERT_EQ(tools.size(), 1u);
  EXPECT_EQ(tools[0].description, "");
  EXPECT_EQ(tools[0].parameters, json({{"type", "object"}}));
  json r = client.call("t", json::object());
  EXPECT_EQ(r["content"], "[content omitted]\nok") << r;
  EXPECT_FALSE(r.contains("isError"));
  EXPECT_NE(client.status().find("running"), std::string::npos) << client.status();
}

TEST(McpClient, AHangingCallIsStoppedAndTheServerComesBack) {
  test::TempDir ws;
  McpClient client(stdio_server(1), ws.path());
  json hung = client.call("trigger-long-running-operation", {{"duration", 10}, {"steps", 2}});
  ASSERT_TRUE(hung.contains("error")) << hung;
  EXPECT_NE(hung["error"].get<std::string>().find("no answer within 1 s"), std::string::npos) << hung;
  std::this_thread::sleep_for(std::chrono::milliseconds(1400));  // the first backoff: 1 s +- 25%
  EXPECT_EQ(client.call("echo", {{"message", "back"}})["content"], "Echo: back");
}

int free_port() {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(s);
  return ntohs(a.sin_port);
}

TEST(McpClient, SpeaksStreamableHttp) {
  int port = free_port();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("PORT", std::to_string(port).c_str(), 1);
    std::string script = everything();
    ::execlp("node", "node", script.c_str(), "streamableHttp", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  test::TempDir ws;
  McpServerConfig c;
  c.name = "remote";
  c.url = "http://127.0.0.1:" + std::to_string(port) + "/mcp";
  c.timeout_seconds = 10;
  McpClient client(c, ws.path());
  std::vector<ToolSpec> tools;
  for (int i = 0; i < 100 && tools.empty(); ++i) {  // until it listens
    client.reset();
    try {
      tools = client.tools();
    } catch (const Error&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  auto list = names(tools);
  EXPECT_NE(std::find(list.begin(), list.end(), "echo"), list.end());
  EXPECT_EQ(client.call("echo", {{"message", "over http"}})["content"], "Echo: over http");
  ::kill(pid, SIGTERM);
  ::waitpid(pid, nullptr, 0);
  json gone = client.call("echo", {{"message", "x"}});
  EXPECT_TRUE(gone.contains("error")) << gone;
}

TEST(McpTools, AWorkspacesServersBecomeRegistryEntries) {
  test::TempDir ws;
  test::write_file(ws / "mcp-config.json",
                   json({{"mcpServers", {{"local", {{"command", "node"}, {"args", {everything(), "stdio"}}}}}}}).dump());
  McpServerConfig broken;
  broken.name = "broken";
  broken.command = "no-such-mcp-server";
  McpTools tools({broken}, ws.path());
  ToolRegistry reg;
  tools.add_to(reg);  // the broken server is left out
  const ToolEntry* echo = reg.find("local__echo");
  ASSERT_NE(echo, nullptr);
  EXPECT_EQ(echo->permission, ToolPermission::kMcp);
  ToolTarget t = echo->describe(R"({"message": "x"})");
  EXPECT_EQ(t.mcp_server, "local");
  EXPECT_EQ(t.mcp_tool, "echo");
  EXPECT_EQ(reg.call("local__echo", R"({"message": "via registry"})", nullptr)["content"], "Echo: via registry");
  EXPECT_EQ(reg.find("broken__echo"), nullptr);
  auto status = tools.status();
  ASSERT_EQ(status.size(), 2u);
  test::write_file(ws / "mcp-config.json", "{not json");
  McpTools bad({}, ws.path(), ws / "no-user-dir");
  EXPECT_TRUE(bad.empty());
}

// The user's mcp-config.json sits between the config and the workspace's: it adds servers and
// replaces the config's of the same name, and the workspace's replaces its.
TEST(McpTools, TheUsersFileSitsBetweenTheConfigAndTheWorkspace) {
  test::TempDir ws, user;
  auto server = [](const std::string& command) { return json({{"command", command}}); };
  test::write_file(user / "mcp-config.json",
                   json({{"mcpServers", {{"shared", server("from-user")}, {"mine", server("user-only")}}}}).dump());
  test::write_file(ws / "mcp-config.json", json({{"mcpServers", {{"mine", server("from-ws")}}}}).dump());
  McpServerConfig configured;
  configured.name = "shared";
  configured.command = "from-config";
  McpTools tools({configured}, ws.path(), user.path());
  std::vector<McpServerConfig> merged = tools.servers();
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].name, "shared");
  EXPECT_EQ(merged[0].command, "from-user");
  EXPECT_EQ(merged[1].name, "mine");
  EXPECT_EQ(merged[1].command, "from-ws");
  std::vector<McpServerConfig> without = McpTools({configured}, ws.path(), ws / "none").servers();
  ASSERT_EQ(without.size(), 2u);
  EXPECT_EQ(without[0].command, "from-config");
}

}  // namespace
}  // namespace pf
