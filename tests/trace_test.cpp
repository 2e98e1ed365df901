// core/trace.h: W3C traceparent read strictly and written back; spans recorded only with a sink,
// children under their parent's trace, an unsampled parent's subtree not recorded, attributes
// replaced by key, a failure kept, and a moved span ended once.
#include "core/trace.h"

#include <gtest/gtest.h>

#include <mutex>

namespace pf {
namespace {

class Collect : public SpanSink {
 public:
  void add(SpanData span) override {
    std::lock_guard<std::mutex> lock(mutex);
    spans.push_back(std::move(span));
  }
  std::mutex mutex;
  std::vector<SpanData> spans;
};

TEST(TraceTest, TraceparentIsReadStrictlyAndWrittenBack) {
  const char* good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  auto c = parse_traceparent(good);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(c->span_id, "00f067aa0ba902b7");
  EXPECT_TRUE(c->sampled);
  EXPECT_EQ(format_traceparent(*c), good);
  auto unsampled = parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
  ASSERT_TRUE(unsampled);
  EXPECT_FALSE(unsampled->sampled);
  // A later version is read by its first four fields.
  EXPECT_TRUE(parse_traceparent("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what"));
  for (const char* bad :
       {"", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",   // upper case
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",   // zero trace
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",   // zero span
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",   // version ff
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", // 00 with more
        "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01"})
    EXPECT_FALSE(parse_traceparent(bad)) << bad;
}

TEST(TraceTest, SpansAreRecordedOnlyWithASinkAndNestUnderTheirParent) {
  {
    Span off("nothing", nullptr);
    EXPECT_FALSE(off.recording());
    EXPECT_FALSE(off.context().valid());
  }
  auto sink = std::make_shared<Collect>();
  set_span_sink(sink, true);
  EXPECT_TRUE(tracing_enabled());
  EXPECT_TRUE(trace_content());
  TraceContext root_ctx;
  {
    Span root("root", nullptr, SpanKind::kServer);
    ASSERT_TRUE(root.recording());
    root_ctx = root.context();
    EXPECT_TRUE(root_ctx.valid());
    root.set("k", "v1");
    root.set("k", "v2");  // replaced, not repeated
    root.set("n", 7);
    Span child("child", &root_ctx);
    child.fail("it broke");
    Span moved = std::move(child);
    moved.end();
    moved.end();  // once
  }
  TraceContext remote = *parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
  { Span unsampled("not recorded", &remote); EXPECT_FALSE(unsampled.recording()); }
  set_span_sink(nullptr);
  EXPECT_FALSE(tracing_enabled());
  { Span after("after", nullptr); EXPECT_FALSE(after.recording()); }

  ASSERT_EQ(sink->spans.size(), 2u);
  const SpanData& child = sink->spans[0];
  const SpanData& root = sink->spans[1];
  EXPECT_EQ(root.name, "root");
  EXPECT_EQ(root.kind, SpanKind::kServer);
  EXPECT_EQ(root.parent_span_id, "");
  EXPECT_EQ(root.attributes.size(), 2u);
  EXPECT_EQ(std::get<std::string>(root.attributes[0].second), "v2");
  EXPECT_EQ(std::get<int64_t>(root.attributes[1].second), 7);
  EXPECT_EQ(child.context.trace_id, root.context.trace_id);
  EXPECT_EQ(child.parent_span_id, root.context.span_id);
  EXPECT_TRUE(child.error);
  EXPECT_EQ(child.status_message, "it broke");
  EXPECT_LE(root.start_ns, child.start_ns);
  EXPECT_LE(child.end_ns, root.end_ns);
  EXPECT_NE(child.context.span_id, root.context.span_id);
  EXPECT_EQ(random_trace_hex(8).size(), 16u);
}

}  // namespace
}  // namespace pf
