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

}  // namespace
}  // namespace pf
