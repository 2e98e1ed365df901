// chat/slack/slack_events.h on payloads shaped as Slack (and tests/servers/slack_server.mjs)
// sends them: ts arithmetic, Socket Mode frames, message / app_mention / edit / delete /
// reaction events, own and unsupported messages ignored, and the seam's types made from them.
#include "chat/slack/slack_events.h"

#include <gtest/gtest.h>

#include <string>

#include "core/json.h"

namespace pf {
namespace {

using nlohmann::json;

const SlackSelf kSelf{"UBOT", "BBOT"};

SlackContext context() {
  SlackContext c;
  c.platform = "slack";
  c.bot = "pilot";
  c.self = kSelf;
  return c;
}

// An Events API body around event, as the server wraps it.
json body(const std::string& event) {
  return parse_json(R"({"token":"verification-token","team_id":"T1","api_app_id":"A1",
    "type":"event_callback","event_id":"Ev0001","event_time":1712345678,
    "authorizations":[{"team_id":"T1","user_id":"UBOT","is_bot":true}],
    "is_ext_shared_channel":false,"event":)" +
                    event + "}");
}

TEST(SlackEvents, TsIsExactIntegerMicroseconds) {
  EXPECT_EQ(parse_ts("1712345678.123456"), 1712345678123456);
  EXPECT_EQ(parse_ts("1712345678.5"), 1712345678500000);
  EXPECT_EQ(parse_ts("1712345678"), 1712345678000000);
  EXPECT_EQ(parse_ts("0.000001"), 1);
  EXPECT_EQ(parse_ts("999999999999.999999"), 999999999999999999);
  for (const char* bad : {"", ".", "1.", ".5", "-1.0", "+1.0", " 1.0", "1.0 ", "1.1234567",
                          "1234567890123.0", "1e9", "1.2.3", "0x10", "1,5", "\xff"})
    EXPECT_FALSE(parse_ts(bad)) << bad;
  EXPECT_EQ(format_ts(1712345678123456), "1712345678.123456");
  EXPECT_EQ(format_ts(5), "0.000005");
  EXPECT_EQ(format_ts(-3), "0.000000");
  // Neighbours a double would merge stay apart.
  EXPECT_NE(parse_ts("1712345678.123456"), parse_ts("1712345678.123457"));
  EXPECT_EQ(format_ts(*parse_ts("1712345678.000100")), "1712345678.000100");
  std::string channel, ts;
  EXPECT_TRUE(split_post_id(slack_post_id("C1", "1.000002"), &channel, &ts));
  EXPECT_EQ(channel, "C1");
  EXPECT_EQ(ts, "1.000002");
  EXPECT_FALSE(split_post_id("C1", &channel, &ts));
  EXPECT_FALSE(split_post_id(":1.0", &channel, &ts));
  EXPECT_FALSE(split_post_id("C1:", &channel, &ts));
}

TEST(SlackEvents, SocketFrames) {
  SlackFrame hello = parse_socket_frame(
      R"({"type":"hello","num_connections":2,"debug_info":{"host":"h","build_number":118,
      "approximate_connection_time":18060},"connection_info":{"app_id":"A1"}})");
  ASSERT_EQ(hello.kind, SlackFrame::Kind::kHello) << hello.error;
  EXPECT_EQ(hello.num_connections, 2);
  EXPECT_EQ(hello.approximate_connection_time, 18060);
  EXPECT_EQ(hello.app_id, "A1");

  SlackFrame bye = parse_socket_frame(R"({"type":"disconnect","reason":"refresh_requested",
      "debug_info":{"host":"h"}})");
  ASSERT_EQ(bye.kind, SlackFrame::Kind::kDisconnect);
  EXPECT_EQ(bye.reason, "refresh_requested");

  SlackFrame env = parse_socket_frame(
      R"({"envelope_id":"e-1","payload":{"type":"event_callback","event_id":"Ev9"},
      "type":"events_api","accepts_response_payload":false,"retry_attempt":2,
      "retry_reason":"timeout"})");
  ASSERT_EQ(env.kind, SlackFrame::Kind::kEnvelope) << env.error;
  EXPECT_EQ(env.envelope_id, "e-1");
  EXPECT_EQ(env.envelope_type, "events_api");
  EXPECT_EQ(env.retry_attempt, 2);
  EXPECT_EQ(env.retry_reason, "timeout");
  EXPECT_FALSE(env.accepts_response_payload);
  EXPECT_EQ(env.payload.value("event_id", ""), "Ev9");
  EXPECT_EQ(parse_json(socket_ack("e-1")), json({{"envelope_id", "e-1"}}));

  SlackFrame slash = parse_socket_frame(
      R"({"envelope_id":"e-2","type":"slash_commands","accepts_response_payload":true})");
  ASSERT_EQ(slash.kind, SlackFrame::Kind::kEnvelope);  // acknowledged though not acted on
  EXPECT_TRUE(slash.accepts_response_payload);
  EXPECT_TRUE(slash.payload.is_object());

  EXPECT_EQ(parse_socket_frame(R"({"type":"something_new"})").kind, SlackFrame::Kind::kUnknown);
  for (const char* bad : {"", "not json", "[]", "42", R"({"a":1})", R"({"type":"events_api"})",
                          R"({"envelope_id":7,"type":"events_api"})", "{\"type\":\"hello\""}) {
    SlackFrame f = parse_socket_frame(bad);
    EXPECT_EQ(f.kind, SlackFrame::Kind::kMalformed) << bad;
    EXPECT_FALSE(f.error.empty()) << bad;
  }
  std::string deep(100000, '[');
  EXPECT_EQ(parse_socket_frame(deep).kind, SlackFrame::Kind::kMalformed);
}

TEST(SlackEvents, AMentionAndItsMessageAreOnePost) {
  const char* fields =
      R"("user":"U1","text":"<@UBOT> where is &lt;main&gt;?","ts":"1712345678.000100",
      "team":"T1","client_msg_id":"0b9c","channel":"C1","event_ts":"1712345678.000100")";
  SlackEvent msg = parse_event_callback(
      body(std::string(R"({"type":"message",)") + fields + R"(,"channel_type":"channel"})"), kSelf);
  SlackEvent mention =
      parse_event_callback(body(std::string(R"({"type":"app_mention",)") + fields + "}"), kSelf);
  ASSERT_EQ(msg.kind, SlackEvent::Kind::kMessage) << msg.reason;
  ASSERT_EQ(mention.kind, SlackEvent::Kind::kAppMention) << mention.reason;
  EXPECT_EQ(msg.event_id, "Ev0001");
  EXPECT_EQ(msg.team_id, "T1");
  EXPECT_EQ(msg.event_time, 1712345678);
  EXPECT_EQ(msg.message.client_msg_id, "0b9c");
  SlackContext c = context();
  c.resolve = [](const std::string& id) {
    return id == "UBOT" ? std::string("pilot") : std::string();
  };
  auto a = to_inbound_message(msg, c), b = to_inbound_message(mention, c);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->post_id, "C1:1712345678.000100");
  EXPECT_EQ(a->post_id, b->post_id);
  EXPECT_EQ(a->text, "@pilot where is <main>?");
  EXPECT_TRUE(a->mentions_bot);
  EXPECT_FALSE(a->is_dm);
  EXPECT_EQ(a->thread_root_id, "");
  EXPECT_EQ(a->created_at_ms, 1712345678000);
  EXPECT_EQ(a->platform, "slack");
  EXPECT_EQ(a->bot, "pilot");
  EXPECT_EQ(a->user_id, "U1");
  EXPECT_FALSE(a->from_bot);
  EXPECT_FALSE(to_inbound_reaction(msg, c));
  EXPECT_FALSE(to_inbound_change(msg, c));
}

TEST(SlackEvents, ThreadsAndChannelTypes) {
  SlackContext c = context();
  auto inbound = [&](const std::string& extra) {
    SlackEvent ev = parse_event_callback(
        body(
            R"({"type":"message","user":"U1","text":"hi","ts":"1712345679.000200","channel":"C1")" +
            extra + "}"),
        kSelf);
    EXPECT_EQ(ev.kind, SlackEvent::Kind::kMessage) << ev.reason;
    return to_inbound_message(ev, c).value_or(InboundMessage{});
  };
  InboundMessage reply = inbound(R"(,"channel_type":"channel","thread_ts":"1712345678.000100")");
  EXPECT_EQ(reply.thread_root_id, "C1:1712345678.000100");
  EXPECT_FALSE(reply.mentions_bot);
  // A thread's parent carries thread_ts == ts: top level.
  EXPECT_EQ(inbound(R"(,"channel_type":"channel","thread_ts":"1712345679.000200")").thread_root_id,
            "");
  InboundMessage im = inbound(R"(,"channel_type":"im")");
  EXPECT_TRUE(im.is_dm);
  EXPECT_TRUE(im.mentions_bot);
  InboundMessage mpim = inbound(R"(,"channel_type":"mpim")");
  EXPECT_TRUE(mpim.is_dm);
  EXPECT_FALSE(mpim.mentions_bot);
  InboundMessage group = inbound(R"(,"channel_type":"group")");
  EXPECT_FALSE(group.is_dm);
  EXPECT_EQ(
      inbound(R"(,"subtype":"thread_broadcast","thread_ts":"1712345678.000100")").thread_root_id,
      "C1:1712345678.000100");
  // An app_mention has no channel_type: a D… channel is a DM.
  SlackEvent dm = parse_event_callback(
      body(R"({"type":"app_mention","user":"U1","text":"<@UBOT>","ts":"1.000001","channel":"D9"})"),
      kSelf);
  EXPECT_TRUE(to_inbound_message(dm, c)->is_dm);
}

TEST(SlackEvents, FilesBecomeAttachments) {
  SlackEvent ev = parse_event_callback(body(R"({"type":"message","subtype":"file_share",
      "user":"U1","text":"look","ts":"1712345678.000300","channel":"C1","channel_type":"channel",
      "files":[{"id":"F1","name":"shot.png","title":"shot","mimetype":"image/png","size":1234,
        "url_private":"http://h/files-pri/T1-F1/shot.png",
        "url_private_download":"http://h/files-pri/T1-F1/download/shot.png"},
       {"id":"F2","name":"notes.txt","mimetype":"text/plain","url_private":"http://h/p/notes.txt"},
       {"name":"no id"}, 7]})"),
                                       kSelf);
  ASSERT_EQ(ev.kind, SlackEvent::Kind::kMessage) << ev.reason;
  auto m = to_inbound_message(ev, context());
  ASSERT_TRUE(m);
  ASSERT_EQ(m->attachments.size(), 2u);
  EXPECT_EQ(m->attachments[0].id, "F1");
  EXPECT_EQ(m->attachments[0].name, "shot.png");
  EXPECT_EQ(m->attachments[0].mime_type, "image/png");
  EXPECT_EQ(m->attachments[0].type, "image");
  EXPECT_EQ(m->attachments[0].size, 1234);
  EXPECT_EQ(m->attachments[0].url, "http://h/files-pri/T1-F1/download/shot.png");
  EXPECT_EQ(m->attachments[1].type, "file");
  EXPECT_EQ(m->attachments[1].url, "http://h/p/notes.txt");  // url_private when no download URL
}

TEST(SlackEvents, EditsAndDeletions) {
  SlackEvent edit = parse_event_callback(body(R"({"type":"message","subtype":"message_changed",
      "message":{"user":"U1","type":"message","ts":"1712345678.000100","text":"new &amp; better",
        "edited":{"user":"U1","ts":"1712345680.000000"}},
      "previous_message":{"user":"U1","type":"message","ts":"1712345678.000100","text":"old"},
      "channel":"C1","hidden":true,"ts":"1712345680.000001","event_ts":"1712345680.000001",
      "channel_type":"channel"})"),
                                         kSelf);
  ASSERT_EQ(edit.kind, SlackEvent::Kind::kMessageChanged) << edit.reason;
  auto change = to_inbound_change(edit, context());
  ASSERT_TRUE(change);
  EXPECT_EQ(change->post_id, "C1:1712345678.000100");
  EXPECT_EQ(change->channel_id, "C1");
  EXPECT_EQ(change->text, "new & better");
  EXPECT_FALSE(change->deleted);
  EXPECT_FALSE(to_inbound_message(edit, context()));

  SlackEvent del = parse_event_callback(body(R"({"type":"message","subtype":"message_deleted",
      "hidden":true,"deleted_ts":"1712345678.000100","channel":"C1",
      "previous_message":{"user":"U1","ts":"1712345678.000100","text":"old"},
      "event_ts":"1712345681.000000","ts":"1712345681.000000","channel_type":"channel"})"),
                                        kSelf);
  ASSERT_EQ(del.kind, SlackEvent::Kind::kMessageDeleted) << del.reason;
  change = to_inbound_change(del, context());
  ASSERT_TRUE(change);
  EXPECT_TRUE(change->deleted);
  EXPECT_EQ(change->post_id, "C1:1712345678.000100");

  // An unfurl or reply count changes the message, not its text; our own edits come back too.
  EXPECT_EQ(
      parse_event_callback(body(R"({"type":"message","subtype":"message_changed","channel":"C1",
      "message":{"user":"U1","ts":"1.000001","text":"same"},
      "previous_message":{"user":"U1","ts":"1.000001","text":"same"}})"),
                           kSelf)
          .kind,
      SlackEvent::Kind::kIgnored);
  SlackEvent own = parse_event_callback(body(R"({"type":"message","subtype":"message_changed",
      "channel":"C1","message":{"user":"UBOT","bot_id":"BBOT","ts":"1.000001","text":"b"},
      "previous_message":{"user":"UBOT","ts":"1.000001","text":"a"}})"),
                                        kSelf);
  EXPECT_EQ(own.kind, SlackEvent::Kind::kIgnored);
  EXPECT_EQ(own.reason, "own message");
  EXPECT_EQ(parse_event_callback(
                body(R"({"type":"message","subtype":"message_changed","channel":"C1"})"), kSelf)
                .kind,
            SlackEvent::Kind::kMalformed);
}

TEST(SlackEvents, ReactionsDropSkinTones) {
  SlackEvent added = parse_event_callback(body(R"({"type":"reaction_added","user":"U1",
      "reaction":"thumbsup::skin-tone-2","item":{"type":"message","channel":"C1",
      "ts":"1712345678.000100"},"item_user":"UBOT","event_ts":"1712345682.000000"})"),
                                          kSelf);
  ASSERT_EQ(added.kind, SlackEvent::Kind::kReaction) << added.reason;
  auto r = to_inbound_reaction(added, context());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->emoji, "thumbsup");
  EXPECT_EQ(r->post_id, "C1:1712345678.000100");
  EXPECT_EQ(r->user_id, "U1");
  EXPECT_EQ(r->channel_id, "C1");
  EXPECT_TRUE(r->added);
  SlackEvent removed = parse_event_callback(body(R"({"type":"reaction_removed","user":"U1",
      "reaction":"white_check_mark","item":{"type":"message","channel":"C1","ts":"1.000001"}})"),
                                            kSelf);
  ASSERT_EQ(removed.kind, SlackEvent::Kind::kReaction);
  EXPECT_FALSE(to_inbound_reaction(removed, context())->added);
  EXPECT_EQ(parse_event_callback(body(R"({"type":"reaction_added","user":"UBOT","reaction":"eyes",
      "item":{"type":"message","channel":"C1","ts":"1.000001"}})"),
                                 kSelf)
                .reason,
            "own reaction");
  EXPECT_EQ(parse_event_callback(body(R"({"type":"reaction_added","user":"U1","reaction":"eyes",
      "item":{"type":"file","file":"F1"}})"),
                                 kSelf)
                .kind,
            SlackEvent::Kind::kIgnored);
  EXPECT_EQ(parse_event_callback(body(R"({"type":"reaction_added","user":"U1",
      "item":{"type":"message","channel":"C1","ts":"1.000001"}})"),
                                 kSelf)
                .kind,
            SlackEvent::Kind::kMalformed);
}

TEST(SlackEvents, IgnoresOwnJoinsAndOtherTypes) {
  auto reason = [](const std::string& event) {
    SlackEvent ev = parse_event_callback(body(event), kSelf);
    EXPECT_EQ(ev.kind, SlackEvent::Kind::kIgnored) << event;
    return ev.reason;
  };
  EXPECT_EQ(reason(R"({"type":"message","user":"UBOT","text":"x","ts":"1.000001","channel":"C1"})"),
            "own message");
  EXPECT_EQ(reason(R"({"type":"message","user":"U5","bot_id":"BBOT","text":"x","ts":"1.000001",
      "channel":"C1"})"),
            "own message");
  EXPECT_EQ(reason(R"({"type":"message","subtype":"channel_join","user":"U1","text":"joined",
      "ts":"1.000001","channel":"C1"})"),
            "subtype channel_join");
  EXPECT_EQ(reason(R"({"type":"member_joined_channel","user":"U1","channel":"C1"})"),
            "event type member_joined_channel");
  SlackEvent hook =
      parse_event_callback(parse_json(R"({"type":"url_verification","challenge":"x"})"), kSelf);
  EXPECT_EQ(hook.kind, SlackEvent::Kind::kIgnored);
  // Another bot's post goes on, marked: the orchestrator decides.
  SlackEvent other = parse_event_callback(
      body(R"({"type":"message","subtype":"bot_message","bot_id":"B2","text":"hi","ts":"1.000001",
      "channel":"C1","channel_type":"channel"})"),
      kSelf);
  ASSERT_EQ(other.kind, SlackEvent::Kind::kMessage) << other.reason;
  auto m = to_inbound_message(other, context());
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->from_bot);
  EXPECT_EQ(m->user_id, "B2");
}

TEST(SlackEvents, MalformedPayloads) {
  for (
      const char* bad :
      {R"(null)", R"([])", R"({"type":"event_callback"})", R"({"type":"event_callback","event":3})",
       R"({"type":"event_callback","event":{"type":"message","text":"no ts","user":"U1","channel":"C1"}})",
       R"({"type":"event_callback","event":{"type":"message","ts":"1.0","channel":"C1"}})",
       R"({"type":"event_callback","event":{"type":"message","ts":"-1.0","user":"U1","channel":"C1"}})",
       R"({"type":"event_callback","event":{"type":"message","ts":"1.0","user":"U1"}})",
       R"({"type":"event_callback","event":{"type":"message","subtype":"message_deleted","channel":"C1"}})"}) {
    SlackEvent ev = parse_event_callback(parse_json(bad), kSelf);
    EXPECT_EQ(ev.kind, SlackEvent::Kind::kMalformed) << bad;
    EXPECT_FALSE(ev.reason.empty()) << bad;
    EXPECT_FALSE(to_inbound_message(ev, context()));
    EXPECT_FALSE(to_inbound_change(ev, context()));
  }
  // Wrong types in every field are read as absent, never thrown on.
  SlackEvent odd = parse_event_callback(
      parse_json(
          R"({"type":"event_callback","event_id":5,"event_time":1e300,"event":{"type":"message",
      "user":"U1","text":["x"],"ts":"2.5","channel":"C1","thread_ts":{},"files":{"id":"F"}}})"),
      kSelf);
  ASSERT_EQ(odd.kind, SlackEvent::Kind::kMessage) << odd.reason;
  EXPECT_EQ(odd.event_time, 0);
  EXPECT_EQ(to_inbound_message(odd, context())->post_id, "C1:2.500000");
}

TEST(SlackEvents, HistoryMessages) {
  std::string error;
  auto m = parse_slack_message(parse_json(R"({"type":"message","user":"U1","text":"<@UBOT> hi",
      "ts":"1712345678.000100","thread_ts":"1712345678.000100","reply_count":2})"),
                               "C7", &error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(m->channel, "C7");
  auto in = to_inbound_message(*m, false, context());
  ASSERT_TRUE(in);
  EXPECT_TRUE(in->mentions_bot);
  EXPECT_EQ(in->thread_root_id, "");
  EXPECT_FALSE(parse_slack_message(json::array(), "C7", &error));
  EXPECT_FALSE(error.empty());
}

}  // namespace
}  // namespace pf
