// The MCP JSON-RPC messages without a transport (src/mcp/messages.h): how the server reads a
// client's message of any shape, and what the client takes from a server's answer of any shape;
// none of them throws (the fuzz target fuzz_mcp_messages holds them to that).
#include "mcp/messages.h"

#include <gtest/gtest.h>

namespace pf {
namespace {

using nlohmann::json;
using Kind = McpIncoming::Kind;

TEST(McpMessages, TheServerReadsRequestsNotificationsAndResponses) {
  McpIncoming r = read_mcp_message(json::parse(R"({"jsonrpc":"2.0","id":"a","method":"ping"})"));
  EXPECT_EQ(r.kind, Kind::kRequest);
  EXPECT_EQ(r.id, "a");
  EXPECT_EQ(r.method, "ping");
  EXPECT_EQ(r.params, json::object());
  McpIncoming n = read_mcp_message(json::parse(R"({"jsonrpc":"2.0","method":"n","params":{"x":1}})"));
  EXPECT_EQ(n.kind, Kind::kNotification);
  EXPECT_EQ(n.params["x"], 1);
  EXPECT_EQ(read_mcp_message(json::parse(R"({"jsonrpc":"2.0","id":3,"result":{}})")).kind, Kind::kResponse);
}

// Each of these threw nlohmann's type_error out of McpServer::handle (the stdio client then
// waited forever for its answer) before the members were checked one by one.
TEST(McpMessages, AMessageOfTheWrongShapeIsAnErrorResponse) {
  struct Case {
    const char* message;
    int code;
    json id;
  } cases[] = {
      {R"({"jsonrpc":2,"id":5,"method":"ping"})", kRpcInvalidRequest, 5},
      {R"({"jsonrpc":null,"id":"x","method":"ping"})", kRpcInvalidRequest, "x"},
      {R"({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})", kRpcInvalidRequest, nullptr},
      {R"({"jsonrpc":"2.0","id":6,"method":7})", kRpcInvalidRequest, 6},
      {R"({"jsonrpc":"2.0","id":6,"method":"ping","params":[1]})", kRpcInvalidParams, 6},
      {R"([1])", kRpcInvalidRequest, nullptr},
      {R"("2.0")", kRpcInvalidRequest, nullptr},
  };
  for (const Case& c : cases) {
    McpIncoming in = read_mcp_message(json::parse(c.message));
    ASSERT_EQ(in.kind, Kind::kInvalid) << c.message;
    EXPECT_EQ(in.error["error"]["code"], c.code) << c.message;
    EXPECT_EQ(in.error["id"], c.id) << c.message;
  }
}

TEST(McpMessages, InitializeTakesOnlyWhatItUnderstands) {
  McpSession s;
  json r = mcp_initialize(json::parse(R"({"protocolVersion":5,"clientInfo":{"name":["x"]}})"), s);
  EXPECT_EQ(r["protocolVersion"], mcp_protocol_versions().front());
  EXPECT_TRUE(s.initialized);
  EXPECT_EQ(s.client, "");
  mcp_initialize(json::parse(R"({"protocolVersion":"2024-11-05","clientInfo":{"name":"curl"}})"), s);
  EXPECT_EQ(s.protocol_version, "2024-11-05");
  EXPECT_EQ(s.client, "curl");
}

TEST(McpMessages, TheClientFindsItsResponseInAMessageOrABatch) {
  EXPECT_EQ(mcp_find_response(json::parse(R"({"jsonrpc":"2.0","id":4,"result":1})"), 4)["result"], 1);
  EXPECT_TRUE(mcp_find_response(json::parse(R"({"id":4,"method":"roots/list"})"), 4).is_null());
  EXPECT_TRUE(mcp_find_response(json::parse(R"({"id":"4","result":1})"), 4).is_null());
  EXPECT_EQ(mcp_find_response(json::parse(R"([7,{"id":3},{"id":4,"result":2}])"), 4)["result"], 2);
  EXPECT_TRUE(mcp_find_response(json::parse("[]"), 4).is_null());
  EXPECT_EQ(mcp_error_text(json::parse(R"({"code":1,"message":"no"})")), "no");
  EXPECT_EQ(mcp_error_text(json::parse(R"({"message":3})")), R"({"message":3})");
}

// A server's result of any shape becomes text for the model; before, content entries that were
// no objects or an isError that was no boolean threw, and the call stopped the server.
TEST(McpMessages, TheClientReadsResultsAndToolListsOfAnyShape) {
  json r = mcp_model_result(json::parse(
      R"({"content":[1,{"type":"text","text":"ok"},{"type":"image"}],"isError":"yes","structuredContent":{"a":1}})"));
  EXPECT_EQ(r["content"], "[content omitted]\nok\n[image omitted]");
  EXPECT_FALSE(r.contains("isError"));
  EXPECT_EQ(r["structuredContent"]["a"], 1);
  EXPECT_EQ(mcp_model_result(json::parse(R"({"content":[],"isError":true})"))["isError"], true);
  EXPECT_EQ(mcp_model_result(json::parse("3"))["content"], "");
  std::string cursor = "old";
  auto tools = mcp_tools_of(json::parse(
      R"({"tools":[{"name":"a","description":7,"inputSchema":3},{"name":1},"x",{"name":"b","description":"d","inputSchema":{"type":"object","required":["q"]}}],"nextCursor":2})"),
      &cursor);
  ASSERT_EQ(tools.size(), 2u);
  EXPECT_EQ(tools[0].name, "a");
  EXPECT_EQ(tools[0].description, "");
  EXPECT_EQ(tools[0].parameters, json({{"type", "object"}}));
  EXPECT_EQ(tools[1].parameters["required"][0], "q");
  EXPECT_EQ(cursor, "");
  mcp_tools_of(json::parse(R"({"nextCursor":"p2"})"), &cursor);
  EXPECT_EQ(cursor, "p2");
}

}  // namespace
}  // namespace pf
