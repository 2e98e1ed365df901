// Giving memory back (core/allocator.h): pages freed in the middle of the heap, which the
// allocator keeps, go back to the system; the process's resident size is read.
#include "core/allocator.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

namespace pf {
namespace {

TEST(Allocator, ReadsTheResidentSize) {
  size_t rss = resident_bytes();
  EXPECT_GT(rss, size_t{1} << 20);        // a test binary is over 1 MiB resident
  EXPECT_LT(rss, size_t{16} << 30);       // and nowhere near this machine's memory
}

TEST(Allocator, FreedPagesInsideTheHeapGoBack) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's allocator keeps freed memory in quarantine";
#else
  // 64 MiB in 4 KiB blocks, every 64th kept: the heap's top cannot shrink, so only a release
  // of the free pages inside it gives them back.
  std::vector<char*> blocks;
  for (int i = 0; i < 16384; ++i) {
    char* b = static_cast<char*>(std::malloc(4000));
    for (int j = 0; j < 4000; j += 512) b[j] = static_cast<char>(j);  // touched: resident
    blocks.push_back(b);
  }
  for (size_t i = 0; i < blocks.size(); ++i)
    if (i % 64 != 0) std::free(blocks[i]);
  size_t before = resident_bytes();
  release_free_memory();
  size_t after = resident_bytes();
  EXPECT_LT(after + (size_t{32} << 20), before) << before << " -> " << after;
  for (size_t i = 0; i < blocks.size(); i += 64) std::free(blocks[i]);
#endif
}

}  // namespace
}  // namespace pf
