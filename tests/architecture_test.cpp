// Keeps docs/ARCHITECTURE.md's component table true: every folder of src/ has a row, each
// folder includes exactly the folders its row lists as dependencies (no more, and none listed
// that it no longer uses), the table has no cycle, and no file includes a header that says it
// is "Internal to" another folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::set<std::string> src_folders() {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(fs::path(pf::test::source_dir()) / "src"))
    if (e.is_directory()) out.insert(e.path().filename().string());
  return out;
}

// folder -> the folders its row lists under "depends on" (names that are not folders, such as
// tree-sitter or llama.cpp, are left out; a note in brackets after a name is allowed).
std::map<std::string, std::set<std::string>> table_of(const std::string& doc,
                                                      const std::set<std::string>& folders) {
  std::map<std::string, std::set<std::string>> out;
  std::istringstream lines(doc.substr(doc.find("## Components")));
  std::string line;
  std::regex row(R"(^\| `([a-z_]+)/` \|.*\| ([^|]*) \|\s*$)");
  while (std::getline(lines, line)) {
    if (line.rfind("## ", 0) == 0 && line != "## Components") break;
    std::smatch m;
    if (!std::regex_match(line, m, row)) continue;
    std::set<std::string>& deps = out[m[1]];
    std::istringstream names(m[2].str());
    std::string name;
    while (std::getline(names, name, ',')) {
      std::string trimmed = std::regex_replace(name, std::regex(R"(^\s+|\s*\(.*\)\s*$|\s+$)"), "");
      if (folders.count(trimmed)) deps.insert(trimmed);
    }
  }
  return out;
}

struct Include {
  std::string file, header;
};

// Every `#include "folder/..."` of src/, by the including file's folder.
std::map<std::string, std::vector<Include>> includes_by_folder(const std::set<std::string>& folders) {
  std::map<std::string, std::vector<Include>> out;
  fs::path src = fs::path(pf::test::source_dir()) / "src";
  std::regex inc(R"(#include "([a-z_]+)/([^"]+)\")");
  for (const auto& e : fs::recursive_directory_iterator(src)) {
    if (!e.is_regular_file()) continue;
    std::string rel = fs::relative(e.path(), src).string();
    std::string text = read(e.path());
    for (std::sregex_iterator it(text.begin(), text.end(), inc), end; it != end; ++it) {
      if (!folders.count((*it)[1])) continue;
      out[rel.substr(0, rel.find('/'))].push_back({rel, (*it)[1].str() + "/" + (*it)[2].str()});
    }
  }
  return out;
}

TEST(Architecture, EveryFolderIncludesExactlyTheFoldersItsRowLists) {
  std::set<std::string> folders = src_folders();
  auto table = table_of(read(fs::path(pf::test::source_dir()) / "docs/ARCHITECTURE.md"), folders);
  auto includes = includes_by_folder(folders);
  for (const std::string& f : folders) {
    ASSERT_TRUE(table.count(f)) << "docs/ARCHITECTURE.md has no row for src/" << f << "/";
    std::set<std::string> used;
    for (const Include& i : includes[f]) {
      std::string to = i.header.substr(0, i.header.find('/'));
      if (to == f) continue;
      used.insert(to);
      EXPECT_TRUE(table[f].count(to)) << i.file << " includes " << i.header << ", but the row of "
                                      << f << "/ does not list " << to;
    }
    for (const std::string& d : table[f])
      EXPECT_TRUE(used.count(d)) << "the row of " << f << "/ lists " << d
                                 << ", which nothing in src/" << f << "/ includes";
  }
}

TEST(Architecture, DependenciesHaveNoCycle) {
  std::set<std::string> folders = src_folders();
  auto table = table_of(read(fs::path(pf::test::source_dir()) / "docs/ARCHITECTURE.md"), folders);
  // Peel off folders whose dependencies are all peeled; what remains is on a cycle.
  std::set<std::string> done;
  for (bool progress = true; progress;) {
    progress = false;
    for (const auto& [f, deps] : table) {
      if (done.count(f)) continue;
      bool ready = true;
      for (const std::string& d : deps) ready = ready && (done.count(d) || d == f);
      if (ready) progress = done.insert(f).second;
    }
  }
  for (const auto& [f, deps] : table) EXPECT_TRUE(done.count(f)) << f << "/ is on a cycle";
}

TEST(Architecture, NoFileIncludesAnotherFoldersInternalHeader) {
  std::set<std::string> folders = src_folders();
  fs::path src = fs::path(pf::test::source_dir()) / "src";
  for (const auto& [folder, list] : includes_by_folder(folders)) {
    for (const Include& i : list) {
      std::string owner = i.header.substr(0, i.header.find('/'));
      if (owner == folder || !fs::exists(src / i.header)) continue;
      std::ifstream in(src / i.header);
      std::string first;
      std::getline(in, first);
      bool is_internal = first.rfind("// Internal to", 0) == 0;
      EXPECT_FALSE(is_internal) << i.file << " includes " << i.header << ", which is internal to "
                                << owner << "/";
    }
  }
  // The check has something to find: internal headers exist and are included within their folder.
  std::ifstream probe(src / "store/schema.h");
  std::string first;
  std::getline(probe, first);
  EXPECT_EQ(first.rfind("// Internal to", 0), 0u);
}

}  // namespace
