// Deterministic mutation fuzzing of the parsers that take untrusted input: the chunkers (code,
// Markdown, package.json), the ignore-file parser, the content classifier, query analysis, the
// config loader (and a workspace's mcp-config.json), agent, skill and hooks files (front matter, hooks.json, a hook's answer), MCP messages both ways, chat request bodies (three shapes), the cron parser, the permission engine's shell parser, and
// what model servers send back (refusal messages, wait headers), admin tool arguments,
// traceparent headers and OTLP header lists.
// Runs in every test run (and under ASan/UBSan in CI); tests/fuzz/ has libFuzzer entry points
// for longer, coverage-guided runs.
#include <gtest/gtest.h>

#include "chat/mattermost/mattermost_events.h"

#include <random>

#include "agent/custom_agents.h"
#include "agent/hooks.h"
#include "agent/skills.h"
#include "api/api_error.h"
#include "api/chat_request.h"
#include "bridge/admin_tools.h"
#include "core/config.h"
#include "core/front_matter.h"
#include "core/trace.h"
#include "core/json.h"
#include "index/chunker.h"
#include "index/file_filter.h"
#include "index/ignore.h"
#include "index/schedule.h"
#include "llm/embedding_fit.h"
#include "mcp/messages.h"
#include "net/headers.h"
#include "net/otlp_exporter.h"
#include "net/sse.h"
#include "policy/hard_deny.h"
#include "policy/shell_command.h"
#include "search/query.h"
#include "store/bm25_index.h"
#include "test_util.h"

namespace pf {
namespace {

const char* kSeeds[] = {
    "export class A extends B { m() { return `x${y}` } }\n/** doc */\nfunction f(a, b = {}) {}\n",
    "# Title\n\n## Sub\n```js\n# x\n```\ntext\n===\n",
    "{\"name\":\"x\",\"version\":\"1\",\"dependencies\":{\"a\":\"^1\"}}",
    "*.log\n!keep.log\n/build/\n**/x/**\n[a-z]?\\#\n",
    "const x = <div>{a.map(b => <b/>)}</div>\nmodule.exports = { x }\n",
    "class A(B):\n    @d\n    def f(self):\n        return 1\n",
    "func (s *S) F() error { return nil }\ntype T struct { a int }\n",
    "impl<T> Tr for S<T> { fn f(&self) -> u8 { 0 } }\npub struct S<T>(T);\n",
    "public class A { public A() {} void f() { int x = 1; } }\n",
    "#ifndef H\n#define H\nnamespace n { template <class T> struct S { T& f() const; };\n"
    "int S<int>::g(int *p) { return *p; } extern \"C\" { void c(void); } }\n#endif\n",
    "static char *dup(const char *s) { return 0; }\n#define M(a) ((a) + 1)\ntypedef int "
    "(*fn)(int);\n",
    "{\"providers\":{\"p\":{\"type\":\"openai\",\"baseUrl\":\"http://"
    "h\",\"models\":[{\"id\":\"m\"}]}},"
    "\"defaults\":{\"chatModel\":\"p:m\",\"fallbackModels\":[\"p:m\"]}}",
    "{\"message\":\"where?\",\"conversationHistory\":[{\"role\":\"user\",\"content\":\"a\"}],"
    "\"modelId\":\"m\",\"provider\":\"p\"}",
    "{\"id\":\"c\",\"messages\":[{\"id\":\"1\",\"role\":\"user\",\"parts\":[{\"type\":\"text\","
    "\"text\":\"hi\"}]},{\"role\":\"assistant\",\"parts\":[{\"type\":\"step-start\"}]}]}",
    "*/15 1-5,7 * 1,6 0-6/2",
    "sudo env FOO=1 bash -c \"cd / && rm -rf * || echo $(whoami) | xargs -I{} sh -c 'f(){ f|f& };f'\" > /dev/sda",
    "{\"messages\":[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":\"go\"}]},"
    "{\"id\":\"a1\",\"role\":\"assistant\",\"parts\":[{\"type\":\"tool-run_command\","
    "\"toolCallId\":\"c1\",\"state\":\"approval-responded\",\"input\":{\"command\":\"ls\"},"
    "\"approval\":{\"id\":\"pfa_0\",\"approved\":true}}]}],\"toolApprovals\":true}",
    "input (600 tokens) is too large to process. increase the physical batch size (current batch "
    "size: 512) maximum context length is 8192 tokens, however you requested 9000 tokens",
    "\"keep-alive\" OR \"handler\" OR \"x_2\"",
    "Wed, 21 Oct 2015 07:28:00 GMT 6m0.5s 20ms 1h",
    "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
    "\"2025-06-18\",\"clientInfo\":{\"name\":\"c\"}}},{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
    "\"content\":[{\"type\":\"text\",\"text\":\"t\"}],\"isError\":false,\"tools\":[{\"name\":\"a\"}]}}]",
    "{\"mcpServers\":{\"gh\":{\"command\":\"npx\",\"args\":[\"-y\",\"s\"],\"env\":{\"T\":\"${T}\"}},"
    "\"web\":{\"url\":\"https://h/mcp\",\"headers\":{\"A\":\"b\"},\"timeout\":5}}}",
    "{\"model\":\"pilotfish\",\"stream\":true,\"n\":1,\"messages\":[{\"role\":\"system\","
    "\"content\":\"s\"},{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"q\"}]}]}",
    "---\nname: Code Reviewer\ndescription: Reviews code\ntools: ['read', \"s\\u00e9\", gh/*]\n"
    "model: sonnet\nmcp-servers:\n  github:\n    type: http\n---\nYou review code.\n",
    "---\nname: deploy\ndescription: >-\n  Deploys\n  it\nlist:\n- a\n- 'b'\nlit: |\n  x\n\n  "
    "y\n---\n# How\n",
    "{\"version\": 1, \"hooks\": {\"preToolUse\": [{\"type\": \"command\", \"bash\": \"./c.sh\", "
    "\"cwd\": \"s\", \"timeoutSec\": 5, \"env\": {\"A\": \"b\"}}], \"sessionEnd\": [{\"bash\": \"x\"}]}}",
    "{\"permissionDecision\": \"ask\", \"permissionDecisionReason\": \"prod\"}",
};

std::string mutate(std::mt19937& rng, std::string s) {
  int edits = 1 + static_cast<int>(rng() % 8);
  for (int i = 0; i < edits; ++i) {
    size_t at = s.empty() ? 0 : rng() % (s.size() + 1);
    switch (rng() % 5) {
      case 0:
        s.insert(at, 1, static_cast<char>(rng() % 256));
        break;
      case 1:
        if (at < s.size()) s.erase(at, 1 + rng() % 4);
        break;
      case 2:
        s.insert(at, std::string(1 + rng() % 40, "{[(`'\"#*\n"[rng() % 9]));
        break;
      case 3:
        if (!s.empty()) s.insert(at, s.substr(rng() % s.size(), rng() % 32));
        break;
      default:
        if (at < s.size()) s[at] = static_cast<char>(rng() % 256);
        break;
    }
  }
  return s;
}

// The MCP messages both ways (as fuzz_mcp_messages does): nothing throws, answers serialise.
void check_mcp_messages(const std::string& input) {
  nlohmann::json m = parse_json(input);
  if (m.is_discarded()) return;
  for (const nlohmann::json& one : m.is_array() ? m : nlohmann::json::array({m})) {
    McpIncoming in = read_mcp_message(one);
    if (in.kind == McpIncoming::Kind::kInvalid) {
      ASSERT_TRUE(in.error["error"]["code"].is_number());
    }
    if (in.kind == McpIncoming::Kind::kRequest && in.method == "initialize") {
      McpSession session;
      (void)mcp_initialize(in.params, session).dump();
    }
  }
  (void)mcp_find_response(m, 1);
  (void)mcp_model_result(m).dump();
  std::string cursor;
  for (const ToolSpec& t : mcp_tools_of(m, &cursor)) ASSERT_TRUE(t.parameters.is_object());
}

TEST(FuzzSmoke, ParsersSurviveMutatedInput) {  // and the config loader
  std::mt19937 rng(7);
  ChunkLimits small{8, 5};
  for (int iter = 0; iter < 3000; ++iter) {
    std::string input = mutate(rng, kSeeds[iter % (sizeof kSeeds / sizeof kSeeds[0])]);
    std::string content = input;
    SkipReason reason = classify_content(&content);
    (void)reason;
    // Each input goes through three of the fifteen chunkers in turn: 600 inputs each.
    static const char* const kLanguages[] = {
        "typescript", "tsx",    "javascript", "python", "go",       "rust",         "java", "c",
        "cpp",        "csharp", "ruby",       "php",    "markdown", "package.json", "text"};
    for (int k = 0; k < 3; ++k) {
      const char* lang = kLanguages[(iter + 5 * k) % 15];
      auto chunks = chunk_file("f", lang, content, small);
      for (const auto& c : chunks) {
        ASSERT_GE(c.start_line, 1);
        ASSERT_LE(c.start_line, c.end_line);
      }
    }
    // Shell lines a model writes, through the permission engine's parser and hard denies.
    ShellParse shell = parse_shell(input);
    for (const auto& c : shell.commands) ASSERT_FALSE(c.words.empty());
    (void)hard_deny(shell);
    IgnoreFile ig("", input);
    (void)ig.match("a/b/c.log", false);
    (void)wildmatch(input, "a/b/c");
    (void)analyze_query(input);
    MattermostFrame frame = parse_mattermost_frame(input);
    ASSERT_EQ(frame.kind == MattermostFrame::Kind::kMalformed, !frame.error.empty());
    SseParser sse([](const SseEvent&) { return true; });
    sse.feed(input);
    try {
      (void)parse_config(input, "fuzz.json");
    } catch (const ConfigError&) {
      // the expected outcome for most mutations: a clear error, nothing else
    }
    try {
      (void)parse_mcp_servers(input, "mcp-config.json", "mcpServers");
    } catch (const ConfigError&) {
    }
    check_mcp_messages(input);
    try {
      ChatInput in = parse_chat_request(input, ChatLimits{});
      ASSERT_FALSE(in.question.empty());
    } catch (const ApiError& e) {
      ASSERT_EQ(e.status(), 400);  // a request's fault, said as one
    }
    try {
      OpenAiChatInput in = parse_openai_chat_request(input, ChatLimits{});
      ASSERT_FALSE(in.chat.question.empty());
    } catch (const ApiError& e) {
      ASSERT_EQ(e.status(), 400);
    }
    // What model servers say back.
    TooLongMessage said = read_too_long_message(input);
    ASSERT_GE(said.limit_tokens, 0);
    int64_t wait = requested_wait_ms({{"retry-after", input}, {"x-ratelimit-reset-tokens", input}});
    ASSERT_GE(wait, -1);
    ASSERT_LE(wait, 3600 * 1000);
    std::string joined;
    for (const auto& piece : split_for_embedding(input, 16)) {
      ASSERT_LE(piece.size(), 16u);
      joined += piece;
    }
    ASSERT_EQ(joined, input);
    ASSERT_GE(token_units(input), 0);
    // Agent, skill and front matter files: a value or a clear error.
    try {
      (void)parse_front_matter(input);
    } catch (const Error&) {
    }
    try {
      ASSERT_FALSE(parse_agent_file(input, "a.agent.md").instructions.empty());
    } catch (const Error&) {
    }
    try {
      ASSERT_FALSE(parse_skill_file(input, "s").description.empty());
    } catch (const Error&) {
    }
    try {
      for (const auto& list : parse_hooks_json(input, "h.json", false).commands)
        for (const HookCommand& h : list) ASSERT_FALSE(h.bash.empty());
    } catch (const Error&) {
    }
    HookDecision decided;
    read_pre_tool_answer(input, "fuzz", decided);
    try {
      (void)CronSchedule::parse(input).next_after(0);
    } catch (const UsageError&) {
    } catch (const Error&) {
      // "never matches" (a 31st of February)
    }
  }
}

// What a model and an HTTP caller send to the admin tools and the tracer: an admin tool's
// arguments (bridge/admin_tools.h), a traceparent header and an OTEL header list.
TEST(FuzzSmoke, AdminArgumentsTraceparentsAndHeaderListsSurviveMutatedInput) {
  std::mt19937 rng(11);
  const char* seeds[] = {
      R"({"name": "payments", "repository": "https://h/pay.git", "branch": "main", "private": true})",
      R"({"path": "/srv/shared", "mode": "write", "bot": "ops"})",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "x-api-key=k%3D1, b = 2"};
  for (int iter = 0; iter < 3000; ++iter) {
    std::string input = mutate(rng, seeds[iter % 4]);
    std::string why;
    if (auto r = parse_project_request(input, &why)) {
      EXPECT_TRUE(is_channel_slug(r->name)) << input;
    }
    (void)parse_path_access(input, iter % 2 == 0, &why);
    if (auto c = parse_traceparent(input)) {
      EXPECT_TRUE(c->valid()) << input;
      EXPECT_EQ(parse_traceparent(format_traceparent(*c))->span_id, c->span_id);
    }
    for (const auto& [k, v] : parse_otlp_headers(input)) EXPECT_FALSE(k.empty()) << input;
  }
}

}  // namespace
}  // namespace pf
