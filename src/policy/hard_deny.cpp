// Hard denies on a parsed command line. A recursive rm, chmod, chown or chgrp is refused when a
// target resolves (quotes already removed by the parser; "~", "~user", "$HOME" and "${HOME}"
// expanded, "//", "." and ".." folded lexically, relative paths taken from a preceding `cd` to a
// known place) to the root, anything in or under a system tree (/etc, /usr, /bin, /sbin, /lib*,
// /boot, /var, /opt, /srv, /root, /proc, /sys, /dev, macOS's /System and /Library), a home root
// (/home, /Users), a home folder itself, or a home folder's dot folders (~/.ssh, ~/.config) and
// what is under them. A wildcard or variable in a component stands for anything there. Paths
// inside a workspace (relative ones, /tmp, /home/me/repo/build, and below a workspace root the
// caller names, even in /srv or /var) stay allowed.
#include "policy/hard_deny.h"

#include <algorithm>
#include <array>
#include <set>
#include <string_view>

namespace pf {
namespace {

// "//", "/./", trailing "/" and "/.", "/.." at the root folded: for device paths.
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
  while (r.rfind("/./", 0) == 0 || r.rfind("/../", 0) == 0) r.erase(0, r[2] == '/' ? 2 : 3);
  return r.empty() ? "/" : r;
}

// A target resolved: components below the root ("/") or below the (unknown) home folder.
struct Resolved {
  bool known = false;  // false: relative to a place not known here (the workspace)
  bool home = false;   // the components are below the home folder
  std::vector<std::string> parts;
};

std::vector<std::string> split(std::string_view p) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= p.size()) {
    size_t slash = p.find('/', start);
    if (slash == std::string_view::npos) slash = p.size();
    if (slash > start) out.emplace_back(p.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

// "$HOME", "${HOME}", "~", "~user" at the start become a home prefix or an absolute path.
// (Built with append: GCC 12's -Wrestrict misfires on "x" + std::string here.)
std::string expand_home(const std::string& word) {
  std::string out;
  for (std::string_view var : {"${HOME}", "$HOME"})
    if (word.compare(0, var.size(), var) == 0 && (word.size() == var.size() || word[var.size()] == '/'))
      return out.append(1, '~').append(word, var.size(), std::string::npos);
  if (word.size() < 2 || word[0] != '~' || word[1] == '/') return word;
  size_t slash = std::min(word.find('/'), word.size());
  std::string_view user = std::string_view(word).substr(1, slash - 1);
  if (user == "+" || user == "-") out.append(1, '$').append(user);  // $PWD, $OLDPWD: not known here
  else if (user == "root") out.append("/root");
  else out.append("/home/").append(user);
  return out.append(word, slash, std::string::npos);
}

// Folds "." and ".."; ".." above the home folder lands in /home (or /, protected as well).
Resolved resolve(const std::string& word, const Resolved& cwd) {
  Resolved r;
  std::string w = expand_home(word);
  if (w.empty()) return r;
  std::vector<std::string> parts;
  if (w[0] == '/') {
    r.known = true;
  } else if (w[0] == '~') {
    r.known = r.home = true;
    w.erase(0, 1);
  } else if (cwd.known) {
    r = cwd;
    parts = cwd.parts;
  } else {
    return r;
  }
  for (std::string& c : split(w)) {
    if (c == ".") continue;
    if (c != "..") {
      parts.push_back(std::move(c));
    } else if (!parts.empty()) {
      parts.pop_back();
    } else if (r.home) {
      r.home = false;
      parts = {"home"};
    }
  }
  r.parts = std::move(parts);
  return r;
}

bool is_pattern(const std::string& c) { return c.find_first_of("*?[{$`") != std::string::npos; }
bool starts_wild(const std::string& c) { return !c.empty() && std::string_view("*?[{$`").find(c[0]) != std::string_view::npos; }

// Within a home folder: itself, its dot folders and what is under them, or a pattern that may
// match those.
bool protected_in_home(const std::vector<std::string>& below) {
  if (below.empty()) return true;
  const std::string& first = below.front();
  return first[0] == '.' || (is_pattern(first) && starts_wild(first));
}

bool is_protected(const Resolved& r) {
  if (!r.known) return false;
  // Everything from the first pattern component on may be anything: keep it only as a marker.
  std::vector<std::string> parts = r.parts;
  for (size_t i = 0; i < parts.size(); ++i)
    if (is_pattern(parts[i])) {
      parts.resize(i + 1);
      break;
    }
  if (r.home) return protected_in_home(parts);
  if (parts.empty() || is_pattern(parts[0])) return true;  // the root, or anything in it
  static const std::array<std::string_view, 17> trees{
      "bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "opt", "proc", "root",
      "sbin", "srv", "sys", "usr", "var", "System"};
  const std::string& top = parts[0];
  if (std::find(trees.begin(), trees.end(), top) != trees.end() || top == "Library") return true;
  if (top == "home" || top == "Users") {
    if (parts.size() == 1 || is_pattern(parts[1])) return true;
    return protected_in_home(std::vector<std::string>(parts.begin() + 2, parts.end()));
  }
  return false;
}

// The resolved place, for the reason ("~/.ssh", "/etc/nginx").
std::string shown(const Resolved& r) {
  std::string out = r.home ? "~" : "";
  for (const auto& c : r.parts) out += "/" + c;
  return out.empty() ? "/" : out;
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

bool recursive(const SimpleCommand& c) {
  if (c.name == "rm")
    return has_short_flag(c.words, 'r', "--recursive") || has_short_flag(c.words, 'R', "--recursive");
  return (c.name == "chmod" || c.name == "chown" || c.name == "chgrp") &&
         has_short_flag(c.words, 'R', "--recursive");
}

// Whether r lies in one of the workspaces (none of which may be "/" or a home folder itself).
bool in_workspace(const Resolved& r, const std::vector<std::string>& workspaces) {
  if (!r.known || r.home) return false;
  for (const auto& w : workspaces) {
    Resolved root = resolve(w, Resolved{});
    if (!root.known || root.home || root.parts.empty() || root.parts.size() > r.parts.size()) continue;
    if ((root.parts[0] == "home" || root.parts[0] == "Users") && root.parts.size() <= 2) continue;
    if (root.parts.size() == 1 && root.parts[0] == "root") continue;
    if (std::equal(root.parts.begin(), root.parts.end(), r.parts.begin())) return true;
  }
  return false;
}

// Whether a word names pilotfish's own service ("pilotfish", "pilotfish.service", a path to it).
bool names_own_service(const std::string& word) {
  std::string base = word.substr(word.find_last_of('/') == std::string::npos ? 0 : word.find_last_of('/') + 1);
  return base.rfind("pilotfish", 0) == 0 &&
         (base == "pilotfish" || base.rfind("pilotfish.", 0) == 0 || base.rfind("pilotfish@", 0) == 0);
}

// Stopping, disabling or removing pilotfish's own service, or killing its process: the agent
// would cut the branch it sits on (upstream denies it too).
std::optional<std::string> own_service_deny(const std::string& n, const std::vector<std::string>& w) {
  bool own = std::any_of(w.begin() + (w.empty() ? 0 : 1), w.end(), names_own_service);
  static const std::set<std::string> kStops = {"stop", "disable", "mask", "kill", "restart",
                                               "try-restart", "reload-or-restart", "isolate",
                                               "revert", "unlink", "clean", "freeze"};
  if (n == "systemctl" && own &&
      std::any_of(w.begin(), w.end(), [](const std::string& a) { return kStops.count(a) > 0; }))
    return "systemctl may not stop, disable or remove pilotfish's own service";
  if (n == "service" && own) return "service may not control pilotfish's own service";
  if ((n == "pkill" || n == "killall") && own) return n + " may not end pilotfish itself";
  if (names_own_service(n) &&
      std::any_of(w.begin(), w.end(), [](const std::string& a) { return a == "uninstall-service"; }))
    return "pilotfish uninstall-service removes pilotfish's own service";
  if ((n == "rm" || n == "unlink" || n == "mv") &&
      std::any_of(w.begin() + (w.empty() ? 0 : 1), w.end(), [](const std::string& a) {
        return names_own_service(a) && a.find(".service") != std::string::npos;
      }))
    return n + " of pilotfish's own service unit";
  return std::nullopt;
}

std::optional<std::string> command_deny(const SimpleCommand& c, const Resolved& cwd,
                                        const std::vector<std::string>& workspaces) {
  const std::string& n = c.name;
  const auto& w = c.words;
  if (recursive(c)) {
    // chmod, chown and chgrp take a mode or owner first, unless --reference names it.
    std::vector<std::string> targets = operands(w);
    bool reference = std::any_of(w.begin(), w.end(), [](const std::string& a) { return a.rfind("--reference", 0) == 0; });
    if (n != "rm" && !reference && !targets.empty()) targets.erase(targets.begin());
    for (const auto& target : targets) {
      Resolved r = resolve(target, cwd);
      if (!is_protected(r) || in_workspace(r, workspaces)) continue;
      std::string where = shown(r);
      return "recursive " + n + " of " + target + (where == target ? "" : " (" + where + ")");
    }
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
  if (auto why = own_service_deny(n, w)) return why;
  return std::nullopt;
}

}  // namespace

std::optional<std::string> hard_deny(const ShellParse& parse, const std::vector<std::string>& workspaces) {
  // `cd /etc; rm -rf nginx`: after a cd to a known place (home, with no argument), relative
  // targets are taken from there; after a cd elsewhere they are the workspace's again.
  Resolved cwd;
  for (const auto& c : parse.commands) {
    if (auto why = command_deny(c, cwd, workspaces)) return why;
    if (c.name == "cd" || c.name == "pushd") {
      std::vector<std::string> args = operands(c.words);
      cwd = resolve(args.empty() ? std::string("~") : args.front(), cwd);
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
