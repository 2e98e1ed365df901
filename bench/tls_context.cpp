// What a TLS client connection pays for its verifying context: made afresh per connection (as
// the HTTP client did before stop 21: the CA bundle parsed each time) against the shared one of
// net/tls.h (a lookup under a mutex). Both with the CA setting of this environment
// (SSL_CERT_FILE, or the system's default store). Prints ms per context and the ratio.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "net/tls.h"

namespace {

double ms_per(int n, void (*make)()) {
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) make();
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::milli>(t1 - t0).count() / n;
}

volatile const void* sink = nullptr;

}  // namespace

int main() {
  const char* file = std::getenv("SSL_CERT_FILE");
  std::printf("CA store: %s\n", file && *file ? file : "(the system's default)");
  double fresh = ms_per(40, [] {
    boost::asio::ssl::context ctx(boost::asio::ssl::context::tls_client);
    ctx.set_default_verify_paths();
    ctx.set_verify_mode(boost::asio::ssl::verify_peer);
    sink = ctx.native_handle();
  });
  pf::net_detail::client_tls_context();  // the first call makes it: not what is measured
  double shared = ms_per(100000, [] { sink = &pf::net_detail::client_tls_context(); });
  std::printf("context per connection: %.3f ms\n", fresh);
  std::printf("shared context:         %.5f ms\n", shared);
  std::printf("ratio: %.0fx\n", fresh / shared);
  return 0;
}
