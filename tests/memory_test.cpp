// MEMORY.md upkeep (src/bridge/memory.cpp): compaction summaries appended after a backup, and a
// consolidation that writes only a short enough answer to an unchanged, unlocked file.
#include "bridge/memory.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <thread>

#include "core/fs.h"
#include "test_util.h"

namespace pf {
namespace {

const std::string kNotes =
    "# Notes\n\n## Build\n- `bash scripts/build.sh` builds; PGO is on by default.\n\n"
    "## Compaction Summary [2026-11-30T10:00:00Z]\n- retries live in src/core/retry.h\n";

TEST(Memory, ACompactionSummaryIsAppendedAfterABackup) {
  test::TempDir ws;
  append_compaction_summary(ws.path(), "- first summary");
  std::string first = read_file(ws / "MEMORY.md");
  EXPECT_EQ(first.rfind("## Compaction Summary [", 0), 0u) << first;
  EXPECT_NE(first.find("]\n\n- first summary\n"), std::string::npos);
  struct stat st {};
  EXPECT_NE(::stat((ws / ".memory/MEMORY.md.bak").c_str(), &st), 0);  // nothing to back up yet
  append_compaction_summary(ws.path(), "- second summary\n");
  std::string both = read_file(ws / "MEMORY.md");
  EXPECT_EQ(both.find(first), 0u);
  EXPECT_NE(both.find("\n\n## Compaction Summary ["), std::string::npos);
  EXPECT_NE(both.find("- second summary\n"), std::string::npos);
  EXPECT_EQ(read_file(ws / ".memory/MEMORY.md.bak"), first);
}

TEST(Memory, ConsolidationWritesTheModelsShorterFile) {
  test::TempDir ws;
  test::write_file(ws / "MEMORY.md", kNotes);
  std::string asked;
  auto outcome = consolidate_memory(ws.path(), [&](const std::string& memory) -> std::optional<std::string> {
    asked = memory;
    return "```markdown\n# Notes\n\n## Build\n- build with scripts/build.sh\n- retries: src/core/retry.h\n```";
  });
  EXPECT_EQ(outcome, ConsolidateOutcome::kWritten);
  EXPECT_EQ(asked, kNotes);
  EXPECT_EQ(read_file(ws / "MEMORY.md"), "# Notes\n\n## Build\n- build with scripts/build.sh\n- retries: src/core/retry.h\n");
  EXPECT_EQ(read_file(ws / ".memory/MEMORY.md.bak"), kNotes);
}

TEST(Memory, ConsolidationKeepsTheFileWhenItShould) {
  test::TempDir ws;
  auto fixed = [](std::string answer) {
    return [answer](const std::string&) -> std::optional<std::string> { return answer; };
  };
  EXPECT_EQ(consolidate_memory(ws.path(), fixed("x")), ConsolidateOutcome::kMissing);
  test::write_file(ws / "MEMORY.md", "# tiny\n");
  EXPECT_EQ(consolidate_memory(ws.path(), fixed("x")), ConsolidateOutcome::kTooSmall);
  test::write_file(ws / "MEMORY.md", kNotes);
  std::string long_answer;
  for (int i = 0; i < 200; ++i) long_answer += "- line " + std::to_string(i) + "\n";
  EXPECT_EQ(consolidate_memory(ws.path(), fixed(long_answer)), ConsolidateOutcome::kTooLong);
  EXPECT_EQ(consolidate_memory(ws.path(), [](const std::string&) { return std::optional<std::string>(); }),
            ConsolidateOutcome::kModelFailed);
  // The agent wrote the file while the model worked: its version stays.
  auto outcome = consolidate_memory(ws.path(), [&](const std::string&) -> std::optional<std::string> {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    test::write_file(ws / "MEMORY.md", kNotes + "- added by the agent\n");
    return "# short\n";
  });
  EXPECT_EQ(outcome, ConsolidateOutcome::kChanged);
  EXPECT_EQ(read_file(ws / "MEMORY.md"), kNotes + "- added by the agent\n");
}

TEST(Memory, AConsolidationSkipsABusyWorkspaceAndACompactionWaitsForIt) {
  test::TempDir ws;
  test::write_file(ws / "MEMORY.md", kNotes);
  std::atomic<bool> inside{false}, release{false};
  std::thread slow([&] {
    consolidate_memory(ws.path(), [&](const std::string&) -> std::optional<std::string> {
      inside = true;
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return "# merged\n";
    });
  });
  while (!inside) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(consolidate_memory(ws.path(), [](const std::string&) { return std::optional<std::string>("x"); }),
            ConsolidateOutcome::kBusy);
  std::thread compaction([&] { append_compaction_summary(ws.path(), "- kept"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  release = true;
  slow.join();
  compaction.join();
  // The compaction waited for the consolidation, then appended to its result: nothing lost.
  std::string text = read_file(ws / "MEMORY.md");
  EXPECT_EQ(text.rfind("# merged\n", 0), 0u) << text;
  EXPECT_NE(text.find("- kept"), std::string::npos);
}

}  // namespace
}  // namespace pf
