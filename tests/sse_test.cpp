// The server-sent events parser, against the cases of the format: splits at any byte, CRLF and
// CR endings, multi-line data, comments, event names, ids, a BOM, and stopping early.
#include <gtest/gtest.h>

#include <vector>

#include "net/sse.h"

namespace pf {
namespace {

std::vector<SseEvent> parse_in_pieces(std::string_view stream, size_t piece) {
  std::vector<SseEvent> out;
  SseParser p([&](const SseEvent& e) {
    out.push_back(e);
    return true;
  });
  for (size_t i = 0; i < stream.size(); i += piece) p.feed(stream.substr(i, piece));
  return out;
}

TEST(Sse, EventsWhateverTheSplit) {
  std::string stream =
      "\xEF\xBB\xBF: keep-alive\n\ndata: {\"a\":1}\n\nevent: done\r\ndata: line one\r\ndata: line "
      "two\r\nid: 7\r\n\r\ndata:no-space\r\rdata: [DONE]\n\n";
  for (size_t piece : {1u, 2u, 3u, 5u, 1000u}) {
    auto ev = parse_in_pieces(stream, piece);
    ASSERT_EQ(ev.size(), 4u) << "piece " << piece;
    EXPECT_EQ(ev[0].event, "message");
    EXPECT_EQ(ev[0].data, "{\"a\":1}");
    EXPECT_EQ(ev[1].event, "done");
    EXPECT_EQ(ev[1].data, "line one\nline two");
    EXPECT_EQ(ev[1].id, "7");
    EXPECT_EQ(ev[2].data, "no-space");
    EXPECT_EQ(ev[2].id, "7");  // the last id persists
    EXPECT_EQ(ev[3].data, "[DONE]");
  }
}

TEST(Sse, IncompleteEventsAreNotDispatched) {
  auto ev = parse_in_pieces("data: partial\n", 100);
  EXPECT_TRUE(ev.empty());
  ev = parse_in_pieces("event: only-a-name\n\n", 100);  // no data: nothing to dispatch
  EXPECT_TRUE(ev.empty());
}

TEST(Sse, StopsWhenAsked) {
  int seen = 0;
  SseParser p([&](const SseEvent&) { return ++seen < 2; });
  EXPECT_FALSE(p.feed("data: 1\n\ndata: 2\n\ndata: 3\n\n"));
  EXPECT_EQ(seen, 2);
  EXPECT_FALSE(p.feed("data: 4\n\n"));
  EXPECT_EQ(seen, 2);
}

TEST(Sse, AnEventThatNeverEndsIsCutOff) {
  int events = 0;
  SseParser p([&](const SseEvent&) { return ++events, true; });
  EXPECT_TRUE(p.feed("data: small\n\n"));
  std::string block(1024, 'x');
  bool go_on = p.feed("data: ");
  size_t fed = 0;
  while (go_on && fed < 2 * SseParser::kMaxEventBytes) {
    go_on = p.feed(block);
    fed += block.size();
  }
  EXPECT_FALSE(go_on);
  EXPECT_TRUE(p.overflowed());
  EXPECT_LE(fed, SseParser::kMaxEventBytes + block.size());
  EXPECT_FALSE(p.feed("\n\ndata: late\n\n")) << "stays stopped";
  EXPECT_EQ(events, 1);
  // Many data lines of one event count together.
  SseParser lines([&](const SseEvent&) { return true; });
  std::string line = "data: " + std::string(1 << 20, 'y') + "\n";
  int fed_lines = 0;
  while (lines.feed(line) && fed_lines < 40) ++fed_lines;
  EXPECT_TRUE(lines.overflowed());
  EXPECT_LE(fed_lines, 16);
}

}  // namespace
}  // namespace pf
