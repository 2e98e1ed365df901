// A 64-bit multiply-xorshift hash over 8-byte words (the mixing of MurmurHash64A), with an
// explicit little-endian load so the value is the same on every platform.
#include "core/hash.h"

#include <cstring>

namespace pf {
namespace {
inline uint64_t load64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
}  // namespace

uint64_t hash64(std::string_view data) {
  const uint64_t m = 0xc6a4a7935bd1e995ULL;
  const int r = 47;
  uint64_t h = 0x9747b28c ^ (data.size() * m);
  auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size() / 8;
  for (size_t i = 0; i < n; ++i, p += 8) {
    uint64_t k = load64(p);
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  size_t rest = data.size() & 7;
  if (rest) {
    uint64_t k = 0;
    for (size_t i = 0; i < rest; ++i) k |= uint64_t(p[i]) << (8 * i);
    h ^= k;
    h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

std::string hash_hex(std::string_view data) {
  static const char* digits = "0123456789abcdef";
  uint64_t h = hash64(data);
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[i] = digits[h & 15];
  return out;
}

}  // namespace pf
