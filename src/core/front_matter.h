// YAML front matter as Markdown files with metadata write it (`*.agent.md`, `SKILL.md`): a
// block between two `---` lines at the very top, then the body. Only the part of YAML such files
// use is read: top-level `key: value` with plain, quoted ('…', "…") and block (| and >) scalars,
// flow lists ([a, 'b']) and block lists (- a). A key whose value is a nested mapping is noted and
// skipped, so files with more than pilotfish reads (Copilot's `mcp-servers:` and the like) load.
//
// Pure functions on text, no I/O: fuzzed by tests/fuzz/fuzz_front_matter.cpp.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace pf {

struct FrontMatter {
  bool present = false;  // the text opened with a front matter block
  std::map<std::string, std::string> scalars;               // key: value
  std::map<std::string, std::vector<std::string>> lists;    // key: [a, b] or "- a" lines
  std::set<std::string> nested;                             // key: a mapping, not read
  std::string body;  // the text after the block (all of it when there is none)

  // The key's scalar, or fallback when it has none (a list or mapping counts as none).
  std::string get(const std::string& key, const std::string& fallback = "") const;
  bool has(const std::string& key) const {
    return scalars.count(key) || lists.count(key) || nested.count(key);
  }
};

// The largest front matter read (a longer block is an error: these are small files).
inline constexpr size_t kMaxFrontMatterBytes = 64 * 1024;

// Splits text into its front matter and body. Text that does not open with a `---` line has
// none (present false, body the whole text). Throws pf::Error naming the line ("line 3: ...")
// for a block that is never closed, a line that is not `key: value`, a key given twice, an
// unterminated quote or list, or a block over kMaxFrontMatterBytes.
FrontMatter parse_front_matter(std::string_view text);

}  // namespace pf
