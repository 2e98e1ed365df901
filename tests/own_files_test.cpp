// OwnFiles: which paths count as pilotfish's own, with stores' side files, folders, exposed
// folders and paths that do not exist yet or are reached through symlinks.
#include "agent/own_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "test_util.h"

namespace pf {
namespace {

TEST(OwnFiles, AStoreCoversEverythingNamedAfterIt) {
  OwnFiles own;
  own.add_store("/srv/pf/index.db");
  for (const char* p : {"/srv/pf/index.db", "/srv/pf/index.db-wal", "/srv/pf/index.db-shm",
                        "/srv/pf/index.db-journal", "/srv/pf/index.db.lock",
                        "/srv/pf/index.db.lease-0123456789abcdef",
                        "/srv/pf/index.db.vectors", "/srv/pf/index.db.vectors/graph.bin"})
    EXPECT_TRUE(own.covers(p)) << p;
  for (const char* p : {"/srv/pf", "/srv/pf/index.dbx", "/srv/pf/other.db", "/srv/pf/index.d"})
    EXPECT_FALSE(own.covers(p)) << p;
}

TEST(OwnFiles, ADatabaseUrlAddsNothing) {
  OwnFiles own;
  own.add_store("postgresql://u@db/pilotfish");
  EXPECT_TRUE(own.entries().empty());
}

TEST(OwnFiles, AFolderCoversEverythingUnderItButNotItsNeighbours) {
  OwnFiles own;
  own.add_folder("/w/.pilotfish");
  EXPECT_TRUE(own.covers("/w/.pilotfish"));
  EXPECT_TRUE(own.covers("/w/.pilotfish/attachments/c/f.txt"));
  EXPECT_FALSE(own.covers("/w/.pilotfish2"));
  EXPECT_FALSE(own.covers("/w"));
}

TEST(OwnFiles, AnExposedFolderIsNotCoveredButItsNeighboursAre) {
  OwnFiles own;
  own.add_folder("/w/.pilotfish");
  own.expose("/w/.pilotfish/attachments/mine");
  EXPECT_FALSE(own.covers("/w/.pilotfish/attachments/mine/a.txt"));
  EXPECT_TRUE(own.covers("/w/.pilotfish/attachments/theirs/b.txt"));
  EXPECT_TRUE(own.covers("/w/.pilotfish/index.db"));
  EXPECT_TRUE(own.exposes_under("/w/.pilotfish"));
  EXPECT_FALSE(own.exposes_under("/w/src"));
}

TEST(OwnFiles, RelativeAndSymlinkedPathsAreMadeAbsoluteAndReal) {
  test::TempDir dir;
  ASSERT_EQ(::mkdir((dir.path() + "/real").c_str(), 0755), 0);
  ASSERT_EQ(::symlink((dir.path() + "/real").c_str(), (dir.path() + "/link").c_str()), 0);
  OwnFiles own;
  own.add_store(dir.path() + "/link/./sub/../index.db");  // index.db need not exist yet
  EXPECT_TRUE(own.covers(absolute_path(dir.path()) + "/real/index.db"));
  EXPECT_TRUE(own.covers(absolute_path(dir.path()) + "/real/index.db-wal"));
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
  ASSERT_EQ(::chdir(dir.path().c_str()), 0);
  OwnFiles rel;
  rel.add_file("real/pilotfish.json");
  ASSERT_EQ(::chdir(cwd), 0);
  EXPECT_TRUE(rel.covers(absolute_path(dir.path()) + "/real/pilotfish.json"));
}

TEST(OwnFiles, AbsolutePathFoldsDotsAboveTheRoot) {
  EXPECT_EQ(absolute_path("/../../etc/../usr/./bin"), "/usr/bin");
  EXPECT_EQ(absolute_path("/nonexistent-pf/a/../b"), "/nonexistent-pf/b");
}

}  // namespace
}  // namespace pf
