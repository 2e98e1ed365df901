// Internal to the index: the line table of one file and the construction of chunks from line
// ranges, shared by every chunker so that they agree on lines, trimming, tokens and hashes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "store/chunk.h"

namespace pf {

class ChunkBuilder {
 public:
  ChunkBuilder(std::string path, std::string language, std::string_view text);

  int line_count() const { return static_cast<int>(starts_.size()); }
  // 0-based row of a byte offset.
  int row_of(size_t offset) const;
  std::string_view line(int row) const;  // without the newline
  bool blank(int row) const;

  // Adds a chunk over rows [first, last] (0-based, inclusive), trimmed of blank edge rows.
  // Returns false (adding nothing) if the range is blank.
  bool add(int first, int last, std::string chunk_type, std::string function_name = {},
           std::string class_name = {}, std::string symbol = {}, std::string heading_path = {});

  // Adds rows [first, last] as windows of at most window rows each (type "block" unless given).
  void add_windows(int first, int last, int window, const std::string& chunk_type = "block",
                   const std::string& function_name = {}, const std::string& class_name = {},
                   const std::string& symbol = {}, const std::string& heading_path = {});

  // Adds a chunk over rows [first, last] whose content is a derived summary, not the file text.
  void add_summary(int first, int last, std::string content, std::string chunk_type,
                   std::string symbol);

  std::vector<Chunk> take() { return std::move(chunks_); }
  const std::vector<Chunk>& chunks() const { return chunks_; }

 private:
  // Completes c (content and names already set) with the file's path and language, its rows,
  // type, token estimate and hash, and appends it.
  void push(int first, int last, std::string chunk_type, Chunk c);

  std::string path_, language_;
  std::string_view text_;
  std::vector<size_t> starts_;  // byte offset of each row
  std::vector<Chunk> chunks_;
};

}  // namespace pf
