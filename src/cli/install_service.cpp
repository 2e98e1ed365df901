// `pilotfish install-service [--user]` and `uninstall-service`: a systemd unit that runs
// `pilotfish serve` (or `bridge`) with this config and store, hardened (no new privileges, the
// system read-only but for the store, workspaces and log folders, a private /tmp, restart on
// failure) with the keys from an environment file; enabled and started through systemctl
// unless --no-enable. The agent can never stop or remove it (policy/hard_deny.h).
#include <limits.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "bridge/bridge_config.h"
#include "bridge/service.h"
#include "cli/commands.h"
#include "core/config.h"
#include "core/error.h"
#include "core/fs.h"
#include "index/git_source.h"
#include "store/store.h"

namespace pf::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUnitName = "pilotfish.service";

std::string unit_dir(const ServiceArgs& args) {
  if (!args.unit_dir.empty()) return args.unit_dir;
  if (!args.user) return "/etc/systemd/system";
  // user_config_dir() is $XDG_CONFIG_HOME/pilotfish (or ~/.config/pilotfish): systemd's is beside.
  return fs::path(user_config_dir()).parent_path().string() + "/systemd/user";
}

// A path as one word of ExecStart= or a *Paths= list: quoted when it holds a space.
std::string word(const std::string& path) {
  if (path.find_first_of(" \t\"\\") == std::string::npos) return path;
  std::string out = "\"";
  for (char c : path) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string absolute(const std::string& path) {
  std::error_code ec;
  return fs::absolute(path, ec).lexically_normal().string();
}

std::string self_path() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw Error("cannot tell where the pilotfish binary is (/proc/self/exe)");
  return std::string(buf, static_cast<size_t>(n));
}

// The folders the service writes: the store's, the bridge state's, the workspaces (the bots'
// folders and git clones: configured, else under this user's data folder), the log's.
std::vector<std::string> writable_paths(const Config& config, const std::string& db) {
  std::set<std::string> out;
  auto add_dir_of = [&](const std::string& file) {
    if (!file.empty() && !is_postgres_url(file)) out.insert(fs::path(absolute(file)).parent_path().string());
  };
  add_dir_of(db);
  const BridgeConfig& bridge = bridge_config(config);
  add_dir_of(bridge_state_path(bridge, db));
  out.insert(absolute(bridge.workspaces_dir.empty() ? default_data_dir() + "/workspaces"
                                                    : bridge.workspaces_dir));
  const GitConfig& git = git_config(config);
  out.insert(absolute(git.clone_dir.empty() ? default_data_dir() + "/workspaces/git" : git.clone_dir));
  for (const ChannelConfig& c : bridge.channels)
    if (!c.working_directory.empty()) out.insert(absolute(c.working_directory));
  if (!bridge.defaults.working_directory.empty()) out.insert(absolute(bridge.defaults.working_directory));
  if (!config.server.repository.empty() && !is_git_url(config.server.repository))
    out.insert(absolute(config.server.repository));  // a URL's clone is under the clone folder
  add_dir_of(config.logging.file);
  return {out.begin(), out.end()};
}

int systemctl(bool user, const std::string& verb_and_unit) {
  std::string cmd = std::string("systemctl ") + (user ? "--user " : "") + verb_and_unit;
  return std::system(cmd.c_str());
}

}  // namespace

std::string service_unit(const ServiceArgs& args, const Config& config, const std::string& binary) {
  std::string db = resolve_db(args.db);
  if (!is_postgres_url(db)) db = absolute(db);
  std::string env_file = args.user ? user_config_dir() + "/env" : "/etc/pilotfish/env";
  std::string out =
      "# Written by `pilotfish install-service`" + std::string(args.user ? " --user" : "") +
      "; `pilotfish uninstall-service` removes it.\n"
      "[Unit]\n"
      "Description=pilotfish codebase copilot (" + args.command + ")\n"
      "After=network-online.target\n"
      "Wants=network-online.target\n\n"
      "[Service]\n"
      "Type=simple\n"
      "ExecStart=" + word(binary) + " " + args.command + " --config " + word(absolute(config.source)) +
      " --db " + word(db) + "\n";
  if (!args.user && !args.run_as.empty()) out += "User=" + args.run_as + "\n";
  out += "# Keys and tokens (the config names their variables): NAME=value lines.\n"
         "EnvironmentFile=-" + word(env_file) + "\n"
         "Restart=on-failure\n"
         "RestartSec=5\n"
         "UMask=0077\n"
         "NoNewPrivileges=yes\n"
         "ProtectSystem=strict\n";
  for (const std::string& p : writable_paths(config, db)) out += "ReadWritePaths=-" + word(p) + "\n";
  out += "PrivateTmp=yes\n"
         "ProtectKernelTunables=yes\n"
         "ProtectKernelModules=yes\n"
         "ProtectControlGroups=yes\n"
         "RestrictSUIDSGID=yes\n"
         "LockPersonality=yes\n"
         "# run_command's sandbox (bubblewrap) needs user namespaces: no RestrictNamespaces.\n\n"
         "[Install]\n"
         "WantedBy=" + std::string(args.user ? "default.target" : "multi-user.target") + "\n";
  return out;
}

int run_install_service(const ServiceArgs& args) {
  if (args.command != "serve" && args.command != "bridge")
    throw UsageError("--command must be serve or bridge, not " + args.command);
  Config config = load_config(args.config);
  if (config.source.empty())
    throw UsageError("no config file: write one (see `pilotfish config --help`) or pass --config");
  ServiceArgs a = args;
  if (!a.user && a.run_as.empty())
    if (const char* sudo = std::getenv("SUDO_USER"); sudo && *sudo) a.run_as = sudo;
  std::string dir = unit_dir(a);
  std::string path = dir + "/" + kUnitName;
  bool existed = fs::exists(path);
  write_file_atomic(path, service_unit(a, config, self_path()));
  ::chmod(path.c_str(), 0644);
  std::printf("%s %s\n", existed ? "replaced" : "wrote", path.c_str());
  if (a.no_enable) {
    std::printf("not enabled (--no-enable): systemctl %sdaemon-reload && systemctl %senable --now %s\n",
                a.user ? "--user " : "", a.user ? "--user " : "", kUnitName);
    return 0;
  }
  if (systemctl(a.user, "daemon-reload") != 0 ||
      systemctl(a.user, std::string("enable --now ") + kUnitName) != 0)
    throw Error("systemctl could not enable " + std::string(kUnitName) + " (the unit is written: " +
                path + ")");
  std::printf("enabled and started: systemctl %sstatus %s\n", a.user ? "--user " : "", kUnitName);
  return 0;
}

int run_uninstall_service(const ServiceArgs& args) {
  std::string path = unit_dir(args) + "/" + kUnitName;
  if (!fs::exists(path)) {
    std::printf("no service installed at %s\n", path.c_str());
    return 0;
  }
  if (!args.no_enable && systemctl(args.user, std::string("disable --now ") + kUnitName) != 0)
    std::fprintf(stderr, "pilotfish: systemctl could not disable %s; removing the unit anyway\n", kUnitName);
  std::error_code ec;
  fs::remove(path, ec);
  if (ec) throw Error("cannot remove " + path + ": " + ec.message());
  if (!args.no_enable) systemctl(args.user, "daemon-reload");
  std::printf("removed %s\n", path.c_str());
  return 0;
}

}  // namespace pf::cli
