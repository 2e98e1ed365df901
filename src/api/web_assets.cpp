// The chat page's files (see web_assets.h), pulled into the binary by the assembler's .incbin
// from the folder CMake's web build wrote (PF_WEB_DIR): no generated C++ array to compile, and
// CMake rebuilds this file whenever a bundle changes (OBJECT_DEPENDS).
#include "api/web_assets.h"

#include <array>

#include "core/hash.h"

#ifndef PF_WEB_DIR
#error "PF_WEB_DIR must name the folder of the built page (CMakeLists.txt sets it)"
#endif

#define PF_INCBIN(name, file)                                                   \
  __asm__(".section .rodata\n"                                                  \
          ".global " #name "\n"                                                 \
          ".balign 16\n" #name ":\n"                                            \
          ".incbin \"" PF_WEB_DIR "/" file "\"\n"                               \
          ".global " #name "_end\n" #name "_end:\n"                             \
          ".byte 0\n"                                                           \
          ".previous\n");                                                       \
  extern "C" const char name[];                                                 \
  extern "C" const char name##_end[];

PF_INCBIN(pf_web_index_html, "index.html")
PF_INCBIN(pf_web_app_js, "app.js")
PF_INCBIN(pf_web_app_css, "app.css")
PF_INCBIN(pf_web_app_js_gz, "app.js.gz")
PF_INCBIN(pf_web_app_css_gz, "app.css.gz")

namespace pf {
namespace {

std::string_view bytes(const char* begin, const char* end) {
  return std::string_view(begin, static_cast<size_t>(end - begin));
}

WebAsset make(std::string_view path, std::string_view type, std::string_view body,
              std::string_view gzipped = {}) {
  std::string etag = "\"";  // built piece by piece: GCC 12's -Wrestrict trips on a + chain
  etag += hash_hex(body);
  etag += '"';
  return WebAsset{path, type, body, gzipped, etag};
}

}  // namespace

const WebAsset* find_web_asset(std::string_view path) {
  static const std::array<WebAsset, 3> assets = {
      make("/", "text/html; charset=utf-8", bytes(pf_web_index_html, pf_web_index_html_end)),
      make("/assets/app.js", "text/javascript; charset=utf-8", bytes(pf_web_app_js, pf_web_app_js_end),
           bytes(pf_web_app_js_gz, pf_web_app_js_gz_end)),
      make("/assets/app.css", "text/css; charset=utf-8", bytes(pf_web_app_css, pf_web_app_css_end),
           bytes(pf_web_app_css_gz, pf_web_app_css_gz_end)),
  };
  if (path == "/index.html") path = "/";
  for (const WebAsset& a : assets)
    if (a.path == path) return &a;
  return nullptr;
}

}  // namespace pf
