// An index depends only on the content, never on how busy the machine is: the same corpus
// indexed by the real `pilotfish index` with and without a tight CPU quota on the indexing
// process (a cgroup the test makes: v1 cpu.cfs_quota_us or v2 cpu.max) gives byte-identical
// chunk tables (before the parse budget counted work, the quota made files over a wall-clock
// budget fall back to line windows; skipped, saying why, where no cgroup with a quota can be
// made). And a file over the work budget is counted, with the reason, by `index` and `stats`.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_util.h"

namespace pf {
namespace {

namespace fs = std::filesystem;

test::CommandResult pf(std::vector<std::string> args) {
  return test::run_pilotfish(std::move(args));
}

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  f.flush();
  return static_cast<bool>(f);
}

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// This process's cgroup in the hierarchy of `controller` ("" for v2's), from /proc/self/cgroup.
std::string own_cgroup(const std::string& controller) {
  std::istringstream lines(read_text("/proc/self/cgroup"));
  for (std::string line; std::getline(lines, line);) {
    size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    // The controllers as ",cpu,cpuacct," (not "," + s: GCC 12 reports a false -Wrestrict there).
    std::string list(1, ',');
    list.append(line, a + 1, b - a - 1).push_back(',');
    std::string want(1, ',');
    want.append(controller).push_back(',');
    if (controller.empty() ? list == ",," : list.find(want) != std::string::npos)
      return line.substr(b + 1);
  }
  return "/";
}

// A cgroup holding at most `quota_us` of CPU time per 100 ms, removed when the object dies.
// usable() is false, with why() saying so, where none could be made.
class CpuQuotaGroup {
 public:
  explicit CpuQuotaGroup(int quota_us) {
    std::istringstream mounts(read_text("/proc/self/mountinfo"));
    std::string v1, v2;
    for (std::string line; std::getline(mounts, line);) {
      std::istringstream f(line);
      std::string id, parent, dev, root, point, opts, field;
      f >> id >> parent >> dev >> root >> point >> opts;
      while (f >> field && field != "-") {
      }
      std::string type, source, super;
      f >> type >> source >> super;
      std::string options(1, ',');
      options.append(super).push_back(',');
      if (type == "cgroup" && options.find(",cpu,") != std::string::npos) v1 = point;
      if (type == "cgroup2") v2 = point;
    }
    std::string name = "pilotfish-quota-test-" + std::to_string(::getpid());
    if (!v1.empty()) {
      dir_ = v1 + own_cgroup("cpu") + "/" + name;
      if (make() && write_text(dir_ + "/cpu.cfs_period_us", "100000") &&
          write_text(dir_ + "/cpu.cfs_quota_us", std::to_string(quota_us)))
        procs_ = dir_ + "/tasks";
      else
        why_ = "cannot make a cgroup with cpu.cfs_quota_us under " + v1 + " (not root?)";
    } else if (!v2.empty() &&
               read_text(v2 + "/cgroup.controllers").find("cpu") != std::string::npos) {
      std::string parent = v2 + own_cgroup("");
      write_text(parent + "/cgroup.subtree_control", "+cpu");
      dir_ = parent + "/" + name;
      if (make() && write_text(dir_ + "/cpu.max", std::to_string(quota_us) + " 100000"))
        procs_ = dir_ + "/cgroup.procs";
      else
        why_ = "cannot make a cgroup with cpu.max under " + parent +
               " (not root, or the cpu controller is not delegated there)";
    } else {
      why_ = "no cgroup v1 cpu controller and no cgroup v2 with cpu is mounted";
    }
  }
  ~CpuQuotaGroup() {
    if (made_) ::rmdir(dir_.c_str());  // empty again: its only process has exited
  }
  bool usable() const { return !procs_.empty(); }
  const std::string& why() const { return why_; }
  // Where a process writes its pid to join the group.
  const std::string& procs() const { return procs_; }
  // Periods in which the group was held back by its quota so far (cpu.stat nr_throttled).
  long throttled() const {
    std::istringstream stat(read_text(dir_ + "/cpu.stat"));
    std::string key;
    long value = 0;
    while (stat >> key >> value)
      if (key == "nr_throttled") return value;
    return 0;
  }

 private:
  bool make() {
    std::error_code ec;
    made_ = fs::create_directory(dir_, ec) && !ec;
    return made_;
  }
  std::string dir_, procs_, why_;
  bool made_ = false;
};

// A corpus of ordinary TypeScript: each file some 40 KB of classes, methods and functions, so
// that parsing one takes about 10 ms of CPU, over the old wall-clock budget (200 ms plus
// 10 us a byte) under a quota of 2% of a CPU shared by four indexing threads.
void make_corpus(const std::string& root, int files) {
  for (int f = 0; f < files; ++f) {
    std::string s = "import { Injectable } from '@nestjs/common'\n\n";
    for (int c = 0; s.size() < 40000; ++c) {
      std::string n = std::to_string(f) + "_" + std::to_string(c);
      s += "/** Service " + n + ": keeps the cache of its records. */\n@Injectable()\n"
           "export class Service" + n +
           " {\n  private readonly cache = new Map<string, number>()\n";
      for (int m = 0; m < 6; ++m) {
        std::string k = std::to_string(m);
        s += "  /** Looks up entry " + k + ". */\n  lookup" + k + "(key: string, fallback = " + k +
             "): number {\n    const hit = this.cache.get(`${key}:" + k + "`)\n"
             "    if (hit === undefined) {\n      this.cache.set(key, fallback * " + k + ")\n"
             "      return fallback\n    }\n    return hit > " + k + " ? hit : [hit, " + k +
             "].reduce((a, b) => a + b, 0)\n  }\n";
      }
      s += "}\n\nexport function make" + n + "(xs: number[]): Service" + n +
           " {\n  const s = new Service" + n + "()\n  for (const x of xs) s.lookup0(String(x))\n"
           "  return s\n}\n\n";
    }
    test::write_file(root + "/src/m" + std::to_string(f) + ".ts", s);
  }
}

// Every chunk's content and metadata, ordered by path and lines; no ids or timestamps.
std::string chunk_table(const std::string& db) {
  sqlite3* h = nullptr;
  std::string out;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(h);
    return "cannot open " + db;
  }
  sqlite3_stmt* st = nullptr;
  const char* sql =
      "SELECT path, startLine, endLine, chunkType, language, coalesce(functionName,''), "
      "coalesce(className,''), coalesce(symbol,''), coalesce(heading_path,''), tokens, "
      "content_hash, content FROM copilot_code_chunks ORDER BY path, startLine, endLine";
  if (sqlite3_prepare_v2(h, sql, -1, &st, nullptr) != SQLITE_OK) {
    out = std::string("cannot read chunks: ") + sqlite3_errmsg(h);
  } else {
    while (sqlite3_step(st) == SQLITE_ROW) {
      for (int i = 0; i < sqlite3_column_count(st); ++i) {
        const unsigned char* v = sqlite3_column_text(st, i);
        out += v ? reinterpret_cast<const char*>(v) : "";
        out += '\x1f';
      }
      out += '\x1e';
    }
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  return out;
}

// The paths whose chunks differ between two tables, for a readable failure.
std::string differing_paths(const std::string& a, const std::string& b) {
  auto by_path = [](const std::string& t) {
    std::map<std::string, std::string> m;
    std::istringstream rows(t);
    for (std::string row; std::getline(rows, row, '\x1e');)
      m[row.substr(0, row.find('\x1f'))] += row;
    return m;
  };
  auto ma = by_path(a), mb = by_path(b);
  std::string out;
  for (const auto& [path, rows] : ma)
    if (mb[path] != rows) out += path + " ";
  return out;
}

TEST(IndexCpuQuota, ChunksAreTheSameUnderATightCpuQuota) {
  CpuQuotaGroup group(2000);  // 2% of one CPU
  if (!group.usable()) GTEST_SKIP() << "no CPU quota can be set here: " << group.why();
  test::TempDir repo, tmp;
  make_corpus(repo.path(), 8);
  const std::string free_db = tmp / "free.db", quota_db = tmp / "quota.db";
  auto index = [&](const std::string& db, const std::string& join) {
    std::string cmd = join + "exec timeout 300 '" + test::pilotfish_bin() + "' index '" +
                      repo.path() + "' --db '" + db + "' --threads 4 --json > '" + db +
                      ".out' 2>&1";
    int rc = test::shell(cmd);
    EXPECT_EQ(rc, 0) << read_text(db + ".out");
    return nlohmann::json::parse(read_text(db + ".out"), nullptr, false);
  };
  auto free_run = index(free_db, "");
  auto started = std::chrono::steady_clock::now();
  long throttled_before = group.throttled();
  auto quota_run = index(quota_db, "echo $$ > '" + group.procs() + "' && ");
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_GT(group.throttled(), throttled_before) << "the quota never held the indexer back";
  ASSERT_TRUE(free_run.is_object() && quota_run.is_object());
  EXPECT_EQ(free_run["indexed"], 8);
  EXPECT_EQ(quota_run["indexed"], 8);
  EXPECT_EQ(free_run["fallbacks"], 0);
  EXPECT_EQ(quota_run["fallbacks"], 0) << "files fell back to line windows under the quota";
  std::string a = chunk_table(free_db), b = chunk_table(quota_db);
  EXPECT_GT(free_run["chunks"].get<int>(), 8 * 20);
  EXPECT_TRUE(a == b) << "chunk tables differ (" << a.size() << " and " << b.size()
                      << " bytes) in: " << differing_paths(a, b);
  std::printf("indexed %d chunks in %.1f s under the quota (%.2f s free)\n",
              quota_run["chunks"].get<int>(), seconds, free_run["seconds"].get<double>());
}

// A file whose parse went over its work budget is counted, with the reason, by `index` and by
// `stats` (text and JSON); the count goes when the file parses again.
TEST(IndexFallbacks, CountedByReasonByIndexAndStats) {
  test::TempDir repo, tmp;
  test::write_file(repo / "src/ok.ts", "export function ok() {\n  return 1\n}\n");
  test::write_file(repo / "docs/guide.md", "# Guide\n\nText.\n");
  test::write_file(repo / "src/patho.tsx",  // error recovery explodes on it in the TSX grammar
                   "async (a = (b = (c (= 1)) => 2) => 3\nasync (a = (b = (c = 1)) => 2) => 3\n"
                   "async (a = (b} = (c = 1)) => 2) => 3\n");
  std::string db = tmp / "i.db";
  auto r = pf({"index", repo.path(), "--db", db, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["fallbacks"], 1);
  r = pf({"stats", "--db", db, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["fallbacks"],
            nlohmann::json({{"parse over its work budget", 1}}));
  r = pf({"stats", "--db", db});
  EXPECT_NE(r.out.find("1 files in line windows"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("parse over its work budget: 1"), std::string::npos) << r.out;
  r = pf({"index", repo.path(), "--db", db});
  EXPECT_NE(r.out.find("1 indexed, 2 unchanged, 0 removed, 1 in line windows"), std::string::npos)
      << r.out;
  test::write_file(repo / "src/patho.tsx", "export const fixed = 1\n");
  ASSERT_EQ(pf({"index", repo.path(), "--db", db}).exit_code, 0);
  r = pf({"stats", "--db", db, "--json"});
  EXPECT_EQ(nlohmann::json::parse(r.out)["fallbacks"], nlohmann::json::object());
  EXPECT_NE(pf({"stats", "--db", db}).out.find("0 files in line windows"), std::string::npos);
}

}  // namespace
}  // namespace pf
