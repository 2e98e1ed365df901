// GET /v1/file (src/api/source_view.cpp): the lines a citation points at, for a signed-in caller
// only, under the read_file tool's rules (inside the repository, no secrets, no binaries).
#include <gtest/gtest.h>

#include "net/http_client.h"
#include "test_util.h"

namespace pf {
namespace {

using nlohmann::json;

class SourceViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_file(repo_ / "lib/pool.js", "line 1\nline 2\nclass Pool {\n  dispatch () {}\n}\nline 6\n");
    test::write_file(repo_ / ".env", "TOKEN=abc\n");
    test::write_file(repo_ / "keys/deploy.txt",
                     "-----BEGIN OPENSSH PRIVATE KEY-----\n"
                     "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
                     "-----END OPENSSH PRIVATE KEY-----\n");
    test::write_file(dir_ / "outside.txt", "not the repository's\n");
    ASSERT_EQ(test::run({test::pilotfish_bin(), "index", repo_.path(), "--db", dir_ / "i.db", "-q"}).exit_code, 0);
    auto h = test::run({"sh", "-c", "printf %s k1 | " + test::pilotfish_bin() + " hash-key"});
    json cfg = {{"server", {{"apiKeys", {{{"name", "t"}, {"hash", h.out.substr(0, h.out.find('\n'))}, {"role", "user"}}}}}}};
    test::write_file(dir_ / "c.json", cfg.dump());
    serve_ = std::make_unique<test::ServeProcess>(std::vector<std::string>{
        "--db", dir_ / "i.db", "--config", dir_ / "c.json", "--repo", repo_.path()});
  }
  HttpResponse get(const std::string& query, const std::string& key = "k1") {
    HttpRequest req;
    req.method = "GET";
    req.url = serve_->url() + "/v1/file" + query;
    if (!key.empty()) req.headers.emplace_back("Authorization", "Bearer " + key);
    return http_request(req);
  }
  std::string error_of(const HttpResponse& r) { return json::parse(r.body)["error"]; }
  test::TempDir dir_, repo_;
  std::unique_ptr<test::ServeProcess> serve_;
};

TEST_F(SourceViewTest, ExactlyTheLinesOfACitation) {
  HttpResponse r = get("?path=lib/pool.js&start=3&end=5");
  ASSERT_EQ(r.status, 200) << r.body;
  json j = json::parse(r.body);
  EXPECT_EQ(j["content"], "class Pool {\n  dispatch () {}\n}\n");
  EXPECT_EQ(j["startLine"], 3);
  EXPECT_EQ(j["endLine"], 5);
  EXPECT_EQ(j["lineCount"], 6);
  EXPECT_EQ(j["truncated"], false);
  EXPECT_EQ(json::parse(get("?path=lib%2Fpool.js").body)["endLine"], 6);  // the whole file
}

TEST_F(SourceViewTest, TheToolsRulesHoldAndAKeyIsNeeded) {
  EXPECT_EQ(get("?path=lib/pool.js", "").status, 401);
  EXPECT_EQ(get("?path=lib/pool.js", "wrong").status, 401);
  for (const char* q : {"?path=../outside.txt", "?path=.env", "?path=keys/deploy.txt",
                        "?path=lib/none.js", "?path=/etc/passwd", "?path=lib"}) {
    HttpResponse r = get(q);
    EXPECT_EQ(r.status, 404) << q << ": " << r.body;
    EXPECT_EQ(error_of(r), "file_not_readable") << q;
    EXPECT_EQ(r.body.find("not the repository"), std::string::npos);
    EXPECT_EQ(r.body.find("OPENSSH"), std::string::npos);
  }
  EXPECT_EQ(error_of(get("")), "missing_path");
  EXPECT_EQ(error_of(get("?path=lib/pool.js&start=0")), "invalid_start");
  EXPECT_EQ(error_of(get("?path=lib/pool.js&start=4&end=2")), "invalid_end");
  EXPECT_EQ(error_of(get("?path=lib/pool.js&end=x")), "invalid_end");
}

}  // namespace
}  // namespace pf
