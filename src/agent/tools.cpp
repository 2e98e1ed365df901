// Repository tools (see tools.h). Every path goes through resolve(): decode, refuse what looks
// like an escape, then compare the real path (symlinks resolved) against the real root.
#include "agent/tools.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>

#include <re2/re2.h>

#include "core/fs.h"
#include "core/json.h"
#include "core/text.h"
#include "index/file_filter.h"
#include "index/walker.h"

namespace pf {
namespace {

std::string cut(const std::string& s, size_t max, bool* truncated) {
  if (s.size() <= max) return s;
  *truncated = true;
  size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;  // whole UTF-8
  return s.substr(0, end);
}

nlohmann::json error(const std::string& message) {
  return {{"error", message}};
}

}  // namespace

RepositoryTools::RepositoryTools(std::string root, const HybridOptions& search, Embedder* embedder,
                                 OwnFiles own, ToolLimits limits)
    : own_(std::move(own)), search_(search), embedder_(embedder), limits_(limits) {
  char buf[PATH_MAX];
  root_ = ::realpath(root.c_str(), buf) ? std::string(buf) : root;
  registry_ = make_registry(nullptr);
}

ToolRegistry RepositoryTools::make_registry(std::shared_ptr<const OwnFiles> view) const {
  ToolRegistry registry;
  const RepositoryTools* self = this;
  for (ToolSpec& spec : build_specs()) {
    std::string name = spec.name;
    registry.add(ToolEntry{std::move(spec), ToolPermission::kNone, 32 * 1024, nullptr,
                           [self, name, view](const std::string& arguments, Store* store) {
                             return self->call(name, arguments, store, view.get());
                           }});
  }
  return registry;
}

ToolRegistry RepositoryTools::registry_exposing(const std::string& folder) const {
  auto view = std::make_shared<OwnFiles>(own_);
  view->expose(folder);
  return make_registry(view);
}

std::optional<std::string> RepositoryTools::resolve(const std::string& user_path, std::string* why,
                                                    const OwnFiles* view) const {
  // One round of decoding: "%2e%2e/" is "../" to whoever decodes it later, so it is judged
  // decoded.
  std::string p = percent_decode(user_path);
  if (p.find('\0') != std::string::npos || user_path.find('\0') != std::string::npos) {
    *why = "the path holds a NUL byte";
    return std::nullopt;
  }
  if (!p.empty() && (p[0] == '/' || p[0] == '~')) {
    *why = "absolute paths are not allowed; give a path relative to the repository root";
    return std::nullopt;
  }
  std::string rel;
  size_t start = 0;
  while (start <= p.size()) {
    size_t slash = p.find_first_of("/\\", start);
    std::string seg =
        p.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    start = slash == std::string::npos ? p.size() + 1 : slash + 1;
    if (seg.empty() || seg == ".") continue;
    if (seg == "..") {
      *why = "paths may not contain '..'";
      return std::nullopt;
    }
    if (is_secret_dir(seg) || is_secret_file(seg) || seg == ".git") {
      *why = "secrets and git internals are not readable";
      return std::nullopt;
    }
    rel += (rel.empty() ? "" : "/") + seg;
  }
  std::string full = rel.empty() ? root_ : root_ + "/" + rel;
  char buf[PATH_MAX];
  if (!::realpath(full.c_str(), buf)) {
    *why = "not found";
    return std::nullopt;
  }
  std::string real = buf;
  if (real != root_ && real.rfind(root_ + "/", 0) != 0) {
    *why = "the path leads outside the repository";
    return std::nullopt;
  }
  // A symlink inside the repository may still lead to a secret.
  for (size_t at = root_.size(); at < real.size();) {
    size_t next = real.find('/', at + 1);
    std::string seg =
        real.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
    if (is_secret_dir(seg) || is_secret_file(seg) || seg == ".git") {
      *why = "secrets and git internals are not readable";
      return std::nullopt;
    }
    at = next == std::string::npos ? real.size() : next;
  }
  if ((view ? *view : own_).covers(real)) {
    *why = "pilotfish's own files are not readable";
    return std::nullopt;
  }
  return real;
}

nlohmann::json RepositoryTools::read_file(const std::string& path, std::optional<int> start,
                                          std::optional<int> end, const OwnFiles* view) const {
  std::string why;
  auto abs = resolve(path, &why, view);
  if (!abs) return error("File not found: " + path + " (" + why + ")");
  struct stat st {};
  if (::stat(abs->c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return error("File not found: " + path + " (not a regular file)");
  if (st.st_size > 16 * 1024 * 1024) return error("File too large to read: " + path);
  std::string content;
  try {
    content = ::pf::read_file(*abs);
  } catch (const Error& e) {
    return error("File not readable: " + path);
  }
  SkipReason kind = classify_content(&content);
  if (kind == SkipReason::kSecretContent)
    return error("File holds secret material and is not readable: " + path);
  if (kind == SkipReason::kBinary) return error("Binary file: " + path);
  // Lines [start, end], 1-based.
  std::vector<size_t> starts = {0};
  for (size_t i = 0; i < content.size(); ++i)
    if (content[i] == '\n' && i + 1 < content.size()) starts.push_back(i + 1);
  int lines = static_cast<int>(starts.size());
  int from = std::clamp(start.value_or(1), 1, std::max(lines, 1));
  int to = std::clamp(end.value_or(lines), from, std::max(lines, 1));
  bool truncated = false;
  if (to - from + 1 > limits_.max_read_lines) {
    to = from + limits_.max_read_lines - 1;
    truncated = true;
  }
  size_t b = starts[static_cast<size_t>(from - 1)];
  size_t e =
      static_cast<size_t>(to) < starts.size() ? starts[static_cast<size_t>(to)] : content.size();
  std::string slice = cut(content.substr(b, e - b), limits_.max_read_bytes, &truncated);
  nlohmann::json out = {{"content", slice},
                        {"filePath", path},
                        {"lineCount", lines},
                        {"startLine", from},
                        {"endLine", to}};
  if (truncated)
    out["truncated"] = "output cut to " + std::to_string(limits_.max_read_lines) + " lines / " +
                       std::to_string(limits_.max_read_bytes) + " bytes; ask for a later startLine";
  return out;
}

nlohmann::json RepositoryTools::list_directory(const std::string& path, const OwnFiles* view) const {
  const OwnFiles& own = view ? *view : own_;
  std::string why;
  auto abs = resolve(path, &why, view);
  if (!abs) return error("Directory not found: " + path + " (" + why + ")");
  DIR* d = ::opendir(abs->c_str());
  if (!d) return error("Directory not found: " + path + " (not a directory)");
  std::vector<nlohmann::json> entries;
  std::string base = *abs == root_ ? "" : abs->substr(root_.size() + 1) + "/";
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == ".." || name == ".git" || is_secret_file(name) ||
        is_secret_dir(name))
      continue;
    struct stat st {};
    std::string full = *abs + "/" + name;
    if (own.covers(full) && !own.exposes_under(full)) continue;
    if (::lstat(full.c_str(), &st) != 0) continue;
    std::string type = S_ISDIR(st.st_mode) ? "dir" : S_ISLNK(st.st_mode) ? "symlink" : "file";
    entries.push_back({{"name", name}, {"type", type}, {"path", base + name}});
  }
  ::closedir(d);
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a["name"] < b["name"]; });
  nlohmann::json out = {{"count", entries.size()}};
  if (entries.size() > limits_.max_entries) {
    entries.resize(limits_.max_entries);
    out["truncated"] =
        "only the first " + std::to_string(limits_.max_entries) + " entries are listed";
  }
  out["entries"] = entries;
  return out;
}

nlohmann::json RepositoryTools::search_code(Store& store, const std::string& query, int limit) const {
  HybridOptions opt = search_;
  opt.base.limit = std::clamp(limit, 1, 20);
  nlohmann::json results = nlohmann::json::array();
  for (const auto& r : hybrid_search(store, query, opt, embedder_)) {
    const Chunk& c = r.hit.chunk;
    if (r.repo_root != root_ || own_.covers(root_ + "/" + c.path)) continue;
    bool truncated = false;
    results.push_back({{"path", c.path},
                       {"startLine", c.start_line},
                       {"endLine", c.end_line},
                       {"chunkType", c.chunk_type},
                       {"content", cut(c.content, 4000, &truncated)}});
  }
  return {{"results", results}};
}

nlohmann::json RepositoryTools::grep(const std::string& pattern, const std::string& path,
                                     const OwnFiles* view) const {
  const OwnFiles& own = view ? *view : own_;
  if (pattern.empty() || pattern.size() > 200)
    return error("the pattern must be 1 to 200 characters");
  // RE2, not std::regex: the pattern comes from a model (which text in the repository can steer),
  // and a backtracking engine takes exponential time on patterns like "(a*)*b" and overflows the
  // stack on long lines. RE2 runs in time linear in the line, with bounded memory.
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(16 << 20);
  RE2 re(pattern, options);
  if (!re.ok()) return error("invalid regular expression: " + re.error());
  std::string why;
  auto abs = resolve(path.empty() ? "." : path, &why, view);
  if (!abs) return error("Path not found: " + path + " (" + why + ")");
  // The same files the indexer would read: ignore rules, secrets and size cap apply.
  WalkResult walk = walk_repository(root_, WalkOptions{});
  std::string prefix = *abs == root_ ? "" : abs->substr(root_.size() + 1);
  nlohmann::json matches = nlohmann::json::array();
  int64_t scanned = 0;
  std::string note;
  for (const auto& f : walk.files) {
    if (!prefix.empty() && f.rel != prefix && f.rel.rfind(prefix + "/", 0) != 0) continue;
    if (own.covers(root_ + "/" + f.rel)) continue;
    if (scanned > limits_.max_grep_bytes) {
      note = "stopped after " + std::to_string(limits_.max_grep_bytes) + " bytes; narrow the path";
      break;
    }
    std::string text;
    try {
      text = ::pf::read_file(root_ + "/" + f.rel);
    } catch (const Error&) {
      continue;
    }
    scanned += static_cast<int64_t>(text.size());
    if (classify_content(&text) != SkipReason::kNone) continue;
    int line_no = 0;
    size_t pos = 0;
    while (pos <= text.size()) {
      size_t nl = text.find('\n', pos);
      std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      ++line_no;
      if (line.size() <= 2000 && RE2::PartialMatch(line, re)) {
        bool truncated = false;
        matches.push_back(
            {{"path", f.rel}, {"line", line_no}, {"text", cut(line, 300, &truncated)}});
        if (static_cast<int>(matches.size()) >= limits_.max_grep_matches) {
          note =
              "only the first " + std::to_string(limits_.max_grep_matches) + " matches are listed";
          break;
        }
      }
      if (nl == std::string::npos) break;
      pos = nl + 1;
    }
    if (!note.empty()) break;
  }
  nlohmann::json out = {{"matches", matches}, {"count", matches.size()}};
  if (!note.empty()) out["truncated"] = note;
  return out;
}

std::vector<ToolSpec> RepositoryTools::build_specs() const {
  using nlohmann::json;
  std::vector<ToolSpec> out = {
      {"read_file",
       "Read a file of the repository, or a range of its lines. Paths are relative to the "
       "repository root.",
       json{{"type", "object"},
            {"properties",
             {{"filePath", {{"type", "string"}}},
              {"startLine", {{"type", "integer"}}},
              {"endLine", {{"type", "integer"}}}}},
            {"required", {"filePath"}}}},
      {"list_directory",
       "List the files and directories at a path of the repository (\".\" for the root).",
       json{{"type", "object"},
            {"properties", {{"dirPath", {{"type", "string"}}}}},
            {"required", {"dirPath"}}}},
      {"grep",
       "Search the repository's files for a regular expression (RE2 syntax: no backreferences or "
       "lookaround); optionally under a path.",
       json{{"type", "object"},
            {"properties", {{"pattern", {{"type", "string"}}}, {"path", {{"type", "string"}}}}},
            {"required", {"pattern"}}}}};
  out.push_back(
      {"search_code",
       "Search the indexed code and docs by meaning and keywords; returns the best chunks.",
       json{{"type", "object"},
            {"properties", {{"query", {{"type", "string"}}}, {"limit", {{"type", "integer"}}}}},
            {"required", {"query"}}}});
  return out;
}

nlohmann::json RepositoryTools::call(const std::string& name, const std::string& arguments,
                                     Store* store, const OwnFiles* view) const {
  nlohmann::json args = parse_json(arguments.empty() ? "{}" : arguments);
  if (!args.is_object()) return error("the arguments are not a JSON object");
  auto str = [&](const char* k) -> std::optional<std::string> {
    if (!args.contains(k) || !args[k].is_string()) return std::nullopt;
    return args[k].get<std::string>();
  };
  auto num = [&](const char* k) -> std::optional<int> {
    if (!args.contains(k) || !args[k].is_number_integer()) return std::nullopt;
    return args[k].get<int>();
  };
  if (name == "read_file") {
    auto p = str("filePath");
    if (!p) return error("read_file needs filePath (a string)");
    return read_file(*p, num("startLine"), num("endLine"), view);
  }
  if (name == "list_directory") {
    auto p = str("dirPath");
    if (!p) return error("list_directory needs dirPath (a string)");
    return list_directory(*p, view);
  }
  if (name == "grep") {
    auto p = str("pattern");
    if (!p) return error("grep needs pattern (a string)");
    return grep(*p, str("path").value_or(""), view);
  }
  if (name == "search_code") {
    auto q = str("query");
    if (!q) return error("search_code needs query (a string)");
    if (!store) return error("search is not available");
    return search_code(*store, *q, num("limit").value_or(8));
  }
  return error("unknown tool: " + name);
}

}  // namespace pf
