// Git's ignore rules (gitignore(5)): one IgnoreFile per .gitignore / .pilotfishignore /
// .git/info/exclude, matched with git's wildmatch semantics. The walker stacks them by directory.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pf {

enum class IgnoreVerdict { kNone, kIgnore, kInclude };

class IgnoreFile {
 public:
  // base: the directory holding the file, relative to the walk root ("" for the root).
  IgnoreFile(std::string base, std::string_view content);

  // rel: path relative to the walk root. Within one file the last matching pattern wins.
  IgnoreVerdict match(std::string_view rel, bool is_dir) const;
  const std::string& base() const { return base_; }
  bool empty() const { return patterns_.empty(); }

 private:
  struct Pattern {
    std::string glob;
    bool negate = false;
    bool dir_only = false;
    bool anchored = false;  // contains a '/' other than a trailing one: match the whole path
  };
  std::string base_;
  std::vector<Pattern> patterns_;
};

// git's wildmatch with WM_PATHNAME: '*' and '?' do not cross '/', "**/" / "/**" / "/**/"
// span directories, [...] classes (with '!' or '^'), and '\' escapes.
bool wildmatch(std::string_view pattern, std::string_view text);

}  // namespace pf
