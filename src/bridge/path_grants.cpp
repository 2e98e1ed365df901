// Paths an admin opened to a bot from chat (see path_grants.h).
#include "bridge/path_grants.h"

#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>

#include "core/json.h"
#include "core/log.h"

namespace pf {

using nlohmann::json;

namespace {

std::string key_of(const std::string& bot) { return "pathGrants:" + bot; }

bool under(const std::string& path, const std::string& folder) {
  return path == folder || (path.size() > folder.size() && path.rfind(folder, 0) == 0 &&
                            (folder == "/" || path[folder.size()] == '/'));
}

}  // namespace

std::optional<std::string> grantable_path(const std::string& path, const OwnFiles& own,
                                          const std::string& home, std::string* why) {
  if (path.empty() || path[0] != '/') {
    *why = "expected an absolute path, got \"" + path + "\"";
    return std::nullopt;
  }
  char buf[PATH_MAX];
  std::error_code ec;
  if (!::realpath(path.c_str(), buf) || !std::filesystem::is_directory(buf, ec)) {
    *why = path + " is not an existing folder";
    return std::nullopt;
  }
  std::string real = buf;
  if (real == "/") {
    *why = "the whole file system is never granted";
    return std::nullopt;
  }
  static const char* const kSystem[] = {"/etc", "/proc", "/sys",  "/dev",  "/boot",   "/bin",
                                        "/sbin", "/lib", "/lib64", "/usr", "/var/lib", "/run",
                                        "/var/run", "/home", "/Users"};
  for (const char* s : kSystem) {
    bool is_home_root = std::string(s) == "/home" || std::string(s) == "/Users";
    // /home and /Users themselves, and each person's folder right under them, are refused;
    // folders deeper down (a project in someone's home) may be granted.
    if (is_home_root) {
      if (real == s || (under(real, s) && real.find('/', std::string(s).size() + 1) ==
                                              std::string::npos)) {
        *why = real + " is a home folder";
        return std::nullopt;
      }
      continue;
    }
    if (under(real, s)) {
      *why = real + " is a system folder";
      return std::nullopt;
    }
  }
  if (real == "/root" || (!home.empty() && real == home)) {
    *why = real + " is a home folder";
    return std::nullopt;
  }
  for (size_t i = 0; i < real.size(); ++i)
    if (real[i] == '/' && i + 1 < real.size() && real[i + 1] == '.') {
      *why = real + " is or lies in a hidden folder (such as ~/.ssh)";
      return std::nullopt;
    }
  if (own.covers(real)) {  // a store's side files too (own_files.h)
    *why = real + " lies in pilotfish's own files";
    return std::nullopt;
  }
  for (const auto& e : own.entries())
    if (under(real, e.path) || under(e.path, real)) {
      *why = real + " holds or lies in pilotfish's own files (" + e.path + ")";
      return std::nullopt;
    }
  return real;
}

std::vector<PathGrant> PathGrants::of(const std::string& bot) {
  std::vector<PathGrant> out;
  std::optional<std::string> text = state_.setting(key_of(bot));
  if (!text || text->empty()) return out;
  json list = json::parse(*text, nullptr, false);
  if (!list.is_array()) {
    log::error("bridge", "the path grants of " + bot + " do not read as a list");
    return out;
  }
  for (const json& j : list) {
    if (!j.is_object()) continue;
    PathGrant g{j.value("path", ""), j.value("mode", ""), j.value("by", ""),
                j.value("at", int64_t{0})};
    if (!g.path.empty() && (g.mode == "read" || g.mode == "write")) out.push_back(std::move(g));
  }
  return out;
}

void PathGrants::write(const std::string& bot, const std::vector<PathGrant>& grants) {
  json list = json::array();
  for (const auto& g : grants)
    list.push_back({{"path", g.path}, {"mode", g.mode}, {"by", g.granted_by}, {"at", g.at_ms}});
  state_.set_setting(key_of(bot), list.dump());
  cache_.erase(bot);
}

void PathGrants::grant(const std::string& bot, const PathGrant& grant) {
  std::vector<PathGrant> list = of(bot);
  std::erase_if(list, [&](const PathGrant& g) { return g.path == grant.path; });
  list.push_back(grant);
  write(bot, list);
}

bool PathGrants::revoke(const std::string& bot, const std::string& path) {
  std::vector<PathGrant> list = of(bot);
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  char buf[PATH_MAX];
  std::string real = ::realpath(p.c_str(), buf) ? std::string(buf) : p;
  size_t before = list.size();
  std::erase_if(list, [&](const PathGrant& g) { return g.path == p || g.path == real; });
  if (list.size() == before) return false;
  write(bot, list);
  return true;
}

const PermissionsConfig& PathGrants::permissions_for(const std::string& bot,
                                                     const PermissionsConfig& base) {
  auto it = cache_.find(bot);
  if (it != cache_.end()) return it->second;
  PermissionsConfig p = base;
  for (const auto& g : of(bot)) {
    auto& list = g.mode == "write" ? p.allow_paths : p.read_paths;
    if (std::find(list.begin(), list.end(), g.path) == list.end()) list.push_back(g.path);
  }
  return cache_.emplace(bot, std::move(p)).first->second;
}

}  // namespace pf
