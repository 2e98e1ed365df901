// libFuzzer entry point: every chunker and the content classifier on arbitrary bytes.
// Build with scripts/fuzz.sh (clang). The first byte picks the language ("cpp" as a .h
// header, which the C token scan takes unless it holds C++).
#include <cstddef>
#include <cstdint>
#include <string>

#include <vector>

#include "index/c_bodies.h"
#include "index/chunker.h"
#include "index/file_filter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* langs[] = {"typescript", "tsx",  "javascript", "python",       "go",
                                "rust",       "java", "c",          "cpp",          "csharp",
                                "ruby",       "php",  "markdown",   "package.json", "text"};
  std::string content(reinterpret_cast<const char*>(data) + 1, size - 1);
  pf::classify_content(&content);
  pf::ChunkLimits limits{8, 5};
  std::string lang = langs[data[0] % (sizeof langs / sizeof langs[0])];
  auto chunks = pf::chunk_file(lang == "cpp" ? "f.h" : "f", lang, content, limits);
  int last = 0;
  for (const auto& c : chunks) {
    if (c.start_line < 1 || c.end_line < c.start_line) __builtin_trap();
    // C: in order, not overlapping, within the cap (as the syntax-tree chunker's are).
    if ((lang == "c" || lang == "cpp") &&
        (c.start_line <= last || c.end_line - c.start_line + 1 > limits.max_lines))
      __builtin_trap();
    last = c.end_line;
  }
  // The C body scan: braces in order, each body after the last, nothing outside the text.
  std::vector<pf::BodyBraces> bodies;
  if (pf::find_function_bodies(content, &bodies)) {
    size_t after = 0;
    for (const auto& b : bodies) {
      if (b.open < after || b.close <= b.open || b.close >= content.size() ||
          content[b.open] != '{' || content[b.close] != '}')
        __builtin_trap();
      after = b.close + 1;
    }
  }
  return 0;
}
