// How every outgoing TLS connection is checked (internal to net, shared by the HTTP and the
// WebSocket clients): peers verified against the system's CA store (or SSL_CERT_FILE), with SNI
// and host-name checking.
#pragma once

#include <openssl/ssl.h>

#include <boost/asio/ssl.hpp>
#include <memory>
#include <string>

#include "net/http_client.h"

namespace pf::net_detail {

// A client context that verifies peers; it must outlive every stream made with it.
inline std::unique_ptr<boost::asio::ssl::context> client_tls_context() {
  auto ctx = std::make_unique<boost::asio::ssl::context>(boost::asio::ssl::context::tls_client);
  ctx->set_default_verify_paths();
  ctx->set_verify_mode(boost::asio::ssl::verify_peer);
  return ctx;
}

// Sends host as the SNI name and accepts only a certificate for it. Throws NetError.
template <typename SslStream>
void expect_host(SslStream& stream, const std::string& host) {
  if (!SSL_set_tlsext_host_name(stream.native_handle(), host.c_str()))
    throw NetError("TLS set-up failed for " + host);
  stream.set_verify_callback(boost::asio::ssl::host_name_verification(host));
}

}  // namespace pf::net_detail
