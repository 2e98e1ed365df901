// Embedding vectors as both stores keep them (store/vector_blob.h): float32 little-endian bytes
// whatever the host, read back value for value; a vector of another dimension or of broken
// length is left out, never half read.
#include "store/vector_blob.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace pf {
namespace {

TEST(VectorBlob, BytesAreLittleEndianFloat32) {
  // 1.0f is 0x3f800000; -2.5f is 0xc0200000.
  EXPECT_EQ(encode_vector({1.0f, -2.5f}), std::string("\x00\x00\x80\x3f\x00\x00\x20\xc0", 8));
  EXPECT_EQ(encode_vector({}), "");
}

TEST(VectorBlob, VectorsReadBackValueForValue) {
  std::vector<float> a = {0.0f, -0.0f, 1e-38f, 3.25f, std::numeric_limits<float>::infinity()};
  std::vector<float> b = {-1.0f, 2.0f, 0.5f, 1e30f, -7.125f};
  EmbeddingMatrix m;
  EXPECT_TRUE(add_encoded_vector(&m, 7, encode_vector(a)));
  EXPECT_TRUE(add_encoded_vector(&m, 9, encode_vector(b)));
  EXPECT_EQ(m.dim, 5);
  EXPECT_EQ(m.rowids, (std::vector<int64_t>{7, 9}));
  ASSERT_EQ(m.values.size(), 10u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(m.values[i], a[i]) << i;
    EXPECT_EQ(std::signbit(m.values[i]), std::signbit(a[i])) << i;
    EXPECT_EQ(m.values[5 + i], b[i]) << i;
  }
}

TEST(VectorBlob, AnotherDimensionOrABrokenLengthIsLeftOut) {
  EmbeddingMatrix m;
  ASSERT_TRUE(add_encoded_vector(&m, 1, encode_vector({1, 2, 3})));
  EXPECT_FALSE(add_encoded_vector(&m, 2, encode_vector({1, 2})));  // another model version
  EXPECT_FALSE(add_encoded_vector(&m, 3, ""));
  EXPECT_FALSE(add_encoded_vector(&m, 4, std::string(11, '\1')));  // not whole floats
  EXPECT_EQ(m.dim, 3);
  EXPECT_EQ(m.rowids, std::vector<int64_t>{1});
  EXPECT_EQ(m.values, (std::vector<float>{1, 2, 3}));
  EmbeddingMatrix empty;
  EXPECT_FALSE(add_encoded_vector(&empty, 1, std::string(6, '\0')));
  EXPECT_EQ(empty.dim, 0);
}

}  // namespace
}  // namespace pf
