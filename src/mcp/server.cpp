// The MCP server's JSON-RPC dispatch and its five tools (see server.h).
#include "mcp/server.h"

#include <filesystem>

#include "core/json.h"
#include "core/log.h"
#include "runtime/answer_runtime.h"

namespace pf {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

// A JSON-RPC error, thrown inside the dispatch and turned into the response.
struct RpcError {
  int code;
  std::string message;
};

json schema(json properties, std::vector<std::string> required = {}) {
  json s = {{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) s["required"] = std::move(required);
  return s;
}

const json& tool_list() {
  static const json tools = [] {
    json repo = {{"type", "string"},
                 {"description", "Which indexed repository (its path or folder name); optional "
                                 "when only one is indexed. index_status lists them."}};
    return json::array({
        {{"name", "search_code"},
         {"description", "Search the indexed repository for code and docs (code-aware BM25, "
                         "plus vectors when configured). Returns the best chunks with path, line "
                         "range and content."},
         {"inputSchema", schema({{"query", {{"type", "string"}, {"description", "What to look for: identifiers, error text or a question"}}},
                                 {"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", 50}}},
                                 {"repository", repo}},
                                {"query"})},
         {"annotations", {{"readOnlyHint", true}}}},
        {{"name", "read_file"},
         {"description", "Read a file of the repository, optionally lines startLine..endLine "
                         "(1-based). Secrets and paths outside the repository are refused."},
         {"inputSchema", schema({{"path", {{"type", "string"}, {"description", "Relative to the repository root"}}},
                                 {"startLine", {{"type", "integer"}, {"minimum", 1}}},
                                 {"endLine", {{"type", "integer"}, {"minimum", 1}}},
                                 {"repository", repo}},
                                {"path"})},
         {"annotations", {{"readOnlyHint", true}}}},
        {{"name", "list_directory"},
         {"description", "List a directory of the repository (default: its root)."},
         {"inputSchema", schema({{"path", {{"type", "string"}}}, {"repository", repo}})},
         {"annotations", {{"readOnlyHint", true}}}},
        {{"name", "grep"},
         {"description", "Search file contents with a regular expression (RE2 syntax), "
                         "optionally under a path. Returns matching lines with line numbers."},
         {"inputSchema", schema({{"pattern", {{"type", "string"}}}, {"path", {{"type", "string"}}},
                                 {"repository", repo}},
                                {"pattern"})},
         {"annotations", {{"readOnlyHint", true}}}},
        {{"name", "index_status"},
         {"description", "The indexed repositories: files, chunks, when each was last indexed "
                         "and whether an index run is under way."},
         {"inputSchema", schema(json::object())},
         {"annotations", {{"readOnlyHint", true}}}},
    });
  }();
  return tools;
}

std::optional<int> int_arg(const json& args, const char* key) {
  auto it = args.find(key);
  if (it == args.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer()) throw RpcError{kRpcInvalidParams, std::string(key) + " must be an integer"};
  return it->get<int>();
}

std::string string_arg(const json& args, const char* key, bool required) {
  auto it = args.find(key);
  if (it == args.end() || it->is_null()) {
    if (required) throw RpcError{kRpcInvalidParams, std::string(key) + " is required"};
    return "";
  }
  if (!it->is_string()) throw RpcError{kRpcInvalidParams, std::string(key) + " must be a string"};
  return it->get<std::string>();
}

}  // namespace

McpServer::McpServer(AnswerRuntime& runtime, std::vector<std::string> roots)
    : runtime_(runtime) {
  for (auto& r : roots) {
    std::error_code ec;
    roots_.push_back(std::filesystem::weakly_canonical(r, ec).string());
  }
}

asio::awaitable<std::vector<std::string>> McpServer::repositories() {
  if (!roots_.empty()) co_return roots_;
  std::vector<std::string> out;
  co_await runtime_.workspace().run([&](Store& store) {
    for (const auto& r : store.list_repositories()) out.push_back(r.root);
  });
  co_return out;
}

asio::awaitable<std::optional<std::string>> McpServer::handle_text(std::string_view text,
                                                                  McpSession& session) {
  std::string why;
  json message = parse_json(text, &why);
  if (message.is_discarded()) co_return mcp_error_response(nullptr, kRpcParseError, "parse error: " + why).dump();
  std::optional<json> out = co_await handle(message, session);
  if (!out) co_return std::nullopt;
  co_return out->dump();
}

asio::awaitable<std::optional<json>> McpServer::handle(const json& message, McpSession& session) {
  if (message.is_array()) {
    if (message.empty()) co_return mcp_error_response(nullptr, kRpcInvalidRequest, "an empty batch");
    json responses = json::array();
    for (const json& m : message) {
      // A batch inside a batch is one invalid request, not a recursion as deep as the input.
      // (An if, not ?: around co_await: GCC 12 garbled the result of that.)
      std::optional<json> r;
      if (m.is_array())
        r = read_mcp_message(m).error;
      else
        r = co_await handle(m, session);
      if (r) responses.push_back(std::move(*r));
    }
    if (responses.empty()) co_return std::nullopt;
    co_return responses;
  }
  McpIncoming in = read_mcp_message(message);
  if (in.kind == McpIncoming::Kind::kInvalid) co_return in.error;
  if (in.kind == McpIncoming::Kind::kResponse) co_return std::nullopt;  // none expected
  if (in.kind == McpIncoming::Kind::kNotification) {
    if (in.method == "notifications/initialized") session.initialized = true;
    co_return std::nullopt;  // notifications get no answer
  }
  std::optional<RpcError> failure;
  json result;
  try {
    result = co_await request(in.method, in.params, session);
  } catch (const RpcError& e) {
    failure = e;
  } catch (const std::exception& e) {
    failure = RpcError{kRpcInternalError, std::string("internal error: ") + e.what()};
  }
  if (failure) co_return mcp_error_response(in.id, failure->code, failure->message);
  co_return json{{"jsonrpc", "2.0"}, {"id", in.id}, {"result", std::move(result)}};
}

asio::awaitable<json> McpServer::request(const std::string& method, const json& params,
                                         McpSession& session) {
  if (method == "initialize") co_return mcp_initialize(params, session);
  if (method == "ping") co_return json::object();
  if (!session.initialized) throw RpcError{-32002, "send initialize first"};
  if (method == "tools/list") co_return json{{"tools", tool_list()}};
  if (method == "tools/call") {
    if (!params.contains("name") || !params["name"].is_string())
      throw RpcError{kRpcInvalidParams, "tools/call needs the tool's name"};
    json arguments = params.contains("arguments") ? params["arguments"] : json::object();
    if (!arguments.is_object()) throw RpcError{kRpcInvalidParams, "arguments must be an object"};
    co_return co_await call_tool(params["name"], arguments);
  }
  throw RpcError{kRpcMethodNotFound, "no such method: " + method};
}

asio::awaitable<json> McpServer::call_tool(const std::string& name, const json& args) {
  bool known = false;
  for (const json& t : tool_list()) known = known || t["name"] == name;
  if (!known) throw RpcError{kRpcInvalidParams, "no such tool: " + name};
  json result;
  std::vector<std::string> repos = co_await repositories();
  if (name == "index_status") {
    json list = json::array();
    std::vector<RepositoryInfo> infos;
    co_await runtime_.workspace().run([&](Store& store) { infos = store.list_repositories(true); });
    for (const auto& r : infos) {
      if (std::find(repos.begin(), repos.end(), r.root) == repos.end()) continue;
      list.push_back({{"repository", r.root}, {"files", r.files}, {"chunks", r.chunks},
                      {"lastIndexedAt", r.last_indexed_at},
                      {"indexing", runtime_.repository(r.root).index_job->running()}});
    }
    result = {{"repositories", list}};
  } else {
    // The repository: the only one, or the one named by path or folder name.
    std::string wanted = string_arg(args, "repository", false), root;
    for (const auto& r : repos)
      if (wanted.empty() ? repos.size() == 1
                         : (r == wanted || std::filesystem::path(r).filename() == wanted))
        root = r;
    if (root.empty()) {
      std::string list;
      for (const auto& r : repos) list += (list.empty() ? "" : ", ") + r;
      result = {{"error", repos.empty() ? "no repository is indexed yet"
                          : wanted.empty() ? "several repositories are indexed; name one in repository: " + list
                                           : "no indexed repository " + wanted + " (indexed: " + list + ")"}};
    } else {
      RepositoryTools& tools = *runtime_.repository(root).tools;
      if (name == "search_code") {
        std::string query = string_arg(args, "query", true);
        int limit = std::clamp(int_arg(args, "limit").value_or(8), 1, 50);
        co_await runtime_.workspace().run([&](Store& store) { result = tools.search_code(store, query, limit); });
      } else if (name == "read_file") {
        std::string path = string_arg(args, "path", true);
        auto start = int_arg(args, "startLine"), end = int_arg(args, "endLine");
        co_await runtime_.workspace().run([&](Store&) { result = tools.read_file(path, start, end); });
      } else if (name == "list_directory") {
        std::string path = string_arg(args, "path", false);
        co_await runtime_.workspace().run([&](Store&) { result = tools.list_directory(path.empty() ? "." : path); });
      } else {
        std::string pattern = string_arg(args, "pattern", true), path = string_arg(args, "path", false);
        co_await runtime_.workspace().run([&](Store&) { result = tools.grep(pattern, path); });
      }
    }
  }
  bool is_error = result.is_object() && result.contains("error");
  co_return json{{"content", {{{"type", "text"}, {"text", result.dump(2)}}}}, {"isError", is_error}};
}

}  // namespace pf
