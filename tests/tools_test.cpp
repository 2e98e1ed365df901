// The repository tools: what they return, and that no path variant reaches outside the
// repository or into a secret (a generated list of several hundred escape attempts through
// read_file and list_directory).
#include <gtest/gtest.h>
#include <unistd.h>

#include "agent/tools.h"
#include "index/indexer.h"
#include "test_util.h"

namespace pf {
namespace {

class ToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_file(outside_ / "secret-outside.txt", "OUTSIDE-MARKER\n");
    test::write_file(repo_ / "lib/pool.js",
                     "class Pool {\n  getDispatcher () {\n    return this.clients[0]\n  }\n}\n");
    test::write_file(repo_ / "docs/Pool.md", "# Pool\n\nPools clients.\n");
    test::write_file(repo_ / ".env", "TOKEN=INSIDE-SECRET\n");
    test::write_file(repo_ / "secrets/key.txt", "INSIDE-SECRET\n");
    test::write_file(repo_ / "config/id_rsa", "INSIDE-SECRET\n");
    test::write_file(repo_ / "lib/keys.js", "const k = `-----BEGIN RSA PRIVATE KEY-----\n" +
                                                std::string(64, 'A') + "\n`\n");
    std::string big;
    for (int i = 1; i <= 1000; ++i) big += "line " + std::to_string(i) + "\n";
    test::write_file(repo_ / "lib/big.txt", big);
    symlink((outside_ / "secret-outside.txt").c_str(), (repo_ / "lib/escape-link").c_str());
    symlink(outside_.path().c_str(), (repo_ / "outside-dir").c_str());
    symlink((repo_ / ".env").c_str(), (repo_ / "lib/env-link").c_str());
    store_ = open_sqlite_store(db_ / "t.db", OpenMode::kReadWrite);
    IndexOptions opt;
    opt.root = repo_.path();
    index_repository(*store_, opt);
    HybridOptions search;
    search.mode = SearchMode::kLexical;
    tools_ = std::make_unique<RepositoryTools>(repo_.path(), search, nullptr);
  }
  test::TempDir outside_, repo_, db_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<RepositoryTools> tools_;
};

TEST_F(ToolsTest, ReadFileWholeAndByLines) {
  auto r = tools_->read_file("lib/pool.js", std::nullopt, std::nullopt);
  ASSERT_FALSE(r.contains("error")) << r.dump();
  EXPECT_EQ(r["lineCount"], 5);
  EXPECT_EQ(r["filePath"], "lib/pool.js");
  r = tools_->read_file("./lib/pool.js", 2, 3);
  EXPECT_EQ(r["content"], "  getDispatcher () {\n    return this.clients[0]\n");
  r = tools_->call("read_file", R"({"filePath": "lib/big.txt"})", store_.get());
  EXPECT_EQ(r["endLine"], 400);
  EXPECT_TRUE(r.contains("truncated"));
  EXPECT_TRUE(tools_->call("read_file", "{}", store_.get()).contains("error"));
  EXPECT_TRUE(tools_->call("read_file", "not json", store_.get()).contains("error"));
  EXPECT_TRUE(tools_->read_file("lib/keys.js", std::nullopt, std::nullopt)
                  .contains("error"));  // secret content
  EXPECT_TRUE(
      tools_->read_file("lib", std::nullopt, std::nullopt).contains("error"));  // a directory
}

TEST_F(ToolsTest, ListDirectoryHidesSecretsAndGitInternals) {
  auto r = tools_->list_directory(".");
  ASSERT_FALSE(r.contains("error")) << r.dump();
  std::vector<std::string> names;
  for (auto& e : r["entries"]) names.push_back(e["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"config", "docs", "lib", "outside-dir"}));
  r = tools_->list_directory("lib");
  EXPECT_EQ(r["entries"][0]["path"], "lib/big.txt");
  EXPECT_TRUE(tools_->list_directory("lib/pool.js").contains("error"));  // a file, not a crash
}

TEST_F(ToolsTest, GrepAndSearchCode) {
  auto r = tools_->grep("getDispatcher", "");
  ASSERT_EQ(r["count"], 1) << r.dump();
  EXPECT_EQ(r["matches"][0]["path"], "lib/pool.js");
  EXPECT_EQ(r["matches"][0]["line"], 2);
  EXPECT_EQ(tools_->grep("INSIDE-SECRET", "")["count"], 0);   // secrets are not searched
  EXPECT_EQ(tools_->grep("line \\d+", "lib")["count"], 100);  // capped
  EXPECT_TRUE(tools_->grep("line", "lib")["truncated"].is_string());
  EXPECT_TRUE(tools_->grep("(unclosed", "").contains("error"));
  EXPECT_TRUE(tools_->grep("x", "../").contains("error"));
  auto s = tools_->call("search_code", R"({"query": "pool dispatcher", "limit": 3})", store_.get());
  ASSERT_FALSE(s["results"].empty()) << s.dump();
  EXPECT_EQ(s["results"][0]["path"], "lib/pool.js");
  EXPECT_TRUE(tools_->call("rm_rf", "{}", store_.get()).contains("error"));
}

// The pattern comes from a model, and repository text can steer a model. "(a*)*b" backtracks
// exponentially in std::regex (18 'a's: over a minute) and long lines overflowed its recursive
// matcher; RE2 settles each line in one pass.
TEST_F(ToolsTest, GrepPatternsCannotHangOrCrashTheSearch) {
  test::write_file(repo_ / "lib/long.js",
                   "// " + std::string(900, 'a') + "\n" + std::string(900, 'a') + "b\n");
  auto r = tools_->grep("(a*)*b", "lib/long.js");
  ASSERT_FALSE(r.contains("error")) << r.dump();
  ASSERT_EQ(r["count"], 1) << r.dump();
  EXPECT_EQ(r["matches"][0]["line"], 2);
  EXPECT_EQ(tools_->grep("(x+x+)+y", "lib/long.js")["count"], 0);
  EXPECT_EQ(tools_->grep("(.*a){12}c", "lib/long.js")["count"], 0);
  // What RE2 does not offer is refused with a message, not run another way.
  EXPECT_NE(tools_->grep("(a)\\1", "").value("error", "").find("invalid regular expression"),
            std::string::npos);
  EXPECT_NE(tools_->grep("a(?=b)", "").value("error", "").find("invalid regular expression"),
            std::string::npos);
  EXPECT_EQ(tools_->grep("(?i)GETDISPATCHER", "")["count"], 1);
}

std::vector<std::string> escape_attempts() {
  std::vector<std::string> bases = {"../secret-outside.txt",
                                    "..",
                                    "../..",
                                    "/etc/passwd",
                                    "/etc",
                                    "~/.ssh",
                                    "lib/../../secret-outside.txt",
                                    "lib/escape-link",
                                    "outside-dir",
                                    "outside-dir/secret-outside.txt",
                                    ".env",
                                    "secrets/key.txt",
                                    "secrets",
                                    "config/id_rsa",
                                    "lib/env-link",
                                    ".git/config",
                                    "lib/./../../x"};
  std::vector<std::string> out;
  for (const auto& b : bases) {
    std::vector<std::string> forms = {b, "./" + b, b + "/", "lib/../" + b};
    for (const auto& f : forms) {
      out.push_back(f);
      std::string enc1, enc2, encall;
      for (char c : f) {
        enc1 += c == '.' ? std::string("%2e") : c == '/' ? std::string("%2f") : std::string(1, c);
        enc2 += c == '.' ? std::string("%2E") : c == '/' ? std::string("%2F") : std::string(1, c);
        char buf[4];
        snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
        encall += buf;
      }
      out.push_back(enc1);
      out.push_back(enc2);
      out.push_back(encall);
      out.push_back(f + std::string("\0", 1) + "lib/pool.js");
      out.push_back(std::string("lib/pool.js") + std::string("\0", 1) + f);
      out.push_back("//" + f);
      out.push_back("lib//../" + f);
    }
  }
  return out;
}

TEST_F(ToolsTest, NoPathVariantEscapesOrReadsASecret) {
  auto attempts = escape_attempts();
  ASSERT_GT(attempts.size(), 500u);
  for (const auto& a : attempts) {
    SCOPED_TRACE(a);
    auto r = tools_->read_file(a, std::nullopt, std::nullopt);
    std::string dump = r.dump();
    EXPECT_TRUE(r.contains("error")) << dump;
    EXPECT_EQ(dump.find("OUTSIDE-MARKER"), std::string::npos);
    EXPECT_EQ(dump.find("INSIDE-SECRET"), std::string::npos);
    auto l = tools_->list_directory(a);
    std::string ldump = l.dump();
    if (!l.contains("error")) {
      for (auto& e : l["entries"]) {
        EXPECT_NE(e["name"], "secret-outside.txt") << ldump;
        EXPECT_NE(e["name"], "key.txt") << ldump;
      }
      // Only the root itself may be listed this way ("lib/../" + "." forms).
      EXPECT_EQ(l["entries"].size(), 4u) << a << " " << ldump;
    }
  }
}

}  // namespace
}  // namespace pf

namespace pf {
namespace {

// pilotfish's own files inside the repository: a store folder, a config at the top, a lock
// file (text, so only the own-path rule keeps it out) and a pilotfish.json that was indexed.
class OwnFilesInRepoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_file(repo_ / "lib/a.js", "const lockMarker = 1\n");
    test::write_file(repo_ / "state/index.db.lock", "lockMarker 4242\n");
    test::write_file(repo_ / "pilotfish.json", "{\"lockMarker\": true}\n");
    test::write_file(repo_ / ".pilotfish/attachments/mine/note.txt", "lockMarker mine\n");
    test::write_file(repo_ / ".pilotfish/attachments/theirs/note.txt", "lockMarker theirs\n");
    store_ = open_sqlite_store(db_ / "t.db", OpenMode::kReadWrite);
    IndexOptions opt;
    opt.root = repo_.path();
    index_repository(*store_, opt);
    OwnFiles own;
    own.add_store(repo_ / "state/index.db");
    own.add_file(repo_ / "pilotfish.json");
    own.add_folder(repo_ / ".pilotfish");
    HybridOptions search;
    search.mode = SearchMode::kLexical;
    search.base.repo_id = store_->find_repository(absolute_path(repo_.path()))->id;
    tools_ = std::make_unique<RepositoryTools>(repo_.path(), search, nullptr, own);
  }
  test::TempDir repo_, db_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<RepositoryTools> tools_;
};

TEST_F(OwnFilesInRepoTest, ReadFileRefusesThem) {
  for (const char* p : {"state/index.db.lock", "pilotfish.json", "./state/../pilotfish.json",
                        ".pilotfish/attachments/theirs/note.txt", ".pilotfish/attachments/mine/note.txt"}) {
    auto r = tools_->read_file(p, std::nullopt, std::nullopt);
    ASSERT_TRUE(r.contains("error")) << p << ": " << r.dump();
  }
  EXPECT_FALSE(tools_->read_file("lib/a.js", std::nullopt, std::nullopt).contains("error"));
}

TEST_F(OwnFilesInRepoTest, ListingsLeaveThemOut) {
  auto top = tools_->list_directory(".");
  std::string names;
  for (const auto& e : top["entries"]) names += e["name"].get<std::string>() + " ";
  EXPECT_EQ(names, "lib state ") << top.dump();
  auto state = tools_->list_directory("state");
  EXPECT_EQ(state["count"], 0) << state.dump();
  EXPECT_TRUE(tools_->list_directory(".pilotfish").contains("error"));
}

TEST_F(OwnFilesInRepoTest, GrepAndSearchDoNotFindThem) {
  auto g = tools_->grep("lockMarker", "");
  ASSERT_EQ(g["count"], 1) << g.dump();
  EXPECT_EQ(g["matches"][0]["path"], "lib/a.js");
  auto s = tools_->search_code(*store_, "lockMarker", 10);
  for (const auto& r : s["results"]) EXPECT_EQ(r["path"], "lib/a.js") << s.dump();
}

TEST_F(OwnFilesInRepoTest, AChannelsTurnReadsItsOwnAttachmentsOnly) {
  ToolRegistry reg = tools_->registry_exposing(repo_ / ".pilotfish/attachments/mine");
  auto mine = reg.call("read_file", R"({"filePath": ".pilotfish/attachments/mine/note.txt"})", nullptr);
  EXPECT_EQ(mine.value("content", ""), "lockMarker mine\n") << mine.dump();
  auto theirs = reg.call("read_file", R"({"filePath": ".pilotfish/attachments/theirs/note.txt"})", nullptr);
  EXPECT_TRUE(theirs.contains("error")) << theirs.dump();
  auto listed = reg.call("list_directory", R"({"dirPath": ".pilotfish/attachments"})", nullptr);
  EXPECT_TRUE(listed.contains("error")) << listed.dump();
  // The shared registry still refuses them.
  EXPECT_TRUE(tools_->registry()
                  .call("read_file", R"({"filePath": ".pilotfish/attachments/mine/note.txt"})", nullptr)
                  .contains("error"));
}

}  // namespace
}  // namespace pf
