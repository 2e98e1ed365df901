// Prompt assembly (see prompt.h).
#include "agent/prompt.h"

#include <algorithm>

namespace pf {

std::string fence_for(const std::string& text) {
  size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return std::string(std::max<size_t>(3, longest + 1), '`');
}

std::string context_block(int index, const SearchResult& r) {
  const Chunk& c = r.hit.chunk;
  std::string fence = fence_for(c.content);
  // Appended piece by piece: GCC 12 reports a false -Wrestrict on long operator+ chains.
  std::string out = "[";
  out += std::to_string(index);
  out += "] File: ";
  out += c.path;
  out += " (L";
  out += std::to_string(c.start_line);
  out += "-L";
  out += std::to_string(c.end_line);
  out += ")\n";
  out += fence;
  if (c.language != "text") out += c.language;
  out += "\n";
  out += c.content;
  out += "\n";
  out += fence;
  return out;
}

std::string system_prompt(const std::vector<SearchResult>& context,
                          const std::string& instructions) {
  std::string p =
      "You are pilotfish, an assistant that answers developers' questions about one code "
      "repository.\n\n"
      "## How to answer\n"
      "- Answer from the retrieved context below. When it does not hold the answer, say so "
      "plainly instead of guessing.\n"
      "- Cite every place you rely on as path:startLine-endLine, exactly as the context gives it.\n"
      "- Quote only the lines that matter; keep explanations short and concrete.\n"
      "- Use Markdown, with fenced code blocks for code.";
  if (!instructions.empty()) p += "\n\n" + instructions;
  if (!context.empty()) {
    p += "\n\n## Retrieved context\n\n";
    for (size_t i = 0; i < context.size(); ++i) {
      if (i) p += "\n\n---\n\n";
      p += context_block(static_cast<int>(i + 1), context[i]);
    }
  }
  return p;
}

}  // namespace pf
