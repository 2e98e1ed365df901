// Internal to the stores: an embedding vector as both stores keep it, float32 little-endian
// whatever the host, so a store moves between machines and from one backend to the other.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "store/store.h"

namespace pf {

// v's bytes, 4 a value.
std::string encode_vector(const std::vector<float>& v);

// Appends chunk rowid's vector, encoded in bytes, to m (its first vector sets m->dim). Leaves m
// as it was and returns false when bytes is empty, not whole floats, or of another dimension
// than m's: a vector from another version of the model.
bool add_encoded_vector(EmbeddingMatrix* m, int64_t rowid, std::string_view bytes);

}  // namespace pf
