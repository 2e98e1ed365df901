// The PostgreSQL store's postings in the database: segments written by batches, merged by level,
// read by searches (see pg_segments.h).
#include "store/pg_segments.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <unordered_map>
#include <type_traits>

#include "core/error.h"
#include "store/bm25_index.h"
#include "store/pg_util.h"
#include "store/stemmer.h"

namespace pf {

using pg::Param;

namespace {

constexpr size_t kRowsPerInsert = 64;  // blocks or buckets per INSERT statement
constexpr size_t kBlocksPerRead = 16;  // blocks a merge reads from a segment at a time
constexpr int64_t kChunksPerRebuiltSegment = 50000;

// (key, bytes) rows into table(segment, key column, data), kRowsPerInsert a statement.
template <typename Key>
void insert_rows(pg::Connection& c, const char* table, int64_t segment,
                 const std::vector<std::pair<Key, std::string>>& rows) {
  for (size_t at = 0; at < rows.size(); at += kRowsPerInsert) {
    const size_t n = std::min(kRowsPerInsert, rows.size() - at);
    std::string sql = std::string("INSERT INTO ") + table + " VALUES ";
    std::vector<Param> params = {Param::number(segment)};
    for (size_t i = 0; i < n; ++i) {
      const auto& [key, bytes] = rows[at + i];
      if constexpr (std::is_same_v<Key, std::string>) params.push_back(Param::text(key));
      else params.push_back(Param::number(key));
      params.push_back(Param::bytes(bytes));
      sql += i ? ", ($1, $" : "($1, $";
      sql += std::to_string(params.size() - 1) + ", $" + std::to_string(params.size()) + ")";
    }
    c.exec(sql, params);
  }
}

// Sorts postings by chunk, a chunk's posting and tombstone taking each other away (the chunk
// added to *dead when given); with drop_lone, tombstones left alone go too.
void resolve(std::vector<PgPosting>& v, bool drop_lone, std::unordered_set<int64_t>* dead) {
  std::sort(v.begin(), v.end(), [](const PgPosting& a, const PgPosting& b) {
    return a.chunk < b.chunk || (a.chunk == b.chunk && a.tombstone() && !b.tombstone());
  });
  size_t out = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i + 1 < v.size() && v[i + 1].chunk == v[i].chunk) {
      if (v[i].tombstone() == v[i + 1].tombstone())
        throw Error("the store's postings hold a chunk twice in one term");
      if (dead) dead->insert(v[i].chunk);
      ++i;
      continue;
    }
    if (drop_lone && v[i].tombstone()) continue;
    v[out++] = v[i];
  }
  v.resize(out);
}

int64_t new_segment(pg::Connection& c, int64_t repo_id, int level) {
  return c.exec("INSERT INTO lexical_segments(repo_id, level) VALUES ($1, $2) RETURNING segment",
                {Param::number(repo_id), Param::number(level)})
      .int64(0, 0);
}

// A segment's terms in order, a page of blocks read at a time.
class SegmentCursor {
 public:
  SegmentCursor(pg::Connection& c, int64_t segment) : c_(c), segment_(segment) { load(); }
  bool valid() const { return !terms_.empty(); }
  const std::string& term() const { return terms_.front().first; }
  std::vector<PgPosting>& postings() { return terms_.front().second; }
  void next() {
    terms_.pop_front();
    if (terms_.empty()) load();
  }

 private:
  void load() {
    if (done_) return;
    auto r = c_.exec("SELECT first_term, data FROM lexical_blocks WHERE segment = $1 AND "
                     "first_term > $2 ORDER BY first_term LIMIT " +
                         std::to_string(kBlocksPerRead),
                     {Param::number(segment_), Param::text(after_)}, true);
    done_ = r.rows() < static_cast<int>(kBlocksPerRead);
    for (int i = 0; i < r.rows(); ++i) {
      after_ = r.text(i, 0);
      pg_for_each_term(r.view(i, 1), [&](std::string_view term, PgTermPostings& p) {
        terms_.emplace_back(std::string(term), std::move(p.postings));
      });
    }
  }

  pg::Connection& c_;
  int64_t segment_;
  std::string after_;  // the last block's first term read
  bool done_ = false;
  std::deque<std::pair<std::string, std::vector<PgPosting>>> terms_;
};

// Merges segments (all of repo_id, on level) into one new segment on level + 1.
void merge_segments(pg::Connection& c, int64_t repo_id, int level,
                    const std::vector<int64_t>& segments, bool whole_repository) {
  const int64_t out = new_segment(c, repo_id, level + 1);
  std::vector<std::unique_ptr<SegmentCursor>> cursors;
  for (int64_t s : segments) cursors.push_back(std::make_unique<SegmentCursor>(c, s));
  PgBlockWriter w;
  std::unordered_set<int64_t> dead;
  std::vector<PgPosting> merged;
  for (;;) {
    const std::string* least = nullptr;
    for (const auto& cur : cursors)
      if (cur->valid() && (!least || cur->term() < *least)) least = &cur->term();
    if (!least) break;
    const std::string term = *least;
    merged.clear();
    for (const auto& cur : cursors) {
      if (!cur->valid() || cur->term() != term) continue;
      merged.insert(merged.end(), cur->postings().begin(), cur->postings().end());
      cur->next();
    }
    resolve(merged, whole_repository, &dead);
    if (!merged.empty()) w.add(term, merged);
    if (auto blocks = w.take_blocks(); !blocks.empty()) insert_rows(c, "lexical_blocks", out, blocks);
  }
  w.finish();
  insert_rows(c, "lexical_blocks", out, w.take_blocks());
  std::vector<std::string> ids_text;
  for (int64_t id : segments) ids_text.push_back(std::to_string(id));
  const Param ids = Param::text(pg::text_array(ids_text));
  auto r = c.exec("SELECT data FROM lexical_lengths WHERE segment = ANY($1::bigint[])", {ids}, true);
  std::vector<std::pair<int64_t, uint32_t>> lengths, kept;
  for (int i = 0; i < r.rows(); ++i) pg_decode_lengths(r.view(i, 0), &lengths);
  for (const auto& l : lengths)
    if (!dead.count(l.first)) kept.push_back(l);
  std::sort(kept.begin(), kept.end());
  insert_rows(c, "lexical_lengths", out, pg_encode_lengths(kept));
  c.exec("DELETE FROM lexical_blocks WHERE segment = ANY($1::bigint[])", {ids});
  c.exec("DELETE FROM lexical_lengths WHERE segment = ANY($1::bigint[])", {ids});
  c.exec("DELETE FROM lexical_segments WHERE segment = ANY($1::bigint[])", {ids});
}

// One chunk's terms and their counts per column, counted in a table of open addressing kept by
// the thread and marked stale by a new stamp for each chunk (no clearing, no allocation once it
// has grown): a map of strings, or sorting every token, cost 4x the tokenizing itself
// (bench/pf_postings_projection).
class TermCounter {
 public:
  void start() {
    arena_.clear();
    used_.clear();
    if (++stamp_ == 0) {  // wrapped: every slot is stale again
      for (Slot& s : slots_) s.stamp = 0;
      stamp_ = 1;
    }
  }
  void add(std::string_view term, size_t column) {
    if ((used_.size() + 1) * 2 > slots_.size()) grow();
    Slot& s = find(term);
    if (s.stamp != stamp_) {
      s = Slot{stamp_, static_cast<uint32_t>(arena_.size()), static_cast<uint32_t>(term.size()),
               {}};
      arena_ += term;
      used_.push_back(static_cast<uint32_t>(&s - slots_.data()));
    }
    ++s.counts[column];
  }
  // The terms counted since start(), in byte order.
  void take(std::vector<std::pair<std::string, BoundedTopK::Counts>>* out) {
    std::sort(used_.begin(), used_.end(),
              [&](uint32_t a, uint32_t b) { return term(slots_[a]) < term(slots_[b]); });
    out->reserve(used_.size());
    for (uint32_t i : used_) out->emplace_back(std::string(term(slots_[i])), slots_[i].counts);
  }

 private:
  struct Slot {
    uint32_t stamp = 0, at = 0, size = 0;
    BoundedTopK::Counts counts{};
  };
  std::string_view term(const Slot& s) const {
    return std::string_view(arena_).substr(s.at, s.size);
  }
  Slot& find(std::string_view t) {
    const size_t mask = slots_.size() - 1;
    for (size_t i = std::hash<std::string_view>{}(t) & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.stamp != stamp_ || term(s) == t) return s;
    }
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    used_.clear();
    for (const Slot& s : old) {
      if (s.stamp != stamp_) continue;
      Slot& to = find(term(s));
      to = s;
      used_.push_back(static_cast<uint32_t>(&to - slots_.data()));
    }
  }

  std::vector<Slot> slots_ = std::vector<Slot>(1024);
  std::vector<uint32_t> used_;  // the slots holding this chunk's terms
  std::string arena_;           // their bytes
  uint32_t stamp_ = 0;
};

}  // namespace

PgChunkTerms pg_chunk_terms(const Chunk& c, std::string_view path) {
  thread_local TermCounter counter;
  counter.start();
  PgChunkTerms out;
  const std::string symbols = c.function_name + " " + c.class_name + " " + c.symbol;
  const std::string_view columns[4] = {symbols, path, c.heading_path, c.content};
  StemBuffer stem;
  out.length = for_each_row_term(columns, stem, [&](std::string_view term, size_t col) {
    counter.add(term, col);
  });
  counter.take(&out.terms);
  return out;
}

PgChunkTerms pg_row_terms(const pg::Result& r, int row, int first) {
  Chunk c;
  c.function_name = r.text(row, first);
  c.class_name = r.text(row, first + 1);
  c.symbol = r.text(row, first + 2);
  c.path = r.text(row, first + 3);
  c.heading_path = r.text(row, first + 4);
  c.content = r.text(row, first + 5);
  return pg_chunk_terms(c, c.path);
}

void PgSegmentWriter::add(int64_t repo_id, int64_t chunk, const PgChunkTerms& t) {
  rows_ += 1;
  tokens_ += t.length;
  if (t.terms.empty()) return;  // never a candidate: no length kept
  Pending& p = repos_[repo_id];
  for (const auto& [term, counts] : t.terms) p.terms[term].push_back(PgPosting{chunk, counts});
  p.lengths.emplace_back(chunk, t.length);
}

void PgSegmentWriter::remove(int64_t repo_id, int64_t chunk, const PgChunkTerms& t) {
  rows_ -= 1;
  tokens_ -= t.length;
  if (t.terms.empty()) return;
  Pending& p = repos_[repo_id];
  for (const auto& term : t.terms) p.terms[term.first].push_back(PgPosting{chunk, {}});
  p.removed.insert(chunk);
}

bool PgSegmentWriter::flush(pg::Connection& c) {
  int top_level = -1;
  for (auto& [repo_id, p] : repos_) {
    for (auto it = p.terms.begin(); it != p.terms.end();) {
      resolve(it->second, false, nullptr);  // a chunk added and removed in this batch goes
      it = it->second.empty() ? p.terms.erase(it) : std::next(it);
    }
    std::vector<std::pair<int64_t, uint32_t>> lengths;
    for (const auto& l : p.lengths)
      if (!p.removed.count(l.first)) lengths.push_back(l);
    std::sort(lengths.begin(), lengths.end());
    if (p.terms.empty() && lengths.empty()) continue;
    pg_write_segment(c, repo_id, 0, p.terms, lengths);
    int level = -1;
    pg_merge_levels(c, repo_id, kPgMergeAt, &level);
    top_level = std::max(top_level, level);
  }
  if (rows_ != 0 || tokens_ != 0)
    c.exec("UPDATE pilotfish_meta SET value = (value::bigint + CASE key WHEN 'lexical_rows' THEN "
           "$1 ELSE $2 END::bigint)::text WHERE key IN ('lexical_rows', 'lexical_tokens')",
           {Param::number(rows_), Param::number(tokens_)});
  clear();
  return top_level >= 0;
}

void PgSegmentWriter::clear() {
  repos_.clear();
  rows_ = tokens_ = 0;
}

int64_t pg_write_segment(pg::Connection& c, int64_t repo_id, int level,
                         const std::map<std::string, std::vector<PgPosting>>& terms,
                         const std::vector<std::pair<int64_t, uint32_t>>& lengths) {
  const int64_t segment = new_segment(c, repo_id, level);
  PgBlockWriter w;
  for (const auto& [term, postings] : terms) w.add(term, postings);
  w.finish();
  insert_rows(c, "lexical_blocks", segment, w.take_blocks());
  insert_rows(c, "lexical_lengths", segment, pg_encode_lengths(lengths));
  return segment;
}

int pg_merge_levels(pg::Connection& c, int64_t repo_id, int merge_at, int* top_level) {
  if (merge_at < 2) throw Error("segments merge two or more at a time");
  if (top_level) *top_level = -1;
  int merges = 0;
  for (int level = 0;; ++level) {
    auto r = c.exec("SELECT segment, level FROM lexical_segments WHERE repo_id = $1 AND level >= $2 "
                    "ORDER BY level, segment",
                    {Param::number(repo_id), Param::number(level)});
    std::vector<int64_t> on_level;
    for (int i = 0; i < r.rows(); ++i)
      if (r.int64(i, 1) == level) on_level.push_back(r.int64(i, 0));
    if (r.rows() == 0) return merges;
    if (static_cast<int>(on_level.size()) < merge_at) continue;
    const bool whole = static_cast<int>(on_level.size()) == r.rows() &&
                       c.exec("SELECT count(*) FROM lexical_segments WHERE repo_id = $1 AND "
                              "level < $2",
                              {Param::number(repo_id), Param::number(level)})
                               .int64(0, 0) == 0;
    merge_segments(c, repo_id, level, on_level, whole);
    ++merges;
    if (top_level) *top_level = level;
  }
}

void pg_merge_repository(pg::Connection& c, int64_t repo_id) {
  auto r = c.exec("SELECT segment, level FROM lexical_segments WHERE repo_id = $1 ORDER BY segment",
                  {Param::number(repo_id)});
  std::vector<int64_t> segments;
  int top = 0;
  for (int i = 0; i < r.rows(); ++i) {
    segments.push_back(r.int64(i, 0));
    top = std::max(top, static_cast<int>(r.int64(i, 1)));
  }
  if (!segments.empty()) merge_segments(c, repo_id, top, segments, true);
}

void pg_rebuild_postings(pg::Connection& c) {
  c.run("DELETE FROM lexical_blocks; DELETE FROM lexical_lengths; DELETE FROM lexical_segments");
  int64_t rows = 0, tokens = 0;
  auto repos = c.exec("SELECT id FROM repositories ORDER BY id");
  for (int ri = 0; ri < repos.rows(); ++ri) {
    const int64_t repo_id = repos.int64(ri, 0);
    std::map<std::string, std::vector<PgPosting>> terms;
    std::vector<std::pair<int64_t, uint32_t>> lengths;
    int64_t after = 0;
    for (;;) {
      auto r = c.exec(std::string("SELECT chunk_id, ") + kPgTermColumns +
                          " FROM copilot_code_chunks WHERE repo_id = $1 AND chunk_id > $2 "
                          "ORDER BY chunk_id LIMIT 5000",
                      {Param::number(repo_id), Param::number(after)});
      for (int i = 0; i < r.rows(); ++i) {
        after = r.int64(i, 0);
        const PgChunkTerms t = pg_row_terms(r, i, 1);
        rows += 1;
        tokens += t.length;
        if (t.terms.empty()) continue;
        for (const auto& [term, counts] : t.terms) terms[term].push_back(PgPosting{after, counts});
        lengths.emplace_back(after, t.length);
      }
      const bool last = r.rows() == 0;
      if (!lengths.empty() && (last || static_cast<int64_t>(lengths.size()) >= kChunksPerRebuiltSegment)) {
        pg_write_segment(c, repo_id, 0, terms, lengths);
        terms.clear();
        lengths.clear();
        pg_merge_levels(c, repo_id);
      }
      if (last) break;
    }
  }
  c.exec("UPDATE pilotfish_meta SET value = CASE key WHEN 'lexical_rows' THEN $1 ELSE $2 END "
         "WHERE key IN ('lexical_rows', 'lexical_tokens')",
         {Param::number(rows), Param::number(tokens)});
}

namespace {

// The process's cache of segments' bytes (see pg_segments.h). Any thread.
class SegmentBytes {
 public:
  static SegmentBytes& shared() {
    static SegmentBytes cache;
    return cache;
  }
  std::shared_ptr<const std::string> get(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    return it == map_.end() ? nullptr : it->second;
  }
  std::shared_ptr<const std::string> put(const std::string& key, std::string bytes) {
    auto v = std::make_shared<const std::string>(std::move(bytes));
    std::lock_guard<std::mutex> lock(mu_);
    if (bytes_ + v->size() + key.size() > kMaxBytes) map_.clear(), bytes_ = 0;
    if (map_.emplace(key, v).second) bytes_ += v->size() + key.size();
    return v;
  }

 private:
  static constexpr size_t kMaxBytes = size_t{256} << 20;
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const std::string>> map_;
  size_t bytes_ = 0;
};

std::string cache_key(const PgSnapshot& snap, char kind, int64_t segment, std::string_view key) {
  std::string out = snap.instance;
  out += '\x01';
  out += kind;
  out += std::to_string(segment);
  out += '\x01';
  out += key;
  return out;
}

}  // namespace

PgSnapshot pg_read_snapshot(pg::Connection& c) {
  auto r = c.exec("SELECT (SELECT value FROM pilotfish_meta WHERE key = 'lexical_rows'), "
                  "(SELECT value FROM pilotfish_meta WHERE key = 'lexical_tokens'), "
                  "(SELECT value FROM pilotfish_meta WHERE key = 'instance'), "
                  "(SELECT string_agg(segment || ' ' || repo_id, ' ') FROM lexical_segments)");
  PgSnapshot s;
  s.rows = r.int64(0, 0);
  s.tokens = r.int64(0, 1);
  s.instance = r.text(0, 2);
  std::istringstream list(r.text(0, 3));
  for (int64_t segment = 0, repo = 0; list >> segment >> repo;) s.segments.emplace_back(segment, repo);
  return s;
}

PgTermBlocks::PgTermBlocks(pg::Connection& c, const PgSnapshot& snap,
                           const std::vector<std::string>& terms)
    : df_(terms.size()) {
  SegmentBytes& cache = SegmentBytes::shared();
  std::vector<std::shared_ptr<const std::string>> found(snap.segments.size() * terms.size());
  std::vector<std::string> missing_terms, missing_segments, missing_keys;
  std::vector<size_t> missing_at;
  for (size_t s = 0; s < snap.segments.size(); ++s)
    for (size_t t = 0; t < terms.size(); ++t) {
      const size_t i = s * terms.size() + t;
      std::string key = cache_key(snap, 'b', snap.segments[s].first, terms[t]);
      found[i] = cache.get(key);
      if (found[i]) continue;
      missing_terms.push_back(terms[t]);
      missing_segments.push_back(std::to_string(snap.segments[s].first));
      missing_keys.push_back(std::move(key));
      missing_at.push_back(i);
    }
  if (!missing_at.empty()) {
    auto r = c.exec(
        "SELECT q.n, b.data FROM unnest($1::bigint[], $2::text[]) WITH ORDINALITY AS "
        "q(segment, term, n) CROSS JOIN LATERAL (SELECT data FROM lexical_blocks b WHERE "
        "b.segment = q.segment AND b.first_term <= q.term COLLATE \"C\" ORDER BY b.first_term "
        "DESC LIMIT 1) b",
        {Param::text(pg::text_array(missing_segments)), Param::text(pg::text_array(missing_terms))},
        true);
    std::vector<std::string> bytes(missing_at.size());  // empty: no block starts at or before
    for (int row = 0; row < r.rows(); ++row) {
      const int64_t n = pg::binary_int(r.view(row, 0)) - 1;
      if (n < 0 || n >= static_cast<int64_t>(missing_at.size()))
        throw Error("the store answered for a term it was not asked");
      bytes[n] = r.text(row, 1);
    }
    for (size_t n = 0; n < missing_at.size(); ++n)
      found[missing_at[n]] = cache.put(missing_keys[n], std::move(bytes[n]));
  }
  for (size_t i = 0; i < found.size(); ++i) {
    const auto& [segment, repo_id] = snap.segments[i / terms.size()];
    Entry e{i % terms.size(), segment, repo_id, {}};
    if (found[i]->empty() || !pg_locate_term(*found[i], terms[e.term], &e.postings)) continue;
    df_[e.term] += e.postings.adds - e.postings.tombstones;
    entries_.push_back(e);
    held_.push_back(found[i]);
  }
}

std::vector<int64_t> pg_read_lengths(pg::Connection& c, const PgSnapshot& snap,
                                     const std::vector<std::pair<int64_t, int64_t>>& chunks) {
  // Each bucket's chunks in order, walked beside its bytes as they are decoded.
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<int64_t, size_t>>> buckets;
  for (size_t i = 0; i < chunks.size(); ++i)
    buckets[{chunks[i].second, chunks[i].first >> kPgLengthBucketBits}].emplace_back(chunks[i].first, i);
  SegmentBytes& cache = SegmentBytes::shared();
  std::map<std::pair<int64_t, int64_t>, std::shared_ptr<const std::string>> bytes;
  std::vector<std::string> segments, ids;
  for (auto& [key, rows] : buckets) {
    std::sort(rows.begin(), rows.end());
    if (auto b = cache.get(cache_key(snap, 'l', key.first, std::to_string(key.second)))) {
      bytes[key] = b;
      continue;
    }
    segments.push_back(std::to_string(key.first));
    ids.push_back(std::to_string(key.second));
  }
  if (!segments.empty()) {
    auto r = c.exec("SELECT l.segment, l.bucket, l.data FROM lexical_lengths l JOIN "
                    "unnest($1::bigint[], $2::bigint[]) AS k(segment, bucket) ON "
                    "l.segment = k.segment AND l.bucket = k.bucket",
                    {Param::text(pg::text_array(segments)), Param::text(pg::text_array(ids))}, true);
    for (int i = 0; i < r.rows(); ++i) {
      const std::pair<int64_t, int64_t> key{pg::binary_int(r.view(i, 0)), pg::binary_int(r.view(i, 1))};
      if (!buckets.count(key)) throw Error("the store answered for a bucket it was not asked");
      bytes[key] = cache.put(cache_key(snap, 'l', key.first, std::to_string(key.second)), r.text(i, 2));
    }
  }
  std::vector<int64_t> out(chunks.size(), -1);
  std::vector<std::pair<int64_t, uint32_t>> decoded;
  for (const auto& [key, data] : bytes) {
    const auto& rows = buckets.at(key);
    decoded.clear();
    pg_decode_lengths(*data, &decoded);
    size_t k = 0;
    for (const auto& [chunk, tokens] : decoded) {
      while (k < rows.size() && rows[k].first < chunk) ++k;
      if (k == rows.size()) break;
      if (rows[k].first == chunk) out[rows[k].second] = tokens;
    }
  }
  return out;
}

}  // namespace pf
