// The channel outbox and streamed replies (bridge/streaming.h) on a recording adapter: edits of
// a reply at most one per interval, the final edit and an error included; a reply done before
// its first edit posted whole at once; a held edit outliving its stream and awaited by
// drained(); a final edit that repeats the last one neither sent nor waited for; posts split at
// headings and never inside a character; native streams (status line, appends, stop, roll-over
// into a new stream, the fallback to a post when refused, discard and fail).
#include "bridge/streaming.h"

#include "recording_adapter.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "core/error.h"
#include "core/text.h"

namespace pf {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

asio::awaitable<void> sleep_for(milliseconds ms) {
  asio::steady_timer t(co_await asio::this_coro::executor, ms);
  co_await t.async_wait(asio::use_awaitable);
}

// Runs body on a fresh io_context until it and everything it queued are done.
void run(asio::io_context& io, std::function<asio::awaitable<void>()> body) {
  bool done = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await body();
        done = true;
      },
      asio::detached);
  io.run();
  ASSERT_TRUE(done);
}

StreamOptions every(milliseconds interval) {
  StreamOptions o;
  o.interval = interval;
  return o;
}

TEST(Streaming, EditsOfAReplyAreOneIntervalApartTheFinalEditIncluded) {
  asio::io_context io;
  RecordingAdapter adapter;
  auto posts = std::make_shared<PostQueue>(io.get_executor(), adapter, "c1");
  const milliseconds interval(300);
  Clock::time_point finalized;
  run(io, [&]() -> asio::awaitable<void> {
    ReplyStream stream(io, posts, "", every(interval));
    stream.start();
    co_await sleep_for(milliseconds(20));
    for (int i = 0; i < 5; ++i) {
      stream.append("word" + std::to_string(i) + " ");
      co_await sleep_for(milliseconds(70));  // 5 deltas in 350 ms: one edit at 300 ms
    }
    stream.append("end.");
    finalized = Clock::now();
    stream.finalize();  // 50 ms after the first edit: held until 300 ms after it
    co_await posts->drained();
  });
  auto edits = adapter.edits();
  ASSERT_EQ(edits.size(), 2u);
  EXPECT_EQ(edits.back().text, "word0 word1 word2 word3 word4 end.");
  EXPECT_GE(edits[1].at - edits[0].at, interval - milliseconds(5));
  EXPECT_GE(edits[0].at - adapter.calls.front().at, interval - milliseconds(25));
  EXPECT_GT(edits[1].at, finalized + milliseconds(150));
}

TEST(Streaming, AReplyDoneBeforeItsFirstEditIsPostedWholeAtOnce) {
  asio::io_context io;
  RecordingAdapter adapter;
  auto posts = std::make_shared<PostQueue>(io.get_executor(), adapter, "c1");
  Clock::time_point began = Clock::now();
  run(io, [&]() -> asio::awaitable<void> {
    ReplyStream stream(io, posts, "", every(milliseconds(5000)));
    stream.start();
    stream.append("short answer");
    stream.finalize();
    co_await posts->drained();
  });
  // Created with the whole text (the placeholder never showed), no edit, not held 5 s.
  ASSERT_EQ(adapter.calls.size(), 1u);
  EXPECT_EQ(adapter.calls[0].op, "create");
  EXPECT_EQ(adapter.calls[0].text, "short answer");
  EXPECT_LT(Clock::now() - began, milliseconds(2500));
}

TEST(Streaming, AHeldFinalEditOutlivesItsStreamAndDrainedWaitsForIt) {
  asio::io_context io;
  RecordingAdapter adapter;
  auto posts = std::make_shared<PostQueue>(io.get_executor(), adapter, "c1");
  bool drained_before_final = false;
  run(io, [&]() -> asio::awaitable<void> {
    {
      ReplyStream stream(io, posts, "", every(milliseconds(200)));
      stream.start();
      stream.append("one ");
      co_await sleep_for(milliseconds(250));  // the first edit went out at 200 ms
      stream.append("two");
      stream.finalize();
    }  // the stream is gone; its final edit is held by the queue
    ReplyStream other(io, posts, "", every(milliseconds(200)));
    other.start("next reply");  // another post is not held behind it
    co_await posts->drained();
    drained_before_final = adapter.edits().size() < 2;
  });
  EXPECT_FALSE(drained_before_final);
  auto edits = adapter.edits();
  ASSERT_EQ(edits.size(), 2u);
  EXPECT_EQ(edits[1].text, "one two");
  ASSERT_EQ(adapter.calls.size(), 4u);
  EXPECT_EQ(adapter.calls[2].op, "create");  // the next reply went out before the held edit
  EXPECT_EQ(adapter.calls[2].text, "next reply");
  EXPECT_GE(edits[1].at - edits[0].at, milliseconds(195));
}

TEST(Streaming, AFinalEditThatRepeatsTheLastOneIsNotSentNorWaitedFor) {
  asio::io_context io;
  RecordingAdapter adapter;
  auto posts = std::make_shared<PostQueue>(io.get_executor(), adapter, "c1");
  Clock::time_point finalized, drained;
  run(io, [&]() -> asio::awaitable<void> {
    ReplyStream stream(io, posts, "", every(milliseconds(400)));
    stream.start();
    stream.append("the whole answer");
    co_await sleep_for(milliseconds(450));  // the edit at 400 ms carried the whole text
    finalized = Clock::now();
    stream.finalize();  // due 400 ms after that edit, but it would say nothing new
    co_await posts->drained();
    drained = Clock::now();
  });
  auto edits = adapter.edits();
  ASSERT_EQ(edits.size(), 1u);
  EXPECT_EQ(edits[0].text, "the whole answer");
  // The channel is free at once, not when the repeat would have been due (~350 ms later).
  EXPECT_LT(drained - finalized, milliseconds(200));
}

TEST(Streaming, AnErrorKeepsTheIntervalAndShowsAfterTheText) {
  asio::io_context io;
  RecordingAdapter adapter;
  auto posts = std::make_shared<PostQueue>(io.get_executor(), adapter, "c1");
  run(io, [&]() -> asio::awaitable<void> {
    ReplyStream stream(io, posts, "", every(milliseconds(200)));
    stream.start();
    stream.append("partial");
    co_await sleep_for(milliseconds(220));
    stream.fail("the model went away");
    stream.append(" ignored");
    co_await posts->drained();
  });
  auto edits = adapter.edits();
  ASSERT_EQ(edits.size(), 2u);
  EXPECT_EQ(edits[1].text, "partial\n\n\u274C the model went away");
  EXPECT_GE(edits[1].at - edits[0].at, milliseconds(195));
}

TEST(Streaming, SplitsAtHeadingsAndNeverInsideACharacter) {
  std::string text = std::string(50, 'a') + "\n## Two\n" + std::string(30, 'b');
  size_t cut = split_point(text, 70);
  EXPECT_EQ(text.substr(cut, 3), "## ");
  std::string wide;
  for (int i = 0; i < 30; ++i) wide += "\u00E9";  // two bytes each
  size_t c2 = split_point(wide, 11);
  EXPECT_EQ(c2, 22u);
  EXPECT_EQ(code_points(wide), 30u);
  EXPECT_EQ(split_point("short", 100), 5u);
}

// A reply cut inside a code block: each part closes what it opened and the next part opens it
// again with its language, so no post shows a block cut open; no line of code is lost.
StreamOptions native(milliseconds interval, size_t max_chars = 16000) {
  StreamOptions o = every(interval);
  o.native = true;
  o.recipient = "U7";
  o.max_chars = max_chars;
  return o;
}

TEST(NativeStreaming, AStatusLineThenAStreamThatOnlyGrowsAndIsStopped) {
  asio::io_context io;
  RecordingAdapter adapter;
  auto posts = std::make_shared<PostQueue>(io.get_executor(), adapter, "c1");
  std::string first_id;
  run(io, [&]() -> asio::awaitable<void> {
    ReplyStream stream(io, posts, "root1", native(milliseconds(100)));
    stream.on_first_post([&](const std::string& id) { first_id = id; });
    stream.start();
    co_await sleep_for(milliseconds(20));
    stream.status("is running grep\u2026");
    for (int i = 0; i < 4; ++i) {
      stream.append("word" + std::to_string(i) + " ");
      co_await sleep_for(milliseconds(60));
    }
    stream.append("end.");
    stream.finalize();
    co_await posts->drained();
  });
  // No placeholder post: the status line until the first text, then one stream.
  EXPECT_TRUE(adapter.of("create").empty());
  EXPECT_TRUE(adapter.of("edit").empty());
  auto statuses = adapter.of("status");
  ASSERT_GE(statuses.size(), 2u);
  EXPECT_EQ(statuses[0].id, "root1");
  EXPECT_EQ(statuses[0].text, "is thinking\u2026");
  EXPECT_EQ(statuses[1].text, "is running grep\u2026");
  ASSERT_EQ(adapter.of("start").size(), 1u);
  std::string id = adapter.of("start")[0].id;
  EXPECT_EQ(first_id, id);
  EXPECT_EQ(adapter.recipients, std::vector<std::string>{"U7"});
  EXPECT_EQ(adapter.streamed(id), "word0 word1 word2 word3 end.");
  ASSERT_EQ(adapter.of("stop").size(), 1u);
  EXPECT_EQ(adapter.calls.back().op, "stop");
  // Appends were coalesced: fewer than the deltas, never two within the interval.
  auto appends = adapter.of("append");
  EXPECT_LT(appends.size(), 4u);
  for (size_t i = 1; i < appends.size(); ++i)
    EXPECT_GE(appends[i].at - appends[i - 1].at, milliseconds(95));
}

TEST(NativeStreaming, ALongReplyContinuesInANewStreamWithItsCodeBlockReopened) {
  asio::io_context io;
  RecordingAdapter adapter;
  auto posts = std::make_shared<PostQueue>(io.get_executor(), adapter, "c1");
  std::string text = "Intro.\n\n```cpp\n";
  for (int i = 0; i < 30; ++i)
    text += "int v" + std::to_string(i) + " = " + std::to_string(i) + ";\n";
  text += "```\nDone.";
  run(io, [&]() -> asio::awaitable<void> {
    ReplyStream stream(io, posts, "root1", native(milliseconds(10), 200));
    stream.start();
    for (size_t at = 0; at < text.size(); at += 37) {
      stream.append(text.substr(at, 37));
      co_await sleep_for(milliseconds(15));
    }
    stream.finalize();
    co_await posts->drained();
  });
  auto starts = adapter.of("start");
  ASSERT_GE(starts.size(), 2u);
  EXPECT_EQ(adapter.of("stop").size(), starts.size());  // each stream ended
  std::string joined;
  for (const auto& st : starts) {
    std::string part = adapter.streamed(st.id);
    EXPECT_LE(code_points(part), 200u) << part;
    // Every stream's code fences are balanced: none is left open.
    size_t fences = 0;
    for (size_t at = part.find("```"); at != std::string::npos; at = part.find("```", at + 3))
      ++fences;
    EXPECT_EQ(fences % 2, 0u) << part;
    joined += part;
  }
  EXPECT_NE(joined.find("int v29 = 29;"), std::string::npos);
  EXPECT_NE(joined.find("Done."), std::string::npos);
}

TEST(NativeStreaming, ARefusedStreamFallsBackToAPostAndEdits) {
  asio::io_context io;
  RecordingAdapter adapter;
  adapter.refuse_streams = true;
  auto posts = std::make_shared<PostQueue>(io.get_executor(), adapter, "c1");
  run(io, [&]() -> asio::awaitable<void> {
    ReplyStream stream(io, posts, "root1", native(milliseconds(20)));
    stream.start();
    stream.append("first ");
    co_await sleep_for(milliseconds(50));
    stream.append("second");
    stream.finalize();
    co_await posts->drained();
  });
  ASSERT_EQ(adapter.of("create").size(), 1u);
  EXPECT_EQ(adapter.of("create")[0].text, "first ");
  ASSERT_FALSE(adapter.edits().empty());
  EXPECT_EQ(adapter.edits().back().text, "first second");
  EXPECT_TRUE(adapter.of("stop").empty());
}

TEST(NativeStreaming, DiscardStopsAndDeletesFailAppendsTheErrorAndSilenceClearsTheStatus) {
  asio::io_context io;
  RecordingAdapter adapter;
  auto posts = std::make_shared<PostQueue>(io.get_executor(), adapter, "c1");
  run(io, [&]() -> asio::awaitable<void> {
    ReplyStream taken_back(io, posts, "r1", native(milliseconds(10)));
    taken_back.start();
    taken_back.append("NO_REPLY");
    taken_back.discard();
    ReplyStream failed(io, posts, "r2", native(milliseconds(10)));
    failed.start();
    failed.append("Half an answer");
    co_await sleep_for(milliseconds(30));
    failed.fail("the model went away");
    ReplyStream silent(io, posts, "r3", native(milliseconds(10)));
    silent.start();
    silent.finalize();
    co_await posts->drained();
  });
  auto starts = adapter.of("start");
  ASSERT_EQ(starts.size(), 2u);
  ASSERT_EQ(adapter.of("delete").size(), 1u);
  EXPECT_EQ(adapter.of("delete")[0].id, starts[0].id);
  EXPECT_EQ(adapter.streamed(starts[1].id), "Half an answer\n\n\u274C the model went away");
  auto statuses = adapter.of("status");
  ASSERT_FALSE(statuses.empty());
  EXPECT_EQ(statuses.back().id, "r3");
  EXPECT_EQ(statuses.back().text, "");  // cleared: nothing was said
}

TEST(SplitKeepingFences, ACutInsideACodeBlockClosesAndReopensIt) {
  std::string code;
  for (int i = 0; i < 40; ++i)
    code += "int value_" + std::to_string(i) + " = " + std::to_string(i) + ";\n";
  std::string text = "Here is the file:\n\n```cpp\n" + code + "```\nThat is all.";
  std::vector<std::string> parts;
  std::string rest = text;
  while (code_points(rest) > 200) {
    auto [head, tail] = split_keeping_fences(rest, 200);
    ASSERT_LE(code_points(head), 200u);
    ASSERT_LT(tail.size(), rest.size());
    parts.push_back(head);
    rest = tail;
  }
  parts.push_back(rest);
  ASSERT_GE(parts.size(), 4u);
  std::string joined;
  for (size_t p = 0; p < parts.size(); ++p) {
    size_t fences = 0;
    for (size_t at = parts[p].find("```"); at != std::string::npos;
         at = parts[p].find("```", at + 3))
      ++fences;
    EXPECT_EQ(fences % 2, 0u) << "part " << p << ":\n" << parts[p];
    if (p > 0 && p + 1 < parts.size()) {
      EXPECT_EQ(parts[p].rfind("```cpp\n", 0), 0u) << parts[p];
    }
    joined += parts[p];
  }
  for (int i = 0; i < 40; ++i)
    EXPECT_NE(joined.find("int value_" + std::to_string(i) + " = "), std::string::npos) << i;
  // Outside a block, or with a fence line too long to repeat, it is split_point's cut.
  std::string prose(300, 'a');
  EXPECT_EQ(split_keeping_fences(prose, 100).first.size(), 96u);
  std::string long_fence = "```" + std::string(150, 'x') + "\n" + std::string(100, 'y');
  auto [h, t] = split_keeping_fences(long_fence, 100);
  EXPECT_EQ(h + t, long_fence);
}

}  // namespace
}  // namespace pf
