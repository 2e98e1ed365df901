// The logger (src/core/log.cpp): the line formats, secrets masked in every line, a log file
// rotated by size under a burst of lines from several threads (gzipped, the oldest dropped, no
// line cut or interleaved), and the config's "logging" section applied by `pilotfish serve`.
#include "core/log.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "core/fs.h"
#include "test_util.h"

namespace pf {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string file_text(const std::string& path) {
  try {
    return read_file(path);
  } catch (const Error&) {
    return "";
  }
}

std::string gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return "";
  std::string out;
  char buf[4096];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

// Restores the default sink and level after each test.
class LogTest : public ::testing::Test {
 protected:
  void TearDown() override {
    log::set_sink({});
    log::set_level(log::Level::kWarn);
  }
  test::TempDir dir_;
};

TEST_F(LogTest, SecretsAreMaskedWhateverTheirShape) {
  struct Case {
    std::string in, out;
  };
  std::vector<Case> cases = {
      {"Authorization: Bearer abc.def-123456", "Authorization: [redacted]"},
      {"{\"authorization\":\"Basic dXNlcjpwYXNz\",\"x\":1}", "{\"authorization\":\"[redacted]\",\"x\":1}"},
      {"headers x-api-key: k-1234567890abcdef\nnext", "headers x-api-key: [redacted]\nnext"},
      {"api-key=0123456789abcdef0123", "api-key=[redacted]"},
      {"sent bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0 to it", "sent bearer [redacted] to it"},
      {"key sk-proj-ABCDEFGHIJKLMNOPqrstuv failed", "key sk-[redacted] failed"},
      {"slack xoxb-1234-5678-abcdefghijkl and xapp-1-A0B1C2D3E4F5-99", "slack xoxb-[redacted] and xapp-[redacted]"},
      {"git ghp_0123456789abcdefghij0123 glpat-abcdefghijklmnop", "git ghp_[redacted] glpat-[redacted]"},
      {"GET https://h/v1/models?key=AIzaSyA-123&alt=json", "GET https://h/v1/models?key=[redacted]&alt=json"},
      {"wss://h/ws?access_token=tok123&x=1", "wss://h/ws?access_token=[redacted]&x=1"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(log::redact_secrets(c.in), c.out) << c.in;
    EXPECT_EQ(log::redact_secrets(c.out), c.out) << c.out;  // masking twice changes nothing
  }
  // What only looks like one is left alone.
  for (std::string plain : {"task-sk-1 done", "the bearer of news", "monkey=3", "?keys=2",
                            "sk-short", "desk-0123456789abcdef"})
    EXPECT_EQ(log::redact_secrets(plain), plain);
}

TEST_F(LogTest, TextAndJsonLines) {
  std::string path = dir_ / "pf.log";
  log::set_sink({path, 1 << 20, 3, false});
  log::warn("bridge", "turn failed: Authorization: Bearer sk-abcdefghijklmnop0123");
  log::info("bridge", "not written at warn");
  log::set_sink({path, 1 << 20, 3, true});
  log::error("http", "a \"quoted\" message");
  std::vector<std::string> lines = lines_of(read_file(path));
  ASSERT_EQ(lines.size(), 2u) << read_file(path);
  EXPECT_TRUE(std::regex_match(lines[0], std::regex(R"(\d\d:\d\d:\d\d\.\d\d\d WARN \[bridge\] turn failed: Authorization: \[redacted\])")))
      << lines[0];
  nlohmann::json j = nlohmann::json::parse(lines[1]);
  EXPECT_EQ(j["level"], "error");
  EXPECT_EQ(j["tag"], "http");
  EXPECT_EQ(j["message"], "a \"quoted\" message");
  EXPECT_TRUE(std::regex_match(j["time"].get<std::string>(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d\d\dZ)")));
  EXPECT_THROW(log::set_sink({dir_ / "no/such/folder/pf.log", 1 << 20, 3, false}), Error);
}

// 4 threads x 2,000 lines into a file rotated at 16 KiB: the file and the 3 gzipped ones stay
// within the size, a fourth is never kept, and every line kept is whole; one thread's lines
// run in order from the oldest file to the newest, and the newest line is in the open file.
TEST_F(LogTest, ABurstOfLinesRotatesIntoGzippedFiles) {
  std::string path = dir_ / "pf.log";
  log::set_sink({path, 16 << 10, 3, false});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t] {
      std::string tag = "t";
      tag += std::to_string(t);
      for (int i = 0; i < 2000; ++i) {
        std::string line = "line ";
        line += std::to_string(i);
        line += " of a burst";
        log::warn(tag, line);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_FALSE(fs::exists(path + ".4.gz"));
  std::vector<std::string> kept;
  for (std::string f : {path + ".3.gz", path + ".2.gz", path + ".1.gz", path}) {
    ASSERT_TRUE(fs::exists(f)) << f;
    std::string text = f == path ? read_file(f) : gunzip(f);
    EXPECT_LE(text.size(), 16u << 10) << f;
    if (f != path) {
      EXPECT_GT(text.size(), 8u << 10) << f;  // rotated when (nearly) full
    }
    for (const std::string& l : lines_of(text)) kept.push_back(l);
  }
  std::regex whole(R"(\d\d:\d\d:\d\d\.\d\d\d WARN \[t\d\] line (\d+) of a burst)");
  int last = -1;
  for (const std::string& l : kept) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(l, m, whole)) << l;
    if (l.find("[t0]") == std::string::npos) continue;
    int n = std::stoi(m[1]);
    EXPECT_GT(n, last);
    last = n;
  }
  ASSERT_FALSE(kept.empty());
  EXPECT_NE(kept.back().find("line 1999 of a burst"), std::string::npos);  // the last one written
}

// `pilotfish serve` with a "logging" section: its lines go to the file, in JSON, at the level
// the section names; stderr gets none of them. A bad section is refused before it starts.
TEST_F(LogTest, ServeWritesWhereTheConfigSays) {
  std::string cfg = dir_ / "c.json", path = dir_ / "logs/pf.log";
  fs::create_directories(dir_ / "logs");
  test::write_file(cfg, "{\"logging\": {\"file\": \"" + path +
                            "\", \"level\": \"info\", \"format\": \"json\", \"maxSizeMb\": 1}}");
  {
    test::ServeProcess serve({"--db", dir_ / "a.db", "--config", cfg, "--no-auth"});
    for (int i = 0; i < 200 && file_text(path).find("listening on") == std::string::npos; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    ASSERT_NE(file_text(path).find("listening on"), std::string::npos) << serve.log();
    EXPECT_EQ(serve.log().find("listening on"), std::string::npos) << serve.log();
  }
  nlohmann::json first = nlohmann::json::parse(lines_of(read_file(path)).at(0));
  EXPECT_EQ(first["level"], "info");
  test::write_file(cfg, "{\"logging\": {\"format\": \"xml\"}}");
  auto r = test::run({test::pilotfish_bin(), "serve", "--db", dir_ / "a.db", "--config", cfg});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("logging.format: expected \"text\" or \"json\""), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pf
