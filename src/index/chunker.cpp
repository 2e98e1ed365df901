// Chunker dispatch by language, language detection, the package.json summary and line windows.
#include "index/chunker.h"

#include <nlohmann/json.hpp>

#include "core/json.h"
#include "index/c_chunker.h"
#include "index/chunk_builder.h"
#include "index/code_chunker.h"
#include "index/code_languages.h"
#include "index/markdown_chunker.h"

namespace pf {
namespace {

std::string lower_ext(std::string_view name) {
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return {};
  std::string ext(name.substr(dot + 1));
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

std::string list_entries(const nlohmann::json& obj, bool with_values) {
  std::string out;
  if (!obj.is_object()) return out;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (!out.empty()) out += ", ";
    out += it.key();
    if (with_values && it.value().is_string()) {
      out += '@';  // (not "@" + s: GCC 12 reports a false -Wrestrict there)
      out += it.value().get<std::string>();
    }
  }
  return out;
}

// One chunk that says what the package is: name, version, entry points, scripts, and every
// dependency with its version range (the reference dropped versions and workspace packages).
bool chunk_package_json(ChunkBuilder& out, std::string_view text) {
  nlohmann::json j = parse_json(text);
  if (!j.is_object()) return false;
  auto str = [&](const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  std::string name = str("name");
  std::string s = "Package: " + (name.empty() ? std::string("(unnamed)") : name);
  if (auto v = str("version"); !v.empty()) s += "@" + v;
  s += "\n";
  if (auto d = str("description"); !d.empty()) s += "Description: " + d + "\n";
  for (const char* key : {"main", "module", "types", "type", "license"})
    if (auto v = str(key); !v.empty()) s += std::string(key) + ": " + v + "\n";
  if (j.contains("scripts") && j["scripts"].is_object()) {
    s += "Scripts:\n";
    for (auto it = j["scripts"].begin(); it != j["scripts"].end(); ++it)
      if (it.value().is_string())
        s += "  " + it.key() + ": " + it.value().get<std::string>() + "\n";
  }
  for (auto [key, label] : {std::pair{"dependencies", "Dependencies"},
                            {"devDependencies", "DevDependencies"},
                            {"peerDependencies", "PeerDependencies"},
                            {"optionalDependencies", "OptionalDependencies"}}) {
    if (j.contains(key)) {
      std::string l = list_entries(j[key], true);
      if (!l.empty()) s += std::string(label) + ": " + l + "\n";
    }
  }
  if (j.contains("workspaces")) s += "Workspaces: " + j["workspaces"].dump() + "\n";
  if (j.contains("engines")) s += "Engines: " + list_entries(j["engines"], true) + "\n";
  if (j.contains("exports")) {
    std::string e = j["exports"].dump();
    if (e.size() > 2000) e = e.substr(0, 2000) + "...";
    s += "Exports: " + e + "\n";
  }
  if (!s.empty() && s.back() == '\n') s.pop_back();
  out.add_summary(0, out.line_count() - 1, s, "module", name);
  return true;
}

}  // namespace

std::string detect_language(std::string_view rel) {
  size_t slash = rel.rfind('/');
  std::string_view name = slash == std::string_view::npos ? rel : rel.substr(slash + 1);
  if (name == "package.json") return "package.json";
  std::string ext = lower_ext(name);
  if (ext == "ts" || ext == "mts" || ext == "cts") return "typescript";
  if (ext == "tsx") return "tsx";
  if (ext == "js" || ext == "jsx" || ext == "mjs" || ext == "cjs") return "javascript";
  if (ext == "md" || ext == "mdx" || ext == "markdown") return "markdown";
  // A .h header may be C or C++; the C++ grammar reads C declarations too, so it gets that one.
  static const std::pair<const char*, const char*> kPlain[] = {
      {"json", "json"}, {"yml", "yaml"},    {"yaml", "yaml"}, {"py", "python"}, {"go", "go"},
      {"rs", "rust"},   {"c", "c"},         {"h", "cpp"},     {"cc", "cpp"},    {"cpp", "cpp"},
      {"cxx", "cpp"},   {"hpp", "cpp"},     {"hh", "cpp"},    {"hxx", "cpp"},   {"java", "java"},
      {"rb", "ruby"},   {"cs", "csharp"},   {"php", "php"},   {"sh", "shell"},  {"bash", "shell"},
      {"css", "css"},   {"scss", "scss"},   {"html", "html"}, {"sql", "sql"},   {"toml", "toml"},
      {"xml", "xml"},   {"proto", "proto"}, {"txt", "text"}};
  for (auto [e, lang] : kPlain)
    if (ext == e) return lang;
  return "text";
}

std::vector<Chunk> chunk_file(const std::string& rel_path, const std::string& language,
                              std::string_view content, const ChunkLimits& limits,
                              std::string* fallback) {
  ChunkBuilder out(rel_path, language == "package.json" ? "json" : language, content);
  const char* why = nullptr;
  const bool header = language == "cpp" && rel_path.size() > 2 &&
                      rel_path.compare(rel_path.size() - 2, 2, ".h") == 0;
  if ((language == "c" || header) && !limits.c_by_syntax_tree &&
      !chunk_c(out, content, limits, header)) {
    // chunked by its tokens; a file the scan gives back goes to tree-sitter below
  } else if (code_language(language)) {
    why = chunk_code(out, content, language, limits);
  } else if (language == "markdown") {
    chunk_markdown(out, limits);
  } else if (language == "package.json") {
    if (!chunk_package_json(out, content)) why = kFallbackPackageJson;
  } else {
    why = "";  // plain text: line windows are its chunker
  }
  if (fallback) fallback->assign(why && *why ? why : "");
  if (why) {
    out.take();  // drop anything a failed chunker produced
    out.add_windows(0, out.line_count() - 1, limits.window_lines);
  }
  return out.take();
}

}  // namespace pf
