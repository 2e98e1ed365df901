// Skills (see skills.h): SKILL.md folders found, matched by name, listed in the prompt and read
// by the use_skill tool under a path guard.
#include "agent/skills.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>

#include "core/error.h"
#include "core/front_matter.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/text.h"
#include "index/file_filter.h"

namespace pf {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr size_t kMaxListed = 100;  // files of a skill's folder that use_skill names

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_'))
      return false;
  return true;
}

// Whether path lies at or under dir (both canonical).
bool inside(const fs::path& path, const fs::path& dir) {
  auto [d, p] = std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
  return d == dir.end();
}

// The folder's files (relative, sorted), skipping hidden names, secrets and links; at most
// kMaxListed, and *more set when there were others.
std::vector<std::string> folder_files(const fs::path& dir, bool* more) {
  std::vector<std::string> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    bool hidden = !name.empty() && name[0] == '.';
    if (it->is_symlink(ec)) continue;
    if (it->is_directory(ec)) {
      if (hidden || is_secret_dir(name) || it.depth() >= 3) it.disable_recursion_pending();
      continue;
    }
    if (hidden || is_secret_file(name) || !it->is_regular_file(ec)) continue;
    std::string rel = fs::relative(it->path(), dir, ec).generic_string();
    if (rel == "SKILL.md") continue;
    if (out.size() == kMaxListed) {
      *more = true;
      break;
    }
    out.push_back(rel);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A file of the skill's folder, or an error result.
json read_skill_file(const Skill& skill, const std::string& file) {
  if (file.empty() || file.find('\0') != std::string::npos || file[0] == '/' ||
      file.find('\\') != std::string::npos)
    return {{"error", "file must be a path relative to the skill's folder"}};
  fs::path rel(file);
  for (const fs::path& part : rel)
    if (part == "..") return {{"error", "file may not leave the skill's folder"}};
  for (const fs::path& part : rel)
    if (is_secret_file(part.string()) || is_secret_dir(part.string()))
      return {{"error", "file names a secret, which is never read"}};
  std::error_code ec;
  fs::path real = fs::canonical(fs::path(skill.dir) / rel, ec);
  if (ec) return {{"error", "no file " + file + " in skill " + skill.name}};
  if (!inside(real, fs::path(skill.dir)))
    return {{"error", "file may not leave the skill's folder"}};
  if (!fs::is_regular_file(real, ec)) return {{"error", file + " is not a file"}};
  if (fs::file_size(real, ec) > kMaxSkillFileBytes)
    return {{"error", file + " is over " + std::to_string(kMaxSkillFileBytes / 1024) + " KiB"}};
  std::string text;
  try {
    text = pf::read_file(real.string());
  } catch (const Error& e) {
    return {{"error", e.what()}};
  }
  if (text.find('\0') != std::string::npos) return {{"error", file + " is not a text file"}};
  if (classify_content(&text) == SkipReason::kSecretContent)
    return {{"error", file + " holds key material, which is never read"}};
  return {{"skill", skill.name}, {"file", file}, {"content", text}};
}

json load_skill(const Skill& skill) {
  std::string text;
  try {
    text = pf::read_file(skill.dir + "/SKILL.md");
    text = parse_front_matter(text).body;
  } catch (const Error& e) {
    return {{"error", std::string("cannot read the skill: ") + e.what()}};
  }
  bool more = false;
  std::vector<std::string> files = folder_files(skill.dir, &more);
  json out = {{"skill", skill.name}, {"instructions", trim_space(text)}, {"files", files}};
  if (more) out["files_cut"] = "only the first " + std::to_string(kMaxListed) + " are named";
  if (!files.empty()) out["hint"] = "read one with use_skill {name, file}";
  return out;
}

}  // namespace

const Skill* SkillCatalog::find(std::string_view name) const {
  std::string want = ascii_lower(trim_space(name));
  for (const Skill& s : skills)
    if (ascii_lower(s.name) == want) return &s;
  return nullptr;
}

std::vector<std::string> skill_dirs(const std::string& workspace) {
  std::vector<std::string> dirs;
  if (std::string c = user_config_dir(); !c.empty()) dirs.push_back(c + "/skills");
  if (std::string h = home_dir(); !h.empty()) dirs.push_back(h + "/.agents/skills");
  if (!workspace.empty()) {
    dirs.push_back(workspace + "/.github/skills");
    dirs.push_back(workspace + "/.agents/skills");
  }
  return dirs;
}

Skill parse_skill_file(std::string_view text, const std::string& folder_name) {
  if (text.size() > kMaxSkillFileBytes)
    throw Error("SKILL.md is over " + std::to_string(kMaxSkillFileBytes / 1024) + " KiB");
  FrontMatter fm = parse_front_matter(text);
  if (!fm.present) throw Error("SKILL.md has no front matter (name and description)");
  Skill s;
  if (fm.lists.count("name") || fm.nested.count("name")) throw Error("`name` must be a string");
  s.name = trim_space(fm.get("name", folder_name));
  if (!valid_name(s.name))
    throw Error("the name \"" + s.name.substr(0, 80) +
                "\" is not 1-64 letters, digits, '.', '-' or '_'");
  if (fm.lists.count("description") || fm.nested.count("description"))
    throw Error("`description` must be a string");
  s.description = trim_space(fm.get("description"));
  if (s.description.empty())
    throw Error("the skill has no description (the model picks skills by it)");
  if (s.description.size() > 1024) throw Error("the description is over 1,024 characters");
  return s;
}

SkillCatalog discover_skills(const std::vector<std::string>& dirs) {
  SkillCatalog out;
  std::map<std::string, Skill> by_name;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    fs::path real_dir = fs::canonical(dir, ec);
    std::vector<fs::path> folders;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_directory() && fs::exists(it->path() / "SKILL.md")) folders.push_back(it->path());
    if (ec) {
      out.problems.push_back({dir, "cannot list the folder: " + ec.message()});
      continue;
    }
    std::sort(folders.begin(), folders.end());
    for (const fs::path& f : folders) {
      std::string file = (f / "SKILL.md").string();
      try {
        std::error_code fe;
        fs::path real = fs::canonical(f, fe);
        if (fe) throw Error("cannot resolve the path: " + fe.message());
        if (real.parent_path() != real_dir)
          throw Error("a link that leaves its folder is not followed");
        fs::path md = fs::canonical(real / "SKILL.md", fe);
        if (fe || md.parent_path() != real || !fs::is_regular_file(md, fe))
          throw Error("SKILL.md is not a regular file in the skill's folder");
        if (fs::file_size(md, fe) > kMaxSkillFileBytes)
          throw Error("SKILL.md is over " + std::to_string(kMaxSkillFileBytes / 1024) + " KiB");
        Skill s = parse_skill_file(read_file(md.string()), f.filename().string());
        s.dir = real.string();
        by_name[ascii_lower(s.name)] = std::move(s);
      } catch (const Error& e) {
        out.problems.push_back({file, e.what()});
      }
    }
  }
  for (auto& [key, s] : by_name) out.skills.push_back(std::move(s));
  return out;
}

std::vector<std::string> match_skill_names(const SkillCatalog& catalog, const std::string& words,
                                           std::vector<std::string>* unmatched) {
  std::vector<std::string> out;
  auto add = [&](const std::string& n) {
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  };
  std::string w;
  std::vector<std::string> list;
  for (char c : words + " ") {
    if (c == ' ' || c == ',' || c == '\t' || c == '\n') {
      if (!w.empty()) list.push_back(w);
      w.clear();
    } else {
      w += c;
    }
  }
  for (const std::string& word : list) {
    if (ascii_lower(word) == "all") {
      for (const Skill& s : catalog.skills) add(s.name);
      continue;
    }
    if (const Skill* s = catalog.find(word)) {
      add(s->name);
      continue;
    }
    std::vector<const Skill*> hits;
    for (const Skill& s : catalog.skills)
      if (ascii_lower(s.name).find(ascii_lower(word)) != std::string::npos) hits.push_back(&s);
    if (hits.size() == 1)
      add(hits[0]->name);
    else if (unmatched)
      unmatched->push_back(word + (hits.empty() ? ": no skill"
                                                : ": " + std::to_string(hits.size()) +
                                                      " skills match"));
  }
  return out;
}

std::string skills_prompt(const std::vector<Skill>& skills) {
  if (skills.empty()) return "";
  std::string out =
      "<skills>\nSkills you can load with the use_skill tool when a task matches one (load it "
      "before doing the task; it may name files to read with use_skill too):";
  for (const Skill& s : skills) {
    std::string d = s.description;
    for (char& c : d)
      if (c == '\n' || c == '\r') c = ' ';
    out += "\n- " + s.name + ": " + d;
  }
  return out + "\n</skills>";
}

ToolEntry use_skill_tool(std::vector<Skill> skills) {
  auto shared = std::make_shared<const std::vector<Skill>>(std::move(skills));
  ToolEntry e;
  json names = json::array();
  for (const Skill& s : *shared) names.push_back(s.name);
  e.spec.name = "use_skill";
  e.spec.description =
      "Load a skill's instructions (and the list of its files) by name, or one of its files. "
      "Use it when a task matches a skill listed in the system prompt.";
  e.spec.parameters = {
      {"type", "object"},
      {"properties",
       {{"name", {{"type", "string"}, {"enum", names}, {"description", "the skill's name"}}},
        {"file",
         {{"type", "string"},
          {"description", "a file of the skill's folder, relative to it (optional)"}}}}},
      {"required", {"name"}}};
  e.max_output_bytes = kMaxSkillFileBytes + 4096;
  e.run = [shared](const std::string& arguments, Store*) -> json {
    json args = parse_json(arguments);
    if (!args.is_object()) return {{"error", "arguments must be a JSON object {name, file?}"}};
    std::string name = json_string(args, "name");
    const Skill* skill = nullptr;
    for (const Skill& s : *shared)
      if (ascii_lower(s.name) == ascii_lower(name)) skill = &s;
    if (!skill) {
      std::string known;
      for (const Skill& s : *shared) known += (known.empty() ? "" : ", ") + s.name;
      return {{"error", "no skill \"" + name + "\"; the skills are: " +
                            (known.empty() ? std::string("none") : known)}};
    }
    std::string file = json_string(args, "file");
    return file.empty() ? load_skill(*skill) : read_skill_file(*skill, file);
  };
  return e;
}

}  // namespace pf
