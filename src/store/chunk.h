// The records the indexer writes and the store keeps: a chunk of a file (a unit of retrieval) and
// the per-file bookkeeping that makes re-indexing incremental.
#pragma once

#include <cstdint>
#include <string>

namespace pf {

// chunkType values. "section" is a Markdown heading section; "block" is top-level code or a
// line window that is not a declaration; "module" is a file-level summary or export object.
inline constexpr const char* kChunkTypes[] = {"function", "class", "method", "type",
                                              "module",   "block", "section"};

struct Chunk {
  std::string path;      // relative to the repository root, '/' separated
  std::string language;  // typescript, tsx, javascript, markdown, json, text, ...
  int start_line = 0;    // 1-based, inclusive, lines of the original file
  int end_line = 0;
  std::string chunk_type;
  std::string function_name;  // function or method name (empty if none)
  std::string class_name;     // enclosing class for methods, the class for classes
  std::string symbol;         // the declared name, whatever its kind (type, const, heading)
  std::string heading_path;   // Markdown "A › B › C"; for class members the class header line
  std::string content;
  // content holds a zstd frame (store/content_codec.h), not the text: set by the indexer, which
  // compresses where the store keeps compressed content; chunks read back are always text.
  bool compressed = false;
  // The text index's tokens of the chunk (store/fts_tokenizer.h encode_text_tokens), made by the
  // indexer's workers for a store that takes them (Store::text_tokens); "" otherwise, and in
  // chunks read back.
  std::string text_tokens;
  int tokens = 0;
  std::string content_hash;
};

// What the store remembers about one indexed file.
struct FileRecord {
  std::string path;
  int64_t size = 0;
  int64_t mtime_ns = 0;
  std::string content_hash;
  std::string language;
  // Why the file was chunked in line windows instead of by its language's chunker (index/
  // chunker.h kFallback*), "" if it was not; such a file is chunked again by the next run.
  std::string fallback = {};
};

}  // namespace pf
