// The vector index of a store's embeddings for one model, loaded once and shared by every
// search in the process — every connection to the same store file, every worker thread — until
// the store's generation says chunks or embeddings changed. Loading is a full read of the
// vectors (100k chunks of 768 floats are 300 MB); a search must not pay that each time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "search/vector_index.h"
#include "store/store.h"

namespace pf {

std::shared_ptr<const VectorIndex> shared_vector_index(Store& store, const std::string& model);

// How many times an index was loaded from a store in this process (for tests).
int64_t vector_index_loads();

}  // namespace pf
