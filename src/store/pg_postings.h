// Internal to the store: the bytes of the PostgreSQL store's postings (pg_search.h), kept apart
// from the database so that they can be tested and fuzzed alone. A segment's terms, in byte
// order, are packed into blocks of about kPgBlockBytes (a term whose postings are longer has a
// block of its own); each term holds its postings in chunk order, with each chunk's count of the
// term per column, or no counts: a tombstone, the chunk deleted since an older segment took it.
// A segment also keeps its chunks' token counts, in buckets of 512 chunk ids (about a
// kilobyte: a bucket stays within its row, out of TOAST).
//
// Block: per term, varint(bytes shared with the previous term), varint(length of the rest), the
// rest, varint(adds), varint(tombstones), varint(bytes of its postings), the postings. Posting:
// varint(chunk id - the previous one's (the first from 0) << 1 | 1 unless the chunk holds the
// term once, in its body only, as most do); after a 1, varint(shape) and a varint count per
// column named by the shape: shape = body count << 3 | symbols 1 | path 2 | headings 4, and 0 for
// a tombstone. Lengths: per chunk, varint(chunk id - the previous one's), varint(tokens).
// Varints are LEB128: 7 bits a byte, low group first, at most 10 bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/bounded_rank.h"

namespace pf {

inline constexpr size_t kPgBlockBytes = 8000;
inline constexpr int kPgLengthBucketBits = 9;

// One chunk's counts of a term per column; all zero: a tombstone.
struct PgPosting {
  int64_t chunk = 0;
  BoundedTopK::Counts counts{};
  bool tombstone() const { return counts == BoundedTopK::Counts{}; }
};

// One term's postings in one segment, in chunk order.
struct PgTermPostings {
  int64_t adds = 0, tombstones = 0;
  std::vector<PgPosting> postings;
};

// Makes one segment's blocks from its terms in byte order. Not thread-safe.
class PgBlockWriter {
 public:
  // A term after every term added before, with at least one posting, in chunk order (each
  // chunk once). Throws pf::Error when the order is broken.
  void add(std::string_view term, const std::vector<PgPosting>& postings);
  // The blocks completed so far as (first term, bytes), in order; taken, so each comes once.
  std::vector<std::pair<std::string, std::string>> take_blocks();
  // Completes the last block; take_blocks() then returns it.
  void finish();

 private:
  std::vector<std::pair<std::string, std::string>> done_;
  std::string first_, last_, block_, postings_;
};

// A term's entry in a block: its postings' and tombstones' counts and their bytes.
struct PgTermView {
  int64_t adds = 0, tombstones = 0;
  std::string_view bytes;
};
// Where term's entry is in a block (into *out); false when the block lacks it. Throws pf::Error
// on a malformed block.
bool pg_locate_term(std::string_view block, std::string_view term, PgTermView* out);

// Reads a term's postings one at a time, in chunk order, without decoding the rest.
class PgPostingReader {
 public:
  explicit PgPostingReader(const PgTermView& v) : bytes_(v.bytes), left_(v.adds + v.tombstones) {}
  // The next posting into *p; false after the last. Throws pf::Error on malformed bytes.
  bool next(PgPosting* p);

 private:
  std::string_view bytes_;
  int64_t left_;
  size_t pos_ = 0;
  uint64_t chunk_ = 0;
  bool first_ = true;
};

// The postings of term in a block, into *out (cleared first); false when the block lacks it.
// Throws pf::Error on a malformed block.
bool pg_find_term(std::string_view block, std::string_view term, PgTermPostings* out);

// Each term of a block in order: f(term, postings). Throws pf::Error on a malformed block.
template <typename F>
void pg_for_each_term(std::string_view block, F&& f);

// A segment's chunk lengths (chunk id, tokens) in chunk order, as buckets of ids sharing
// id >> kPgLengthBucketBits: (bucket, bytes).
std::vector<std::pair<int64_t, std::string>> pg_encode_lengths(
    const std::vector<std::pair<int64_t, uint32_t>>& lengths);
// A bucket's lengths appended to *out. Throws pf::Error on malformed bytes.
void pg_decode_lengths(std::string_view bytes, std::vector<std::pair<int64_t, uint32_t>>* out);

// Internals of pg_for_each_term.
namespace pg_postings_detail {
// Reads the next term of a block at *pos into *term (the previous term's bytes reused) and its
// postings' bytes into *postings, with its adds and tombstones; false at the block's end.
bool next_term(std::string_view block, size_t* pos, std::string* term, int64_t* adds,
               int64_t* tombstones, std::string_view* postings);
void decode_postings(std::string_view bytes, int64_t count, std::vector<PgPosting>* out);
}  // namespace pg_postings_detail

template <typename F>
void pg_for_each_term(std::string_view block, F&& f) {
  size_t pos = 0;
  std::string term;
  PgTermPostings p;
  std::string_view bytes;
  while (pg_postings_detail::next_term(block, &pos, &term, &p.adds, &p.tombstones, &bytes)) {
    pg_postings_detail::decode_postings(bytes, p.adds + p.tombstones, &p.postings);
    f(std::string_view(term), p);
  }
}

}  // namespace pf
