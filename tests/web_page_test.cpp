// The chat page (web/, served by src/api/web_page.cpp) in real Chromium: the repository, the
// scripted model and the configs are made here, tests/node/web_page.mjs drives the browser and
// the `pilotfish serve` processes; then what only the model's side can tell: that the stop
// button and the server's death each closed the model's stream early. Also the page's HTTP
// answers themselves: headers, gzip, 304, no key needed, and server.webPage off.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "net/http_client.h"
#include "test_util.h"

namespace pf {
namespace {

using nlohmann::json;

class WebPageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_file(repo_ / "src/retry.ts",
                     "// Retries a request with exponential backoff.\n"
                     "export function retryWithBackoff(fn: () => Promise<void>, tries = 3) {\n"
                     "  return fn().catch(() => tries > 1 ? retryWithBackoff(fn, tries - 1) : undefined);\n"
                     "}\n");
    test::write_file(repo_ / "README.md", "# demo\n\nA demo repository for the page tests.\n");
    auto r = test::run({test::pilotfish_bin(), "index", repo_.path(), "--db", db(), "--quiet"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto h = test::run({"sh", "-c", "printf %s " + key_ + " | " + test::pilotfish_bin() + " hash-key"});
    ASSERT_EQ(h.exit_code, 0) << h.err;
    hash_ = h.out.substr(0, h.out.find('\n'));
  }
  std::string db() const { return dir_ / "index.db"; }
  json server_section(bool page = true) const {
    json s = {{"apiKeys", {{{"name", "web"}, {"hash", hash_}, {"role", "user"}}}}};
    if (!page) s["webPage"] = false;
    return s;
  }
  test::TempDir dir_, repo_;
  std::string key_ = "k-web-1", hash_;
};

TEST_F(WebPageTest, InChromiumSignInAskCiteStopSearchPhoneRestartAndNoModel) {
  ASSERT_TRUE(std::filesystem::exists("/usr/bin/chromium"))
      << "Debian's chromium is needed: scripts/install-deps.sh --test installs it";
  json read = {{"filePath", "src/retry.ts"}};
  json script = json::array(
      {{{"match", "retryWithBackoff"},
        {"chat", {{"text", json::array()}, {"finish", "tool_calls"},
                  {"tool_calls", {{{"id", "c1"}, {"name", "read_file"}, {"arguments", read.dump()}}}}}}},
       {{"match", "retryWithBackoff"},
        {"chat", {{"text", {"`retryWithBackoff` ", "is defined ", "in `src/retry.ts:2-3`:\n\n", "```ts\n",
                            "export function retryWithBackoff(fn, tries = 3) {\n", "```\n\n",
                            "It calls itself ", "with one try fewer."}},
                  {"chunk_delay", 0.08}}}},
       test::slow_chat(200, 0.05, "long story"), test::slow_chat(200, 0.05, "restart story")});
  test::ScriptedModelServer model(script.dump(), "", {"--models", "m"});  // m is listed: usable
  json with_model = {{"providers", {{"a", {{"type", "openai"}, {"baseUrl", model.base_url()}, {"models", {{{"id", "m"}}}}}}}},
                     {"defaults", {{"chatModel", "a:m"}}},
                     {"server", server_section()}};
  json no_model = {{"server", server_section()}};
  test::write_file(dir_ / "model.json", with_model.dump());
  test::write_file(dir_ / "no-model.json", no_model.dump());
  // Kept after the run (CI keeps the build tree): what the page looked like.
  std::string artifacts = std::filesystem::path(test::pilotfish_bin()).parent_path() / "test-artifacts/web";
  std::filesystem::create_directories(artifacts);
  ::setenv("PF_DB", db().c_str(), 1);
  ::setenv("PF_REPO", repo_.path().c_str(), 1);
  ::setenv("PF_CONFIG", (dir_ / "model.json").c_str(), 1);
  ::setenv("PF_CONFIG_NO_MODEL", (dir_ / "no-model.json").c_str(), 1);
  ::setenv("PF_KEY", key_.c_str(), 1);
  ::setenv("PF_ARTIFACTS", artifacts.c_str(), 1);
  ::setenv("PILOTFISH_BIN", test::pilotfish_bin().c_str(), 1);
  auto r = test::run({"node", test::source_dir() + "/tests/node/web_page.mjs"});
  json out = json::parse(r.out.substr(r.out.rfind("\n{") == std::string::npos ? 0 : r.out.rfind("\n{") + 1), nullptr, false);
  ASSERT_FALSE(out.is_discarded()) << r.out << "\n" << r.err;
  for (const json& f : out["failed"]) ADD_FAILURE() << f["name"] << ": " << f["error"].get<std::string>();
  EXPECT_EQ(out["passed"].size(), 8u) << out.dump(2);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::printf("[ figure ] first text in the page %s ms after asking\n", out["figures"].value("first_text_ms", json()).dump().c_str());
  // Stop and the killed server each closed the model's stream long before its end.
  int cut = 0;
  for (const json& e : model.events())
    if (e["event"] == "client disconnected" && e["chunks_total"] == 201 && e["chunks_sent"] < 100) ++cut;
  EXPECT_EQ(cut, 2) << json(model.events()).dump();
  for (const char* name : {"signin-desktop", "answer-desktop", "source-desktop", "search-desktop",
                           "start-phone", "answer-phone", "retrieval-only-desktop"})
    EXPECT_TRUE(std::filesystem::exists(artifacts + "/" + name + ".png")) << name;
}

HttpResponse get(const std::string& url, const std::vector<std::pair<std::string, std::string>>& headers = {}) {
  HttpRequest req;
  req.method = "GET";
  req.url = url;
  req.headers = headers;
  req.timeout = std::chrono::milliseconds(10000);
  return http_request(req);
}

std::string header(const HttpResponse& r, const std::string& name) { return r.header(name); }

TEST_F(WebPageTest, ThePageNeedsNoKeyIsCachedAndCompressedAndItsApiNeedsOne) {
  test::write_file(dir_ / "c.json", json{{"server", server_section()}}.dump());
  test::ServeProcess serve({"--db", db(), "--config", dir_ / "c.json", "--repo", repo_.path()});
  HttpResponse page = get(serve.url() + "/");
  ASSERT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("/assets/app.js"), std::string::npos);
  EXPECT_NE(header(page, "Content-Security-Policy").find("script-src 'self'"), std::string::npos);
  EXPECT_EQ(header(page, "X-Frame-Options"), "DENY");
  std::string etag = header(page, "ETag");
  ASSERT_FALSE(etag.empty());
  EXPECT_EQ(get(serve.url() + "/", {{"If-None-Match", etag}}).status, 304);
  HttpResponse plain = get(serve.url() + "/assets/app.js");
  HttpResponse gzipped = get(serve.url() + "/assets/app.js", {{"Accept-Encoding", "gzip, deflate"}});
  ASSERT_EQ(plain.status, 200);
  EXPECT_EQ(header(plain, "Content-Encoding"), "");
  EXPECT_NE(plain.body.find("/v1/platform-copilot/chat"), std::string::npos);  // the bundle
  ASSERT_EQ(gzipped.status, 200);
  if (header(gzipped, "Content-Encoding") == "gzip") {  // a client that did not decode it
    EXPECT_LT(gzipped.body.size(), plain.body.size() / 2);
  } else {  // or one that did: the same bytes
    EXPECT_EQ(gzipped.body, plain.body);
  }
  EXPECT_EQ(header(plain, "Vary"), "Accept-Encoding");
  EXPECT_EQ(get(serve.url() + "/assets/app.css").status, 200);
  EXPECT_EQ(get(serve.url() + "/assets/other.js").status, 401);  // not a page file: the API's rules
  EXPECT_EQ(get(serve.url() + "/v1/platform-copilot/models").status, 401);
  HttpResponse models = get(serve.url() + "/v1/platform-copilot/models", {{"Authorization", "Bearer " + key_}});
  ASSERT_EQ(models.status, 200);
  json m = json::parse(models.body);
  EXPECT_EQ(m["retrievalOnly"], true);
  EXPECT_EQ(m["models"], json::array());
  EXPECT_EQ(m["repository"], std::filesystem::path(repo_.path()).filename().string());
}

TEST_F(WebPageTest, WebPageOffLeavesOnlyTheApi) {
  test::write_file(dir_ / "c.json", json{{"server", server_section(false)}}.dump());
  test::ServeProcess serve({"--db", db(), "--config", dir_ / "c.json", "--repo", repo_.path()});
  EXPECT_EQ(get(serve.url() + "/").status, 401);
  EXPECT_EQ(get(serve.url() + "/", {{"Authorization", "Bearer " + key_}}).status, 404);
}

}  // namespace
}  // namespace pf
