// Markdown/MDX by heading tree: preamble kept, heading paths, fences respected, original line
// numbers, oversized sections split at paragraphs and never inside a fence.
#include <gtest/gtest.h>

#include <sstream>

#include "index/chunker.h"
#include "test_util.h"

namespace pf {
namespace {

const char* kDoc = R"(---
title: Server
---

# Server

Intro to the server.

## Factory

How to build one.

```js
# not a heading
## also not
```

### trustProxy

Set it when behind a proxy.

Options
-------

Setext heading above.
)";

TEST(MarkdownChunker, SectionsFollowTheHeadingTree) {
  auto chunks = chunk_file("docs/server.md", "markdown", kDoc);
  ASSERT_EQ(chunks.size(), 5u);
  EXPECT_EQ(chunks[0].start_line, 1);  // front matter is kept as the preamble
  EXPECT_EQ(chunks[0].end_line, 3);
  EXPECT_EQ(chunks[1].start_line, 5);
  EXPECT_EQ(chunks[1].heading_path, "Server");
  EXPECT_EQ(chunks[2].start_line, 9);
  EXPECT_EQ(chunks[2].end_line, 16);  // the fence's '#' lines stay inside Factory
  EXPECT_EQ(chunks[2].heading_path, "Server \u203a Factory");
  EXPECT_EQ(chunks[3].heading_path, "Server \u203a Factory \u203a trustProxy");
  EXPECT_EQ(chunks[3].symbol, "trustProxy");
  EXPECT_EQ(chunks[4].start_line, 22);
  EXPECT_EQ(chunks[4].heading_path, "Server \u203a Options");
  for (const auto& c : chunks) {
    EXPECT_EQ(c.chunk_type, "section");
    EXPECT_EQ(c.language, "markdown");
  }
  test::expect_chunks_cover(kDoc, chunks);
}

TEST(MarkdownChunker, TextBeforeTheFirstHeadingIsKept) {
  const char* doc = "Some intro\nwithout heading\n\n## A\n\nbody\n";
  auto chunks = chunk_file("x.md", "markdown", doc);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].start_line, 1);
  EXPECT_EQ(chunks[0].end_line, 2);
  EXPECT_EQ(chunks[0].heading_path, "");
}

TEST(MarkdownChunker, HeadingWithoutBodyJoinsTheNextSection) {
  const char* doc = "# API\n\n## Options\n\n### timeout\n\nMilliseconds.\n";
  auto chunks = chunk_file("x.md", "markdown", doc);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].start_line, 1);
  EXPECT_EQ(chunks[0].heading_path, "API \u203a Options \u203a timeout");
}

TEST(MarkdownChunker, OversizedSectionSplitsAtParagraphsNeverInsideFences) {
  std::ostringstream s;
  s << "## Big\n\n";
  for (int p = 0; p < 10; ++p) {
    for (int l = 0; l < 12; ++l) s << "paragraph " << p << " line " << l << "\n";
    s << "\n";
  }
  s << "```\n";
  for (int l = 0; l < 50; ++l) s << "code " << l << "\n";
  s << "\n";  // a blank line inside the fence is not a boundary
  for (int l = 0; l < 20; ++l) s << "more " << l << "\n";
  s << "```\n";
  std::string doc = s.str();
  auto chunks = chunk_file("big.md", "markdown", doc);
  test::expect_chunks_cover(doc, chunks);
  ASSERT_GE(chunks.size(), 2u);
  for (const auto& c : chunks) {
    EXPECT_EQ(c.heading_path, "Big");
    // Each chunk opens and closes fences in pairs.
    size_t fences = 0;
    for (size_t at = c.content.find("```"); at != std::string::npos;
         at = c.content.find("```", at + 3))
      ++fences;
    EXPECT_EQ(fences % 2, 0u) << c.start_line << "-" << c.end_line;
  }
}

TEST(MarkdownChunker, LongOptionListsSplitAtItemsNotInsideThem) {
  std::ostringstream s;
  s << "### Parameter: `ClientOptions`\n\n";
  for (int i = 0; i < 30; ++i) {
    s << "* **option" << i << "** `number` (optional) - Default: `" << i << "` - "
      << std::string(150, 'x') << "\n";
    s << "  * **nested" << i << "** `boolean` - continues the item above\n";
  }
  std::string doc = s.str();
  ChunkLimits limits;
  auto chunks = chunk_file("docs/Client.md", "markdown", doc, limits);
  test::expect_chunks_cover(doc, chunks);
  ASSERT_GE(chunks.size(), 3u);  // 32 lines, under the line cap, but over the size cap
  for (size_t i = 0; i < chunks.size(); ++i) {
    const auto& c = chunks[i];
    EXPECT_LE(c.content.size(), static_cast<size_t>(limits.max_chars) + 400) << i;
    EXPECT_EQ(c.heading_path, "Parameter: `ClientOptions`");
    // Pieces after the first start at a top-level item, and a nested line stays with its item.
    if (i > 0) {
      EXPECT_EQ(c.content.rfind("* **option", 0), 0u) << c.content.substr(0, 40);
    }
  }
}

TEST(MarkdownChunker, SizeCapNeverCutsAFence) {
  std::ostringstream s;
  s << "## Example\n\n```js\n";
  for (int i = 0; i < 40; ++i)
    s << "const value" << i << " = compute('" << std::string(60, 'y') << "')\n";
  s << "```\n\nAfter the example.\n";
  std::string doc = s.str();
  auto chunks = chunk_file("x.md", "markdown", doc);
  test::expect_chunks_cover(doc, chunks);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].end_line, 44);  // the whole fence, though over the size cap
  EXPECT_EQ(chunks[1].content, "After the example.");
}

TEST(MarkdownChunker, UnclosedFenceRunsToTheEnd) {
  const char* doc = "# A\n\n```\n# inside\n";
  auto chunks = chunk_file("x.md", "markdown", doc);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].end_line, 4);
}

TEST(MarkdownChunker, MdxComponentsKeepTheirText) {
  const char* doc =
      "import { Tip } from 'x'\n\n# Setup\n\n<Tip>\nRun the installer first.\n</Tip>\n";
  auto chunks = chunk_file("docs/setup.mdx", detect_language("docs/setup.mdx"), doc);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_NE(chunks[1].content.find("Run the installer first."), std::string::npos);
  EXPECT_EQ(chunks[1].start_line, 3);
}

}  // namespace
}  // namespace pf
