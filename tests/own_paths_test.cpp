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

// A component's section that keeps a store beside the index store (as the bridge's state).
struct StateBeside : ConfigSection {
  std::string name = "bridge.db";
  std::vector<std::string> own_stores(const std::string& db_path) const override {
    return {db_path.substr(0, db_path.rfind('/') + 1) + name};
  }
};

Config with_state_beside(const std::string& name = "bridge.db") {
  Config config;
  auto section = std::make_shared<StateBeside>();
  section->name = name;
  config.sections["state"] = section;
  return config;
}

TEST_F(OwnPathsTest, TheStoreInsideTheWorkspaceWithASectionsStoreBesideIt) {
  Config config = with_state_beside();
  config.source = ws + "/pilotfish.json";
  OwnFiles own = own_paths(config, ws + "/.pilotfish/index.db", ws);
  for (const std::string p : {"/.pilotfish/index.db", "/.pilotfish/index.db-wal", "/.pilotfish/index.db.lock",
                              "/.pilotfish/bridge.db", "/.pilotfish/bridge.db-shm", "/.pilotfish/bridge.db.lock",
                              "/.pilotfish/index.db.vectors/x", "/.pilotfish/attachments/c/f", "/pilotfish.json",
                              "/mcp-config.json", "/.env", "/.env.local", "/secrets/key.txt"})
    EXPECT_TRUE(own.covers(ws + p)) << p;
  for (const std::string p : {"/README.md", "/src/main.c", ""}) EXPECT_FALSE(own.covers(ws + p)) << p;
}

TEST_F(OwnPathsTest, AStoreOutsideTheWorkspaceAndNoSections) {
  Config config = with_state_beside("state.db");
  OwnFiles own = own_paths(config, dir.path() + "/store/index.db", ws);
  EXPECT_TRUE(own.covers(absolute_path(dir.path()) + "/store/state.db-wal"));
  EXPECT_TRUE(own.covers(absolute_path(dir.path()) + "/store/index.db"));
  EXPECT_FALSE(own.covers(absolute_path(dir.path()) + "/store/bridge.db"));
  EXPECT_FALSE(own_paths(Config{}, dir.path() + "/store/index.db", ws)
                   .covers(absolute_path(dir.path()) + "/store/state.db"));
}

TEST_F(OwnPathsTest, APostgresStoreHasNoFiles) {
  Config config;
  OwnFiles own = own_paths(config, "postgresql://u@h/db", "");
  EXPECT_TRUE(own.entries().empty());
}

TEST(AttachmentsFolder, IsUnderThePilotfishFolder) {
  EXPECT_EQ(attachments_folder("abc"), ".pilotfish/attachments/abc");
}

}  // namespace
}  // namespace pf
