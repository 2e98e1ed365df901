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
  // As in git (dir.c), most lines need no wildmatch: a literal name ("Makefile") is compared,
  // "*" and a literal suffix ("*.o") is an ends-with test on a name, and any other glob is
  // tried only on texts that start with its literal head and hold its longest literal run
  // ("*.asn1.[ch]": ".asn1."). And a line whose matches must end in a given byte is skipped
  // for texts that do not. The walker asks every line about every entry (the Linux tree: 85k
  // files against ~100 lines), so this decides its time.
  struct Pattern {
    enum Kind { kLiteral, kSuffix, kGlob };
    std::string glob;
    bool negate = false;
    bool dir_only = false;
    bool anchored = false;  // contains a '/' other than a trailing one: match the whole path
    Kind kind = kGlob;
    size_t head = 0;   // kGlob: how many leading bytes of glob are literal
    std::string need;  // kGlob: bytes every match holds in a row ("" if none is known)
    int last = -1;     // the byte every match ends with; -1 if it can be any
    bool matches(std::string_view text) const;
  };
  std::string base_;
  std::vector<Pattern> patterns_;
};

// git's wildmatch with WM_PATHNAME: '*' and '?' do not cross '/', "**/" / "/**" / "/**/"
// span directories, [...] classes (with '!' or '^'), and '\' escapes.
bool wildmatch(std::string_view pattern, std::string_view text);

}  // namespace pf
