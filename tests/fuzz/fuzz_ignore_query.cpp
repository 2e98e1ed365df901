// libFuzzer entry point: the gitignore parser, wildmatch and query analysis on arbitrary bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "index/ignore.h"
#include "search/query.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  pf::IgnoreFile file("sub", text);
  (void)file.match("sub/a/b.js", false);
  (void)file.match("sub/dir", true);
  size_t half = size / 2;
  (void)pf::wildmatch(text.substr(0, half), text.substr(half));
  (void)pf::analyze_query(text);
  return 0;
}
