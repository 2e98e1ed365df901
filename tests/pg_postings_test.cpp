// The bytes of the PostgreSQL store's postings (store/pg_postings.h): blocks written from random
// terms and postings read back the same, term by term, by lookup and one at a time; terms
// packed into blocks of about kPgBlockBytes, in order; the commonest posting in a byte; lengths
// in buckets; every cut or changed byte an error or a different reading, never a crash; and
// writes out of order refused.
#include "store/pg_postings.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "core/error.h"

namespace pf {
namespace {

using Terms = std::map<std::string, std::vector<PgPosting>>;

Terms random_terms(std::mt19937& rng, int count) {
  Terms out;
  const char* const stems[] = {"alloc", "allocat", "page", "page_fault", "x", "zz", "\xc3\xa9t\xc3\xa9"};
  for (int i = 0; i < count; ++i) {
    std::string term = std::string(stems[rng() % 7]) + std::to_string(rng() % 500);
    std::vector<PgPosting>& p = out[term];
    p.clear();
    const int n = 1 + static_cast<int>(rng() % (i % 50 == 0 ? 3000 : 5));
    int64_t chunk = static_cast<int64_t>(rng() % 1000);
    for (int k = 0; k < n; ++k) {
      PgPosting posting;
      posting.chunk = chunk;
      chunk += 1 + static_cast<int64_t>(rng() % (k % 7 == 0 ? 100000 : 3));
      if (rng() % 10 != 0) {  // else a tombstone
        for (auto& c : posting.counts) c = rng() % 3 == 0 ? static_cast<uint32_t>(rng() % 300) : 0;
        if (posting.tombstone()) posting.counts[3] = 1;
      }
      p.push_back(posting);
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> write(const Terms& terms) {
  PgBlockWriter w;
  for (const auto& [term, postings] : terms) w.add(term, postings);
  w.finish();
  return w.take_blocks();
}

bool same(const std::vector<PgPosting>& a, const std::vector<PgPosting>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].chunk != b[i].chunk || a[i].counts != b[i].counts) return false;
  return true;
}

TEST(PgPostingsTest, BlocksReadBackAsWritten) {
  std::mt19937 rng(11);
  const Terms terms = random_terms(rng, 3000);
  const auto blocks = write(terms);
  ASSERT_GT(blocks.size(), 10u);
  Terms read;
  std::string previous_first;
  for (const auto& [first, bytes] : blocks) {
    EXPECT_GT(first, previous_first);
    previous_first = first;
    size_t terms_in_block = 0;
    pg_for_each_term(bytes, [&](std::string_view term, PgTermPostings& p) {
      if (terms_in_block++ == 0) {
        EXPECT_EQ(term, first);
      }
      int64_t tombstones = 0;
      for (const PgPosting& posting : p.postings) tombstones += posting.tombstone();
      EXPECT_EQ(p.tombstones, tombstones);
      read[std::string(term)] = p.postings;
    });
    // Packed up to the size, past it only for a term alone in its block.
    EXPECT_TRUE(bytes.size() <= kPgBlockBytes || terms_in_block == 1) << bytes.size();
  }
  ASSERT_EQ(read.size(), terms.size());
  for (const auto& [term, postings] : terms) EXPECT_TRUE(same(read[term], postings)) << term;
  // Each term found in the block whose first term is the greatest not after it; others not.
  PgTermPostings p;
  for (const auto& [term, postings] : terms) {
    auto it = std::upper_bound(blocks.begin(), blocks.end(), term,
                               [](const std::string& t, const auto& b) { return t < b.first; });
    ASSERT_NE(it, blocks.begin());
    ASSERT_TRUE(pg_find_term(std::prev(it)->second, term, &p)) << term;
    EXPECT_TRUE(same(p.postings, postings));
    PgTermView v;
    ASSERT_TRUE(pg_locate_term(std::prev(it)->second, term, &v));
    EXPECT_EQ(v.adds + v.tombstones, static_cast<int64_t>(postings.size()));
    PgPostingReader reader(v);  // one at a time, as pg_find_term reads them whole
    PgPosting one;
    size_t k = 0;
    while (reader.next(&one)) {
      ASSERT_LT(k, postings.size());
      EXPECT_EQ(one.chunk, postings[k].chunk);
      EXPECT_EQ(one.counts, postings[k].counts);
      ++k;
    }
    EXPECT_EQ(k, postings.size());
    EXPECT_FALSE(pg_find_term(std::prev(it)->second, term + "~", &p));
  }
}

TEST(PgPostingsTest, APostingOfATermOnceInTheBodyTakesAByte) {
  // Most postings: the term once, in the body only. With a chunk id delta under 64 each is one
  // byte; any other shape takes its shape and counts after the delta.
  std::vector<PgPosting> plain, other;
  for (int64_t chunk = 1; chunk <= 1000; ++chunk) {
    plain.push_back(PgPosting{chunk * 3, {0, 0, 0, 1}});
    other.push_back(PgPosting{chunk * 3, {0, 0, 0, 2}});
  }
  const auto a = write({{"once", plain}}), b = write({{"twice", other}});
  ASSERT_EQ(a.size(), 1u);
  EXPECT_LE(a[0].second.size(), 1000u + 12);  // the term's header: at most 12 bytes
  EXPECT_GE(b[0].second.size(), 2000u);
  PgTermPostings p;
  ASSERT_TRUE(pg_find_term(a[0].second, "once", &p));
  EXPECT_TRUE(same(p.postings, plain));
}

TEST(PgPostingsTest, OutOfOrderWritesAreRefused) {
  PgBlockWriter w;
  w.add("b", {PgPosting{1, {0, 0, 0, 1}}});
  EXPECT_THROW(w.add("a", {PgPosting{1, {0, 0, 0, 1}}}), Error);
  EXPECT_THROW(w.add("b", {PgPosting{1, {0, 0, 0, 1}}}), Error);
  EXPECT_THROW(w.add("c", {}), Error);
  EXPECT_THROW(w.add("c", {PgPosting{5, {0, 0, 0, 1}}, PgPosting{5, {}}}), Error);
  EXPECT_THROW(w.add("d", {PgPosting{5, {0, 0, 0, 1}}, PgPosting{4, {}}}), Error);
  EXPECT_THROW(pg_encode_lengths({{5, 1}, {5, 2}}), Error);
  EXPECT_THROW(pg_encode_lengths({{5000, 1}, {5, 2}}), Error);
}

TEST(PgPostingsTest, LengthsReadBackFromTheirBuckets) {
  std::vector<std::pair<int64_t, uint32_t>> lengths;
  for (int64_t chunk = 1; chunk < 10000; chunk += 1 + chunk % 13)
    lengths.emplace_back(chunk, static_cast<uint32_t>(chunk * 7 % 100000));
  const auto buckets = pg_encode_lengths(lengths);
  EXPECT_EQ(buckets.size(), 20u);  // ids 1..9,999 in buckets of 512
  std::vector<std::pair<int64_t, uint32_t>> read;
  for (const auto& [bucket, bytes] : buckets) {
    const size_t before = read.size();
    pg_decode_lengths(bytes, &read);
    for (size_t i = before; i < read.size(); ++i) EXPECT_EQ(read[i].first >> kPgLengthBucketBits, bucket);
  }
  EXPECT_EQ(read, lengths);
}

TEST(PgPostingsTest, DamagedBytesAreAnErrorNotACrash) {
  std::mt19937 rng(5);
  const auto blocks = write(random_terms(rng, 40));
  const std::string& block = blocks.front().second;
  int cut_errors = 0;
  for (size_t n = 1; n < block.size(); ++n) {
    try {
      pg_for_each_term(std::string_view(block).substr(0, n), [](std::string_view, PgTermPostings&) {});
    } catch (const Error&) {
      ++cut_errors;
    }
  }
  EXPECT_GT(cut_errors, static_cast<int>(block.size()) * 9 / 10);  // a cut at a term's end reads
  PgTermPostings p;
  for (int i = 0; i < 3000; ++i) {
    std::string bad = block;
    bad[rng() % bad.size()] = static_cast<char>(rng());
    try {
      pg_for_each_term(bad, [](std::string_view, PgTermPostings&) {});
      pg_find_term(bad, "page1", &p);
    } catch (const Error&) {
    }
  }
  std::vector<std::pair<int64_t, uint32_t>> read;
  EXPECT_THROW(pg_decode_lengths(std::string("\x05\xff", 2), &read), Error);
  EXPECT_THROW(pg_decode_lengths(std::string("\x00\x01", 2), &read), Error);  // a repeated id
  EXPECT_THROW(pg_decode_lengths(std::string(11, '\xff'), &read), Error);
}

}  // namespace
}  // namespace pf
