// Embedding vectors as the stores keep them (see vector_blob.h).
#include "store/vector_blob.h"

#include <cstring>

namespace pf {

std::string encode_vector(const std::vector<float>& v) {
  std::string out(v.size() * 4, '\0');
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &v[i], 4);
    for (size_t b = 0; b < 4; ++b) out[i * 4 + b] = static_cast<char>((bits >> (8 * b)) & 0xff);
  }
  return out;
}

bool add_encoded_vector(EmbeddingMatrix* m, int64_t rowid, std::string_view bytes) {
  if (bytes.empty() || bytes.size() % 4 != 0) return false;
  int dim = static_cast<int>(bytes.size() / 4);
  if (m->dim != 0 && dim != m->dim) return false;
  m->dim = dim;
  m->rowids.push_back(rowid);
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  for (size_t i = 0; i < bytes.size(); i += 4) {
    uint32_t bits = 0;
    for (size_t b = 0; b < 4; ++b) bits |= uint32_t{p[i + b]} << (8 * b);
    float f;
    std::memcpy(&f, &bits, 4);
    m->values.push_back(f);
  }
  return true;
}

}  // namespace pf
