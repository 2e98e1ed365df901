// Bounded-work top-k (store/bounded_rank.h) against ranking every row in full: random tables of
// term counts, every budget from "everything" down to "the rarest term only".
#include "store/bounded_rank.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <random>

namespace pf {
namespace {

TEST(TermsToEnumerate, RarestFirstWithinTheBudgetAndTheRarestAlways) {
  EXPECT_EQ(terms_to_enumerate({5, 0, 7}, 0), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(terms_to_enumerate({5, 0, 7}, 12), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(terms_to_enumerate({5, 0, 7}, 11), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(terms_to_enumerate({50, 3, 7}, 10), (std::vector<bool>{false, true, true}));
  // The rarest is kept even alone over the budget; then nothing else fits.
  EXPECT_EQ(terms_to_enumerate({900, 1000}, 10), (std::vector<bool>{true, false}));
  // Equal counts: the earlier term first.
  EXPECT_EQ(terms_to_enumerate({4, 4, 4}, 9), (std::vector<bool>{true, true, false}));
  // Too few rows to fill the result: the next rarest too, if it alone is within the budget.
  EXPECT_EQ(terms_to_enumerate({10, 2995}, 3000, 60), (std::vector<bool>{true, true}));
  EXPECT_EQ(terms_to_enumerate({10, 2995}, 3000, 10), (std::vector<bool>{true, false}));
  EXPECT_EQ(terms_to_enumerate({10, 3001}, 3000, 60), (std::vector<bool>{true, false}));
}

TEST(Bm25Share, GrowsWithCountsAndStaysBelowItsBound) {
  const double w[4] = {8, 4, 3, 1};
  const double idf = bm25_idf(1000, 10);
  EXPECT_GT(idf, 0);
  EXPECT_EQ(bm25_idf(10, 9), 1e-6);  // a term in most rows: the floor
  double last = 0;
  for (uint32_t n = 1; n < 5000; n *= 3) {
    double s = bm25_share(idf, {n, 0, 0, n}, w, 40, 30);
    EXPECT_GT(s, last);
    EXPECT_LT(s, idf * (kBm25K1 + 1));
    last = s;
  }
}

TEST(BoundedTopK, TheKthScoreAndTheEnumeratedBoundTellWhenRareOnlyRowsCannotReachTheTop) {
  const double w[4] = {8, 4, 3, 1};
  // "rare" in 10 of 10,000 rows, enumerated; "common" in 1,000, not (budget 100).
  BoundedTopK top({10, 1000}, 10000, 50, w, 100, 1);
  ASSERT_EQ(top.enumerated(), (std::vector<bool>{true, false}));
  EXPECT_EQ(top.kth_score(), -std::numeric_limits<double>::infinity());  // nothing added yet
  const double rare_bound = bm25_idf(10000, 10) * (kBm25K1 + 1);
  EXPECT_DOUBLE_EQ(top.enumerated_bound(), rare_bound);
  BoundedTopK::Counts both[2] = {{3, 1, 0, 9}, {0, 0, 0, 40}};
  top.add(1, 50, both);
  // One rare instance in the body scores far below the bound; the row with both above it.
  EXPECT_LT(bm25_share(bm25_idf(10000, 10), {0, 0, 0, 1}, w, 50, 50), rare_bound);
  EXPECT_GT(top.kth_score(), rare_bound);
  // A row holding the rare term only, however often, stays under the bound.
  EXPECT_LT(bm25_share(bm25_idf(10000, 10), {60000, 60000, 60000, 60000}, w, 10, 50), rare_bound);
}

struct Table {
  int terms;
  std::vector<std::vector<BoundedTopK::Counts>> rows;  // [row][term]
  std::vector<uint32_t> dl;
  std::vector<int64_t> df;
  double avgdl = 0;
};

Table random_table(std::mt19937& rng, int rows, int terms) {
  Table t{terms, {}, {}, std::vector<int64_t>(static_cast<size_t>(terms), 0), 0};
  // Term i is in about 1 row of (2 << i): a rare term first, then ever commoner ones (shuffled
  // below, so the query order is not the rarity order).
  std::vector<int> rarity(static_cast<size_t>(terms));
  for (int i = 0; i < terms; ++i) rarity[static_cast<size_t>(i)] = terms - i;
  std::shuffle(rarity.begin(), rarity.end(), rng);
  double total = 0;
  for (int r = 0; r < rows; ++r) {
    std::vector<BoundedTopK::Counts> tf(static_cast<size_t>(terms));
    for (int i = 0; i < terms; ++i)
      if (rng() % (1u << rarity[static_cast<size_t>(i)]) == 0) {
        for (auto& c : tf[static_cast<size_t>(i)]) c = rng() % 3;
        tf[static_cast<size_t>(i)][3] += 1;
        ++t.df[static_cast<size_t>(i)];
      }
    t.rows.push_back(tf);
    t.dl.push_back(10 + rng() % 200);
    total += t.dl.back();
  }
  t.avgdl = total / rows;
  return t;
}

TEST(BoundedTopK, EqualsFullRankingWhenExactAndNeverMisranksWhatItReturns) {
  std::mt19937 rng(7);
  const double w[4] = {8, 4, 3, 1};
  int exact_runs = 0, bounded_runs = 0, stopped_early = 0;
  for (int round = 0; round < 40; ++round) {
    Table t = random_table(rng, 3000, 2 + round % 5);
    const int limit = 1 + static_cast<int>(rng() % 60);
    // The full ranking, by hand.
    std::vector<BoundedTopK::Row> all;
    for (size_t r = 0; r < t.rows.size(); ++r) {
      double s = 0;
      bool any = false;
      for (int i = 0; i < t.terms; ++i) {
        const auto& c = t.rows[r][static_cast<size_t>(i)];
        if (c[0] + c[1] + c[2] + c[3] == 0) continue;
        any = true;
        s += bm25_share(bm25_idf(3000, static_cast<double>(t.df[static_cast<size_t>(i)])), c, w,
                        t.dl[r], t.avgdl);
      }
      if (any) all.push_back({static_cast<int64_t>(r), s});
    }
    std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
      return a.score != b.score ? a.score > b.score : a.rowid < b.rowid;
    });
    for (int64_t budget : {int64_t{0}, int64_t{2000}, int64_t{400}, int64_t{50}, int64_t{1}}) {
      SCOPED_TRACE("round " + std::to_string(round) + " budget " + std::to_string(budget));
      BoundedTopK top(t.df, 3000, t.avgdl, w, budget, limit);
      size_t enumerated = 0;
      for (size_t r = 0; r < t.rows.size(); ++r) {
        bool holds = false;
        for (int i = 0; i < t.terms; ++i) {
          const auto& c = t.rows[r][static_cast<size_t>(i)];
          holds |= top.enumerated()[static_cast<size_t>(i)] && c[3] > 0;
        }
        if (!holds) continue;
        ++enumerated;
        std::vector<BoundedTopK::Counts> given = t.rows[r];
        for (int i = 0; i < t.terms; ++i)  // what the caller does not know yet
          if (!top.enumerated()[static_cast<size_t>(i)]) given[static_cast<size_t>(i)] = {99, 99, 99, 99};
        top.add(static_cast<int64_t>(r), t.dl[r], given.data());
      }
      auto fill = [&](int64_t r, BoundedTopK::Counts* tf) {
        for (int i = 0; i < t.terms; ++i)
          if (!top.enumerated()[static_cast<size_t>(i)])
            tf[i] = t.rows[static_cast<size_t>(r)][static_cast<size_t>(i)];
      };
      bool exact = false;
      auto got = top.finish(fill, [](int64_t a, int64_t b) { return a < b; }, &exact);
      if (budget == 0) {
        EXPECT_TRUE(exact);
      }
      EXPECT_LE(top.lookups(), enumerated);
      // Every row returned carries its full score, in order.
      std::map<int64_t, double> full;
      for (const auto& r : all) full[r.rowid] = r.score;
      for (size_t k = 0; k < got.size(); ++k) {
        EXPECT_EQ(got[k].score, full[got[k].rowid]);
        if (k > 0) {
          EXPECT_GE(got[k - 1].score, got[k].score);
        }
      }
      if (exact) {
        ++exact_runs;
        ASSERT_EQ(got.size(), std::min(all.size(), static_cast<size_t>(limit)));
        for (size_t k = 0; k < got.size(); ++k) EXPECT_EQ(got[k].rowid, all[k].rowid) << k;
      } else {
        ++bounded_runs;
        // What is returned is the best of the rows enumerated.
        EXPECT_EQ(got.size(), std::min(enumerated, static_cast<size_t>(limit)));
      }
      if (top.lookups() > 0 && top.lookups() < enumerated) ++stopped_early;
    }
  }
  // Both outcomes were exercised.
  EXPECT_GT(exact_runs, 40);
  EXPECT_GT(bounded_runs, 5);
  EXPECT_GT(stopped_early, 20);  // common terms looked up for the best rows only
}

}  // namespace
}  // namespace pf
