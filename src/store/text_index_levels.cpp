// FTS5's structure record read for the levels of the text index, and the first level's merge at
// the end of an index run (store/text_index_levels.h).
#include "store/text_index_levels.h"

#include <algorithm>
#include <string>

#include "store/sqlite_util.h"

namespace pf {

bool read_fts5_varint(std::string_view in, size_t* pos, uint64_t* out) {
  uint64_t v = 0;
  for (int i = 0; i < 9; ++i) {
    if (*pos >= in.size()) return false;
    auto b = static_cast<uint8_t>(in[(*pos)++]);
    if (i == 8) {
      *out = (v << 8) | b;
      return true;
    }
    v = (v << 7) | (b & 0x7f);
    if (!(b & 0x80)) {
      *out = v;
      return true;
    }
  }
  return false;
}

namespace {

// FTS5 refuses a structure of more levels or segments than this (FTS5_MAX_SEGMENT).
constexpr uint64_t kMaxSegments = 2000;

}  // namespace

std::optional<std::vector<TextIndexLevel>> decode_text_index_levels(std::string_view record) {
  // A 4-byte cookie; the second format follows it with the bytes FF 00 00 01.
  if (record.size() < 4) return std::nullopt;
  if (record.size() >= 8 && record.substr(4, 4) == std::string_view("\xff\x00\x00\x01", 4))
    return std::nullopt;
  size_t pos = 4;
  uint64_t levels = 0, segments = 0, write_counter = 0;
  if (!read_fts5_varint(record, &pos, &levels) || !read_fts5_varint(record, &pos, &segments) ||
      !read_fts5_varint(record, &pos, &write_counter) || levels > kMaxSegments ||
      segments > kMaxSegments)
    return std::nullopt;
  std::vector<TextIndexLevel> out(levels);
  uint64_t seen = 0;
  for (TextIndexLevel& level : out) {
    uint64_t merging = 0, count = 0;
    if (!read_fts5_varint(record, &pos, &merging) || !read_fts5_varint(record, &pos, &count) ||
        merging > count || count > segments - seen)
      return std::nullopt;
    seen += count;
    level.segments = static_cast<int64_t>(count);
    level.merging = static_cast<int64_t>(merging);
    for (uint64_t s = 0; s < count; ++s) {
      uint64_t segid = 0, first = 0, last = 0;
      if (!read_fts5_varint(record, &pos, &segid) || !read_fts5_varint(record, &pos, &first) ||
          !read_fts5_varint(record, &pos, &last) || last < first || last - first >= (1u << 31))
        return std::nullopt;
      level.pages += static_cast<int64_t>(last - first + 1);
      if (s < merging) level.merging_pages += static_cast<int64_t>(last - first + 1);
    }
  }
  if (seen != segments) return std::nullopt;
  return out;
}

namespace {

std::optional<std::vector<TextIndexLevel>> read_levels(sqlite3* db) {
  sqlite::Statement st(db, "SELECT block FROM copilot_code_chunks_fts_data WHERE id = 10");
  if (!st.step()) return std::nullopt;
  auto* p = static_cast<const char*>(sqlite3_column_blob(st.handle(), 0));
  int n = sqlite3_column_bytes(st.handle(), 0);
  return decode_text_index_levels(std::string_view(p ? p : "", p ? static_cast<size_t>(n) : 0));
}

}  // namespace

bool merge_first_text_index_level(sqlite3* db) {
  auto levels = read_levels(db);
  if (!levels || levels->empty()) return false;
  const TextIndexLevel& first = levels->front();
  bool others_fewer = std::all_of(levels->begin() + 1, levels->end(), [&](const TextIndexLevel& l) {
    return l.segments <= first.segments && l.merging == 0;
  });
  if (first.segments < kFirstLevelMergeAt || first.merging > 0 || !others_fewer) return false;
  // FTS5's 'merge' takes the level with the most segments (the first, checked above), then goes
  // on to the next level holding 'usermerge' (16) segments or more while it has pages of work
  // left. Asked for half the pages left to merge each time, it ends with none left over.
  sqlite::Statement merge(db,
                          "INSERT INTO copilot_code_chunks_fts(copilot_code_chunks_fts, rank) "
                          "VALUES('merge', ?)");
  int64_t left = first.pages;
  for (int call = 0; call < 200 && left > 0; ++call) {
    merge.bind(1, std::max<int64_t>(1, left / 2)).run();
    levels = read_levels(db);
    if (!levels || levels->empty() || levels->front().merging == 0) break;
    left = levels->front().merging_pages;
  }
  return true;
}

}  // namespace pf
