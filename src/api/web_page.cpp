// GET / and its assets (see web_assets.h), and GET /v1/platform-copilot/models, what the page
// asks first: the configured chat models, the default, the repository. The page's files need
// no key (they hold nothing secret); every API call they make does.
#include <filesystem>

#include "api/app.h"
#include "api/web_assets.h"

namespace pf {

namespace {

// The page runs only its own script and talks only to this server; nothing may frame it.
constexpr const char* kPagePolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

bool accepts_gzip(const std::string& accept_encoding) {
  // "gzip", "gzip;q=1", "deflate, gzip": enough for every browser; q=0 refusals are rare.
  return accept_encoding.find("gzip") != std::string::npos &&
         accept_encoding.find("gzip;q=0") == std::string::npos;
}

}  // namespace

const WebAsset* App::web_asset_for(const ServerRequest& req) const {
  if (!config_.server.web_page || req.method != "GET") return nullptr;
  return find_web_asset(req.path);
}

asio::awaitable<int> App::web_page(const ServerRequest& req, ServerResponse& res, const WebAsset& a) {
  ServerResponse::Headers headers = {
      {"ETag", a.etag},
      // Always revalidated (a new build changes the files), answered 304 while unchanged.
      {"Cache-Control", "no-cache"},
      {"X-Content-Type-Options", "nosniff"},
      {"Referrer-Policy", "no-referrer"},
  };
  if (a.path == "/") {
    headers.emplace_back("Content-Security-Policy", kPagePolicy);
    headers.emplace_back("X-Frame-Options", "DENY");
  }
  if (!a.gzipped.empty()) headers.emplace_back("Vary", "Accept-Encoding");
  if (req.header("If-None-Match") == a.etag) {
    co_await res.send(304, std::string(a.content_type), "", headers);
    co_return 304;
  }
  bool gzip = !a.gzipped.empty() && accepts_gzip(req.header("Accept-Encoding"));
  if (gzip) headers.emplace_back("Content-Encoding", "gzip");
  co_await res.send(200, std::string(a.content_type), std::string(gzip ? a.gzipped : a.body), headers);
  co_return 200;
}

asio::awaitable<int> App::models(ServerResponse& res) {
  json list = json::array();
  const std::string& embedding = config_.defaults.embedding_model;
  for (const auto& p : config_.providers)
    for (const auto& m : p.models) {
      std::string id = p.name + ":" + m.id;
      if (id == embedding) continue;  // not a chat model
      list.push_back({{"id", id}, {"provider", p.name}, {"default", id == config_.defaults.chat_model}});
    }
  json body = {{"models", list},
               {"defaultModel", config_.defaults.chat_model},
               {"retrievalOnly", config_.defaults.chat_model.empty()},
               // The folder's name: enough to tell servers apart, without the server's layout.
               {"repository", repo_ ? std::filesystem::path(repo_->root).filename().string() : std::string()}};
  co_return co_await send_json(res, 200, body);
}

}  // namespace pf
