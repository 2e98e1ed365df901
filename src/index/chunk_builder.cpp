// Line table and chunk construction shared by all chunkers.
#include "index/chunk_builder.h"

#include <algorithm>
#include <cstring>

#include "core/hash.h"
#include "core/text.h"

namespace pf {

ChunkBuilder::ChunkBuilder(std::string path, std::string language, std::string_view text)
    : path_(std::move(path)), language_(std::move(language)), text_(text) {
  starts_.push_back(0);
  // memchr finds each newline many bytes at a time: the table is made for every file indexed.
  const char* const begin = text.data();
  const char* const end = begin + text.size();
  for (const char* p = begin; p < end;) {
    const void* nl = std::memchr(p, '\n', static_cast<size_t>(end - p));
    if (!nl) break;
    p = static_cast<const char*>(nl) + 1;
    if (p < end) starts_.push_back(static_cast<size_t>(p - begin));
  }
}

int ChunkBuilder::row_of(size_t offset) const {
  auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
  return static_cast<int>(it - starts_.begin()) - 1;
}

std::string_view ChunkBuilder::line(int row) const {
  size_t b = starts_[static_cast<size_t>(row)];
  size_t e = static_cast<size_t>(row) + 1 < starts_.size() ? starts_[static_cast<size_t>(row) + 1]
                                                           : text_.size();
  std::string_view l = text_.substr(b, e - b);
  if (!l.empty() && l.back() == '\n') l.remove_suffix(1);
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  return l;
}

bool ChunkBuilder::blank(int row) const {
  for (char c : line(row))
    if (c != ' ' && c != '\t' && c != '\r' && c != '\f' && c != '\v') return false;
  return true;
}

bool ChunkBuilder::add(int first, int last, std::string chunk_type, std::string function_name,
                       std::string class_name, std::string symbol, std::string heading_path) {
  first = std::max(first, 0);
  last = std::min(last, line_count() - 1);
  while (first <= last && blank(first)) ++first;
  while (last >= first && blank(last)) --last;
  if (first > last) return false;
  Chunk c;
  c.function_name = std::move(function_name);
  c.class_name = std::move(class_name);
  c.symbol = std::move(symbol);
  c.heading_path = std::move(heading_path);
  size_t b = starts_[static_cast<size_t>(first)];
  size_t e = static_cast<size_t>(last) + 1 < starts_.size() ? starts_[static_cast<size_t>(last) + 1]
                                                            : text_.size();
  c.content.assign(text_.substr(b, e - b));
  while (!c.content.empty() && (c.content.back() == '\n' || c.content.back() == '\r'))
    c.content.pop_back();
  push(first, last, std::move(chunk_type), std::move(c));
  return true;
}

void ChunkBuilder::add_summary(int first, int last, std::string content, std::string chunk_type,
                               std::string symbol) {
  Chunk c;
  c.symbol = std::move(symbol);
  c.content = std::move(content);
  push(first, last, std::move(chunk_type), std::move(c));
}

void ChunkBuilder::push(int first, int last, std::string chunk_type, Chunk c) {
  c.path = path_;
  c.language = language_;
  c.start_line = first + 1;
  c.end_line = last + 1;
  c.chunk_type = std::move(chunk_type);
  c.tokens = estimate_tokens(c.content);
  c.content_hash = hash_hex(c.content);
  chunks_.push_back(std::move(c));
}

void ChunkBuilder::add_windows(int first, int last, int window, const std::string& chunk_type,
                               const std::string& function_name, const std::string& class_name,
                               const std::string& symbol, const std::string& heading_path) {
  window = std::max(window, 1);
  for (int s = first; s <= last; s += window)
    add(s, std::min(last, s + window - 1), chunk_type, function_name, class_name, symbol,
        heading_path);
}

}  // namespace pf
