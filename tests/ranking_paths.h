// A check both stores' tests share (bm25_index_test for SQLite, pg_search_test for PostgreSQL):
// a process's first searches rank in the database, its second starts the in-memory index in the
// background, and the searches after that index is made return the same, score for score.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <iterator>
#include <string>
#include <vector>

#include "search/lexical.h"
#include "store/bm25_cache.h"

namespace pf::test {

// store: freshly opened (this process has no in-memory index of it yet).
template <size_t N>
void expect_database_then_memory_the_same(Store& store, const char* const (&questions)[N]) {
  std::atomic<int> builds{0};
  set_bm25_build_hook([&](const std::string&) { ++builds; });
  std::vector<std::vector<SearchResult>> in_database;
  for (const char* question : questions) in_database.push_back(lexical_search(store, question));
  wait_for_bm25_builds();
  set_bm25_build_hook(nullptr);
  EXPECT_EQ(builds.load(), 1);
  for (size_t i = 0; i < N; ++i) {
    SCOPED_TRACE(questions[i]);
    auto in_memory = lexical_search(store, questions[i]);
    ASSERT_FALSE(in_memory.empty());
    ASSERT_EQ(in_memory.size(), in_database[i].size());
    for (size_t k = 0; k < in_memory.size(); ++k) {
      EXPECT_EQ(in_memory[k].hit.chunk.path, in_database[i][k].hit.chunk.path) << k;
      EXPECT_EQ(in_memory[k].hit.chunk.start_line, in_database[i][k].hit.chunk.start_line) << k;
      EXPECT_EQ(in_memory[k].hit.score, in_database[i][k].hit.score) << k;
    }
  }
}

}  // namespace pf::test
