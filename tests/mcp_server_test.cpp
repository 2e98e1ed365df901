// pilotfish as an MCP server, checked with the real @modelcontextprotocol/sdk client over both
// transports (tests/node/mcp_client.mjs), and the JSON-RPC and Streamable HTTP edges the
// client never sends: bad JSON, unknown methods, requests before initialize, missing or ended
// sessions, unsupported protocol versions and bad keys.
#include <gtest/gtest.h>

#include <random>

#include "net/http_client.h"
#include "test_util.h"

namespace pf {
namespace {

using nlohmann::json;

class McpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_file(repo / "src/retry.ts",
                     "// Retries a request with exponential backoff.\n"
                     "export function retryWithBackoff(fn: () => Promise<void>, tries = 3) {\n"
                     "  return fn();\n}\n");
    test::write_file(repo / "README.md", "# demo\n");
    auto r = test::run({test::pilotfish_bin(), "index", repo.path(), "--db", db(), "--quiet"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  std::string db() const { return dir / "index.db"; }
  json node_client(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"node", test::source_dir() + "/tests/node/mcp_client.mjs"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = test::run(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }
  void check_report(const json& rep) {
    ASSERT_FALSE(rep.contains("failure")) << rep["failure"];
    EXPECT_EQ(rep["server"]["name"], "pilotfish");
    EXPECT_EQ(rep["tools"], json({"search_code", "read_file", "list_directory", "grep", "index_status"}));
    EXPECT_EQ(rep["search"]["isError"], false);
    EXPECT_NE(rep["search"]["text"].get<std::string>().find("src/retry.ts"), std::string::npos) << rep["search"];
    EXPECT_NE(rep["read"]["text"].get<std::string>().find("Retries a request"), std::string::npos) << rep["read"];
    EXPECT_EQ(rep["read"]["text"].get<std::string>().find("return fn()"), std::string::npos);  // lines 1-2 only
    EXPECT_EQ(rep["escape"]["isError"], true);
    EXPECT_EQ(rep["status"]["repositories"].size(), 1u);
    EXPECT_EQ(rep["status"]["repositories"][0]["files"], 2);
    EXPECT_NE(rep["list"].get<std::string>().find("README.md"), std::string::npos);
    EXPECT_NE(rep["grep"].get<std::string>().find("retryWithBackoff"), std::string::npos);
    EXPECT_NE(rep["unknown"].get<std::string>().find("no such tool"), std::string::npos) << rep["unknown"];
    EXPECT_EQ(rep["ping"], true);
  }
  test::TempDir dir, repo;
};

TEST_F(McpServerTest, TheRealClientWorksOverStdio) {
  check_report(node_client({"stdio", test::pilotfish_bin(), db()}));
}

// The hash of "secret-key" for the config.
std::string key_config(const std::string& path) {
  auto r = test::run({"sh", "-c", "printf %s secret-key | " + test::pilotfish_bin() + " hash-key"});
  std::string hash = r.out.substr(0, r.out.find('\n'));
  json cfg = {{"server", {{"apiKeys", {{{"name", "t"}, {"hash", hash}, {"role", "user"}}}}}}};
  test::write_file(path, cfg.dump());
  return path;
}

TEST_F(McpServerTest, TheRealClientWorksOverStreamableHttp) {
  test::ServeProcess serve({"--db", db(), "--config", key_config(dir / "c.json"), "--repo", repo.path()});
  json rep = node_client({"http", serve.url(), "secret-key"});
  check_report(rep);
  EXPECT_FALSE(rep["sessionId"].is_null());
}

HttpResponse post(const std::string& url, const std::string& body, HeaderFields headers = {}) {
  HttpRequest r;
  r.url = url + "/mcp";
  r.body = body;
  r.headers = std::move(headers);
  r.headers.emplace_back("Content-Type", "application/json");
  r.headers.emplace_back("Accept", "application/json, text/event-stream");
  return http_request(r);
}

TEST_F(McpServerTest, HttpEdgesAreClearErrors) {
  test::ServeProcess serve({"--db", db(), "--config", key_config(dir / "c.json")});
  HeaderFields auth = {{"Authorization", "Bearer secret-key"}};
  EXPECT_EQ(post(serve.url(), "{}", {{"Authorization", "Bearer wrong"}}).status, 401);
  EXPECT_EQ(post(serve.url(), "{not json", auth).status, 400);
  auto no_session = post(serve.url(), R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})", auth);
  EXPECT_EQ(no_session.status, 400);
  HeaderFields gone = auth;
  gone.emplace_back("Mcp-Session-Id", "nope");
  EXPECT_EQ(post(serve.url(), R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})", gone).status, 404);
  HeaderFields old = auth;
  old.emplace_back("MCP-Protocol-Version", "1999-01-01");
  EXPECT_EQ(post(serve.url(), R"({"jsonrpc":"2.0","id":1,"method":"ping"})", old).status, 400);
  auto init = post(serve.url(),
                   R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05",)"
                   R"("capabilities":{},"clientInfo":{"name":"curl","version":"1"}}})", auth);
  ASSERT_EQ(init.status, 200) << init.body;
  EXPECT_EQ(json::parse(init.body)["result"]["protocolVersion"], "2024-11-05");
  std::string session = init.header("Mcp-Session-Id");
  ASSERT_FALSE(session.empty());
  HeaderFields s = auth;
  s.emplace_back("Mcp-Session-Id", session);
  EXPECT_EQ(post(serve.url(), R"({"jsonrpc":"2.0","method":"notifications/initialized"})", s).status, 202);
  json unknown = json::parse(post(serve.url(), R"({"jsonrpc":"2.0","id":"x","method":"resources/list"})", s).body);
  EXPECT_EQ(unknown["error"]["code"], -32601);
  EXPECT_EQ(unknown["id"], "x");
  json batch = json::parse(post(serve.url(),
                                R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/call",)"
                                R"("params":{"name":"search_code","arguments":{"query":3}}}])", s).body);
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[0]["result"], json::object());
  EXPECT_EQ(batch[1]["error"]["code"], -32602);
  HttpRequest del;
  del.method = "DELETE";
  del.url = serve.url() + "/mcp";
  del.headers = s;
  EXPECT_EQ(http_request(del).status, 200);
  EXPECT_EQ(post(serve.url(), R"({"jsonrpc":"2.0","id":1,"method":"ping"})", s).status, 404);
  HttpRequest get;
  get.method = "GET";
  get.url = serve.url() + "/mcp";
  get.headers = auth;
  EXPECT_EQ(http_request(get).status, 405);
}

TEST_F(McpServerTest, StdioAnswersBadLinesAndRequestsBeforeInitialize) {
  std::string input =
      "not json\n"
      R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})" "\n"
      R"({"jsonrpc":"1.0","id":2,"method":"ping"})" "\n"
      R"({"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2099-01-01"}})" "\n"
      R"({"jsonrpc":"2.0","method":"notifications/initialized"})" "\n"
      R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"README.md"}}})" "\n";
  test::write_file(dir / "in.txt", input);
  auto r = test::run({"sh", "-c", test::pilotfish_bin() + " mcp --db " + db() + " < " + (dir / "in.txt")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<json> lines;
  size_t start = 0;
  while (start < r.out.size()) {
    size_t end = r.out.find('\n', start);
    lines.push_back(json::parse(r.out.substr(start, end - start)));
    start = end + 1;
  }
  ASSERT_EQ(lines.size(), 5u) << r.out;  // the notification gets no line
  EXPECT_EQ(lines[0]["error"]["code"], -32700);
  EXPECT_EQ(lines[1]["error"]["code"], -32002);
  EXPECT_EQ(lines[2]["error"]["code"], -32600);
  EXPECT_EQ(lines[3]["result"]["protocolVersion"], "2025-06-18");  // ours, for an unknown one
  EXPECT_EQ(lines[4]["result"]["isError"], false);
  EXPECT_NE(lines[4]["result"]["content"][0]["text"].get<std::string>().find("# demo"), std::string::npos);
}

}  // namespace
}  // namespace pf

namespace pf {
namespace {

// Mutated JSON-RPC lines into `pilotfish mcp`: every line is answered with JSON or (a
// notification) not at all, and the process ends cleanly.
TEST_F(McpServerTest, StdioSurvivesMutatedMessages) {
  const char* seeds[] = {
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})",
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"README.md","startLine":1}}})",
      R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_code","arguments":{"query":"retry","limit":5}}})",
      R"([{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}])",
  };
  std::mt19937 rng(7);
  std::string input = std::string(seeds[0]) + "\n";
  int lines = 0;
  for (int i = 0; i < 400; ++i) {
    std::string s = seeds[rng() % std::size(seeds)];
    for (int e = 0, n = 1 + static_cast<int>(rng() % 4); e < n; ++e) {
      size_t at = rng() % (s.size() + 1);
      switch (rng() % 3) {
        case 0: s.insert(at, 1, "{}[]\":,0a\\"[rng() % 10]); break;
        case 1: if (at < s.size()) s.erase(at, 1 + rng() % 3); break;
        default: if (at < s.size()) s[at] = static_cast<char>(32 + rng() % 95);
      }
    }
    input += s + "\n";
    ++lines;
  }
  test::write_file(dir / "fuzz.txt", input);
  auto r = test::run({"sh", "-c", test::pilotfish_bin() + " mcp --db " + db() + " < " + (dir / "fuzz.txt")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t start = 0, answers = 0;
  while (start < r.out.size()) {
    size_t end = r.out.find('\n', start);
    json j = json::parse(r.out.substr(start, end - start), nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out.substr(start, end - start);
    ++answers;
    start = end + 1;
  }
  EXPECT_GT(answers, 300u);
  EXPECT_LE(answers, static_cast<size_t>(lines) + 1);
}


// Found writing fuzz_mcp_messages: members of the wrong type ("jsonrpc": 2, "method": 5, a
// protocolVersion that is a number) threw out of the dispatch. Over stdio the line then got no
// answer at all (a client waits forever); over HTTP the request failed. Each is an error
// response now, and initialize ignores what it cannot read.
TEST_F(McpServerTest, MembersOfTheWrongTypeAreErrorResponses) {
  std::string input =
      R"({"jsonrpc":2,"id":5,"method":"ping"})" "\n"
      R"({"jsonrpc":"2.0","id":6,"method":7})" "\n"
      R"({"jsonrpc":"2.0","id":8,"method":"initialize","params":{"protocolVersion":5,"clientInfo":{"name":3}}})" "\n";
  test::write_file(dir / "in.txt", input);
  auto r = test::run({"sh", "-c", test::pilotfish_bin() + " mcp --db " + db() + " < " + (dir / "in.txt")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<json> lines;
  for (size_t start = 0, end; start < r.out.size(); start = end + 1) {
    end = r.out.find('\n', start);
    lines.push_back(json::parse(r.out.substr(start, end - start)));
  }
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[0]["id"], 5);
  EXPECT_EQ(lines[0]["error"]["code"], -32600);
  EXPECT_EQ(lines[1]["id"], 6);
  EXPECT_EQ(lines[1]["error"]["code"], -32600);
  EXPECT_EQ(lines[2]["result"]["protocolVersion"], "2025-06-18") << lines[2];

  test::ServeProcess serve({"--db", db(), "--config", key_config(dir / "c.json")});
  HeaderFields auth = {{"Authorization", "Bearer secret-key"}};
  EXPECT_EQ(post(serve.url(), R"({"jsonrpc":"2.0","id":1,"method":5})", auth).status, 400);
  auto init = post(serve.url(), R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":[]}})", auth);
  ASSERT_EQ(init.status, 200) << init.body;
  EXPECT_EQ(json::parse(init.body)["result"]["protocolVersion"], "2025-06-18") << init.body;
  HeaderFields s = auth;
  s.emplace_back("Mcp-Session-Id", init.header("Mcp-Session-Id"));
  auto bad = post(serve.url(), R"([{"jsonrpc":2,"id":2,"method":"ping"},[{"jsonrpc":"2.0","id":3,"method":"ping"}]])", s);
  ASSERT_EQ(bad.status, 200) << bad.body;
  json answers = json::parse(bad.body);
  ASSERT_EQ(answers.size(), 2u) << bad.body;
  EXPECT_EQ(answers[0]["id"], 2) << bad.body;
  EXPECT_EQ(answers[0]["error"]["code"], -32600);
  EXPECT_EQ(answers[1]["error"]["code"], -32600);  // a batch inside a batch is no request
}

}  // namespace
}  // namespace pf
