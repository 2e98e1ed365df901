// pilotfish's own documentation (see own_docs.h): README.md pulled into the binary by the
// assembler's .incbin (CMake names the file and rebuilds this one when it changes), its sections,
// and the tool that searches them.
#include "agent/own_docs.h"

#include <algorithm>

#include "core/json.h"
#include "core/text.h"

#ifndef PF_README
#error "PF_README must name README.md (CMakeLists.txt sets it)"
#endif

__asm__(".section .rodata\n"
        ".global pf_readme\n"
        "pf_readme:\n"
        ".incbin \"" PF_README "\"\n"
        ".global pf_readme_end\n"
        "pf_readme_end:\n"
        ".byte 0\n"
        ".previous\n");
extern "C" const char pf_readme[];
extern "C" const char pf_readme_end[];

namespace pf {

using nlohmann::json;

namespace {

constexpr size_t kMaxAnswer = 12000;

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> out;
  std::string w;
  for (char c : ascii_lower(text) + " ") {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '/') {
      w += c;
    } else if (!w.empty()) {
      out.push_back(w);
      w.clear();
    }
  }
  return out;
}

bool has_all(const std::string& haystack, const std::vector<std::string>& words) {
  std::string h = ascii_lower(haystack);
  for (const auto& w : words)
    if (h.find(w) == std::string::npos) return false;
  return true;
}

std::string contents() {
  std::string out;
  for (const DocSection& s : own_doc_sections()) out += "- " + s.path + "\n";
  return out;
}

}  // namespace

std::vector<DocSection> doc_sections(std::string_view markdown) {
  std::vector<DocSection> out;
  std::string h2;
  bool fenced = false;
  size_t at = 0;
  while (at < markdown.size()) {
    size_t end = markdown.find('\n', at);
    if (end == std::string_view::npos) end = markdown.size();
    std::string_view line = markdown.substr(at, end - at);
    if (line.substr(0, 3) == "```") fenced = !fenced;
    bool heading = !fenced && (line.substr(0, 3) == "## " || line.substr(0, 4) == "### ");
    if (heading) {
      bool top = line.substr(0, 3) == "## ";
      std::string title = trim_space(line.substr(top ? 3 : 4));
      if (top) h2 = title;
      out.push_back({title, top ? title : h2 + " > " + title, ""});
    } else if (!out.empty()) {
      out.back().text.append(line).append("\n");
    }
    at = end + 1;
  }
  return out;
}

const std::vector<DocSection>& own_doc_sections() {
  static const std::vector<DocSection> kSections = doc_sections(
      std::string_view(pf_readme, static_cast<size_t>(pf_readme_end - pf_readme)));
  return kSections;
}

ToolEntry own_docs_tool() {
  json schema = {{"type", "object"},
                 {"properties",
                  {{"topic", {{"type", "string"},
                              {"description", "What to look up (a command, a setting, a feature); "
                                              "leave out for the list of sections."}}}}}};
  ToolSpec spec{"pilotfish_documentation",
                "pilotfish's own documentation (its README, as built): how its chat commands, "
                "settings, tools and features work. Use it when asked about pilotfish itself.",
                std::move(schema)};
  return ToolEntry{std::move(spec), ToolPermission::kNone, 16 * 1024, nullptr,
                   [](const std::string& arguments, Store*) -> json {
                     std::string topic = trim_space(json_string(parse_json(arguments), "topic"));
                     if (topic.empty()) return {{"sections", contents()}};
                     std::vector<std::string> words = words_of(topic);
                     std::vector<const DocSection*> hits;
                     for (const DocSection& s : own_doc_sections())
                       if (has_all(s.path, words)) hits.push_back(&s);
                     for (const DocSection& s : own_doc_sections())
                       if (!has_all(s.path, words) && has_all(s.text, words)) hits.push_back(&s);
                     if (hits.empty())
                       return {{"found", false}, {"note", "no section mentions " + topic},
                               {"sections", contents()}};
                     std::string text;
                     for (const DocSection* s : hits) {
                       std::string part = "## " + s->path + "\n" + s->text + "\n";
                       if (!text.empty() && text.size() + part.size() > kMaxAnswer) break;
                       text += part;
                     }
                     if (text.size() > kMaxAnswer) {
                       size_t cut = kMaxAnswer;  // not inside a UTF-8 sequence
                       while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
                       text = text.substr(0, cut) + "\u2026";
                     }
                     return {{"found", true}, {"text", text}};
                   }};
}

}  // namespace pf
