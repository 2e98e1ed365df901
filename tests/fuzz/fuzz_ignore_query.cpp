// libFuzzer entry point: the gitignore parser, wildmatch, query analysis and git URLs on
// arbitrary bytes. One ignore line must say about a path what wildmatch says (its shortcuts:
// literal names, suffixes, literal heads and runs, the last byte, never change a verdict). A
// URL that is accepted must give a clone folder inside the clone dir.
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
  // A plain line (no negation, comment, escape at its start, trailing space or slash) against
  // a file path, as git reads it: a line holding '/' matches the whole path, others its name.
  // The two are split at the first tab, or else in halves.
  const size_t tab = text.find('\t');
  const size_t cut = tab == std::string_view::npos ? half : tab;
  const std::string_view line = text.substr(0, cut);
  const std::string_view path = text.substr(tab == std::string_view::npos ? half : tab + 1);
  if (!line.empty() && !path.empty() && line.find_first_of("\n\r") == std::string_view::npos &&
      std::string_view("!#\\ ").find(line.front()) == std::string_view::npos &&
      line.back() != ' ' && line.back() != '/' && path.back() != '/') {
    const bool anchored = line.find('/') != std::string_view::npos;
    std::string_view glob = line.front() == '/' ? line.substr(1) : line;
    const size_t slash = path.rfind('/');
    const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
    const bool want = !glob.empty() && pf::wildmatch(glob, anchored ? path : name);
    const bool got = pf::IgnoreFile("", line).match(path, false) == pf::IgnoreVerdict::kIgnore;
    if (want != got) __builtin_trap();
  }
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
