// Internal to the SQLite store: the FTS5 text index's segments by level, read from FTS5's
// structure record, and the merge an index run ends with. Each commit and each flush of FTS5's
// pending terms leaves a segment on the first level, and a level is merged at 64 segments (schema
// 8: merging at 16 rewrote the Linux tree's index twice, at 64 once). Searches seek every
// segment, so a run that leaves 16 or more on the first level merges those (a few small ones:
// well under a second on the Linux tree), and a store re-indexed day after day keeps at most 15
// there rather than 63. Also the varint reader of FTS5's records (the averages record's too).
#pragma once

#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace pf {

// One level of the index: its segments, how many of them a merge under way is reading (0: none;
// they are the level's first), the leaf pages of all of them and of those being merged.
struct TextIndexLevel {
  int64_t segments = 0;
  int64_t merging = 0;
  int64_t pages = 0;
  int64_t merging_pages = 0;
};

// Reads a varint as SQLite and FTS5 write them in their records (big-endian 7-bit groups, a ninth
// byte whole) at in[*pos], advancing *pos; false when it runs past the end of `in`.
bool read_fts5_varint(std::string_view in, size_t* pos, uint64_t* out);

// The levels described by an FTS5 structure record (row 10 of the %_data table), first level
// first; nullopt when the record is not in the format this code reads (FTS5's first format,
// written by SQLite before 3.45 and by later versions where no table asks for the second) or is
// damaged. Reads only `record`.
std::optional<std::vector<TextIndexLevel>> decode_text_index_levels(std::string_view record);

// The first level holds this many segments or more: it is merged at the end of an index run.
inline constexpr int64_t kFirstLevelMergeAt = 16;

// Merges the first level of the store's text index (copilot_code_chunks_fts) into one segment
// when it holds kFirstLevelMergeAt segments or more, holds the most of any level and no merge is
// under way; returns whether it merged. db is the store's writing connection, in a write
// transaction. Throws pf::Error from SQLite.
bool merge_first_text_index_level(sqlite3* db);

}  // namespace pf
