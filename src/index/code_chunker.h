// Internal to the index: the tree-sitter chunker for TypeScript, TSX and JavaScript.
#pragma once

#include <string>
#include <string_view>

#include "index/chunk_builder.h"
#include "index/chunker.h"

namespace pf {

// Returns false if the source could not be parsed in time (the caller falls back to windows).
bool chunk_code(ChunkBuilder& out, std::string_view text, const std::string& language,
                const ChunkLimits& limits);

}  // namespace pf
