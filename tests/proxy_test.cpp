// Proxies and TLS: requests go through the proxy the environment names (a CONNECT tunnel for
// HTTPS, the absolute form for HTTP), no_proxy exempts hosts, and certificates are verified.
// Real parts throughout: a forward proxy and an HTTPS model server on loopback, and a
// certificate made by the openssl command for this run.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "net/http_client.h"
#include "test_util.h"

namespace pf {
namespace {

using test::PythonServer;
using test::ScriptedModelServer;
using test::TempDir;

// Sets environment variables for one test and restores them after.
class EnvGuard {
 public:
  void set(const char* name, const std::string& value) {
    remember(name);
    setenv(name, value.c_str(), 1);
  }
  void unset(const char* name) {
    remember(name);
    unsetenv(name);
  }
  ~EnvGuard() {
    for (auto& [name, value] : saved_)
      if (value)
        setenv(name.c_str(), value->c_str(), 1);
      else
        unsetenv(name.c_str());
  }

 private:
  void remember(const char* name) {
    for (auto& [n, v] : saved_)
      if (n == name) return;
    const char* v = std::getenv(name);
    saved_.emplace_back(name, v ? std::optional<std::string>(v) : std::nullopt);
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class ProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy",
                             "NO_PROXY", "SSL_CERT_FILE"})
      env_.unset(name);
  }
  HttpResponse get(const std::string& url) {
    HttpRequest req;
    req.method = "GET";
    req.url = url;
    req.timeout = std::chrono::milliseconds(10000);
    return http_request(req);
  }
  // A self-signed certificate for localhost, valid for a day.
  void make_certificate() {
    std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -keyout " + dir_ / "key.pem" +
                      " -out " + dir_ / "cert.pem" +
                      " -subj /CN=localhost -addext subjectAltName=DNS:localhost -days 1 "
                      "2>/dev/null";
    ASSERT_EQ(test::shell(cmd), 0);
  }
  TempDir dir_;
  EnvGuard env_;
};

TEST_F(ProxyTest, WhichProxyForWhichUrl) {
  EXPECT_EQ(proxy_for("https://api.example.com/v1"), "");
  env_.set("HTTPS_PROXY", "http://proxy:3128");
  env_.set("http_proxy", "http://plain:8080");
  EXPECT_EQ(proxy_for("https://api.example.com/v1"), "http://proxy:3128");
  EXPECT_EQ(proxy_for("http://api.example.com/v1"), "http://plain:8080");
  env_.set("https_proxy", "http://lower:1");
  EXPECT_EQ(proxy_for("https://x.com/"), "http://lower:1") << "lower case first, as curl";
  env_.set("NO_PROXY", "internal.corp, .example.com,localhost:8443");
  EXPECT_EQ(proxy_for("https://api.example.com/v1"), "");
  EXPECT_EQ(proxy_for("https://example.com/v1"), "");
  EXPECT_EQ(proxy_for("https://notexample.com/v1"), "http://lower:1");
  EXPECT_EQ(proxy_for("https://git.internal.corp/"), "");
  EXPECT_EQ(proxy_for("https://localhost:8443/"), "");
  EXPECT_EQ(proxy_for("https://localhost:9443/"), "http://lower:1") << "another port";
  env_.set("no_proxy", "*");
  EXPECT_EQ(proxy_for("https://anything/"), "");
}

TEST_F(ProxyTest, PlainHttpGoesThroughTheProxyInAbsoluteForm) {
  ScriptedModelServer model;
  PythonServer proxy("connect_proxy.py", {"--log", dir_ / "proxy.log"});
  env_.set("http_proxy", "http://127.0.0.1:" + std::to_string(proxy.port()));
  auto r = get(model.base_url() + "/models");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_NE(read_all(dir_ / "proxy.log").find("GET " + model.base_url() + "/models HTTP/1.1"),
            std::string::npos)
      << read_all(dir_ / "proxy.log");
}

TEST_F(ProxyTest, HttpsTunnelsThroughTheProxyAndVerifiesTheCertificate) {
  make_certificate();
  ScriptedModelServer model("[]", "",
                            {"--tls-cert", dir_ / "cert.pem", "--tls-key", dir_ / "key.pem"});
  PythonServer proxy("connect_proxy.py", {"--log", dir_ / "proxy.log"});
  env_.set("HTTPS_PROXY", "http://127.0.0.1:" + std::to_string(proxy.port()));
  // Not trusted yet: the system's CAs do not know this certificate.
  try {
    get(model.base_url() + "/models");
    ADD_FAILURE() << "an unknown certificate was accepted";
  } catch (const NetError& e) {
    EXPECT_NE(std::string(e.what()).find("certificate"), std::string::npos) << e.what();
  }
  env_.set("SSL_CERT_FILE", dir_ / "cert.pem");
  auto r = get(model.base_url() + "/models");
  EXPECT_EQ(r.status, 200) << r.body;
  std::string log = read_all(dir_ / "proxy.log");
  std::string authority = model.base_url().substr(8, model.base_url().size() - 8 - 3);
  EXPECT_NE(log.find("CONNECT " + authority + " HTTP/1.1"), std::string::npos) << log;
  EXPECT_EQ(log.find("/models"), std::string::npos) << "the proxy saw only the tunnel";
  // no_proxy: straight to the server, not a line more in the proxy's log.
  env_.set("NO_PROXY", "localhost");
  EXPECT_EQ(get(model.base_url() + "/models").status, 200);
  EXPECT_EQ(read_all(dir_ / "proxy.log"), log);
}

TEST_F(ProxyTest, ProxyCredentialsComeFromTheProxyUrl) {
  make_certificate();
  ScriptedModelServer model("[]", "",
                            {"--tls-cert", dir_ / "cert.pem", "--tls-key", dir_ / "key.pem"});
  PythonServer proxy("connect_proxy.py",
                     {"--log", dir_ / "proxy.log", "--require-auth", "alice:s3cret"});
  env_.set("SSL_CERT_FILE", dir_ / "cert.pem");
  std::string at = "127.0.0.1:" + std::to_string(proxy.port());
  env_.set("https_proxy", "http://alice:wrong@" + at);
  try {
    get(model.base_url() + "/models");
    ADD_FAILURE() << "a refused tunnel went unnoticed";
  } catch (const NetError& e) {
    EXPECT_NE(std::string(e.what()).find("407"), std::string::npos) << e.what();
  }
  env_.set("https_proxy", "http://alice:s3cret@" + at);
  EXPECT_EQ(get(model.base_url() + "/models").status, 200);
}

}  // namespace
}  // namespace pf
