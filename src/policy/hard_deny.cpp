// Hard denies on a parsed command line. Paths are compared after normalising ("//", "/./",
// trailing "/" and "/.", "/.." at the root), so "/", "//", "/." and "/etc/" name the same place.
#include "policy/hard_deny.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace pf {
namespace {

std::string normalise(std::string p) {
  if (p.empty()) return p;
  std::string r;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '/' && !r.empty() && r.back() == '/') continue;
    r += p[i];
  }
  for (;;) {
    if (r.size() > 1 && r.back() == '/') {
      r.pop_back();
    } else if (r.size() > 2 && r.compare(r.size() - 2, 2, "/.") == 0) {
      r.resize(r.size() - 2);
    } else if (r == "/.." || r == "/.") {
      r.assign(1, '/');
    } else {
      break;
    }
  }
  // "/./etc" and "/../etc" are "/etc".
  while (r.rfind("/./", 0) == 0 || r.rfind("/../", 0) == 0) r.erase(0, r[2] == '/' ? 2 : 3);
  return r.empty() ? "/" : r;
}

bool is_home(const std::string& p) {
  return p == "~" || p == "$HOME" || p == "${HOME}" || p == "~root" || p == "/root" || p == "/home";
}

// The root, the home folder or a top-level system directory, or everything in one ("/*").
bool is_protected_path(const std::string& raw) {
  std::string p = normalise(raw);
  if (p.size() >= 2 && p.compare(p.size() - 2, 2, "/*") == 0) {
    p = p.size() == 2 ? std::string(1, '/') : normalise(p.substr(0, p.size() - 2));
  }
  if (p == "/" || is_home(p)) return true;
  static const std::array<std::string_view, 16> system{
      "/bin", "/boot", "/dev", "/etc", "/lib", "/lib64", "/opt", "/proc",
      "/sbin", "/srv", "/sys", "/usr", "/var", "/usr/bin", "/usr/lib", "/etc/ssh"};
  return std::find(system.begin(), system.end(), p) != system.end();
}

bool has_short_flag(const std::vector<std::string>& words, char flag, std::string_view long_name) {
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "--") break;
    if (w.size() > 2 && w[0] == '-' && w[1] == '-') {
      if (w == long_name) return true;
    } else if (w.size() > 1 && w[0] == '-' && w.find(flag) != std::string::npos) {
      return true;
    }
  }
  return false;
}

// The operands (non-option words); after "--" every word is one.
std::vector<std::string> operands(const std::vector<std::string>& words) {
  std::vector<std::string> r;
  bool options = true;
  for (size_t i = 1; i < words.size(); ++i) {
    if (options && words[i] == "--") {
      options = false;
    } else if (!options || words[i].empty() || words[i][0] != '-') {
      r.push_back(words[i]);
    }
  }
  return r;
}

bool is_disk_device(const std::string& raw) {
  std::string p = normalise(raw);
  if (p.rfind("/dev/", 0) != 0) return false;
  std::string_view dev = std::string_view(p).substr(5);
  for (std::string_view prefix : {"sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "dm-", "md", "loop", "mapper/"})
    if (dev.rfind(prefix, 0) == 0) return true;
  return false;
}

std::optional<std::string> command_deny(const SimpleCommand& c) {
  const std::string& n = c.name;
  const auto& w = c.words;
  if (n == "rm" && (has_short_flag(w, 'r', "--recursive") || has_short_flag(w, 'R', "--recursive"))) {
    for (const auto& target : operands(w))
      if (is_protected_path(target)) return "recursive rm of " + target;
  }
  if ((n == "chmod" || n == "chown" || n == "chgrp") && has_short_flag(w, 'R', "--recursive")) {
    for (const auto& target : operands(w))
      if (is_protected_path(target)) return "recursive " + n + " of " + target;
  }
  if (n.rfind("mkfs", 0) == 0 || n == "mke2fs" || n == "wipefs") return n + " formats a disk";
  if (n == "dd") {
    for (size_t i = 1; i < w.size(); ++i)
      if (w[i].rfind("of=", 0) == 0 && normalise(w[i].substr(3)).rfind("/dev/", 0) == 0 &&
          normalise(w[i].substr(3)) != "/dev/null")
        return "dd onto the device " + w[i].substr(3);
  }
  if (n == "shred") {
    for (const auto& target : operands(w))
      if (is_disk_device(target)) return "shred of the device " + target;
  }
  if (n == "launchctl" && std::any_of(w.begin(), w.end(), [](const std::string& a) {
        return a == "unload" || a == "bootout" || a == "remove";
      }))
    return "launchctl unload stops services (the bridge's own among them)";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> hard_deny(const ShellParse& parse) {
  // `cd /; rm -rf *`: after a cd to a protected place (or home, with no argument), a recursive
  // rm of a relative path is one of that place.
  std::string cwd;
  for (const auto& c : parse.commands) {
    if (auto why = command_deny(c)) return why;
    if (c.name == "cd" || c.name == "pushd") {
      std::vector<std::string> args = operands(c.words);
      std::string to = args.empty() ? std::string("~") : args.front();
      cwd = is_protected_path(to) ? to : std::string();
    } else if (!cwd.empty() && c.name == "rm" &&
               (has_short_flag(c.words, 'r', "--recursive") || has_short_flag(c.words, 'R', "--recursive"))) {
      for (const auto& target : operands(c.words))
        if (!target.empty() && target[0] != '/' && target[0] != '~' && target[0] != '$' &&
            is_protected_path(cwd + "/" + target))
          return "recursive rm of " + target + " in " + cwd;
    }
  }
  for (const auto& f : parse.functions)
    if (f.self_calls >= 2 || (f.self_calls >= 1 && f.backgrounds))
      return "a fork bomb (function " + f.name + " starts copies of itself)";
  for (const auto& target : parse.redirect_targets)
    if (is_disk_device(target)) return "a write to the device " + target;
  return std::nullopt;
}

}  // namespace pf
