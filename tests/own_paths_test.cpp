// own_paths: the one list of what pilotfish keeps as its own, for each kind of run (ask, serve,
// bridge) and with the store inside or outside the workspace.
#include "runtime/own_paths.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace pf {
namespace {

class OwnPathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_file(ws + "/README.md", "hi\n");
    test::write_file(ws + "/.env", "TOKEN=x\n");
    test::write_file(ws + "/.env.local", "TOKEN=y\n");
    test::write_file(ws + "/secrets/key.txt", "k\n");
  }
  test::TempDir dir;
  std::string ws = absolute_path(dir.path()) + "/ws";
};

TEST_F(OwnPathsTest, TheStoreInsideTheWorkspaceWithTheDefaultBridgeStateBesideIt) {
  Config config;
  config.source = ws + "/pilotfish.json";
  OwnFiles own = own_paths(config, ws + "/.pilotfish/index.db", ws);
  for (const std::string p : {"/.pilotfish/index.db", "/.pilotfish/index.db-wal", "/.pilotfish/index.db.lock",
                              "/.pilotfish/bridge.db", "/.pilotfish/bridge.db-shm", "/.pilotfish/bridge.db.lock",
                              "/.pilotfish/index.db.vectors/x", "/.pilotfish/attachments/c/f", "/pilotfish.json",
                              "/mcp-config.json", "/.env", "/.env.local", "/secrets/key.txt"})
    EXPECT_TRUE(own.covers(ws + p)) << p;
  for (const std::string p : {"/README.md", "/src/main.c", ""}) EXPECT_FALSE(own.covers(ws + p)) << p;
}

TEST_F(OwnPathsTest, AConfiguredBridgeStateAndAStoreOutsideTheWorkspace) {
  Config config;
  config.bridge.state_db = dir.path() + "/state/bridge-state.db";
  OwnFiles own = own_paths(config, dir.path() + "/store/index.db", ws);
  EXPECT_TRUE(own.covers(absolute_path(dir.path()) + "/state/bridge-state.db-wal"));
  EXPECT_TRUE(own.covers(absolute_path(dir.path()) + "/store/index.db"));
  EXPECT_FALSE(own.covers(absolute_path(dir.path()) + "/store/bridge.db"));
}

TEST_F(OwnPathsTest, APostgresStoreHasNoFiles) {
  Config config;
  OwnFiles own = own_paths(config, "postgresql://u@h/db", "");
  EXPECT_TRUE(own.entries().empty());
}

TEST(BridgeStatePath, BesideTheStoreFileAndNeverInsideAUrl) {
  Config c;
  EXPECT_EQ(bridge_state_path(c, "/srv/pf/index.db"), "/srv/pf/bridge.db");
  EXPECT_EQ(bridge_state_path(c, "index.db"), "bridge.db");
  // Replicas on PostgreSQL share the bridge's state in the same database.
  EXPECT_EQ(bridge_state_path(c, "postgresql://u@db.internal/pilotfish?host=/run/postgresql"),
            "postgresql://u@db.internal/pilotfish?host=/run/postgresql");
  c.bridge.state_db = "/data/state.db";
  EXPECT_EQ(bridge_state_path(c, "postgres://h/db"), "/data/state.db");
}

TEST(AttachmentsFolder, IsUnderThePilotfishFolder) {
  EXPECT_EQ(attachments_folder("abc"), ".pilotfish/attachments/abc");
}

}  // namespace
}  // namespace pf
