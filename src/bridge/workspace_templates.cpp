// Templates for a new workspace's AGENTS.md and MEMORY.md (see workspace_templates.h).
#include "bridge/workspace_templates.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/clock.h"
#include "core/error.h"
#include "core/fs.h"

namespace pf {

namespace {

constexpr const char* kAgents =
    "# {{bot}} in {{channel}}\n"
    "\n"
    "This workspace belongs to the channel {{channel}}, answered by {{bot}}.\n"
    "\n"
    "## Purpose\n"
    "\n"
    "{{purpose}}\n"
    "\n"
    "## Where things are\n"
    "\n"
    "- Workspace: `{{workspace}}`\n"
    "- Repository: {{repository}}\n"
    "\n"
    "## How to work here\n"
    "\n"
    "- Search the code before answering, and name the files and lines you rely on.\n"
    "- Ask before changing anything outside this workspace.\n";

constexpr const char* kMemory =
    "# Memory\n"
    "\n"
    "Notes {{bot}} keeps across conversations in {{channel}} (started {{date}}).\n";

std::string read_template(const std::string& dir, const std::string& name, const char* builtin) {
  if (dir.empty()) return builtin;
  std::string path = dir + "/" + name;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return builtin;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) throw Error("cannot read the template " + path);
  return text.str();
}

}  // namespace

std::string fill_template(const std::string& text, const WorkspaceVars& vars) {
  const std::pair<const char*, std::string> names[] = {
      {"bot", vars.bot},
      {"channel", vars.channel},
      {"workspace", vars.workspace},
      {"repository", vars.repository.empty() ? "none (a folder of its own)" : vars.repository},
      {"purpose", vars.purpose.empty() ? "(not given yet)" : vars.purpose},
      {"date", format_utc(unix_time_ms(), "%Y-%m-%d")}};
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t open = text.find("{{", i);
    if (open == std::string::npos) break;
    size_t close = text.find("}}", open + 2);
    if (close == std::string::npos) break;
    out.append(text, i, open - i);
    std::string name = text.substr(open + 2, close - open - 2);
    bool known = false;
    for (const auto& [n, value] : names)
      if (name == n) {
        out += value;
        known = true;
      }
    if (!known) out.append(text, open, close + 2 - open);
    i = close + 2;
  }
  out.append(text, i, std::string::npos);
  return out;
}

std::string default_template_dir() {
  std::string base = user_config_dir();
  return base.empty() ? std::string() : base + "/templates";
}

std::vector<std::string> init_workspace(const std::string& dir, const WorkspaceVars& vars,
                                        const std::string& template_dir) {
  std::string templates = template_dir.empty() ? default_template_dir() : template_dir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error("cannot make the workspace " + dir + ": " + ec.message());
  std::vector<std::string> written;
  for (auto [name, builtin] : {std::pair{"AGENTS.md", kAgents}, std::pair{"MEMORY.md", kMemory}}) {
    std::string text = fill_template(read_template(templates, name, builtin), vars);
    std::string path = dir + "/" + name;
    // O_EXCL: a file that exists (or appears meanwhile) is left alone; a symlink is not followed.
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
      if (errno == EEXIST) continue;
      throw Error("cannot write " + path + ": " + std::strerror(errno));
    }
    size_t done = 0;
    while (done < text.size()) {
      ssize_t n = ::write(fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::close(fd);
    if (done != text.size()) throw Error("cannot write " + path);
    written.push_back(name);
  }
  return written;
}

}  // namespace pf
