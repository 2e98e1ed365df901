// Internal to the store: the PostgreSQL store's postings in the database, which its lexical
// ranking (pg_search.h) reads. Each write batch that changes a repository's chunks adds one
// segment for it (lexical_segments: level 0): its terms' postings in blocks (lexical_blocks,
// keyed by segment and first term; pg_postings.h has the bytes) and its new chunks' token counts
// (lexical_lengths, keyed by segment and bucket of chunk ids). A deleted chunk leaves a tombstone
// per term in the batch's segment. When a repository has kPgMergeAt segments on one level, they
// are merged, streaming term by term, into one on the next level; a tombstone meeting its
// chunk's posting there takes both away, and one whose posting is in no other segment goes.
// Chunk ids are never reused, so a chunk has at most one posting and one tombstone per term:
// the order of segments never matters. Everything is written inside the batch's transaction.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "store/chunk.h"
#include "store/pg_postings.h"
#include "store/pg_util.h"

namespace pf {

// Segments on a level that make the repository's segments on it merge into one.
inline constexpr int kPgMergeAt = 8;

// A chunk's terms with their counts per column, in byte order, and its tokens in all four
// columns as FTS5 counts them.
struct PgChunkTerms {
  std::vector<std::pair<std::string, BoundedTopK::Counts>> terms;
  uint32_t length = 0;
};
// c's terms, its path column being `path` (the row's, whatever c.path holds).
PgChunkTerms pg_chunk_terms(const Chunk& c, std::string_view path);
// The columns of a chunk row that its terms come from, for a SELECT or a RETURNING list, and
// the terms of row r of a result holding them from column `first` on.
inline constexpr const char* kPgTermColumns =
    "coalesce(\"functionName\",''), coalesce(\"className\",''), coalesce(symbol,''), path, "
    "coalesce(heading_path,''), content";
PgChunkTerms pg_row_terms(const pg::Result& r, int row, int first);

// The postings one write batch adds. Not thread-safe; one per store connection.
class PgSegmentWriter {
 public:
  // Chunk `chunk` of repo_id was added (or removed) in the open batch, with these terms.
  void add(int64_t repo_id, int64_t chunk, const PgChunkTerms& t);
  void remove(int64_t repo_id, int64_t chunk, const PgChunkTerms& t);
  // Writes a segment for each repository changed and the store's row and token totals, then
  // merges full levels; on c, inside the batch's open transaction. Then clear(). Returns
  // whether segments were merged: their rows' space is worth reclaiming (VACUUM, which reads
  // only the pages changed since the last) once the batch commits.
  bool flush(pg::Connection& c);
  void clear();

 private:
  struct Pending {
    std::map<std::string, std::vector<PgPosting>> terms;
    std::vector<std::pair<int64_t, uint32_t>> lengths;
    std::unordered_set<int64_t> removed;
  };
  std::map<int64_t, Pending> repos_;
  int64_t rows_ = 0, tokens_ = 0;
};

// Writes one new segment of repo_id on level from terms (in byte order, postings in chunk
// order) and lengths (in chunk order); returns its id.
int64_t pg_write_segment(pg::Connection& c, int64_t repo_id, int level,
                         const std::map<std::string, std::vector<PgPosting>>& terms,
                         const std::vector<std::pair<int64_t, uint32_t>>& lengths);

// Merges each level of repo_id holding merge_at segments or more into one on the next level,
// from level 0 up (merge_at >= 2). Returns how many merges ran; *top_level (when given) is
// set to the highest level merged, -1 for none.
int pg_merge_levels(pg::Connection& c, int64_t repo_id, int merge_at = kPgMergeAt,
                    int* top_level = nullptr);

// Merges every segment of repo_id into one, which then holds no tombstone.
void pg_merge_repository(pg::Connection& c, int64_t repo_id);

// Drops every segment and writes one per repository from its chunks, with the totals; inside
// the caller's transaction (a store whose postings another version made).
void pg_rebuild_postings(pg::Connection& c);

// What a search reads first, in one query: the store's totals, its instance id and its
// segments (segment, repository). Inside the caller's snapshot. Throws pf::Error.
struct PgSnapshot {
  int64_t rows = 0, tokens = 0;
  std::string instance;
  std::vector<std::pair<int64_t, int64_t>> segments;
};
PgSnapshot pg_read_snapshot(pg::Connection& c);

// A committed segment's bytes never change and its id is never used again, so what searches
// read of them (each term's block, each bucket of lengths) is kept for the process, shared by
// every connection and thread, keyed by the store's instance id: a warm search reads no block.
// At 256 MiB the cache starts again empty.

// What a search reads of its terms: in every segment of snap, the block that could hold each
// term (those not cached in one query), and the term's entry there. Throws pf::Error.
class PgTermBlocks {
 public:
  struct Entry {
    size_t term;  // by position in terms
    int64_t segment, repo_id;
    PgTermView postings;  // into bytes this holds
  };
  PgTermBlocks(pg::Connection& c, const PgSnapshot& snap, const std::vector<std::string>& terms);
  const std::vector<Entry>& entries() const { return entries_; }
  // How many chunks hold terms[term]: its postings less its tombstones, over every segment.
  int64_t df(size_t term) const { return df_[term]; }

 private:
  std::vector<std::shared_ptr<const std::string>> held_;
  std::vector<Entry> entries_;
  std::vector<int64_t> df_;
};

// The token counts of chunks (chunk, segment keeping its length), in their order, -1 for one
// the store lacks: the buckets not cached in one query.
std::vector<int64_t> pg_read_lengths(pg::Connection& c, const PgSnapshot& snap,
                                     const std::vector<std::pair<int64_t, int64_t>>& chunks);

}  // namespace pf
