// Git URLs, clones and HEAD (see git_source.h). git runs with no terminal prompt, only the
// protocols a URL here may name (never ext::), English messages, and a token as an
// Authorization header scoped to the token's host in GIT_CONFIG_* variables.
#include "index/git_source.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/config_reader.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/process.h"
#include "core/text.h"

namespace pf {

namespace fs = std::filesystem;
using namespace config_detail;

namespace {

const char* const kSchemes[] = {"https://", "http://", "ssh://", "git://", "file://"};

std::shared_ptr<const ConfigSection> parse_git(const json& v, const Config&,
                                               const std::string& source) {
  auto out = std::make_shared<GitConfig>();
  if (v.is_null()) return out;
  if (!v.is_object()) fail(source, "git", std::string("expected an object, got ") + kind(v));
  Reader r(source);
  r.only_keys(v, "git", {"cloneDir", "timeoutSeconds", "tokenEnv"});
  out->clone_dir = r.string(v, "git", "cloneDir", false);
  if (out->clone_dir.rfind("~/", 0) == 0) out->clone_dir = home_dir() + out->clone_dir.substr(1);
  out->timeout_seconds = r.integer(v, "git", "timeoutSeconds", 1, 86400, out->timeout_seconds);
  if (v.contains("tokenEnv")) {
    const json& t = r.object(v, "git", "tokenEnv");
    for (auto it = t.begin(); it != t.end(); ++it) {
      std::string at = "git.tokenEnv." + it.key();
      if (!it->is_string() || it->get<std::string>().empty())
        fail(source, at, "expected the name of an environment variable");
      if (it.key().empty() || it.key().find_first_of("/:@* ") != std::string::npos)
        fail(source, at, "expected a host name (\"github.com\"), without scheme, port or path");
      out->token_env[ascii_lower(it.key())] = it->get<std::string>();
    }
  }
  return out;
}

size_t scheme_length(std::string_view text) {
  for (const char* s : kSchemes) {
    std::string_view p(s);
    if (text.size() > p.size() && ascii_lower(text.substr(0, p.size())) == p) return p.size();
  }
  return 0;
}

// user@host:path with no '/' before the ':' (git's own rule for scp-like addresses).
bool scp_like(std::string_view text) {
  size_t colon = text.find(':'), at = text.find('@'), slash = text.find('/');
  return at != std::string_view::npos && at > 0 && colon != std::string_view::npos &&
         colon > at + 1 && (slash == std::string_view::npos || slash > colon) &&
         colon + 1 < text.size();
}

bool valid_branch(const std::string& b) {
  if (b.empty() || b[0] == '-' || b[0] == '/' || b.back() == '/' || b.back() == '.' ||
      b.find("..") != std::string::npos || b.find("//") != std::string::npos ||
      b.find("@{") != std::string::npos || b == "@" ||
      (b.size() >= 5 && b.compare(b.size() - 5, 5, ".lock") == 0))
    return false;
  return std::all_of(b.begin(), b.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '_' || c == '-' || c == '/' || c == '+';
  });
}

std::string safe_part(std::string_view part) {
  std::string out;
  for (unsigned char c : part) out += std::isalnum(c) || c == '.' || c == '-' || c == '_' ? static_cast<char>(c) : '_';
  if (out == "." || out == "..") out = "_";
  return out;
}

// scheme://authority of a URL without its user (what an http.<url>.extraHeader key matches).
std::string url_prefix(const std::string& url) {
  size_t n = scheme_length(url);
  size_t end = url.find('/', n);
  std::string authority = url.substr(n, end == std::string::npos ? std::string::npos : end - n);
  if (size_t at = authority.rfind('@'); at != std::string::npos) authority.erase(0, at + 1);
  return ascii_lower(url.substr(0, n)) + authority + "/";
}

std::vector<std::pair<std::string, std::string>> git_env(const GitSource& source,
                                                         const GitConfig& config) {
  std::vector<std::pair<std::string, std::string>> env = {
      {"GIT_TERMINAL_PROMPT", "0"},
      {"GIT_ALLOW_PROTOCOL", "https:http:ssh:git:file"},
      {"LC_ALL", "C"},
      {"GIT_CONFIG_COUNT", "0"}};
  auto it = config.token_env.find(source.host);
  bool http = ascii_lower(source.url.substr(0, 4)) == "http";
  if (it == config.token_env.end() || !http) return env;
  const char* token = std::getenv(it->second.c_str());
  if (!token || !*token) {
    log::warn("git", "git.tokenEnv names " + it->second + " for " + source.host +
                         " but it is not set: cloning without a token");
    return env;
  }
  env.back().second = "1";
  env.emplace_back("GIT_CONFIG_KEY_0", "http." + url_prefix(source.url) + ".extraHeader");
  env.emplace_back("GIT_CONFIG_VALUE_0", "Authorization: Basic " +
                                             base64_encode("x-access-token:" + std::string(token)));
  return env;
}

struct Git {
  const GitSource& source;
  const GitConfig& config;

  // git args... in dir (empty: the current folder); the result's output has both streams.
  ProcessResult run(const std::string& dir, std::vector<std::string> args) const {
    ProcessSpec spec;
    spec.argv = {"git"};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.cwd = dir;
    spec.env = git_env(source, config);
    spec.timeout_ms = config.timeout_seconds * 1000;
    spec.max_output_bytes = 64 * 1024;
    return run_process(spec);
  }
  // The output's first line, or "" when git failed.
  std::string line(const std::string& dir, std::vector<std::string> args) const {
    ProcessResult r = run(dir, std::move(args));
    if (!r.ok) return "";
    return trim_space(r.output.substr(0, r.output.find('\n')));
  }
};

// git's message without its progress lines, cut short.
std::string git_message(const ProcessResult& r) {
  std::string msg;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);) {
    line = trim_space(line);
    if (line.empty() || line.rfind("Cloning into", 0) == 0) continue;
    msg += (msg.empty() ? "" : "; ") + line;
  }
  if (msg.size() > 500) msg = msg.substr(0, 500) + "...";
  return msg.empty() ? r.error : msg + " (" + r.error + ")";
}

GitSync clone(const Git& git, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(fs::path(dir).parent_path(), ec);
  // Into a folder beside it, renamed when complete: a killed clone never looks like a clone.
  std::string partial = dir + ".partial";
  fs::remove_all(partial, ec);
  std::vector<std::string> args = {"clone", "--depth", "1", "--single-branch", "--no-tags"};
  if (!git.source.branch.empty()) args.insert(args.end(), {"--branch", git.source.branch});
  args.insert(args.end(), {"--", git.source.url, partial});
  ProcessResult r = git.run("", args);
  if (!r.ok) {
    fs::remove_all(partial, ec);
    throw Error("cannot clone " + git.source.url + ": " + git_message(r));
  }
  fs::rename(partial, dir, ec);
  if (ec) throw Error("cannot move the clone to " + dir + ": " + ec.message());
  GitSync out;
  out.dir = dir;
  out.cloned = true;
  out.commit = git_head(dir);
  return out;
}

}  // namespace

const GitConfig& git_config(const Config& config) {
  static const GitConfig kNone;
  const GitConfig* c = config.section<GitConfig>("git");
  return c ? *c : kNone;
}

bool is_git_url(std::string_view text) {
  return scheme_length(text) > 0 || scp_like(text);
}

GitSource parse_git_source(const std::string& text, const std::string& branch) {
  if (!is_git_url(text))
    throw UsageError("not a git URL: " + text + " (https://, http://, ssh://, git://, file:// or user@host:path)");
  GitSource s;
  s.url = text;
  if (size_t hash = text.find('#'); hash != std::string::npos) {
    s.url = text.substr(0, hash);
    s.branch = text.substr(hash + 1);
  }
  if (!branch.empty()) s.branch = branch;
  if (!s.branch.empty() && !valid_branch(s.branch))
    throw UsageError("not a branch or tag name git accepts: \"" + s.branch + "\"");
  if (size_t n = scheme_length(s.url)) {
    size_t end = s.url.find('/', n);
    std::string authority = s.url.substr(n, end == std::string::npos ? std::string::npos : end - n);
    size_t at = authority.rfind('@');
    if (at != std::string::npos && authority.substr(0, at).find(':') != std::string::npos)
      throw UsageError("the URL has a password in it: name an environment variable holding the "
                       "token in git.tokenEnv instead");
    std::string host = at == std::string::npos ? authority : authority.substr(at + 1);
    s.host = ascii_lower(host.substr(0, host.rfind(':') == std::string::npos || host.back() == ']'
                                            ? host.size()
                                            : host.rfind(':')));
    if (s.host.empty() && ascii_lower(s.url.substr(0, 7)) != "file://")
      throw UsageError("the URL names no host: " + s.url);
  } else {
    size_t at = s.url.find('@');
    s.host = ascii_lower(s.url.substr(at + 1, s.url.find(':') - at - 1));
  }
  return s;
}

std::string clone_folder(const GitSource& source, const std::string& clone_dir) {
  std::string path;
  if (size_t n = scheme_length(source.url)) {
    size_t slash = source.url.find('/', n);
    std::string authority = source.url.substr(n, slash == std::string::npos ? std::string::npos : slash - n);
    if (size_t at = authority.rfind('@'); at != std::string::npos) authority.erase(0, at + 1);
    path = (authority.empty() ? "local" : authority) + "/" +
           (slash == std::string::npos ? "" : source.url.substr(slash + 1));
  } else {
    path = source.host + "/" + source.url.substr(source.url.find(':') + 1);
  }
  while (!path.empty() && path.back() == '/') path.pop_back();
  if (path.size() > 4 && path.compare(path.size() - 4, 4, ".git") == 0) path.resize(path.size() - 4);
  fs::path out = clone_dir.empty() ? fs::path(default_data_dir()) / "workspaces" / "git"
                                   : fs::path(clone_dir);
  std::istringstream parts(path);
  for (std::string part; std::getline(parts, part, '/');)
    if (!part.empty()) out /= safe_part(part);
  if (!source.branch.empty()) out += "@" + safe_part(source.branch);
  return out.string();
}

GitSync sync_checkout(const GitSource& source, const std::string& dir, const GitConfig& config) {
  Git git{source, config};
  if (find_in_path("git").empty())
    throw Error("git is not installed: a repository given by URL needs it");
  std::error_code ec;
  if (!fs::exists(dir, ec)) return clone(git, dir);
  std::string origin = git.line(dir, {"config", "--get", "remote.origin.url"});
  if (origin != source.url)
    throw Error(dir + " holds " + (origin.empty() ? "no clone" : "a clone of " + origin) +
                ", not of " + source.url + ": move it away or name another git.cloneDir");
  GitSync out;
  out.dir = dir;
  out.before = git_head(dir);
  out.commit = out.before;
  std::string upstream = git.line(dir, {"rev-parse", "-q", "--verify", "@{upstream}"});
  ProcessResult fetched = git.run(dir, {"fetch", "--depth", "1", "--no-tags", "origin"});
  if (!fetched.ok) {
    out.warning = "the fetch failed: " + git_message(fetched);
    return out;
  }
  std::string target = upstream.empty() ? git.line(dir, {"rev-parse", "-q", "--verify", "FETCH_HEAD"})
                                        : git.line(dir, {"rev-parse", "-q", "--verify", "@{upstream}"});
  if (target.empty() || target == out.before) return out;
  if (!upstream.empty() && upstream != out.before) {
    out.warning = "HEAD has commits made in the work tree; left at " + out.before.substr(0, 12);
    return out;
  }
  ProcessResult moved = git.run(dir, {"reset", "--keep", target});
  if (!moved.ok) {
    out.warning = "local changes are in the way: " + git_message(moved);
    return out;
  }
  out.commit = git_head(dir);
  return out;
}

namespace {

std::string first_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return trim_space(line);
}

bool is_object_id(const std::string& s) {
  return (s.size() == 40 || s.size() == 64) &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

// The commit ref names in the repository at git_dir (common: where shared refs live).
std::string resolve_ref(const fs::path& git_dir, const fs::path& common, std::string ref) {
  for (int depth = 0; depth < 5; ++depth) {
    if (is_object_id(ref)) return ref;
    if (ref.rfind("ref: ", 0) != 0) return "";
    std::string name = trim_space(ref.substr(5));
    if (name.find("..") != std::string::npos) return "";
    std::error_code ec;
    if (fs::is_regular_file(git_dir / name, ec)) {
      ref = first_line(git_dir / name);
    } else if (fs::is_regular_file(common / name, ec)) {
      ref = first_line(common / name);
    } else {
      std::ifstream packed(common / "packed-refs");
      ref.clear();
      for (std::string line; std::getline(packed, line);) {
        size_t sp = line.find(' ');
        if (sp != std::string::npos && line.compare(sp + 1, std::string::npos, name) == 0) {
          ref = line.substr(0, sp);
          break;
        }
      }
    }
  }
  return "";
}

}  // namespace

std::string git_head(const std::string& dir) {
  std::error_code ec;
  fs::path at = fs::absolute(dir, ec);
  if (ec) return "";
  for (; !at.empty(); at = at.parent_path()) {
    fs::path dot = at / ".git";
    fs::path git_dir;
    if (fs::is_directory(dot, ec)) {
      git_dir = dot;
    } else if (fs::is_regular_file(dot, ec)) {
      std::string line = first_line(dot);
      if (line.rfind("gitdir:", 0) != 0) return "";
      git_dir = fs::path(trim_space(line.substr(7)));
      if (git_dir.is_relative()) git_dir = at / git_dir;
    }
    if (!git_dir.empty()) {
      fs::path common = git_dir;
      if (std::string c = first_line(git_dir / "commondir"); !c.empty())
        common = fs::path(c).is_relative() ? git_dir / c : fs::path(c);
      return resolve_ref(git_dir, common, first_line(git_dir / "HEAD"));
    }
    if (at == at.root_path()) break;
  }
  return "";
}

bool register_git_config() {
  static const bool once = register_config_section("git", parse_git);
  return once;
}

}  // namespace pf
