// index/git_source.h: git URLs parsed and refused, clone folders, HEAD read from .git, and
// clones and fetches against a git server over HTTP (tests/servers/git_http_server.py, git's own
// http-backend) that asks for a token; then `pilotfish index URL`, `pilotfish stats` and a
// server's index job fetching before its run.
#include "index/git_source.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "core/config.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/json.h"
#include "net/http_client.h"
#include "runtime/answer_runtime.h"
#include "runtime/index_job.h"
#include "test_util.h"

namespace pf {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// git in dir, its output; fails the test when git does.
std::string git(const std::string& dir, const std::string& args) {
  auto r = test::run({"bash", "-c", "cd '" + dir + "' && git -c user.email=t@example.com "
                                        "-c user.name=t -c init.defaultBranch=main " + args});
  EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
  return trimmed(r.out);
}

TEST(GitUrlTest, WhatIsAUrlAndWhatIsRefused) {
  for (const char* url : {"https://github.com/o/r.git", "HTTP://h/x", "ssh://git@h:22/r",
                          "git://h/r", "file:///srv/r.git", "git@github.com:o/r.git"})
    EXPECT_TRUE(is_git_url(url)) << url;
  for (const char* not_url : {".", "/srv/repo", "repo", "./a@b:c", "ext::sh -c touch% /tmp/x",
                              "C:/x", "@h:r", "u@:r", "u@h:"})
    EXPECT_FALSE(is_git_url(not_url)) << not_url;

  GitSource s = parse_git_source("https://GitHub.com:443/Owner/Repo.git#release/1.2");
  EXPECT_EQ(s.url, "https://GitHub.com:443/Owner/Repo.git");
  EXPECT_EQ(s.host, "github.com");
  EXPECT_EQ(s.branch, "release/1.2");
  EXPECT_EQ(parse_git_source("https://h/r#a", "b").branch, "b");  // --branch wins
  EXPECT_EQ(parse_git_source("git@gitlab.example.com:group/sub/r.git").host, "gitlab.example.com");
  EXPECT_EQ(parse_git_source("https://user@h/r").host, "h");

  auto refused = [](const std::string& text, const std::string& branch, const std::string& why) {
    try {
      parse_git_source(text, branch);
      ADD_FAILURE() << text << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("s3cret"), std::string::npos) << e.what();
    }
  };
  refused("https://me:s3cret@github.com/o/r.git", "", "password in it");
  refused("/srv/repo", "", "not a git URL");
  refused("https://h/r", "--upload-pack=touch /tmp/x", "not a branch or tag");
  refused("https://h/r#a..b", "", "not a branch or tag");
  refused("https://h/r", "x.lock", "not a branch or tag");
  refused("https://h/r", "a b", "not a branch or tag");
  refused("https:///r", "", "names no host");
}

TEST(GitUrlTest, CloneFoldersAreHostAndPathInsideTheCloneDir) {
  EXPECT_EQ(clone_folder(parse_git_source("https://github.com/torvalds/linux.git"), "/w"),
            "/w/github.com/torvalds/linux");
  EXPECT_EQ(clone_folder(parse_git_source("git@github.com:o/r.git", "v6.12"), "/w"),
            "/w/github.com/o/r@v6.12");
  EXPECT_EQ(clone_folder(parse_git_source("https://tok@h:8443/a/../b/"), "/w"), "/w/h_8443/a/_/b");
  EXPECT_EQ(clone_folder(parse_git_source("file:///srv/x.git"), "/w"), "/w/local/srv/x");
  EXPECT_EQ(clone_folder(parse_git_source("https://h/r#feature/x"), "/w"), "/w/h/r@feature_x");
  ::setenv("XDG_DATA_HOME", "/data", 1);
  EXPECT_EQ(clone_folder(parse_git_source("https://h/r"), ""), "/data/pilotfish/workspaces/git/h/r");
  ::unsetenv("XDG_DATA_HOME");
}

TEST(GitHeadTest, ReadsLooseAndPackedRefsWorktreesAndSubfolders) {
  test::TempDir dir;
  std::string repo = dir / "repo";
  fs::create_directories(repo + "/src/deep");
  EXPECT_EQ(git_head(repo), "");  // not a work tree (the temporary folder is in none)
  git(repo, "init -q");
  EXPECT_EQ(git_head(repo), "");  // no commit yet
  test::write_file(repo + "/src/deep/a.txt", "one\n");
  git(repo, "add -A && git -c user.email=t@example.com -c user.name=t commit -qm one");
  std::string head = git(repo, "rev-parse HEAD");
  EXPECT_EQ(git_head(repo), head);
  EXPECT_EQ(git_head(repo + "/src/deep"), head);
  git(repo, "pack-refs --all");
  ASSERT_FALSE(fs::exists(repo + "/.git/refs/heads/main"));
  EXPECT_EQ(git_head(repo), head);
  git(repo, "checkout -q --detach");
  EXPECT_EQ(git_head(repo), head);
  git(repo, "checkout -q main && git worktree add -q -b other ../wt");
  test::write_file(dir / "wt/b.txt", "two\n");
  git(dir / "wt", "add -A && git -c user.email=t@example.com -c user.name=t commit -qm two");
  std::string other = git(dir / "wt", "rev-parse HEAD");
  EXPECT_NE(other, head);
  EXPECT_EQ(git_head(dir / "wt"), other);  // .git is a file naming the worktree's folder
  EXPECT_EQ(git_head(repo), head);
}

// A bare repository served over HTTP with a token, and a work tree that pushes to it.
class GitServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    origin_ = dir_ / "src";
    fs::create_directories(origin_);
    git(origin_, "init -q");
    test::write_file(origin_ + "/widget.ts", "export function alphaWidget() { return 1; }\n");
    test::write_file(origin_ + "/README.md", "# Widgets\n\nHow alpha widgets work.\n");
    commit("first");
    git(dir_.path(), "clone -q --bare src served/widgets.git");
    server_ = std::make_unique<test::PythonServer>(
        "git_http_server.py",
        std::vector<std::string>{dir_ / "served", "--token", "tok-123", "--log", dir_ / "requests"});
    url_ = "http://127.0.0.1:" + std::to_string(server_->port()) + "/widgets.git";
    ::setenv("PF_TEST_GIT_TOKEN", "tok-123", 1);
    config_.token_env["127.0.0.1"] = "PF_TEST_GIT_TOKEN";
    config_.timeout_seconds = 60;
  }
  void TearDown() override { ::unsetenv("PF_TEST_GIT_TOKEN"); }

  std::string commit(const std::string& message) {
    git(origin_, "add -A && git -c user.email=t@example.com -c user.name=t commit -qm " + message);
    return git(origin_, "rev-parse HEAD");
  }
  std::string push(const std::string& message) {
    std::string head = commit(message);
    git(origin_, "push -q ../served/widgets.git HEAD:main");
    return head;
  }

  test::TempDir dir_;
  std::string origin_, url_;
  std::unique_ptr<test::PythonServer> server_;
  GitConfig config_;
};

TEST_F(GitServerTest, ClonesWithTheTokenAndNeverWritesIt) {
  std::string dir = clone_folder(parse_git_source(url_), dir_ / "clones");
  GitSync s = sync_checkout(parse_git_source(url_), dir, config_);
  EXPECT_TRUE(s.cloned);
  EXPECT_EQ(s.commit, git(origin_, "rev-parse HEAD"));
  EXPECT_EQ(s.warning, "");
  EXPECT_TRUE(fs::exists(dir + "/widget.ts"));
  EXPECT_FALSE(fs::exists(dir + ".partial"));
  EXPECT_EQ(git(dir, "rev-parse --is-shallow-repository"), "true");
  EXPECT_EQ(test::shell("grep -rq tok-123 '" + dir + "/.git'"), 1);  // nowhere in the clone
  std::string log = read_file(dir_ / "requests");
  EXPECT_EQ(log.find("auth=no 200"), std::string::npos) << log;  // nothing served without it

  // Without the token: git's 401 becomes a clear error, no prompt, no half clone left.
  ::unsetenv("PF_TEST_GIT_TOKEN");
  std::string other = dir_ / "clones/other";
  try {
    sync_checkout(parse_git_source(url_), other, config_);
    ADD_FAILURE() << "cloned without the token";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot clone " + url_), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("terminal prompts disabled"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(other));
  EXPECT_FALSE(fs::exists(other + ".partial"));

  // The token goes to its own host only: another host's name gets no header.
  ::setenv("PF_TEST_GIT_TOKEN", "tok-123", 1);
  GitConfig elsewhere = config_;
  elsewhere.token_env = {{"github.com", "PF_TEST_GIT_TOKEN"}};
  EXPECT_THROW(sync_checkout(parse_git_source(url_), other, elsewhere), Error);

  // A folder that holds something else is refused, not fetched into.
  fs::create_directories(dir_ / "clones/plain");
  try {
    sync_checkout(parse_git_source(url_), dir_ / "clones/plain", config_);
    ADD_FAILURE() << "fetched into a plain folder";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("holds no clone, not of " + url_), std::string::npos)
        << e.what();
  }
}

TEST_F(GitServerTest, FetchesMoveForwardOnlyWhenNothingLocalIsLost) {
  std::string dir = dir_ / "clone";
  std::string first = sync_checkout(parse_git_source(url_), dir, config_).commit;

  GitSync same = sync_checkout(parse_git_source(url_), dir, config_);
  EXPECT_FALSE(same.cloned);
  EXPECT_EQ(same.before, first);
  EXPECT_EQ(same.commit, first);

  test::write_file(origin_ + "/widget.ts", "export function betaWidget() { return 2; }\n");
  std::string second = push("second");
  test::write_file(dir + "/notes.txt", "a file of our own\n");  // untracked: kept
  GitSync moved = sync_checkout(parse_git_source(url_), dir, config_);
  EXPECT_EQ(moved.before, first);
  EXPECT_EQ(moved.commit, second);
  EXPECT_EQ(moved.warning, "");
  EXPECT_NE(read_file(dir + "/widget.ts").find("betaWidget"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir + "/notes.txt"));

  // A local edit of a file the next commit changes: left as it is, and said why.
  test::write_file(dir + "/widget.ts", "// edited here\n");
  test::write_file(origin_ + "/widget.ts", "export function gammaWidget() {}\n");
  std::string third = push("third");
  GitSync blocked = sync_checkout(parse_git_source(url_), dir, config_);
  EXPECT_EQ(blocked.commit, second);
  EXPECT_NE(blocked.warning.find("local changes are in the way"), std::string::npos) << blocked.warning;
  EXPECT_EQ(read_file(dir + "/widget.ts"), "// edited here\n");

  // A commit made in the work tree: never reset away.
  git(dir, "checkout -q -- widget.ts && git -c user.email=t@example.com -c user.name=t commit -q "
           "--allow-empty -m mine");
  std::string mine = git(dir, "rev-parse HEAD");
  GitSync kept = sync_checkout(parse_git_source(url_), dir, config_);
  EXPECT_EQ(kept.commit, mine);
  EXPECT_NE(kept.warning.find("commits made in the work tree"), std::string::npos) << kept.warning;
  (void)third;

  // The server gone: the fetch fails, the work tree stays usable.
  server_.reset();
  GitSync offline = sync_checkout(parse_git_source(url_), dir, config_);
  EXPECT_EQ(offline.commit, mine);
  EXPECT_NE(offline.warning.find("the fetch failed"), std::string::npos) << offline.warning;
}

TEST_F(GitServerTest, IndexAUrlThenStatsShowTheCommit) {
  std::string config = dir_ / "config.json";
  test::write_file(config, json({{"git", {{"cloneDir", dir_ / "clones"},
                                          {"tokenEnv", {{"127.0.0.1", "PF_TEST_GIT_TOKEN"}}}}}})
                               .dump());
  std::string db = dir_ / "index.db";
  auto first = test::run_pilotfish({"index", url_, "--db", db, "--config", config, "--json"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  json report = parse_json(first.out);
  std::string clone = clone_folder(parse_git_source(url_), dir_ / "clones");
  EXPECT_EQ(report["root"], fs::canonical(clone).string());
  EXPECT_EQ(report["git"]["cloned"], true);
  EXPECT_EQ(report["commit"], git(origin_, "rev-parse HEAD"));
  EXPECT_EQ(report["indexed"], 2);

  test::write_file(origin_ + "/widget.ts", "export function betaWidget() { return 2; }\n");
  std::string second = push("second");
  auto again = test::run_pilotfish({"index", url_, "--db", db, "--config", config});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("fetched " + url_ + ": "), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("commit:  " + second), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("1 indexed, 1 unchanged"), std::string::npos) << again.out;

  auto found = test::run_pilotfish({"search", "betaWidget", "--db", db, "--json"});
  EXPECT_NE(found.out.find("widget.ts"), std::string::npos) << found.out;
  auto stats = test::run_pilotfish({"stats", "--db", db, "--json"});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_EQ(parse_json(stats.out)["repositories"][0]["commit"], second);
  auto text = test::run_pilotfish({"stats", "--db", db});
  EXPECT_NE(text.out.find("at commit " + second.substr(0, 12)), std::string::npos) << text.out;

  // The server gone: indexed as it is, and said so (not "no new commits").
  server_.reset();
  auto offline = test::run_pilotfish({"index", url_, "--db", db, "--config", config});
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  EXPECT_NE(offline.out.find("not updated: the fetch failed"), std::string::npos) << offline.out;
  EXPECT_EQ(offline.out.find("fetched "), std::string::npos) << offline.out;
  EXPECT_NE(offline.out.find("0 indexed, 2 unchanged"), std::string::npos) << offline.out;

  // A folder that is no work tree has no commit; a branch for a folder is a usage error.
  test::write_file(dir_ / "plain/a.md", "# A\n");
  auto plain = test::run_pilotfish({"index", dir_ / "plain", "--db", db, "--json"});
  EXPECT_EQ(parse_json(plain.out)["commit"], nullptr);
  auto branch = test::run_pilotfish({"index", dir_ / "plain", "--branch", "main", "--db", db});
  EXPECT_EQ(branch.exit_code, 2);
  EXPECT_NE(branch.err.find("--branch is for a git URL"), std::string::npos) << branch.err;
  auto password = test::run_pilotfish({"index", "https://u:hunter2@h/r.git", "--db", db});
  EXPECT_EQ(password.exit_code, 2);
  EXPECT_EQ(password.err.find("hunter2"), std::string::npos) << password.err;
}

TEST_F(GitServerTest, AServersIndexJobFetchesBeforeItsRun) {
  Config config;
  auto section = std::make_shared<GitConfig>(config_);
  section->clone_dir = dir_ / "clones";
  config.sections["git"] = section;
  // serve --repo URL: the clone is made at start and is the server's root.
  std::string clone = find_server_root(config, dir_ / "index.db", url_);
  EXPECT_EQ(clone, fs::canonical(clone_folder(parse_git_source(url_), dir_ / "clones")).string());
  EXPECT_TRUE(fs::exists(clone + "/widget.ts"));
  test::write_file(origin_ + "/later.ts", "export function laterWidget() {}\n");
  std::string second = push("second");

  IndexJob job(dir_ / "index.db", clone, config);
  job.fetch_before_each_run(parse_git_source(url_));
  ASSERT_TRUE(job.start("api"));
  for (int i = 0; i < 600 && job.running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  json last = job.status()["last"];
  EXPECT_EQ(last["ok"], true) << last.dump();
  EXPECT_EQ(last["git"]["commit"], second) << last.dump();
  EXPECT_EQ(last["commit"], second);
  EXPECT_TRUE(fs::exists(clone + "/later.ts"));
}

// GET or POST on serve's index route (no auth: a loopback server of its own).
json index_route(const test::ServeProcess& s, const std::string& method) {
  HttpRequest req;
  req.method = method;
  req.url = s.url() + "/v1/platform-copilot/index";
  req.timeout = std::chrono::milliseconds(10000);
  HttpResponse r = http_request(req);
  EXPECT_EQ(r.status, 200) << r.body;
  return parse_json(r.body);
}

json last_run(const test::ServeProcess& s, const std::string& trigger) {
  json st;
  for (int i = 0; i < 600; ++i) {
    st = index_route(s, "GET");
    if (!st["running"].get<bool>() && st["last"].is_object() && st["last"]["trigger"] == trigger)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return st["last"];
}

TEST_F(GitServerTest, ServeRepoUrlClonesAtStartAndFetchesBeforeARequestedRun) {
  std::string config = dir_ / "config.json";
  test::write_file(config, json({{"git", {{"cloneDir", dir_ / "clones"},
                                          {"tokenEnv", {{"127.0.0.1", "PF_TEST_GIT_TOKEN"}}}}}})
                               .dump());
  std::string first = git(origin_, "rev-parse HEAD");
  test::ServeProcess s({"--db", dir_ / "serve.db", "--config", config, "--repo", url_, "--no-auth"});
  json startup = last_run(s, "startup");
  EXPECT_EQ(startup["ok"], true) << startup.dump();
  EXPECT_EQ(startup["commit"], first) << startup.dump();

  test::write_file(origin_ + "/later.ts", "export function laterWidget() {}\n");
  std::string second = push("second");
  index_route(s, "POST");
  json api = last_run(s, "api");
  EXPECT_EQ(api["ok"], true) << api.dump();
  EXPECT_EQ(api["git"]["before"], first) << api.dump();
  EXPECT_EQ(api["git"]["commit"], second) << api.dump();
  EXPECT_EQ(api["commit"], second) << api.dump();
  EXPECT_EQ(api["indexed"], 1) << api.dump();
  EXPECT_EQ(s.stop(), 0);
}

TEST(GitConfigTest, TheSectionIsReadStrictly) {
  test::TempDir dir;
  auto load = [&](const std::string& text) {
    test::write_file(dir / "c.json", text);
    return load_config(dir / "c.json");
  };
  Config c = load(R"({"git": {"cloneDir": "~/clones", "timeoutSeconds": 60,
                              "tokenEnv": {"GitHub.com": "GITHUB_TOKEN"}}})");
  const GitConfig& g = git_config(c);
  EXPECT_EQ(g.clone_dir, home_dir() + "/clones");
  EXPECT_EQ(g.timeout_seconds, 60);
  EXPECT_EQ(g.token_env.at("github.com"), "GITHUB_TOKEN");
  EXPECT_EQ(git_config(load("{}")).timeout_seconds, 1800);
  for (const char* bad : {R"({"git": []})", R"({"git": {"cloneDirs": "x"}})",
                          R"({"git": {"timeoutSeconds": 0}})",
                          R"({"git": {"tokenEnv": {"https://github.com": "T"}}})",
                          R"({"git": {"tokenEnv": {"github.com": ""}}})"})
    EXPECT_THROW(load(bad), ConfigError) << bad;
}

}  // namespace
}  // namespace pf
