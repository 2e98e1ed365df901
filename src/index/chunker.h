// Splits one file into chunks, choosing the chunker by language: tree-sitter for TypeScript,
// TSX, JavaScript, Python, Go, Rust and Java, the heading tree for Markdown/MDX, a summary for
// package.json, line windows for every other text file. All chunkers share the rules in
// chunk_builder.h: line numbers are true to the original file and no non-blank line is left out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "store/chunk.h"

namespace pf {

struct ChunkLimits {
  int max_lines = 80;     // no chunk is longer, except a single line that cannot be split
  int window_lines = 60;  // line windows for plain text and oversized leaves
  int max_chars = 2000;   // Markdown sections are also split above this size
  // C: parse every function body, not only those of functions over max_lines (the same chunks
  // for a file the parser reads without error, more work; for comparisons).
  bool parse_all_bodies = false;
  // C, and .h headers without C++: chunked by tree-sitter instead of the token scan of
  // index/c_chunker.h (for comparisons).
  bool c_by_syntax_tree = false;
};

// Bump when chunking changes, so the next index run re-chunks every file.
inline constexpr const char* kChunkerVersion = "9";  // 9: C chunked by a token scan

// "typescript", "tsx", "javascript", "markdown", "package.json", or a plain-text language name
// from the extension ("json", "yaml", "python", ... or "text").
std::string detect_language(std::string_view rel_path);

// Why a file was chunked in line windows instead of by its language's chunker (recorded per
// file as FileRecord::fallback, counted by `pilotfish stats`, tried again by the next run).
inline constexpr const char* kFallbackParseBudget = "parse over its work budget";
inline constexpr const char* kFallbackParseFailed = "parser failed";
inline constexpr const char* kFallbackNoGrammar = "no grammar";
inline constexpr const char* kFallbackPackageJson = "package.json not a JSON object";

// The chunks of one file. If fallback is given, it is set to why the file was chunked in line
// windows instead of by its language's chunker, or cleared; plain text has no fallback.
std::vector<Chunk> chunk_file(const std::string& rel_path, const std::string& language,
                              std::string_view content, const ChunkLimits& limits = {},
                              std::string* fallback = nullptr);

}  // namespace pf
