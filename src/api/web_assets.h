// Internal to api: the chat page's files (web/, bundled by esbuild at build time), embedded in
// the binary so that `pilotfish serve` needs nothing beside it to serve GET /.
#pragma once

#include <string>
#include <string_view>

namespace pf {

struct WebAsset {
  std::string_view path;          // as requested: "/", "/assets/app.js", "/assets/app.css"
  std::string_view content_type;
  std::string_view body;          // static storage: valid for the process's life
  std::string_view gzipped;       // the body gzipped, or empty (then send body)
  std::string etag;               // a quoted hash of the body
};

// The asset served at path, or nullptr. Thread-safe.
const WebAsset* find_web_asset(std::string_view path);

}  // namespace pf
