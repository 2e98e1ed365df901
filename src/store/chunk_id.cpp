// Chunk ids (see chunk_id.h).
#include "store/chunk_id.h"

#include <chrono>
#include <cstdint>
#include <random>

namespace pf {

std::string new_chunk_id() {
  static const char alphabet[] = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string id(21, '0');
  auto ms = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                      std::chrono::system_clock::now().time_since_epoch())
                                      .count());
  for (int i = 7; i >= 0; --i, ms >>= 6) id[static_cast<size_t>(i)] = alphabet[ms & 63];
  uint64_t bits = rng();
  for (size_t i = 8; i < id.size(); ++i, bits >>= 6) {
    if (i == 18) bits = rng();
    id[i] = alphabet[bits & 63];
  }
  return id;
}

}  // namespace pf
