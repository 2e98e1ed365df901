// The shared TLS client contexts (see tls.h): one per CA-store setting, made on first use and
// never freed, because every stream made from one borrows it until the stream is gone.
#include "net/tls.h"

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

namespace pf::net_detail {

boost::asio::ssl::context& client_tls_context() {
  static std::mutex mu;
  // Never destroyed, so that no stream still running at exit outlives its context.
  static auto& contexts = *new std::map<std::pair<std::string, std::string>,
                                        std::unique_ptr<boost::asio::ssl::context>>;
  const char* file = std::getenv("SSL_CERT_FILE");
  const char* dir = std::getenv("SSL_CERT_DIR");
  std::pair<std::string, std::string> key{file ? file : "", dir ? dir : ""};
  std::lock_guard<std::mutex> lock(mu);
  auto it = contexts.find(key);
  if (it != contexts.end()) return *it->second;
  auto ctx = std::make_unique<boost::asio::ssl::context>(boost::asio::ssl::context::tls_client);
  ctx->set_default_verify_paths();
  ctx->set_verify_mode(boost::asio::ssl::verify_peer);
  return *contexts.emplace(std::move(key), std::move(ctx)).first->second;
}

}  // namespace pf::net_detail
