// Cross-origin use of the API (src/api/cors.h, server.corsOrigins): off by default; a listed
// origin's preflight is answered before any key is asked for and its answers (a stream too)
// carry Access-Control-Allow-Origin; any other origin gets none, and its preflight a 403; a
// config entry that is not an origin is refused.
#include "api/cors.h"

#include <gtest/gtest.h>

#include "core/config.h"
#include "core/error.h"
#include "net/http_client.h"
#include "test_util.h"

namespace pf {
namespace {

using nlohmann::json;

std::string header(const CorsAnswer& a, const std::string& name) {
  for (const auto& [k, v] : a.headers)
    if (k == name) return v;
  return "";
}

TEST(Cors, OnlyListedOriginsAndNeverWithoutAnOrigin) {
  std::vector<std::string> allowed = {"https://portal.example.com"};
  CorsAnswer a = cors_answer(allowed, "https://portal.example.com", "POST", "");
  EXPECT_TRUE(a.allowed);
  EXPECT_FALSE(a.preflight);
  EXPECT_EQ(header(a, "Access-Control-Allow-Origin"), "https://portal.example.com");
  EXPECT_EQ(header(a, "Vary"), "Origin");
  EXPECT_EQ(header(a, "Access-Control-Allow-Credentials"), "");
  CorsAnswer pre = cors_answer(allowed, "https://portal.example.com", "OPTIONS", "POST");
  EXPECT_TRUE(pre.preflight && pre.allowed);
  EXPECT_NE(header(pre, "Access-Control-Allow-Headers").find("Authorization"), std::string::npos);
  CorsAnswer other = cors_answer(allowed, "https://evil.example.net", "OPTIONS", "POST");
  EXPECT_TRUE(other.preflight);
  EXPECT_FALSE(other.allowed);
  EXPECT_EQ(header(other, "Access-Control-Allow-Origin"), "");
  EXPECT_TRUE(cors_answer({}, "https://portal.example.com", "GET", "").headers.size() == 1);  // Vary only
  EXPECT_TRUE(cors_answer(allowed, "", "GET", "").headers.empty());  // same origin, curl, a server
  EXPECT_EQ(header(cors_answer({"*"}, "http://localhost:3000", "GET", ""), "Access-Control-Allow-Origin"), "*");
}

TEST(Cors, TheConfigTakesOriginsOnly) {
  auto cfg = [](const json& origins) {
    return parse_config(json{{"server", {{"corsOrigins", origins}}}}.dump(), "t.json");
  };
  EXPECT_EQ(cfg({"https://a.example.com", "http://localhost:3000", "*"}).server.cors_origins.size(), 3u);
  for (const json& bad : {json("https://a.example.com"), json::array({"https://a.example.com/app"}),
                          json::array({"a.example.com"}), json::array({7}), json::array({"ftp://x"})}) {
    try {
      cfg(bad);
      FAIL() << bad;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("server.corsOrigins"), std::string::npos) << e.what();
    }
  }
}

class CorsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_file(repo_ / "lib/a.js", "function alphaHandler () {}\n");
    ASSERT_EQ(test::run({test::pilotfish_bin(), "index", repo_.path(), "--db", dir_ / "i.db", "-q"}).exit_code, 0);
    test::write_file(dir_ / "c.json", json{{"server", {{"corsOrigins", {"https://portal.example.com"}}}}}.dump());
    serve_ = std::make_unique<test::ServeProcess>(std::vector<std::string>{
        "--db", dir_ / "i.db", "--config", dir_ / "c.json", "--repo", repo_.path(), "--no-auth"});
  }
  HttpResponse call(const std::string& method, const std::string& path, const std::string& origin,
                    const std::string& body = "", const std::string& requested = "") {
    HttpRequest req;
    req.method = method;
    req.url = serve_->url() + path;
    req.body = body;
    if (!origin.empty()) req.headers.emplace_back("Origin", origin);
    if (!requested.empty()) req.headers.emplace_back("Access-Control-Request-Method", requested);
    if (!body.empty()) req.headers.emplace_back("Content-Type", "application/json");
    return http_request(req);
  }
  test::TempDir dir_, repo_;
  std::unique_ptr<test::ServeProcess> serve_;
};

TEST_F(CorsServerTest, AListedPageMayCallTheApiAndReadItsStream) {
  HttpResponse pre = call("OPTIONS", "/v1/platform-copilot/chat", "https://portal.example.com", "", "POST");
  EXPECT_EQ(pre.status, 204) << pre.body;
  EXPECT_EQ(pre.header("Access-Control-Allow-Origin"), "https://portal.example.com");
  EXPECT_NE(pre.header("Access-Control-Allow-Methods").find("POST"), std::string::npos);
  HttpResponse search = call("GET", "/v1/search?q=alphaHandler", "https://portal.example.com");
  EXPECT_EQ(search.status, 200);
  EXPECT_EQ(search.header("Access-Control-Allow-Origin"), "https://portal.example.com");
  // A stream (retrieval-only here: no chat model) carries it too, with the AI SDK's header exposed.
  HttpResponse chat = call("POST", "/v1/platform-copilot/chat", "https://portal.example.com",
                           R"({"message": "where is alphaHandler?"})");
  EXPECT_EQ(chat.status, 200) << chat.body;
  EXPECT_EQ(chat.header("Access-Control-Allow-Origin"), "https://portal.example.com");
  EXPECT_EQ(chat.header("Access-Control-Expose-Headers"), "x-vercel-ai-ui-message-stream");
  EXPECT_NE(chat.body.find("alphaHandler"), std::string::npos);
}

TEST_F(CorsServerTest, AnyOtherPageIsToldNo) {
  HttpResponse pre = call("OPTIONS", "/v1/search", "https://evil.example.net", "", "GET");
  EXPECT_EQ(pre.status, 403);
  EXPECT_EQ(json::parse(pre.body)["error"], "origin_not_allowed");
  EXPECT_EQ(pre.header("Access-Control-Allow-Origin"), "");
  HttpResponse search = call("GET", "/v1/search?q=alphaHandler", "https://evil.example.net");
  EXPECT_EQ(search.header("Access-Control-Allow-Origin"), "");  // the browser will not show it
  EXPECT_EQ(search.header("Vary"), "Origin");
  HttpResponse plain = call("GET", "/healthz", "");
  EXPECT_EQ(plain.status, 200);
  EXPECT_EQ(plain.header("Vary"), "");
}

}  // namespace
}  // namespace pf
