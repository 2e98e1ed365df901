// Internal to the index: Markdown and MDX chunking by heading tree.
#pragma once

#include <string_view>

#include "index/chunk_builder.h"
#include "index/chunker.h"

namespace pf {

void chunk_markdown(ChunkBuilder& out, const ChunkLimits& limits);

}  // namespace pf
