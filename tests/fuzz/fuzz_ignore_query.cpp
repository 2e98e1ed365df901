// libFuzzer entry point: the gitignore parser, wildmatch, query analysis and git URLs on
// arbitrary bytes. A URL that is accepted must give a clone folder inside the clone dir.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"
#include "index/git_source.h"
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
  try {
    pf::GitSource source = pf::parse_git_source(std::string(text));
    std::string folder = pf::clone_folder(source, "/w");
    if (folder.rfind("/w/", 0) != 0 || (folder + "/").find("/../") != std::string::npos ||
        (folder + "/").find("/./") != std::string::npos)
      __builtin_trap();
  } catch (const pf::UsageError&) {
  }
  return 0;
}
