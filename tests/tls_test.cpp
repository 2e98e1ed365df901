// The shared TLS client contexts (src/net/tls.h): one per CA-store setting, kept, so that a
// connection does not load the CA bundle again (about 30 ms of CPU each time), while a changed
// SSL_CERT_FILE still takes effect for the next connection. Real TLS through these contexts,
// with per-test certificates, is in proxy_test.cpp.
#include "net/tls.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace pf {
namespace {

// Sets an environment variable for the test's life, restoring it after.
class SetEnv {
 public:
  SetEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~SetEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(TlsContext, OnePerCaSettingMadeOnceAndKept) {
  SetEnv dir("SSL_CERT_DIR", nullptr);
  SetEnv file("SSL_CERT_FILE", "/nonexistent/a.pem");
  auto* a = &net_detail::client_tls_context();
  EXPECT_EQ(&net_detail::client_tls_context(), a);  // the same setting: the same context
  {
    SetEnv other("SSL_CERT_FILE", "/nonexistent/b.pem");
    EXPECT_NE(&net_detail::client_tls_context(), a);  // a changed setting is honoured
    SetEnv with_dir("SSL_CERT_DIR", "/nonexistent/certs");
    EXPECT_NE(&net_detail::client_tls_context(), a);
  }
  EXPECT_EQ(&net_detail::client_tls_context(), a);  // back again: the kept one
}

}  // namespace
}  // namespace pf
