// The bytes of the PostgreSQL store's postings and chunk lengths (see pg_postings.h).
#include "store/pg_postings.h"

#include <algorithm>

#include "core/error.h"

namespace pf {
namespace {

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

uint64_t get_varint(std::string_view in, size_t* pos) {
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (*pos >= in.size()) throw Error("the store's postings are cut short");
    const auto byte = static_cast<unsigned char>(in[(*pos)++]);
    if (shift == 63 && byte > 1) throw Error("the store's postings hold a varint over 64 bits");
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (byte < 0x80) return v;
  }
  throw Error("the store's postings hold a varint over 64 bits");
}

// A count as the format stores it (a tombstone's zeros never reach here).
uint32_t get_count(std::string_view in, size_t* pos) {
  const uint64_t v = get_varint(in, pos);
  if (v > UINT32_MAX) throw Error("the store's postings hold a count over 32 bits");
  return static_cast<uint32_t>(v);
}

constexpr BoundedTopK::Counts kOnceInTheBody = {0, 0, 0, 1};  // the shape of most postings

void put_posting(std::string& out, int64_t delta, const BoundedTopK::Counts& c) {
  const bool plain = c == kOnceInTheBody;
  put_varint(out, static_cast<uint64_t>(delta) << 1 | (plain ? 0 : 1));
  if (plain) return;
  const uint64_t shape = static_cast<uint64_t>(c[3]) << 3 | (c[0] ? 1 : 0) | (c[1] ? 2 : 0) |
                         (c[2] ? 4 : 0);
  put_varint(out, shape);
  for (int col = 0; col < 3; ++col)
    if (c[col]) put_varint(out, c[col]);
}

// A term's entry up to its postings, its bytes shared with previous left out.
std::string term_entry(std::string_view previous, std::string_view term, int64_t adds,
                       int64_t tombstones, size_t posting_bytes) {
  size_t shared = 0;
  const size_t most = std::min(term.size(), previous.size());
  while (shared < most && term[shared] == previous[shared]) ++shared;
  std::string out;
  put_varint(out, shared);
  put_varint(out, term.size() - shared);
  out.append(term.substr(shared));
  put_varint(out, static_cast<uint64_t>(adds));
  put_varint(out, static_cast<uint64_t>(tombstones));
  put_varint(out, posting_bytes);
  return out;
}

}  // namespace

void PgBlockWriter::add(std::string_view term, const std::vector<PgPosting>& postings) {
  if (term.empty() || (!last_.empty() && term <= last_))
    throw Error("postings added out of term order");
  if (postings.empty()) throw Error("a term without postings");
  postings_.clear();
  int64_t previous = 0, tombstones = 0;
  for (const PgPosting& p : postings) {
    if (p.chunk < previous || (p.chunk == previous && &p != &postings.front()))
      throw Error("postings added out of chunk order");
    put_posting(postings_, p.chunk - previous, p.counts);
    previous = p.chunk;
    tombstones += p.tombstone() ? 1 : 0;
  }
  // The entry as the block's next, or, when that would not fit, as a new block's first.
  const int64_t adds = static_cast<int64_t>(postings.size()) - tombstones;
  std::string entry = term_entry(block_.empty() ? std::string_view() : last_, term, adds,
                                 tombstones, postings_.size());
  if (!block_.empty() && block_.size() + entry.size() + postings_.size() > kPgBlockBytes) {
    finish();
    entry = term_entry({}, term, adds, tombstones, postings_.size());
  }
  if (block_.empty()) first_ = term;
  block_ += entry;
  block_ += postings_;
  last_ = term;
}

void PgBlockWriter::finish() {
  if (block_.empty()) return;
  done_.emplace_back(std::move(first_), std::move(block_));
  first_.clear();
  block_.clear();
}

std::vector<std::pair<std::string, std::string>> PgBlockWriter::take_blocks() {
  std::vector<std::pair<std::string, std::string>> out;
  out.swap(done_);
  return out;
}

namespace pg_postings_detail {

bool next_term(std::string_view block, size_t* pos, std::string* term, int64_t* adds,
               int64_t* tombstones, std::string_view* postings) {
  if (*pos >= block.size()) return false;
  const uint64_t shared = get_varint(block, pos), rest = get_varint(block, pos);
  if (shared > term->size() || rest > block.size() - *pos || shared + rest == 0)
    throw Error("the store's postings hold a malformed term");
  term->resize(shared);
  term->append(block.substr(*pos, rest));
  *pos += rest;
  const uint64_t a = get_varint(block, pos), t = get_varint(block, pos);
  const uint64_t bytes = get_varint(block, pos);
  // Each posting takes a byte at least: a count above that cannot be true.
  if (bytes > block.size() - *pos || a > bytes || t > bytes || a + t > bytes)
    throw Error("the store's postings hold a malformed term");
  *adds = static_cast<int64_t>(a);
  *tombstones = static_cast<int64_t>(t);
  *postings = block.substr(*pos, bytes);
  *pos += bytes;
  return true;
}

void decode_postings(std::string_view bytes, int64_t count, std::vector<PgPosting>* out) {
  out->clear();
  out->reserve(static_cast<size_t>(count));
  PgPostingReader reader(PgTermView{count, 0, bytes});
  PgPosting p;
  while (reader.next(&p)) out->push_back(p);
}

}  // namespace pg_postings_detail

bool PgPostingReader::next(PgPosting* p) {
  if (left_ == 0) {
    if (pos_ != bytes_.size()) throw Error("the store's postings have bytes past their end");
    return false;
  }
  --left_;
  const uint64_t flagged = get_varint(bytes_, &pos_), delta = flagged >> 1;
  if (delta > static_cast<uint64_t>(INT64_MAX) - chunk_ || (delta == 0 && !first_))
    throw Error("the store's postings hold a malformed chunk id");
  first_ = false;
  chunk_ += delta;
  p->chunk = static_cast<int64_t>(chunk_);
  if (!(flagged & 1)) {
    p->counts = kOnceInTheBody;
    return true;
  }
  const uint64_t shape = get_varint(bytes_, &pos_);
  if ((shape >> 3) > UINT32_MAX) throw Error("the store's postings hold a count over 32 bits");
  p->counts = {0, 0, 0, static_cast<uint32_t>(shape >> 3)};
  for (int col = 0; col < 3; ++col)
    if (shape & (1u << col)) p->counts[col] = get_count(bytes_, &pos_);
  return true;
}

bool pg_locate_term(std::string_view block, std::string_view term, PgTermView* out) {
  size_t pos = 0;
  std::string at;
  while (pg_postings_detail::next_term(block, &pos, &at, &out->adds, &out->tombstones, &out->bytes)) {
    if (at < term) continue;
    return at == term;  // terms are in order: it is not further on
  }
  return false;
}

bool pg_find_term(std::string_view block, std::string_view term, PgTermPostings* out) {
  out->postings.clear();
  out->adds = out->tombstones = 0;
  PgTermView v;
  if (!pg_locate_term(block, term, &v)) return false;
  out->adds = v.adds;
  out->tombstones = v.tombstones;
  pg_postings_detail::decode_postings(v.bytes, v.adds + v.tombstones, &out->postings);
  return true;
}

std::vector<std::pair<int64_t, std::string>> pg_encode_lengths(
    const std::vector<std::pair<int64_t, uint32_t>>& lengths) {
  std::vector<std::pair<int64_t, std::string>> out;
  int64_t previous = 0;
  for (const auto& [chunk, tokens] : lengths) {
    const int64_t bucket = chunk >> kPgLengthBucketBits;
    if (out.empty() || out.back().first != bucket) {
      if (!out.empty() && bucket < out.back().first) throw Error("lengths out of chunk order");
      out.emplace_back(bucket, std::string());
      previous = 0;
    } else if (chunk <= previous) {
      throw Error("lengths out of chunk order");
    }
    put_varint(out.back().second, static_cast<uint64_t>(chunk - previous));
    put_varint(out.back().second, tokens);
    previous = chunk;
  }
  return out;
}

void pg_decode_lengths(std::string_view bytes, std::vector<std::pair<int64_t, uint32_t>>* out) {
  size_t pos = 0;
  uint64_t chunk = 0;
  while (pos < bytes.size()) {
    const uint64_t delta = get_varint(bytes, &pos);
    if (delta == 0 || delta > static_cast<uint64_t>(INT64_MAX) - chunk)
      throw Error("the store's chunk lengths hold a malformed chunk id");
    chunk += delta;
    out->emplace_back(static_cast<int64_t>(chunk), get_count(bytes, &pos));
  }
}

}  // namespace pf
