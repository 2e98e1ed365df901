// Internal to the index: which compressor a run's workers use for chunk content, training and
// saving the repository's dictionary first when the run should start one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "index/indexer.h"
#include "store/content_codec.h"
#include "store/store.h"

namespace pf {

// The compressor for this run's chunks of repo, or null (content stays text): null for a store
// that keeps text, for ContentCompression::kNever, and for a repository without a dictionary
// whose run does not call for one (kAuto under compress_from_bytes) or whose sample is too
// small to train one. to_index are the files the run will chunk, sorted by path; the training
// sample is a fixed stride of them, so the same files give the same dictionary. Must be called
// outside a write batch (it opens one to save a new dictionary).
std::unique_ptr<ContentCompressor> content_compressor(Store& store, int64_t repo,
                                                      const std::string& root,
                                                      const std::vector<const WalkEntry*>& to_index,
                                                      const IndexOptions& options);

}  // namespace pf
