// pilotfish's own documentation for the agent: README.md, compiled into the binary, split into
// its sections, and the read-only `pilotfish_documentation` tool that answers from them, so the
// model can explain pilotfish's commands and settings from the text that ships with the build.
//
// Threads: plain functions over immutable data.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "agent/tool_registry.h"

namespace pf {

struct DocSection {
  std::string title;  // the heading's text
  std::string path;   // its headings from the top, joined by " > "
  std::string text;   // the section's own text (to the next heading of any level)
};

// The README's sections, in order (## and ### headings; the title line is not one).
const std::vector<DocSection>& own_doc_sections();
// The sections of a Markdown text (what own_doc_sections() does with the README).
std::vector<DocSection> doc_sections(std::string_view markdown);

// The tool: {topic?}. No topic: the list of sections. A topic: the sections whose headings (else
// texts) contain every word of it, best first, up to 12,000 characters; none: that, and the list.
ToolEntry own_docs_tool();

}  // namespace pf
