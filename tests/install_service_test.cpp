// `pilotfish install-service` and `uninstall-service` (src/cli/install_service.cpp): the unit
// runs this binary with the config and store given, is hardened (no new privileges, a strict
// read-only system with only the store's, state's, workspaces' and log's folders writable, a
// private /tmp, restart on failure, keys from an environment file), passes `systemd-analyze
// verify` with no warning, and goes again; a missing config is a usage error.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/fs.h"
#include "test_util.h"

namespace pf {
namespace {

namespace fs = std::filesystem;

test::CommandResult pf(std::vector<std::string> args) {
  return test::run_pilotfish(std::move(args));
}

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

TEST(InstallService, TheUnitIsHardenedVerifiedAndRemoved) {
  test::TempDir tmp;
  std::string units = tmp / "units", cfg = tmp / "c.json", db = tmp / "store/a.db";
  fs::create_directories(tmp / "repo");
  test::write_file(cfg, "{\"logging\": {\"file\": \"" + (tmp / "logs/pf.log") +
                            "\"}, \"server\": {\"repository\": \"" + (tmp / "repo") +
                            "\"}, \"git\": {\"cloneDir\": \"" + (tmp / "clones") +
                            "\"}, \"bridge\": {\"workspacesDir\": \"" + (tmp / "ws") + "\"}}");
  auto r = pf({"install-service", "--unit-dir", units, "--no-enable", "--config", cfg, "--db", db,
               "--run-as", "daemon"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string unit = read_file(units + "/pilotfish.service");
  std::string bin = fs::canonical(test::pilotfish_bin()).string();
  EXPECT_TRUE(has_line(unit, "ExecStart=" + bin + " serve --config " + cfg + " --db " + db)) << unit;
  for (const std::string& line : std::vector<std::string>{"NoNewPrivileges=yes", "ProtectSystem=strict", "PrivateTmp=yes",
                           "Restart=on-failure", "User=daemon", "EnvironmentFile=-/etc/pilotfish/env",
                           "ReadWritePaths=-" + (tmp / "store"), "ReadWritePaths=-" + (tmp / "repo"),
                           "ReadWritePaths=-" + (tmp / "logs"), "ReadWritePaths=-" + (tmp / "clones"),
                           "ReadWritePaths=-" + (tmp / "ws"), "WantedBy=multi-user.target"})
    EXPECT_TRUE(has_line(unit, line)) << line << "\n" << unit;
  EXPECT_EQ(unit.find("RestrictNamespaces=yes"), std::string::npos);  // bubblewrap needs them
  if (test::shell("command -v systemd-analyze >/dev/null") != 0)
    GTEST_SKIP() << "systemd-analyze is not installed (scripts/install-deps.sh --test installs it)";
  auto verify = test::run({"systemd-analyze", "verify", "--man=no", units + "/pilotfish.service"});
  EXPECT_EQ(verify.exit_code, 0) << verify.err;
  EXPECT_EQ(verify.err, "") << unit;  // not even a warning
  // A user unit: the user's targets and environment file, no User=.
  r = pf({"install-service", "--user", "--unit-dir", tmp / "user", "--no-enable", "--config", cfg,
          "--db", db, "--command", "bridge"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string user = read_file(tmp / "user/pilotfish.service");
  EXPECT_NE(user.find(" bridge --config "), std::string::npos) << user;
  EXPECT_TRUE(has_line(user, "WantedBy=default.target")) << user;
  EXPECT_EQ(user.find("User="), std::string::npos);
  verify = test::run({"systemd-analyze", "verify", "--man=no", tmp / "user/pilotfish.service"});
  EXPECT_EQ(verify.exit_code, 0) << verify.err;
  r = pf({"uninstall-service", "--unit-dir", units, "--no-enable"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(units + "/pilotfish.service"));
}

TEST(InstallService, BadInputIsAUsageError) {
  test::TempDir tmp;
  ::setenv("XDG_CONFIG_HOME", (tmp / "none").c_str(), 1);
  auto r = pf({"install-service", "--unit-dir", tmp / "u", "--no-enable", "--config", tmp / "missing.json"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_FALSE(fs::exists(tmp / "u/pilotfish.service"));
  test::write_file(tmp / "c.json", "{}");
  r = pf({"install-service", "--unit-dir", tmp / "u", "--no-enable", "--config", tmp / "c.json",
          "--command", "index"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("pilotfish: ", 0), 0u) << r.err;
}

}  // namespace
}  // namespace pf
