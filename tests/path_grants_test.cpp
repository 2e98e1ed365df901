// bridge/path_grants.h: what may be granted to a bot from chat (never "/", system or home
// folders, hidden folders, pilotfish's own files), grants kept in the state store across a
// reopen, revoked, and turned into the bot's permissions (write: allowPaths; read: readPaths),
// which bind the folder into run_command's sandbox (agent/action_tools.h).
#include "bridge/path_grants.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "agent/action_tools.h"
#include "agent/sandbox.h"
#include "bridge/sqlite_state_store.h"
#include "test_util.h"

namespace pf {
namespace {

namespace fs = std::filesystem;

TEST(PathGrantsTest, WhatCanBeGranted) {
  test::TempDir dir;
  fs::create_directories(dir / "shared/docs");
  fs::create_directories(dir / "home/.ssh");
  fs::create_directories(dir / "data");
  test::write_file(dir / "data/index.db", "");
  OwnFiles own;
  own.add_store(dir / "data/index.db");
  std::string why;
  std::string real = fs::canonical(dir / "shared").string();
  EXPECT_EQ(grantable_path(dir / "shared", own, "", &why), real) << why;
  EXPECT_EQ(grantable_path(dir / "shared/docs/", own, "", &why), real + "/docs") << why;

  auto refused = [&](const std::string& path, const std::string& home, const std::string& frag) {
    std::string w;
    EXPECT_FALSE(grantable_path(path, own, home, &w)) << path;
    EXPECT_NE(w.find(frag), std::string::npos) << path << ": " << w;
  };
  refused("relative/path", "", "absolute");
  refused(dir / "missing", "", "not an existing folder");
  refused("/", "", "whole file system");
  refused("/etc", "", "system folder");
  refused("/etc/ssl", "", "system folder");
  refused("/proc/self", "", "system folder");
  refused("/usr/lib", "", "system folder");
  refused("/home", "", "home folder");
  refused("/root", "", "home folder");
  refused(dir / "home", fs::canonical(dir / "home").string(), "home folder");
  refused(dir / "home/.ssh", "", "hidden");
  refused(dir / "data", "", "own files");                 // holds the store
  fs::create_directories(dir / "data/index.db.vectors");  // lies in the store's side files
  refused(dir / "data/index.db.vectors", "", "own files");
  // A symlink to a system folder is judged by where it leads.
  fs::create_directory_symlink("/etc", dir / "etc-link");
  refused(dir / "etc-link", "", "system folder");
}

TEST(PathGrantsTest, GrantsAreKeptRevokedAndBecomeTheBotsPermissions) {
  test::TempDir dir;
  fs::create_directories(dir / "ro");
  fs::create_directories(dir / "rw");
  std::string ro = fs::canonical(dir / "ro"), rw = fs::canonical(dir / "rw");
  PermissionsConfig base;
  base.allow_paths = {"/srv/config-wide"};
  {
    auto state = open_sqlite_state_store(dir / "bridge.db");
    PathGrants grants(*state);
    EXPECT_TRUE(grants.of("ops").empty());
    grants.grant("ops", {ro, "write", "alice", 1});
    grants.grant("ops", {ro, "read", "alice", 2});  // replaces the mode
    grants.grant("ops", {rw, "write", "bob", 3});
    const PermissionsConfig& p = grants.permissions_for("ops", base);
    EXPECT_EQ(p.allow_paths, (std::vector<std::string>{"/srv/config-wide", rw}));
    EXPECT_EQ(p.read_paths, (std::vector<std::string>{ro}));
    EXPECT_TRUE(grants.permissions_for("other", base).read_paths.empty());
  }
  auto state = open_sqlite_state_store(dir / "bridge.db");  // reopened: still there
  PathGrants grants(*state);
  ASSERT_EQ(grants.of("ops").size(), 2u);
  EXPECT_EQ(grants.of("ops")[0].path, ro);
  EXPECT_EQ(grants.of("ops")[0].mode, "read");
  EXPECT_EQ(grants.of("ops")[1].granted_by, "bob");
  EXPECT_TRUE(grants.revoke("ops", rw + "/"));  // a trailing slash is the same folder
  EXPECT_FALSE(grants.revoke("ops", rw));
  EXPECT_EQ(grants.permissions_for("ops", base).allow_paths,
            std::vector<std::string>{"/srv/config-wide"});
  // A stored value that is not a list reads as no grants.
  state->set_setting("pathGrants:broken", "{");
  EXPECT_TRUE(grants.of("broken").empty());
}

TEST(PathGrantsTest, AReadGrantIsReadableInTheSandboxButNotWritable) {
  std::string why;
  if (!sandbox_available("bwrap", &why)) GTEST_SKIP() << why;
  test::TempDir ws, outside;
  test::write_file(outside / "notes.txt", "granted words\n");
  PermissionsConfig p;
  p.read_paths = {fs::canonical(outside.path())};
  ActionsConfig actions;
  ActionTools tools(ws.path(), actions, {}, p);
  std::string at = fs::canonical(outside.path());
  auto r = tools.run_command("cat " + at + "/notes.txt", 20);
  EXPECT_NE(r.dump().find("granted words"), std::string::npos) << r.dump();
  r = tools.run_command("echo x > " + at + "/new.txt", 20);
  EXPECT_FALSE(fs::exists(outside / "new.txt")) << r.dump();
  // Without the grant the folder is not there at all.
  ActionTools plain(ws.path(), actions, {}, {});
  r = plain.run_command("cat " + at + "/notes.txt", 20);
  EXPECT_EQ(r.dump().find("granted words"), std::string::npos) << r.dump();
}

}  // namespace
}  // namespace pf
