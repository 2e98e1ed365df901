// chat/inbound_json.h: an inbound message survives the round trip through the state store's
// JSON, attachments (with their download URL) included, and junk is refused without a throw.
#include "chat/inbound_json.h"

#include <gtest/gtest.h>

namespace pf {
namespace {

TEST(InboundJson, RoundTripKeepsEveryStoredField) {
  InboundMessage m;
  m.platform = "slack";
  m.bot = "pilot";
  m.channel_id = "C1";
  m.user_id = "U1";
  m.username = "alice";
  m.text = "look at \"this\" \xE2\x9C\x93";
  m.post_id = "C1:1712345678.000100";
  m.thread_root_id = "C1:1712345678.000001";
  m.mentions_bot = true;
  m.is_dm = true;
  m.created_at_ms = 1712345678000;
  m.attachments.push_back(Attachment{"F1", "shot.png", "image/png", "image", 1234,
                                     "https://h/files-pri/T1-F1/download/shot.png"});
  m.attachments.push_back(Attachment{"F2", "a.txt", "text/plain", "file", 3});
  std::optional<InboundMessage> back = inbound_from_json(inbound_to_json(m));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->platform, m.platform);
  EXPECT_EQ(back->bot, m.bot);
  EXPECT_EQ(back->channel_id, m.channel_id);
  EXPECT_EQ(back->user_id, m.user_id);
  EXPECT_EQ(back->username, m.username);
  EXPECT_EQ(back->text, m.text);
  EXPECT_EQ(back->post_id, m.post_id);
  EXPECT_EQ(back->thread_root_id, m.thread_root_id);
  EXPECT_TRUE(back->mentions_bot);
  EXPECT_TRUE(back->is_dm);
  EXPECT_EQ(back->created_at_ms, m.created_at_ms);
  ASSERT_EQ(back->attachments.size(), 2u);
  EXPECT_EQ(back->attachments[0].url, "https://h/files-pri/T1-F1/download/shot.png");
  EXPECT_EQ(back->attachments[0].size, 1234);
  EXPECT_EQ(back->attachments[0].type, "image");
  EXPECT_EQ(back->attachments[1].url, "");
  EXPECT_EQ(back->attachments[1].name, "a.txt");
}

TEST(InboundJson, OlderDocumentsWithoutUrlAndJunk) {
  auto old = inbound_from_json(R"({"post":"p1","files":[{"id":"F1","name":"x","size":2}]})");
  ASSERT_TRUE(old);
  ASSERT_EQ(old->attachments.size(), 1u);
  EXPECT_EQ(old->attachments[0].url, "");
  EXPECT_EQ(old->attachments[0].type, "file");
  for (const char* bad : {"", "nope", "[]", R"({"text":"no post"})", R"({"post":5})",
                          R"({"post":"p","files":[7]})", R"({"post":"p","at":"x"})"})
    EXPECT_FALSE(inbound_from_json(bad)) << bad;
}

}  // namespace
}  // namespace pf
