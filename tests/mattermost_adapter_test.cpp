// The Mattermost adapter through the real binary and the Mattermost test server: rate-limited
// and failing edits, malformed WebSocket frames, attachments with hostile names, DMs, thread
// triggers, several bots on one server, replays and the order of what they bring, replay
// cursors saved soon and at shutdown, and `pilotfish bridge check` / bad configurations.
#include <filesystem>
#include <fstream>

#include "bridge/state_store.h"
#include "bridge_fixture.h"

namespace pf {
namespace {

using nlohmann::json;
using test::BridgeTest;
using test::wait_for;

std::string base64(const std::string& in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  int val = 0, bits = -6;
  for (unsigned char c : in) {
    val = (val << 8) + c;
    bits += 8;
    while (bits >= 0) {
      out.push_back(t[(val >> bits) & 0x3F]);
      bits -= 6;
    }
  }
  if (bits > -6) out.push_back(t[((val << 8) >> (bits + 8)) & 0x3F]);
  while (out.size() % 4) out.push_back('=');
  return out;
}

TEST_F(BridgeTest, RateLimitedAndFailingEditsAreRetriedAndTheReplyCompletes) {
  // A streamed answer (2.5 s), so the reply is edited while it grows.
  test::ScriptedModelServer model(json::array({test::slow_chat(25, 0.1)}).dump());
  write_config(test::one_model(model), "a:m");
  auto bridge = start_bridge();
  // Two 429s (the real limiter's plain-text answer with reset headers), then a 500.
  mm_.call("POST", "/_test/fail",
           {{"method", "PUT"},
            {"path", "/posts/.*/patch"},
            {"status", 429},
            {"count", 2},
            {"retry_after_s", 1}});
  mm_.call("POST", "/_test/fail",
           {{"method", "PUT"}, {"path", "/posts/.*/patch"}, {"status", 500}, {"count", 1}});
  std::string id = mm_.post(alice_, channel_, "@copilot where is retryWithBackoff?")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "word24"); }, 20000)) << bridge->log();
  json log = mm_.call("GET", "/_test/log");
  int limited = 0, failed = 0, ok = 0;
  double first_429 = 0, retry = 0;
  for (const json& r : log["requests"]) {
    if (r["method"] != "PUT") continue;
    int status = r["status"];
    if (status == 429 && ++limited == 1) first_429 = r["t"];
    if (status == 500) ++failed;
    if (status == 200) {
      ++ok;
      if (retry == 0) retry = r["t"];
    }
  }
  EXPECT_EQ(limited, 2) << log.dump() << "\n" << json(bot_posts()).dump();
  EXPECT_EQ(failed, 1);
  EXPECT_GE(ok, 1);
  // X-Ratelimit-Reset said one second: the retries waited for it.
  EXPECT_GE(retry - first_429, 1900.0);
}

TEST_F(BridgeTest, SlowEditsAreCoalescedAndNeverOvertakeANewerOne) {
  test::ScriptedModelServer model(json::array({test::slow_chat(30, 0.1)}).dump());
  write_config(test::one_model(model), "a:m");
  auto bridge = start_bridge();
  // Every edit takes the server 900 ms: the text grows faster than it can be sent.
  mm_.call("POST", "/_test/fail",
           {{"method", "PUT"}, {"path", "/posts/.*/patch"}, {"delay_ms", 900}, {"count", -1}});
  std::string id = mm_.post(alice_, channel_, "@copilot count to thirty")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "word29"); }, 20000)) << bridge->log();
  std::vector<json> replies = replies_to(id);
  ASSERT_EQ(replies.size(), 1u);
  std::vector<json> edits = replies[0]["edits"].get<std::vector<json>>();
  // Each edit carries a longer text than the one before: none is older than what it follows.
  for (size_t i = 1; i < edits.size(); ++i) {
    std::string before = edits[i - 1]["message"], after = edits[i]["message"];
    EXPECT_EQ(after.rfind(before.substr(0, before.find("\u23F3")), 0), 0u) << i;
    EXPECT_GT(after.size(), before.size()) << i;
  }
  // 3 s of text through 900 ms edits: a handful, not one per token.
  EXPECT_LE(edits.size(), 6u);
}

TEST_F(BridgeTest, MalformedFramesAreIgnoredAndTheBridgeKeepsAnswering) {
  write_config();
  auto bridge = start_bridge();
  for (const std::string& raw :
       {std::string("not json"), std::string("{}"), std::string("[1,2]"),
        std::string(R"({"event":"posted","seq":999,"data":{"post":"{broken"}})"),
        std::string(R"({"event":"posted","data":{"post":"{\"id\":\"x\"}"}})"),
        std::string(R"({"event":"reaction_added","data":{"reaction":5}})"),
        std::string(50000, '[') + std::string(50000, ']')})
    mm_.call("POST", "/_test/ws/send", {{"user_id", bot_["id"]}, {"raw", raw}});
  std::string big(100000, 'x');
  std::string huge = mm_.post(alice_, channel_, "@copilot " + big.substr(0, 16000))["id"];
  std::string id = mm_.post(alice_, channel_, "@copilot where is retryWithBackoff?")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "src/retry.ts"); })) << bridge->log();
  // The answer quotes the 16,000-character question: it is split into labelled parts, each of
  // which the server accepted (it refuses posts over 16,383 characters).
  ASSERT_TRUE(wait_for([&] { return answered(huge, "(Part 2 of 2)"); })) << bridge->log();
  std::vector<json> parts = replies_to(huge);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0]["message"].get<std::string>().rfind("(Part 1 of 2)", 0), 0u);
  EXPECT_NE(bridge->log().find("ignored a malformed event"), std::string::npos);
}

TEST_F(BridgeTest, AttachmentsLandUnderTheRepositoryWithSafeNames) {
  write_config();
  auto bridge = start_bridge();
  json file = mm_.call("POST", "/_test/files",
                       {{"user_id", alice_["id"]},
                        {"channel_id", channel_},
                        {"name", "../../evil.txt"},
                        {"raw_name", true},
                        {"content_base64", base64("retryWithBackoff notes")}});
  std::string fid = file["id"];
  json post = mm_.call("POST", "/_test/posts",
                       {{"user_id", alice_["id"]},
                        {"channel_id", channel_},
                        {"message", "@copilot what does this file say?"},
                        {"file_ids", {fid}}});
  std::string id = post["id"];
  std::string dir = repo_ / (".pilotfish/attachments/" + channel_);
  // The placeholder may come before the download: wait for the file itself.
  auto found = [&] {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) return false;
    bool any = false;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      std::string name = e.path().filename().string();
      EXPECT_EQ(name.find('/'), std::string::npos);
      EXPECT_EQ(name.rfind(fid, 0), 0u) << name;
      std::ifstream in(e.path());
      std::string content((std::istreambuf_iterator<char>(in)), {});
      any = any || content == "retryWithBackoff notes";
    }
    return any;
  };
  ASSERT_TRUE(wait_for(found)) << bridge->log();
  ASSERT_TRUE(wait_for([&] { return !replies_to(id).empty(); })) << bridge->log();
  EXPECT_FALSE(std::filesystem::exists(repo_ / "../evil.txt"));
  EXPECT_FALSE(std::filesystem::exists(repo_ / "../../evil.txt"));
  // Chat attachments are pilotfish's own files: the next index run leaves them out.
  auto r = test::run({test::pilotfish_bin(), "index", repo_.path(), "--db", db(), "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = test::run(
      {test::pilotfish_bin(), "search", "retryWithBackoff notes", "--db", db(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find(".pilotfish"), std::string::npos) << r.out;
}

TEST_F(BridgeTest, DirectMessagesAreAnsweredWithoutAMentionAtTopLevel) {
  write_config(json::object(), "", json::object(),
               {{"defaults", {{"workingDirectory", repo_.path()}}}});
  json dm =
      mm_.call("POST", "/_test/channels", {{"type", "D"}, {"members", {bot_["id"], alice_["id"]}}});
  auto bridge = start_bridge();
  std::string id = mm_.post(alice_, dm["id"], "where is retryWithBackoff?")["id"];
  ASSERT_TRUE(wait_for([&] {
    for (const json& p : bot_posts(dm["id"]))
      if (p["message"].get<std::string>().find("src/retry.ts") != std::string::npos)
        return p["root_id"] == "";
    return false;
  })) << bridge->log();
}

TEST_F(BridgeTest, TheThreadTriggerStartsAThreadWhenRepliesAreNotThreaded) {
  write_config(json::object(), "", {{"threadedReplies", false}});
  auto bridge = start_bridge();
  std::string plain = mm_.post(alice_, channel_, "@copilot where is the README?")["id"];
  ASSERT_TRUE(wait_for([&] { return bot_posts().size() == 1; })) << bridge->log();
  EXPECT_EQ(bot_posts()[0]["root_id"], "");
  std::string threaded =
      mm_.post(alice_, channel_, "\U0001F9F5 @copilot where is retryWithBackoff?")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(threaded, "src/retry.ts"); })) << bridge->log();
}

TEST_F(BridgeTest, SeveralBotsAnswerOnlyTheirOwnChannelsAndNeverEachOther) {
  json helper = mm_.user("helper", true);
  std::string lab = mm_.call("POST", "/_test/channels",
                             {{"name", "lab"},
                              {"type", "O"},
                              {"members", {helper["id"], bot_["id"], alice_["id"]}}})["id"];
  mm_.call("POST", "/_test/channels/" + channel_ + "/members", {{"user_id", helper["id"]}});
  ::setenv("MM_HELPER_TOKEN", helper["token"].get<std::string>().c_str(), 1);
  json cfg = {{"bridge",
               {{"platforms",
                 {{"mm",
                   {{"url", mm_.url()},
                    {"bots",
                     {{"copilot", {{"tokenEnv", "MM_BOT_TOKEN"}}},
                      {"helper", {{"tokenEnv", "MM_HELPER_TOKEN"}}}}},
                    {"access", {{"mode", "open"}}}}}}},
                {"channels",
                 {{{"id", channel_},
                   {"platform", "mm"},
                   {"bot", "copilot"},
                   {"workingDirectory", repo_.path()},
                   {"triggerMode", "all"}},
                  {{"id", lab},
                   {"platform", "mm"},
                   {"bot", "helper"},
                   {"workingDirectory", repo_.path()},
                   {"triggerMode", "all"}}}}}}};
  test::write_file(dir_ / "pilotfish.json", cfg.dump());
  auto bridge = start_bridge();
  std::string town_q = mm_.post(alice_, channel_, "@copilot @helper where is the README?")["id"];
  std::string lab_q = mm_.post(alice_, lab, "where is retryWithBackoff?")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(town_q, "README.md"); })) << bridge->log();
  ASSERT_TRUE(wait_for([&] {
    for (const json& p : mm_.posts(lab))
      if (p["user_id"] == helper["id"] && p["root_id"] == lab_q) return true;
    return false;
  })) << bridge->log();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  // Each bot posted only in its channel, once: neither answered the other's replies.
  int helper_in_town = 0, copilot_in_lab = 0;
  for (const json& p : mm_.posts(channel_)) helper_in_town += p["user_id"] == helper["id"];
  for (const json& p : mm_.posts(lab)) copilot_in_lab += p["user_id"] == bot_["id"];
  EXPECT_EQ(helper_in_town, 0);
  EXPECT_EQ(copilot_in_lab, 0);
  EXPECT_EQ(bot_posts().size(), 1u);
}

TEST_F(BridgeTest, ReplayRequestsThatArriveTogetherRunAsOneReplay) {
  json list = json::array();
  for (int i = 0; i < 8; ++i) {
    std::string name = "room";
    name += std::to_string(i);
    std::string id =
        mm_.call("POST", "/_test/channels",
                 {{"name", name}, {"type", "O"}, {"members", {bot_["id"], alice_["id"]}}})["id"];
    list.push_back(
        {{"id", id}, {"platform", "mm"}, {"bot", "copilot"}, {"workingDirectory", repo_.path()}});
  }
  write_config(json::object(), "", json::object(), {{"channels", list}});
  auto bridge = start_bridge();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  // Start-up asks for a replay once per channel and once for the first hello: one or two
  // passes over the eight channels, not one pass per request.
  int fetches = 0;
  json log = mm_.call("GET", "/_test/log");
  for (const json& r : log["requests"])
    if (r["method"] == "GET" && r["path"].get<std::string>().find("/posts") != std::string::npos)
      ++fetches;
  EXPECT_GE(fetches, 8) << bridge->log();
  EXPECT_LE(fetches, 16);
}

// The replay cursor of a channel of the bot "copilot" as the bridge's state holds it (0: none).
int64_t saved_cursor(const std::string& state_db, const std::string& channel_key) {
  for (const auto& [key, t] : open_state_store(state_db)->cursors("copilot"))
    if (key == channel_key) return t;
  return 0;
}

TEST_F(BridgeTest, ReplayCursorsAreSavedSoonAndAtShutdown) {
  write_config();
  setenv("PILOTFISH_LOG", "info", 1);  // a denied user is logged at info
  auto bridge = start_bridge();
  unsetenv("PILOTFISH_LOG");
  json first = mm_.post(alice_, channel_, "@copilot where is retryWithBackoff?");
  std::string first_id = first["id"];
  ASSERT_TRUE(wait_for([&] { return answered(first_id, "src/retry.ts"); })) << bridge->log();
  std::string state = dir_ / "bridge.db", key = "mm:" + channel_;
  // Saved a moment after the post, with the bridge still running.
  EXPECT_TRUE(wait_for([&] { return saved_cursor(state, key) >= first["create_at"]; }, 5000));
  // A post seen just before a SIGTERM: its cursor is saved by the shutdown, not left to a save
  // that never comes.
  json last = mm_.post(mallory_, channel_, "@copilot let me in");
  ASSERT_TRUE(wait_for([&] { return bridge->log().find("@mallory may not") != std::string::npos; }))
      << bridge->log();
  EXPECT_EQ(bridge->stop(), 0);
  EXPECT_EQ(saved_cursor(state, key), last["create_at"].get<int64_t>());
}

TEST_F(BridgeTest, ALivePostWaitsForTheReplayOfTheMissedPostsBeforeIt) {
  write_config(json::object(), "", {{"triggerMode", "all"}, {"threadedReplies", false}});
  auto bridge = start_bridge();
  mm_.post(alice_, channel_, "where is retryWithBackoff?");
  ASSERT_TRUE(wait_for([&] {
    std::vector<json> p = bot_posts();
    return p.size() == 1 &&
           p[0]["message"].get<std::string>().find("src/retry.ts") != std::string::npos;
  })) << bridge->log();
  // A post missed while the socket is down (and not resumable: the server forgot the
  // connection), then the replay's fetch made slow: a post that comes live meanwhile is newer
  // than the missed one and must be answered after it.
  size_t before = mm_.sockets_of(bot_).first;
  mm_.call("POST", "/_test/fail",
           {{"method", "GET"},
            {"path", "/channels/" + channel_ + "/posts"},
            {"delay_ms", 2000},
            {"count", 1}});
  mm_.call("POST", "/_test/ws/drop",
           {{"user_id", bot_["id"]}, {"refuse_ms", 700}, {"forget", true}});
  mm_.post(alice_, channel_, "where is the README? (missed)");
  ASSERT_TRUE(wait_for([&] {
    auto [opened, open] = mm_.sockets_of(bot_);
    return opened > before && open;
  })) << bridge->log();
  mm_.post(alice_, channel_, "where is retryWithBackoff? (live)");
  ASSERT_TRUE(wait_for([&] { return bot_posts().size() == 3; }, 20000)) << bridge->log();
  std::this_thread::sleep_for(std::chrono::milliseconds(700));  // the last edit
  std::vector<json> replies = bot_posts();
  ASSERT_EQ(replies.size(), 3u) << json(replies).dump(1);
  EXPECT_NE(replies[1]["message"].get<std::string>().find("README.md"), std::string::npos)
      << json(replies).dump(1) << bridge->log();
  EXPECT_EQ(replies[2]["message"].get<std::string>().find("README.md"), std::string::npos)
      << json(replies).dump(1);
}

TEST_F(BridgeTest, BadConfigurationsAndTokensGetClearErrors) {
  write_config();
  ::unsetenv("MM_BOT_TOKEN");
  auto r = test::run(
      {test::pilotfish_bin(), "bridge", "--db", db(), "--config", dir_ / "pilotfish.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("tokenEnv: the environment variable MM_BOT_TOKEN that should hold the token is not set"), std::string::npos)
      << r.err;
  ::setenv("MM_BOT_TOKEN", "wrong-token", 1);
  r = test::run({test::pilotfish_bin(), "bridge", "check", "--config", dir_ / "pilotfish.json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("FAIL mm/copilot"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("401"), std::string::npos) << r.out;
  ::setenv("MM_BOT_TOKEN", bot_["token"].get<std::string>().c_str(), 1);
  r = test::run({test::pilotfish_bin(), "bridge", "check", "--config", dir_ / "pilotfish.json"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("accepts the token (@copilot)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("channel " + channel_ + " works in"), std::string::npos) << r.out;
  test::write_file(dir_ / "bad.json", R"({"bridge": {"platforms": {"mm": {"url": "ftp://x"}}}})");
  r = test::run({test::pilotfish_bin(), "bridge", "--config", dir_ / "bad.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bridge.platforms.mm.url: expected an http:// or https:// URL"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace pf
