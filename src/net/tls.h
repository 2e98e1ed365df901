// How every outgoing TLS connection is checked (internal to net, shared by the HTTP and the
// WebSocket clients): peers verified against the system's CA store (or SSL_CERT_FILE), with SNI
// and host-name checking.
#pragma once

#include <openssl/ssl.h>

#include <boost/asio/ssl.hpp>
#include <string>

#include "net/http_client.h"

namespace pf::net_detail {

// The client context that verifies peers against the CA store SSL_CERT_FILE and SSL_CERT_DIR
// name now (or the system's). Loading a CA bundle costs about 30 ms of CPU (Debian's, 2026), so
// one context is made per distinct pair of those variables and kept for the life of the
// process: it outlives every stream. Any thread may call it; streams made from it may live on
// any thread (OpenSSL contexts are shared that way).
boost::asio::ssl::context& client_tls_context();

// Sends host as the SNI name and accepts only a certificate for it. Throws NetError.
template <typename SslStream>
void expect_host(SslStream& stream, const std::string& host) {
  if (!SSL_set_tlsext_host_name(stream.native_handle(), host.c_str()))
    throw NetError("TLS set-up failed for " + host);
  stream.set_verify_callback(boost::asio::ssl::host_name_verification(host));
}

}  // namespace pf::net_detail
