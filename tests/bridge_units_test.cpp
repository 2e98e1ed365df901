// The bridge's units on their own (the state store has state_store_test.cpp): where the state
// goes, access lists, the loop detector, trigger stripping, the Mattermost frame parser on
// good and bad frames, and the key a conversation is kept under.
#include <gtest/gtest.h>

#include <limits>

#include "bridge/access.h"
#include "bridge/bridge.h"
#include "bridge/loop_detector.h"
#include "chat/mattermost/mattermost_events.h"
#include "bridge/service.h"
#include "test_util.h"

namespace pf {
namespace {

TEST(Access, DenyByDefaultAllowlistsUnionBlocklistsWin) {
  PlatformConfig p;
  BotConfig b;
  EXPECT_FALSE(access_allowed(p, b, "alice"));  // nothing configured
  p.access = {"allowlist", {"alice"}};
  b.access = {"allowlist", {"bob"}};
  EXPECT_TRUE(access_allowed(p, b, "@Alice"));
  EXPECT_TRUE(access_allowed(p, b, "bob"));
  EXPECT_FALSE(access_allowed(p, b, "carol"));
  EXPECT_FALSE(access_allowed(p, b, ""));
  // A Slack user id in the list admits that user whatever their username; an unlisted id with
  // an unlisted name does not get in.
  b.access.users.push_back("u0123abcd");
  EXPECT_TRUE(access_allowed(p, b, "renamed", "U0123ABCD"));
  EXPECT_TRUE(access_allowed(p, b, "", "U0123ABCD"));
  EXPECT_FALSE(access_allowed(p, b, "mallory", "U0999"));
  EXPECT_FALSE(access_allowed(p, b, "", ""));
  b.access = {"blocklist", {"alice"}};
  EXPECT_FALSE(access_allowed(p, b, "alice"));
  p.access = {"open", {}};
  EXPECT_TRUE(access_allowed(p, b, "carol"));
  EXPECT_FALSE(access_allowed(p, b, "alice"));
}

TEST(LoopDetector, WarnsOnceAtFiveAndStopsAtTenWithinAMinute) {
  LoopDetector d;
  auto t = std::chrono::steady_clock::now();
  std::vector<LoopDetector::Verdict> v;
  for (int i = 0; i < 10; ++i)
    v.push_back(d.record("read_file", i % 2 ? R"({"a":1,"b":2})" : R"({"b":2,"a":1})", t));
  EXPECT_EQ(v[3], LoopDetector::Verdict::kOk);
  EXPECT_EQ(v[4], LoopDetector::Verdict::kWarn);
  EXPECT_EQ(v[5], LoopDetector::Verdict::kOk);  // the warning comes once
  EXPECT_EQ(v[9], LoopDetector::Verdict::kCritical);
  LoopDetector e;
  for (int i = 0; i < 9; ++i) e.record("grep", "{}", t + std::chrono::seconds(i * 10));
  // Calls older than a minute have left the window.
  EXPECT_EQ(e.record("grep", "{}", t + std::chrono::seconds(95)), LoopDetector::Verdict::kOk);
  EXPECT_EQ(e.record("other", "{}", t), LoopDetector::Verdict::kOk);
}

TEST(Bridge, StripsTheBotsMentionAndTheThreadTrigger) {
  bool thread = false;
  EXPECT_EQ(strip_triggers("@Copilot where is x?", "copilot", &thread), "where is x?");
  EXPECT_FALSE(thread);
  EXPECT_EQ(strip_triggers("@copilot2 hi", "copilot", &thread), "@copilot2 hi");
  EXPECT_EQ(strip_triggers("\U0001F9F5 @copilot explain", "copilot", &thread), "explain");
  EXPECT_TRUE(thread);
  EXPECT_EQ(strip_triggers("explain :thread:", "copilot", &thread), "explain");
  EXPECT_TRUE(thread);
  EXPECT_EQ(strip_triggers("@copilot Reply in thread: where is the retry?", "copilot", &thread),
            "where is the retry?");
  EXPECT_TRUE(thread);
  EXPECT_EQ(strip_triggers("where is it, reply in thread", "copilot", &thread), "where is it");
  EXPECT_TRUE(thread);
  EXPECT_EQ(strip_triggers("how do I reply in thread here?", "copilot", &thread),
            "how do I reply in thread here?");  // in the middle: a question, not a trigger
  EXPECT_FALSE(thread);
}

TEST(Bridge, DurationsUseTheUnitThatFitsAndItsPlural) {
  EXPECT_EQ(duration_phrase(0), "0 seconds");
  EXPECT_EQ(duration_phrase(1), "1 second");
  EXPECT_EQ(duration_phrase(45), "45 seconds");
  EXPECT_EQ(duration_phrase(119), "119 seconds");
  EXPECT_EQ(duration_phrase(120), "2 minutes");
  EXPECT_EQ(duration_phrase(300), "5 minutes");
  EXPECT_EQ(duration_phrase(7199), "119 minutes");
  EXPECT_EQ(duration_phrase(7200), "2 hours");
  EXPECT_EQ(duration_phrase(7 * 24 * 3600), "168 hours");
  EXPECT_EQ(duration_phrase(-5), "0 seconds");
}

TEST(Bridge, TheSkipNoticeSaysSecondsForAShortWindow) {
  // A window under a minute once read "older than 0 minutes".
  EXPECT_NE(skip_notice(2, 30).find("missed 2 messages older than 30 seconds; I have not "
                                    "answered them."),
            std::string::npos)
      << skip_notice(2, 30);
  EXPECT_NE(skip_notice(1, 300).find("missed 1 message older than 5 minutes; I have not "
                                     "answered it."),
            std::string::npos)
      << skip_notice(1, 300);
}

TEST(MattermostEvents, ParsesPostedReactionsHelloAndRefusesGarbage) {
  auto posted = parse_mattermost_frame(
      R"({"event":"posted","seq":3,"data":{"channel_type":"D","sender_name":"@alice","post":)"
      R"("{\"id\":\"p\",\"channel_id\":\"c\",\"user_id\":\"u\",\"message\":\"hi\",\"root_id\":\"r\",)"
      R"(\"create_at\":5,\"metadata\":{\"files\":[{\"id\":\"f\",\"name\":\"a.png\",\"mime_type\":\"image/png\"}]}}"},"broadcast":{"channel_id":"c"}})");
  ASSERT_EQ(posted.kind, MattermostFrame::Kind::kPosted) << posted.error;
  EXPECT_EQ(posted.seq, 3);
  EXPECT_EQ(posted.post.root_id, "r");
  EXPECT_EQ(posted.channel_type, "D");
  ASSERT_EQ(posted.post.files.size(), 1u);
  EXPECT_EQ(posted.post.files[0].type, "image");
  auto reaction = parse_mattermost_frame(
      R"({"event":"reaction_added","seq":4,"data":{"reaction":"{\"user_id\":\"u\",\"post_id\":\"p\",\"emoji_name\":\"+1\"}"},"broadcast":{"channel_id":"c"}})");
  ASSERT_EQ(reaction.kind, MattermostFrame::Kind::kReaction);
  EXPECT_EQ(reaction.reaction.channel_id, "c");
  auto hello = parse_mattermost_frame(R"({"event":"hello","seq":0,"data":{"connection_id":"x"}})");
  EXPECT_EQ(hello.kind, MattermostFrame::Kind::kHello);
  EXPECT_EQ(hello.connection_id, "x");
  EXPECT_EQ(parse_mattermost_frame(R"({"status":"OK","seq_reply":1})").kind,
            MattermostFrame::Kind::kReply);
  for (const char* bad :
       {"", "not json", "[]", "{}", R"({"event":"posted","data":{"post":"{"}})",
        R"({"event":"posted","data":{"post":"{\"id\":\"p\"}"}})",
        R"({"event":"posted","data":{"post":5}})", R"({"event":"reaction_added","data":{}})"}) {
    auto f = parse_mattermost_frame(bad);
    EXPECT_EQ(f.kind, MattermostFrame::Kind::kMalformed) << bad;
    EXPECT_FALSE(f.error.empty()) << bad;
  }
  std::string deep(100000, '[');
  EXPECT_EQ(parse_mattermost_frame(deep).kind, MattermostFrame::Kind::kMalformed);
}

TEST(ConversationKey, ThreadScopeKeysEachThreadAndChannelScopeTheChannel) {
  EXPECT_EQ(conversation_key("mm:c1", "channel", "root1"), "mm:c1");
  EXPECT_EQ(conversation_key("mm:c1", "thread", "root1"), "mm:c1/root1");
  EXPECT_NE(conversation_key("mm:c1", "thread", "root1"),
            conversation_key("mm:c1", "thread", "root2"));
  // A post outside any thread keeps the channel's conversation.
  EXPECT_EQ(conversation_key("mm:c1", "thread", ""), "mm:c1");
  // Slack roots are "<channel>:<ts>": kept whole, never confused with another channel's.
  EXPECT_EQ(conversation_key("slack:C1", "thread", "C1:1712345678.123456"),
            "slack:C1/C1:1712345678.123456");
  EXPECT_NE(conversation_key("slack:C1", "thread", "C1:1712345678.123456"),
            conversation_key("slack:C2", "thread", "C1:1712345678.123456"));
}

}  // namespace
}  // namespace pf
