// Internal to the index: the tree-sitter chunker for every language with a grammar
// (index/code_languages.h); C is parsed without the function bodies it does not split.
#pragma once

#include <string>
#include <string_view>

#include "index/chunk_builder.h"
#include "index/chunker.h"

namespace pf {

// Returns null when the source was chunked by its syntax tree, else why not (kFallback*; the
// caller then chunks it in line windows). The parse has a work budget, so the outcome depends
// only on text and language. Thread-safe (one parser per thread and language).
const char* chunk_code(ChunkBuilder& out, std::string_view text, const std::string& language,
                       const ChunkLimits& limits);

}  // namespace pf
