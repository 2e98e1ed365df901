// `pilotfish init` (cli/init.cpp) on a pseudo-terminal, every question answered wrongly first:
// against the scripted model server's /models and the Mattermost test server (the ping, the
// bot's token, channels by name); the config is merged into an existing one after a copy, holds
// only the names of the key variables and a hashed HTTP key, loads, and ends with config --check
// and bridge check. Then the same from flags (--yes), where a wrong flag is an error.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "bridge_fixture.h"
#include "core/fs.h"

namespace pf {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// pilotfish on a pseudo-terminal: what it wrote so far, and lines typed at it.
class Pty {
 public:
  explicit Pty(const std::vector<std::string>& args) {
    pid_ = forkpty(&fd_, nullptr, nullptr, nullptr);
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      _exit(127);
    }
  }
  ~Pty() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) ::close(fd_);
  }
  // Reads until fragment appears after what expect() consumed last (false after ms).
  bool expect(const std::string& fragment, int ms = 20000) {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    for (;;) {
      size_t at = out_.find(fragment, seen_);
      if (at != std::string::npos) {
        seen_ = at + fragment.size();
        return true;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !read_some(static_cast<int>(left.count()))) return false;
    }
  }
  void send(const std::string& line) {
    std::string l = line + "\n";
    EXPECT_EQ(::write(fd_, l.data(), l.size()), static_cast<ssize_t>(l.size()));
  }
  int wait() {
    while (read_some(200)) {
    }
    int status = 0;
    ::waitpid(pid_, &status, 0);
    exited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  const std::string& output() const { return out_; }

 private:
  bool read_some(int ms) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, ms) <= 0) return false;
    char buf[4096];
    ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n <= 0) return false;
    out_.append(buf, static_cast<size_t>(n));
    return true;
  }
  pid_t pid_ = -1;
  int fd_ = -1;
  bool exited_ = false;
  std::string out_;
  size_t seen_ = 0;
};

class InitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bot_ = mm_.user("copilot", true);
    alice_ = mm_.user("alice");
    town_ = mm_.call("POST", "/_test/channels",
                     {{"name", "town"}, {"type", "O"}, {"members", {bot_["id"], alice_["id"]}}})["id"];
    ::setenv("PF_INIT_MM_TOKEN", bot_["token"].get<std::string>().c_str(), 1);
    ::setenv("PF_INIT_OPENAI_KEY", "sk-test-key", 1);
    ::unsetenv("PF_INIT_UNSET");
    test::write_file(repo_ / "a.ts", "export const a = 1;\n");
    // An existing config: kept, merged into, copied first.
    test::write_file(dir_ / "pilotfish.json", R"({"retrieval": {"rewrite": false}})");
  }
  void TearDown() override {
    ::unsetenv("PF_INIT_MM_TOKEN");
    ::unsetenv("PF_INIT_OPENAI_KEY");
  }
  test::TempDir dir_, repo_;
  test::Mattermost mm_;
  json bot_, alice_;
  std::string town_;
};

TEST_F(InitTest, OnATerminalEveryWrongAnswerIsSaidAndAskedAgain) {
  // Offers "m" and "other", and answers only with the key the variable holds.
  test::ScriptedModelServer model("[]", "sk-test-key", {"--models", "m,other"});
  Pty t({test::pilotfish_bin(), "init", "--config", dir_ / "pilotfish.json"});
  auto answer = [&](const std::string& question, const std::string& wrong, const std::string& why,
                    const std::string& right) {
    ASSERT_TRUE(t.expect(question)) << t.output();
    t.send(wrong);
    ASSERT_TRUE(t.expect(why)) << t.output();
    ASSERT_TRUE(t.expect(question)) << t.output();
    t.send(right);
  };
  answer("Repository to answer about", dir_ / "missing", "is not a folder or a git URL", repo_.path());
  answer("Where the index store goes", dir_.path(), "is a folder", dir_ / "store/index.db");
  answer("Model provider", "gpt", "expected one of: openai, anthropic, ollama, none", "openai");
  answer("Its base URL", "api.example.com", "expected an http(s) URL", model.base_url());
  answer("holds its API key", "PF_INIT_UNSET", "$PF_INIT_UNSET is not set", "PF_INIT_OPENAI_KEY");
  ASSERT_TRUE(t.expect("offers")) << t.output();
  answer("Chat model", "no-such-model", "does not offer no-such-model", "m");
  answer("Protect the HTTP API with a key?", "maybe", "expected one of: yes, no", "yes");
  answer("Chat platform", "irc", "expected one of: mattermost, slack, none", "mattermost");
  answer("Mattermost server's URL", "http://127.0.0.1:9", "cannot reach it", mm_.url());
  answer("holds the bot's token", "not a name", "is not an environment variable name", "PF_INIT_MM_TOKEN");
  ASSERT_TRUE(t.expect("the bot is @copilot")) << t.output();
  answer("Channels to answer in", "town, nowhere", "no channel the bot can see is named: nowhere", "#town");
  answer("Who may talk to it", "", "name someone", "alice, bob");
  answer("Answer in channels when mentioned", "sometimes", "expected one of: mention, all", "all");
  int status = t.wait();
  const std::string& out = t.output();
  EXPECT_NE(out.find("Wrote " + (dir_ / "pilotfish.json")), std::string::npos) << out;
  EXPECT_NE(out.find("pilotfish config --check"), std::string::npos) << out;
  EXPECT_NE(out.find("pilotfish bridge check"), std::string::npos) << out;
  EXPECT_NE(out.find("--db " + (dir_ / "store/index.db")), std::string::npos) << out;
  EXPECT_EQ(status, 0) << out;  // both checks pass
  EXPECT_EQ(out.find("FAIL"), std::string::npos) << out;

  // The file: merged (the old key kept), only variable names, the key hashed; a copy of the old.
  json cfg = json::parse(read_file(dir_ / "pilotfish.json"));
  EXPECT_EQ(cfg["retrieval"]["rewrite"], false);
  EXPECT_EQ(cfg["server"]["repository"], fs::canonical(repo_.path()).string());
  EXPECT_EQ(cfg["providers"]["openai"]["apiKeyEnv"], "PF_INIT_OPENAI_KEY");
  EXPECT_EQ(cfg["defaults"]["chatModel"], "openai:m");
  EXPECT_EQ(cfg["bridge"]["platforms"]["mattermost"]["bots"]["copilot"]["tokenEnv"], "PF_INIT_MM_TOKEN");
  EXPECT_EQ(cfg["bridge"]["platforms"]["mattermost"]["bots"]["copilot"]["access"]["users"],
            json({"alice", "bob"}));
  EXPECT_EQ(cfg["bridge"]["defaults"]["triggerMode"], "all");
  ASSERT_EQ(cfg["bridge"]["channels"].size(), 1u);
  EXPECT_EQ(cfg["bridge"]["channels"][0]["id"], town_);
  std::string text = read_file(dir_ / "pilotfish.json");
  EXPECT_EQ(text.find("sk-test-key"), std::string::npos);
  EXPECT_EQ(text.find(bot_["token"].get<std::string>()), std::string::npos);
  size_t at = out.find("HTTP API key (shown once, only its hash is kept): ");
  ASSERT_NE(at, std::string::npos) << out;
  std::string key = out.substr(at + 50, out.find_first_of("\r\n", at + 50) - at - 50);
  EXPECT_EQ(text.find(key), std::string::npos);
  EXPECT_NE(text.find("\"sha256:"), std::string::npos);
  int backups = 0;
  for (const auto& e : fs::directory_iterator(dir_.path()))
    if (e.path().filename().string().rfind("pilotfish.json.bak-", 0) == 0) {
      ++backups;
      EXPECT_EQ(read_file(e.path()), R"({"retrieval": {"rewrite": false}})");
    }
  EXPECT_EQ(backups, 1);
  // It loads: the model resolves and the channel is there.
  auto check = test::run({test::pilotfish_bin(), "config", "--config", dir_ / "pilotfish.json"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

TEST_F(InitTest, FromFlagsNothingIsAskedAndAWrongFlagIsAnError) {
  auto r = test::run({test::pilotfish_bin(), "init", "--yes", "--config", dir_ / "flags.json",
                      "--repo", repo_.path(), "--http-key", "no", "--platform", "mattermost",
                      "--chat-url", mm_.url(), "--bot-token-env", "PF_INIT_MM_TOKEN",
                      "--channels", "town", "--users", "*"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  json cfg = json::parse(read_file(dir_ / "flags.json"));
  EXPECT_EQ(cfg["bridge"]["platforms"]["mattermost"]["bots"]["copilot"]["access"]["mode"], "open");
  EXPECT_FALSE(cfg["server"].contains("apiKeys"));
  EXPECT_FALSE(cfg.contains("providers"));
  r = test::run({test::pilotfish_bin(), "init", "--yes", "--config", dir_ / "bad.json", "--repo",
                 repo_.path(), "--platform", "mattermost", "--chat-url", mm_.url(),
                 "--bot-token-env", "PF_INIT_MM_TOKEN", "--channels", "nowhere", "--users", "*"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("no channel the bot can see is named: nowhere"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "bad.json"));
  // A config that is not JSON is left alone.
  test::write_file(dir_ / "broken.json", "{");
  r = test::run({test::pilotfish_bin(), "init", "--yes", "--config", dir_ / "broken.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(read_file(dir_ / "broken.json"), "{");
}

}  // namespace
}  // namespace pf
