// DEPTH_TO_SPACE and SPACE_TO_DEPTH (ops/reference/space.h) against plain versions written here from the
// definition, one output coordinate at a time: many shapes and block sizes, empty tensors, several element sizes,
// and the shape errors.

#include "ops/reference/space.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::ops::reference {
namespace {

// NHWC flat index.
int64_t At(const Dims& d, int64_t n, int64_t h, int64_t w, int64_t c) { return ((n * d[1] + h) * d[2] + w) * d[3] + c; }

template <typename T>
std::vector<T> Values(int64_t count) {
  std::vector<T> v(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) v[static_cast<size_t>(i)] = static_cast<T>(i * 7 - 3);
  return v;
}

template <typename T>
void CheckDepthToSpace(const Dims& in, int64_t b) {
  Dims out;
  std::string error;
  ASSERT_TRUE(DepthToSpaceShape(in, b, &out, &error)) << error;
  ASSERT_EQ(out, (Dims{in[0], in[1] * b, in[2] * b, in[3] / (b * b)}));
  const std::vector<T> x = Values<T>(NumElements(in));
  std::vector<T> y(static_cast<size_t>(NumElements(out)), T(99));
  DepthToSpace(in, b, sizeof(T), x.data(), y.data());
  for (int64_t n = 0; n < out[0]; ++n)
    for (int64_t h = 0; h < out[1]; ++h)
      for (int64_t w = 0; w < out[2]; ++w)
        for (int64_t c = 0; c < out[3]; ++c) {
          // Depth-column-row: the input channel is (row offset in block, column offset in block, c).
          const int64_t ic = ((h % b) * b + (w % b)) * out[3] + c;
          ASSERT_EQ(y[At(out, n, h, w, c)], x[At(in, n, h / b, w / b, ic)])
              << "at " << n << "," << h << "," << w << "," << c << " block " << b;
        }
}

template <typename T>
void CheckSpaceToDepth(const Dims& in, int64_t b) {
  Dims out;
  std::string error;
  ASSERT_TRUE(SpaceToDepthShape(in, b, &out, &error)) << error;
  ASSERT_EQ(out, (Dims{in[0], in[1] / b, in[2] / b, in[3] * b * b}));
  const std::vector<T> x = Values<T>(NumElements(in));
  std::vector<T> y(static_cast<size_t>(NumElements(out)), T(99));
  SpaceToDepth(in, b, sizeof(T), x.data(), y.data());
  for (int64_t n = 0; n < in[0]; ++n)
    for (int64_t h = 0; h < in[1]; ++h)
      for (int64_t w = 0; w < in[2]; ++w)
        for (int64_t c = 0; c < in[3]; ++c) {
          const int64_t oc = ((h % b) * b + (w % b)) * in[3] + c;
          ASSERT_EQ(y[At(out, n, h / b, w / b, oc)], x[At(in, n, h, w, c)])
              << "at " << n << "," << h << "," << w << "," << c << " block " << b;
        }
}

TEST(SpaceTest, DepthToSpaceMatchesDefinition) {
  for (int64_t b : {1, 2, 3, 4}) {
    for (const Dims& base : {Dims{1, 1, 1, 1}, Dims{2, 3, 2, 2}, Dims{1, 2, 5, 3}, Dims{3, 1, 4, 1}}) {
      const Dims in = {base[0], base[1], base[2], base[3] * b * b};
      CheckDepthToSpace<float>(in, b);
      CheckDepthToSpace<int8_t>(in, b);
      CheckDepthToSpace<int64_t>(in, b);
    }
  }
}

TEST(SpaceTest, SpaceToDepthMatchesDefinition) {
  for (int64_t b : {1, 2, 3, 4}) {
    for (const Dims& base : {Dims{1, 1, 1, 1}, Dims{2, 3, 2, 2}, Dims{1, 2, 5, 3}, Dims{3, 1, 4, 1}}) {
      const Dims in = {base[0], base[1] * b, base[2] * b, base[3]};
      CheckSpaceToDepth<float>(in, b);
      CheckSpaceToDepth<uint8_t>(in, b);
      CheckSpaceToDepth<int32_t>(in, b);
    }
  }
}

TEST(SpaceTest, RoundTripIsIdentity) {
  const Dims in = {2, 6, 4, 3};
  const std::vector<int32_t> x = Values<int32_t>(NumElements(in));
  Dims mid, back;
  std::string error;
  ASSERT_TRUE(SpaceToDepthShape(in, 2, &mid, &error));
  ASSERT_TRUE(DepthToSpaceShape(mid, 2, &back, &error));
  ASSERT_EQ(back, in);
  std::vector<int32_t> m(x.size()), y(x.size());
  SpaceToDepth(in, 2, sizeof(int32_t), x.data(), m.data());
  DepthToSpace(mid, 2, sizeof(int32_t), m.data(), y.data());
  EXPECT_EQ(y, x);
}

TEST(SpaceTest, EmptyTensorsHaveEmptyOutputs) {
  Dims out;
  std::string error;
  for (const Dims& in : {Dims{0, 2, 2, 4}, Dims{1, 0, 2, 4}, Dims{1, 2, 0, 4}, Dims{1, 2, 2, 0}}) {
    ASSERT_TRUE(DepthToSpaceShape(in, 2, &out, &error)) << error;
    EXPECT_EQ(NumElements(out), 0);
    DepthToSpace(in, 2, 4, nullptr, nullptr);  // nothing to move: must not touch the data
    ASSERT_TRUE(SpaceToDepthShape(in, 2, &out, &error)) << error;
    EXPECT_EQ(NumElements(out), 0);
    SpaceToDepth(in, 2, 4, nullptr, nullptr);
  }
}

TEST(SpaceTest, ShapeErrors) {
  Dims out;
  std::string error;
  EXPECT_FALSE(DepthToSpaceShape({1, 2, 2, 6}, 2, &out, &error));
  EXPECT_NE(error.find("depth 6 is not a multiple of block_size squared (4)"), std::string::npos) << error;
  EXPECT_FALSE(DepthToSpaceShape({1, 2, 2, 4}, 0, &out, &error));
  EXPECT_NE(error.find("block_size 0 must be at least 1"), std::string::npos) << error;
  EXPECT_FALSE(DepthToSpaceShape({1, 2, 2, 4}, -2, &out, &error));
  EXPECT_FALSE(DepthToSpaceShape({2, 2, 4}, 2, &out, &error));
  EXPECT_NE(error.find("rank 4"), std::string::npos) << error;
  EXPECT_FALSE(SpaceToDepthShape({1, 4, 3, 1}, 2, &out, &error));
  EXPECT_NE(error.find("height 4 and width 3 must be multiples of block_size 2"), std::string::npos) << error;
  EXPECT_FALSE(SpaceToDepthShape({1, 4, 4, 1}, 0, &out, &error));
  EXPECT_NE(error.find("block_size 0 must be at least 1"), std::string::npos) << error;
  EXPECT_FALSE(SpaceToDepthShape({1, 4, 4, 1, 1}, 2, &out, &error));
  // The largest block size: its square does not overflow.
  EXPECT_FALSE(DepthToSpaceShape({1, 1, 1, 4}, 2147483647, &out, &error));
}

}  // namespace
}  // namespace kiln::ops::reference
