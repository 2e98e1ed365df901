// The chat bridge end to end: the real `pilotfish bridge` binary against the Mattermost test
// server (tests/servers/mattermost_server.mjs, checked against the real @mattermost/client)
// and the scripted model server, over loopback. Posts get streamed answers that cite the
// channel's repository, edits are throttled, strangers get nothing, a dropped socket and a
// restart lose nothing and answer nothing twice, commands answer, a model outage falls back
// with a notice, and a looping model is stopped.
#include "bridge_fixture.h"

namespace pf {
namespace {

using nlohmann::json;
using test::BridgeTest;
using test::one_model;
using test::slow_chat;
using test::wait_for;

TEST_F(BridgeTest, APostGetsAStreamedAnswerCitingTheChannelsRepository) {
  write_config();
  auto bridge = start_bridge();
  json q = mm_.post(alice_, channel_, "@copilot where is retryWithBackoff?");
  std::string id = q["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "src/retry.ts"); })) << bridge->log();
  std::vector<json> replies = replies_to(id);
  ASSERT_EQ(replies.size(), 1u);
  std::string text = replies[0]["message"];
  EXPECT_EQ(text.find("Working"), std::string::npos) << text;
  // Edits of one reply are at least one interval apart (500 ms, less scheduling slack).
  // The bot showed it was typing in the channel, over its event socket (no REST call).
  json typing = mm_.call("GET", "/_test/typing?channel_id=" + channel_)["typing"];
  ASSERT_EQ(typing.size(), 1u) << typing.dump();
  EXPECT_EQ(typing[0]["via"], "ws");
  EXPECT_EQ(typing[0]["user_id"], bot_["id"]);
  json log =
      mm_.call("GET", "/_test/log");  // a local: a range-for over a temporary's member dangles
  for (const json& r : log["requests"])
    EXPECT_EQ(r["path"].get<std::string>().find("/typing"), std::string::npos);
  std::vector<json> edits = replies[0]["edits"].get<std::vector<json>>();
  for (size_t i = 1; i < edits.size(); ++i)
    EXPECT_GE(edits[i]["t"].get<double>() - edits[i - 1]["t"].get<double>(), 450.0);
}

TEST_F(BridgeTest, AnIdleBridgeGivesCachedMemoryBack) {
  write_config();
  setenv("PILOTFISH_LOG", "info", 1);  // the release is logged at info
  auto bridge = start_bridge();
  unsetenv("PILOTFISH_LOG");
  json q = mm_.post(alice_, channel_, "@copilot where is retryWithBackoff?");
  std::string id = q["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "src/retry.ts"); })) << bridge->log();
  // Ten seconds after the last turn: the state store's cache and the allocator's free pages.
  ASSERT_TRUE(wait_for(
      [&] { return bridge->log().find("idle: gave cached memory back") != std::string::npos; },
      25000))
      << bridge->log();
  EXPECT_EQ(bridge->log().find("idle: gave cached memory back (resident 0 "), std::string::npos);
}

TEST_F(BridgeTest, StrangersAndUnmentionedPostsGetNothing) {
  write_config();
  auto bridge = start_bridge();
  json stranger = mm_.post(mallory_, channel_, "@copilot where is retryWithBackoff?");
  json unmentioned = mm_.post(alice_, channel_, "where is retryWithBackoff?");
  json asked = mm_.post(alice_, channel_, "@copilot where is the README?");
  std::string asked_id = asked["id"];
  ASSERT_TRUE(wait_for([&] { return answered(asked_id, "README.md"); })) << bridge->log();
  EXPECT_TRUE(replies_to(stranger["id"]).empty());
  EXPECT_TRUE(replies_to(unmentioned["id"]).empty());
  EXPECT_EQ(bot_posts().size(), 1u);
}

TEST_F(BridgeTest, PostsDuringASocketDropAreAnsweredOnceEach) {
  write_config();
  auto bridge = start_bridge();
  json first = mm_.post(alice_, channel_, "@copilot where is retryWithBackoff?");
  std::string first_id = first["id"];
  ASSERT_TRUE(wait_for([&] { return answered(first_id, "src/retry.ts"); })) << bridge->log();
  // Drop the bot's socket and refuse it for a while: these posts are never sent on it.
  mm_.call("POST", "/_test/ws/drop", {{"user_id", bot_["id"]}, {"refuse_ms", 1500}});
  std::vector<std::string> gap;
  for (int i = 0; i < 3; ++i)
    gap.push_back(mm_.post(alice_, channel_, "@copilot README question")["id"]);
  for (const auto& id : gap)
    ASSERT_TRUE(wait_for([&] { return answered(id, "README.md"); }))
        << bridge->log() << "\n"
        << json(bot_posts()).dump() << "\n"
        << mm_.call("GET", "/_test/ws").dump();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  for (const auto& id : gap) EXPECT_EQ(replies_to(id).size(), 1u) << id;
  EXPECT_EQ(replies_to(first_id).size(), 1u);
}

TEST_F(BridgeTest, ARestartAnswersWhatCameMeanwhileOnceAndKeepsTheConversation) {
  write_config();
  auto bridge = start_bridge();
  json first = mm_.post(alice_, channel_, "@copilot where is retryWithBackoff?");
  std::string first_id = first["id"];
  ASSERT_TRUE(wait_for([&] { return answered(first_id, "src/retry.ts"); })) << bridge->log();
  json status = mm_.post(alice_, channel_, "@copilot /status");
  std::string status_id = status["id"];
  ASSERT_TRUE(wait_for([&] { return answered(status_id, "conversation"); }));
  std::string before = replies_to(status_id)[0]["message"];
  EXPECT_EQ(bridge->stop(), 0);
  json meanwhile = mm_.post(alice_, channel_, "@copilot where is the README?");
  std::string meanwhile_id = meanwhile["id"];
  bridge = start_bridge();
  ASSERT_TRUE(wait_for([&] { return answered(meanwhile_id, "README.md"); })) << bridge->log();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_EQ(replies_to(meanwhile_id).size(), 1u);
  EXPECT_EQ(replies_to(first_id).size(), 1u);
  // The same conversation after the restart.
  json again = mm_.post(alice_, channel_, "@copilot /status");
  std::string again_id = again["id"];
  ASSERT_TRUE(wait_for([&] { return answered(again_id, "conversation"); }));
  std::string after = replies_to(again_id)[0]["message"];
  auto conv = [](const std::string& s) { return s.substr(s.find("conversation"), 40); };
  EXPECT_EQ(conv(before), conv(after));
  // A new conversation, then back to the old one by a lower-case prefix of its id.
  size_t tick = before.find('`', before.find("conversation"));
  std::string old_id = before.substr(tick + 1, before.find('`', tick + 1) - tick - 1);
  ASSERT_EQ(old_id.size(), 12u) << before;
  expect_answer(*bridge, "/new", "New conversation");
  std::string prefix = old_id.substr(0, 5);
  for (char& c : prefix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  expect_answer(*bridge, "/resume " + prefix, "Resumed conversation `" + old_id + "`");
  expect_answer(*bridge, "/status", old_id);
}

TEST_F(BridgeTest, CommandsAnswer) {
  write_config();
  auto bridge = start_bridge();
  auto ask = [&](const std::string& text, const std::string& fragment) {
    expect_answer(*bridge, text, fragment);
  };
  ask("/help", "/new");
  ask("/help all", "/resume");
  ask("/new", "New conversation");
  ask("/resume", "Conversations in this channel");
  ask("/resume zzzz", "No conversation");
  ask("/verbose on", "Verbose mode is on");
  ask("/config", "verbose | on | channel preference");
  ask("/context", "tokens");
  ask("/models", "No chat models are configured");
  ask("/stop", "Nothing is running");
  ask("/reload", "read afresh");
  ask("/reload config", "Applied: providers and models");
}

TEST_F(BridgeTest, AModelOutageFallsBackWithANotice) {
  test::ScriptedModelServer model(R"([{"status": 503, "body": {"error": {"message": "overloaded"}}},
                                      {"chat": {"text": ["retryWithBackoff is in ", "src/retry.ts:2"]}}])");
  json providers = {{"a",
                     {{"type", "openai"},
                      {"baseUrl", model.base_url()},
                      {"models", {{{"id", "big"}}, {{"id", "small"}}}}}}};
  write_config(providers, "a:big", {{"fallbackModels", {"a:small"}}});
  auto bridge = start_bridge();
  std::string id = mm_.post(alice_, channel_, "@copilot where is retryWithBackoff?")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "src/retry.ts:2"); })) << bridge->log();
  ASSERT_TRUE(wait_for([&] {
    return answered(id, "Model a:big is unavailable, switched to a:small");
  })) << bridge->log();
  std::string status = mm_.post(alice_, channel_, "@copilot /status")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(status, "a:small"); }));
}

TEST_F(BridgeTest, ALoopingModelIsWarnedThenStopped) {
  json calls = json::array();
  for (int i = 0; i < 10; ++i)
    calls.push_back({{"id", std::to_string(i)},
                     {"name", "read_file"},
                     {"arguments", R"({"filePath": "README.md"})"}});
  json script = json::array({{{"chat", {{"tool_calls", calls}, {"finish", "tool_calls"}}}}});
  test::ScriptedModelServer model(script.dump());
  json providers = {
      {"a", {{"type", "openai"}, {"baseUrl", model.base_url()}, {"models", {{{"id", "m"}}}}}}};
  write_config(providers, "a:m");
  auto bridge = start_bridge();
  std::string id = mm_.post(alice_, channel_, "@copilot read the README")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "same arguments 5 times"); })) << bridge->log();
  ASSERT_TRUE(wait_for([&] { return answered(id, "Loop detected"); })) << bridge->log();
  int warnings = 0;
  for (const json& p : replies_to(id))
    warnings += p["message"].get<std::string>().find("same arguments") != std::string::npos;
  EXPECT_EQ(warnings, 1);
}

TEST_F(BridgeTest, StopEndsTheAnswerAndClosesTheModelRequest) {
  test::ScriptedModelServer model(json::array({slow_chat(60, 0.1)}).dump());
  write_config(one_model(model), "a:m");
  auto bridge = start_bridge();
  std::string id = mm_.post(alice_, channel_, "@copilot explain everything")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "word3"); })) << bridge->log();
  json stop = mm_.call("POST", "/_test/posts",
                       {{"user_id", alice_["id"]},
                        {"channel_id", channel_},
                        {"message", "@copilot /stop"},
                        {"root_id", id}});
  ASSERT_TRUE(wait_for([&] {
    for (const json& e : model.events())
      if (e["event"] == "client disconnected") return true;
    return false;
  })) << bridge->log();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  std::string text = replies_to(id)[0]["message"];
  EXPECT_EQ(text.find("word59"), std::string::npos) << text;
  EXPECT_EQ(text.find("Working"), std::string::npos) << text;
}

TEST_F(BridgeTest, AFollowUpSteersTheRunningTurn) {
  json calls = json::array(
      {{{"id", "1"}, {"name", "list_directory"}, {"arguments", R"({"dirPath": "."})"}}});
  json script = json::array(
      {{{"chat", {{"tool_calls", calls}, {"finish", "tool_calls"}, {"delay_first", 1.5}}}},
       {{"chat", {{"text", {"steered answer"}}}}}});
  test::ScriptedModelServer model(script.dump());
  write_config(one_model(model), "a:m");
  auto bridge = start_bridge();
  std::string id = mm_.post(alice_, channel_, "@copilot what is in the repository?")["id"];
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  json follow = mm_.call("POST", "/_test/posts",
                         {{"user_id", alice_["id"]},
                          {"channel_id", channel_},
                          {"message", "@copilot only the src folder please"},
                          {"root_id", id}});
  ASSERT_TRUE(wait_for([&] { return answered(id, "steered answer"); })) << bridge->log();
  // The second model call carried the follow-up as a user message, after the tool result.
  std::vector<json> requests = model.requests();
  ASSERT_GE(requests.size(), 2u);
  std::string second = requests[1]["body"].dump();
  EXPECT_NE(second.find("only the src folder please"), std::string::npos);
  // ⚡ on the follow-up, and no separate answer to it.
  json posts = mm_.posts(channel_);
  bool zapped = false;
  for (const json& p : posts)
    if (p["id"] == follow["id"])
      for (const json& r : p["reactions"]) zapped = zapped || r["emoji_name"] == "zap";
  EXPECT_TRUE(zapped);
  int answers = 0;
  for (const json& p : replies_to(id))
    answers += p["message"].get<std::string>().find("steered answer") != std::string::npos;
  EXPECT_EQ(answers, 1);
}

TEST_F(BridgeTest, AFollowUpNeverOvertakesAMessageQueuedBeforeIt) {
  json calls = json::array(
      {{{"id", "1"}, {"name", "list_directory"}, {"arguments", R"({"dirPath": "."})"}}});
  json script = json::array(
      {{{"chat", {{"tool_calls", calls}, {"finish", "tool_calls"}, {"delay_first", 4.0}}}},
       {{"chat", {{"text", {"first answer"}}}}},
       {{"chat", {{"text", {"missed answer"}}}}},
       {{"chat", {{"text", {"live answer"}}}}}});
  test::ScriptedModelServer model(script.dump());
  write_config(one_model(model), "a:m", {{"triggerMode", "all"}, {"threadedReplies", false}});
  auto bridge = start_bridge();
  mm_.post(alice_, channel_, "what is in the repository?");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // While the turn runs: a post missed by a socket the server forgot (fetched by the replay
  // and queued), then a live one. The live one would steer the running turn, but the missed
  // one is older and waits: the live one waits behind it.
  auto fetches = [&] {
    json log = mm_.call("GET", "/_test/log");
    int n = 0;
    for (const json& r : log["requests"])
      n += r["method"] == "GET" && r["status"] == 200 &&
           r["path"].get<std::string>().find("/channels/" + channel_ + "/posts") !=
               std::string::npos;
    return n;
  };
  int fetched = fetches();
  size_t before = mm_.sockets_of(bot_).first;
  mm_.call("POST", "/_test/ws/drop",
           {{"user_id", bot_["id"]}, {"refuse_ms", 300}, {"forget", true}});
  std::string missed = mm_.post(alice_, channel_, "and the README?")["id"];
  ASSERT_TRUE(wait_for([&] {
    auto [opened, open] = mm_.sockets_of(bot_);
    return opened > before && open;
  })) << bridge->log();
  ASSERT_TRUE(wait_for([&] { return fetches() > fetched; })) << bridge->log();  // the replay
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::string live = mm_.post(alice_, channel_, "only the src folder please")["id"];
  ASSERT_TRUE(wait_for([&] { return bot_posts().size() >= 3; }, 20000)) << bridge->log();
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  std::vector<std::string> said;
  for (const json& p : bot_posts()) said.push_back(p["message"]);
  EXPECT_EQ(said, (std::vector<std::string>{"first answer", "missed answer", "live answer"}))
      << bridge->log();
  for (const json& p : mm_.posts(channel_))
    if (p["id"] == live) {
      EXPECT_TRUE(p["reactions"].empty()) << p.dump();
    }
}

TEST_F(BridgeTest, VerboseModeShowsToolCallsInAPostOfTheirOwn) {
  json calls = json::array(
      {{{"id", "1"}, {"name", "read_file"}, {"arguments", R"({"filePath": "README.md"})"}}});
  json script = json::array({{{"chat", {{"tool_calls", calls}, {"finish", "tool_calls"}}}},
                             {{"chat", {{"text", {"It is a demo."}}}}}});
  test::ScriptedModelServer model(script.dump());
  write_config(one_model(model), "a:m", {{"verbose", true}});
  auto bridge = start_bridge();
  std::string id = mm_.post(alice_, channel_, "@copilot what is the README about?")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "It is a demo."); })) << bridge->log();
  EXPECT_TRUE(answered(id, "`read_file` README.md"));
}

TEST_F(BridgeTest, ErrorsMidStreamAreShownAndLongAnswersAreSplit) {
  std::string section(6000, 'z');
  json text = json::array();
  for (int i = 0; i < 5; ++i) text.push_back("\n## Section " + std::to_string(i) + "\n" + section);
  json script =
      json::array({{{"match", "long"}, {"chat", {{"text", text}}}},
                   {{"match", "fail"},
                    {"chat", {{"text", {"partial "}}, {"error_message", "the model crashed"}}}},
                   {{"match", "cut"},
                    {"chat", {{"text", {"So far ", "so good", "!"}}, {"drop_after", 2},
                              {"chunked", true}}}}});
  test::ScriptedModelServer model(script.dump());
  write_config(one_model(model), "a:m");
  auto bridge = start_bridge();
  std::string id = mm_.post(alice_, channel_, "@copilot a long answer please")["id"];
  // 5 sections of 6,000 characters: two fit a post, so three parts, each cut at a heading.
  ASSERT_TRUE(wait_for([&] { return answered(id, "(Part 3 of 3)"); })) << bridge->log();
  for (const json& p : replies_to(id)) {
    std::string m = p["message"];
    EXPECT_LE(m.size(), 16383u);
    EXPECT_EQ(m.find("Working"), std::string::npos);
  }
  EXPECT_EQ(replies_to(id)[1]["message"].get<std::string>().find("(Part 2 of 3)\n\n## Section"),
            0u);
  std::string bad = mm_.post(alice_, channel_, "@copilot fail now")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(bad, "\u274C"); })) << bridge->log();
  EXPECT_TRUE(answered(bad, "the model crashed"));
  // A stream cut mid-body: the partial answer, then what happened in a sentence.
  std::string cut = mm_.post(alice_, channel_, "@copilot cut me off")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(cut, "\u274C"); })) << bridge->log();
  EXPECT_TRUE(answered(cut, "So far so good\n\n\u274C The provider's stream for model a:m ended "
                            "before the answer was complete (after 14 characters); the partial "
                            "answer is above."))
      << json(replies_to(cut)).dump();
}

TEST_F(BridgeTest, AConversationBeyondTheContextWindowIsCompactedNotDropped) {
  test::ScriptedModelServer model("[]");  // echoes: "You said: ..."
  write_config(one_model(model, 300), "a:m");
  auto bridge = start_bridge();
  std::string filler;
  for (int w = 0; w < 60; ++w) filler += "fact" + std::to_string(w) + " ";
  for (int i = 0; i < 6; ++i) {
    std::string id = mm_.post(alice_, channel_, "@copilot remember " + filler)["id"];
    ASSERT_TRUE(wait_for([&] { return answered(id, "You said"); })) << bridge->log();
  }
  bool compacted = false;
  for (const json& p : bot_posts())
    compacted = compacted ||
                p["message"].get<std::string>().find("folded into a summary") != std::string::npos;
  EXPECT_TRUE(compacted);
  // The summary came from the model, asked with the older turns.
  bool asked = false;
  for (const json& r : model.requests())
    asked = asked || r["body"].dump().find("Summarise this conversation") != std::string::npos;
  EXPECT_TRUE(asked);
  // The summary was kept in the repository's MEMORY.md too.
  std::string memory = test::run({"cat", repo_ / "MEMORY.md"}).out;
  EXPECT_EQ(memory.rfind("## Compaction Summary [", 0), 0u) << memory;
}

TEST_F(BridgeTest, AQuietWorkspaceGetsItsMemoryConsolidated) {
  std::string notes =
      "# Notes\n\n## Compaction Summary [2026-11-30T10:00:00Z]\n- the retry helper is "
      "src/retry.ts\n- the README describes the demo\n";
  test::write_file(repo_ / "MEMORY.md", notes);
  json script = json::array(
      {{{"chat", {{"text", {"Hello."}}}}},
       {{"chat", {{"text", {"```markdown\n# Notes\n\n## Code\n- retries: src/retry.ts\n```"}}}}}});
  test::ScriptedModelServer model(script.dump());
  write_config(one_model(model), "a:m");
  json cfg = json::parse(test::run({"cat", dir_ / "pilotfish.json"}).out);
  cfg["memory"] = {{"consolidation", {{"idleMinutes", 0.02}}}};  // 1.2 s
  test::write_file(dir_ / "pilotfish.json", cfg.dump());
  auto bridge = start_bridge();
  expect_answer(*bridge, "hi", "Hello.");
  ASSERT_TRUE(wait_for([&] {
    return test::run({"cat", repo_ / "MEMORY.md"}).out ==
           "# Notes\n\n## Code\n- retries: src/retry.ts\n";
  })) << bridge->log();
  EXPECT_EQ(test::run({"cat", repo_ / ".memory/MEMORY.md.bak"}).out, notes);
  // The consolidation was asked with the file, and offered no tools.
  json last = model.requests().back()["body"];
  EXPECT_NE(last.dump().find("the retry helper is src/retry.ts"), std::string::npos);
  EXPECT_FALSE(last.contains("tools"));
}

TEST_F(BridgeTest, ProviderTestAndModelSwitching) {
  test::ScriptedModelServer model("[]", "", {"--models", "m,other"});
  write_config(one_model(model), "a:m");
  auto bridge = start_bridge();
  auto ask = [&](const std::string& text, const std::string& fragment) {
    expect_answer(*bridge, text, fragment);
  };
  ask("/provider test a", "`a` answers and offers 2 models");
  ask("/provider test nope", "No provider is called");
  ask("/provider", "key");
  ask("/model", "`a:m` **(current)**");
  ask("/model zzz", "\u274C");
  ask("/model m", "Model set to `a:m`");
  // Provider names and subcommands without regard to case.
  ask("/provider test A", "`a` answers and offers 2 models");
  ask("/model A", "**a** (");
  ask("/reload MCP", "MCP servers will be started afresh");
}

TEST_F(BridgeTest, SigtermMidTurnAnswersThePostAfterTheRestartOnce) {
  test::ScriptedModelServer model(json::array({slow_chat(100, 0.1)}).dump());
  write_config(one_model(model), "a:m", json::object(), {{"shutdownGraceSeconds", 1}});
  auto bridge = start_bridge();
  std::string id = mm_.post(alice_, channel_, "@copilot tell me a long story")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "word2"); })) << bridge->log();
  EXPECT_EQ(bridge->stop(), 0);
  std::string log = bridge->log();
  bridge = start_bridge();  // the script is used up: the model now echoes
  ASSERT_TRUE(wait_for([&] { return answered(id, "You said"); }))
      << log << "\n---\n"
      << bridge->log() << json(bot_posts()).dump();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  // The interrupted reply was removed; one complete answer remains.
  std::vector<json> replies = replies_to(id);
  ASSERT_EQ(replies.size(), 1u) << json(replies).dump();
  EXPECT_EQ(replies[0]["message"].get<std::string>().find("word"), std::string::npos);
}

TEST_F(BridgeTest, ServeRunsTheBridgeBesideTheApi) {
  write_config();
  test::ServeProcess serve(
      {"--db", db(), "--config", dir_ / "pilotfish.json", "--no-auth", "--repo", repo_.path()});
  std::string id = mm_.post(alice_, channel_, "@copilot where is retryWithBackoff?")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "src/retry.ts"); }))
      << serve.log() << mm_.call("GET", "/_test/ws").dump()
      << mm_.call("GET", "/_test/log").dump().substr(0, 3000);
  HttpRequest health;
  health.method = "GET";
  health.url = serve.url() + "/healthz";
  EXPECT_EQ(http_request(health).status, 200);
  int rc = serve.stop();
  EXPECT_EQ(rc, 0) << serve.log();
}

TEST_F(BridgeTest, ChannelsKeepTheirOrderUnderLoad) {
  std::vector<std::string> channels = {channel_};
  for (int i = 0; i < 3; ++i)
    channels.push_back(mm_.call("POST", "/_test/channels",
                                {{"name", "room" + std::to_string(i)},
                                 {"type", "O"},
                                 {"members", {bot_["id"], alice_["id"]}}})["id"]);
  json list = json::array();
  for (const auto& c : channels)
    list.push_back({{"id", c},
                    {"platform", "mm"},
                    {"bot", "copilot"},
                    {"workingDirectory", repo_.path()},
                    {"triggerMode", "all"},
                    {"threadedReplies", false}});
  write_config(json::object(), "", json::object(), {{"channels", list}});
  auto bridge = start_bridge();
  std::map<std::string, std::vector<std::string>> asked;
  for (int n = 0; n < 6; ++n)
    for (const auto& c : channels) {
      std::string q = n % 2 ? "README number " : "retryWithBackoff number ";
      q += std::to_string(n);
      mm_.post(alice_, c, q);
      asked[c].push_back(q);
    }
  for (const auto& c : channels)
    ASSERT_TRUE(wait_for([&] { return bot_posts(c).size() == 6; }, 30000)) << bridge->log();
  for (const auto& c : channels) {
    std::vector<json> replies = bot_posts(c);
    for (size_t i = 0; i < replies.size(); ++i) {
      std::string m = replies[i]["message"];
      EXPECT_NE(m.find(i % 2 ? "README.md" : "src/retry.ts"), std::string::npos)
          << c << " " << i << "\n"
          << json(replies).dump(1) << "\n"
          << json(mm_.posts(c)).dump(1) << "\n"
          << bridge->log();
    }
  }
}

TEST_F(BridgeTest, ARepositoryNeverIndexedIsIndexedBeforeTheFirstAnswer) {
  test::TempDir fresh;
  test::write_file(fresh / "src/queue.ts",
                   "export function drainQueue(q: string[]) {\n  q.length = 0;\n}\n");
  write_config(json::object(), "", {{"workingDirectory", fresh.path()}});
  auto bridge = start_bridge();
  std::string id = mm_.post(alice_, channel_, "@copilot where is drainQueue?")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "src/queue.ts"); }, 30000)) << bridge->log();
}

TEST_F(BridgeTest, AgentsMdAndTheMemoryPointerGoIntoTheSystemPrompt) {
  test::write_file(repo_ / "AGENTS.md", "Always name the file before anything else.\n");
  test::write_file(repo_ / "AGENTS.local.md", "This checkout is the staging branch.\n");
  test::write_file(repo_ / "MEMORY.md",
                   "# Memory\n\n## Decisions\nretries back off\n\n## People\n");
  test::ScriptedModelServer model("[]");
  write_config(one_model(model), "a:m");
  auto bridge = start_bridge();
  std::string id = mm_.post(alice_, channel_, "@copilot hello")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "You said"); })) << bridge->log();
  std::string system;
  for (const json& r : model.requests())
    if (r["body"].contains("messages")) system = r["body"]["messages"][0]["content"];
  EXPECT_NE(system.find("Always name the file before anything else."), std::string::npos) << system;
  EXPECT_NE(system.find("<local_instructions>\nThis checkout is the staging branch."),
            std::string::npos);
  EXPECT_NE(system.find("- Decisions\n- People"), std::string::npos) << system;
}

TEST_F(BridgeTest, AChangedConfigFileIsAppliedWithoutARestart) {
  write_config();
  auto bridge = start_bridge();
  std::string denied = mm_.post(mallory_, channel_, "@copilot where is the README?")["id"];
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  EXPECT_TRUE(replies_to(denied).empty());
  json cfg = json::parse(test::run({"cat", dir_ / "pilotfish.json"}).out);
  cfg["bridge"]["platforms"]["mm"]["access"]["users"].push_back("mallory");
  test::write_file(dir_ / "pilotfish.json", cfg.dump(2));
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // 1 s poll + 500 ms debounce
  std::string allowed = mm_.post(mallory_, channel_, "@copilot where is the README?")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(allowed, "README.md"); })) << bridge->log();
  EXPECT_TRUE(replies_to(denied).empty());
}

TEST_F(BridgeTest, PostsOlderThanTheReplayWindowAreSkippedAndTheChannelIsToldOnce) {
  write_config(json::object(), "", json::object(), {{"replayWindowSeconds", 1}});
  auto bridge = start_bridge();
  std::string first = mm_.post(alice_, channel_, "@copilot where is the README?")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(first, "README.md"); })) << bridge->log();
  EXPECT_EQ(bridge->stop(), 0);
  std::string a = mm_.post(alice_, channel_, "@copilot where is retryWithBackoff?")["id"];
  std::string b = mm_.post(alice_, channel_, "@copilot and the README?")["id"];
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  bridge = start_bridge();
  ASSERT_TRUE(wait_for([&] {
    for (const json& p : bot_posts())
      if (p["message"].get<std::string>().find("missed 2 messages older than 1 second;") !=
          std::string::npos)
        return true;
    return false;
  })) << bridge->log();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_TRUE(replies_to(a).empty());
  EXPECT_TRUE(replies_to(b).empty());
  int notices = 0;
  for (const json& p : bot_posts())
    notices += p["message"].get<std::string>().find("I was away") != std::string::npos;
  EXPECT_EQ(notices, 1);
}

}  // namespace
}  // namespace pf
