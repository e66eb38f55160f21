// DEPTH_TO_SPACE and SPACE_TO_DEPTH (ops/reference/space.h) against plain versions written here from the
// definition, one output coordinate at a time: many shapes and block sizes, empty tensors, several element sizes,
// and the shape errors.

#include "ops/reference/space.h"

#include <gtest/gtest.h>

#include <algorithm>
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
  // An empty batch with huge dimensions: the output depth would not fit.
  EXPECT_FALSE(SpaceToDepthShape({0, 2147483647, 2147483647, 2147483647}, 2147483647, &out, &error));
  EXPECT_NE(error.find("too large"), std::string::npos) << error;
  // The largest block size: its square does not overflow.
  EXPECT_FALSE(DepthToSpaceShape({1, 1, 1, 4}, 2147483647, &out, &error));
}

// SPACE_TO_BATCH_ND from its definition on a rank-4 input: pad, then output batch (sh * bw + sw) * N + n holds the
// padded elements at (oh * bh + sh, ow * bw + sw).
void CheckSpaceToBatch(const Dims& in, int64_t bh, int64_t bw, int64_t top, int64_t bottom, int64_t left,
                       int64_t right) {
  BatchSpaceParams p;
  Dims out;
  std::string error;
  ASSERT_TRUE(MakeSpaceToBatch(in, {bh, bw}, {top, bottom, left, right}, &p, &out, &error)) << error;
  const int64_t ph = in[1] + top + bottom, pw = in[2] + left + right;
  ASSERT_EQ(out, (Dims{in[0] * bh * bw, ph / bh, pw / bw, in[3]}));
  const std::vector<int16_t> x = Values<int16_t>(NumElements(in));
  std::vector<int16_t> y(static_cast<size_t>(NumElements(out)), 99);
  const int16_t pad = -5;
  SpaceToBatch(p, sizeof(int16_t), &pad, x.data(), y.data());
  for (int64_t ob = 0; ob < out[0]; ++ob)
    for (int64_t oh = 0; oh < out[1]; ++oh)
      for (int64_t ow = 0; ow < out[2]; ++ow)
        for (int64_t c = 0; c < out[3]; ++c) {
          const int64_t n = ob % in[0], sh = (ob / in[0]) / bw, sw = (ob / in[0]) % bw;
          const int64_t h = oh * bh + sh - top, w = ow * bw + sw - left;
          const bool inside = h >= 0 && h < in[1] && w >= 0 && w < in[2];
          ASSERT_EQ(y[At(out, ob, oh, ow, c)], inside ? x[At(in, n, h, w, c)] : pad)
              << ob << "," << oh << "," << ow << "," << c;
        }
  // BATCH_TO_SPACE_ND with the paddings as crops undoes it.
  BatchSpaceParams back;
  Dims restored;
  ASSERT_TRUE(MakeBatchToSpace(out, {bh, bw}, {top, bottom, left, right}, &back, &restored, &error)) << error;
  ASSERT_EQ(restored, in);
  std::vector<int16_t> z(x.size(), 99);
  BatchToSpace(back, sizeof(int16_t), y.data(), z.data());
  EXPECT_EQ(z, x);
}

TEST(SpaceTest, SpaceToBatchMatchesDefinitionAndBatchToSpaceInverts) {
  CheckSpaceToBatch({1, 4, 4, 1}, 2, 2, 0, 0, 0, 0);
  CheckSpaceToBatch({2, 3, 5, 2}, 2, 3, 1, 0, 0, 1);
  CheckSpaceToBatch({3, 1, 1, 3}, 3, 2, 1, 1, 0, 1);
  CheckSpaceToBatch({1, 2, 6, 1}, 1, 3, 0, 0, 2, 1);
  CheckSpaceToBatch({2, 5, 2, 1}, 4, 1, 2, 1, 0, 0);
}

TEST(SpaceTest, BatchSpaceRank3AndEmpty) {
  BatchSpaceParams p;
  Dims out;
  std::string error;
  ASSERT_TRUE(MakeSpaceToBatch({2, 5, 3}, {3}, {2, 2}, &p, &out, &error)) << error;
  EXPECT_EQ(out, (Dims{6, 3, 3}));
  ASSERT_TRUE(MakeBatchToSpace({6, 3, 3}, {3}, {1, 2}, &p, &out, &error)) << error;
  EXPECT_EQ(out, (Dims{2, 6, 3}));
  // Rank 3 data: [2, 2, 1] by block 2, no padding: batch b*2 + n.
  ASSERT_TRUE(MakeSpaceToBatch({2, 2, 1}, {2}, {0, 0}, &p, &out, &error)) << error;
  const float x[] = {1, 2, 3, 4};
  float y[4] = {};
  const float zero = 0;
  SpaceToBatch(p, sizeof(float), &zero, x, y);
  EXPECT_EQ(std::vector<float>(y, y + 4), (std::vector<float>{1, 3, 2, 4}));
  ASSERT_TRUE(MakeSpaceToBatch({0, 2, 2, 1}, {2, 2}, {0, 0, 0, 0}, &p, &out, &error)) << error;
  EXPECT_EQ(out, (Dims{0, 1, 1, 1}));
  ASSERT_TRUE(MakeBatchToSpace({4, 1, 1, 0}, {2, 2}, {0, 0, 0, 0}, &p, &out, &error)) << error;
  EXPECT_EQ(out, (Dims{1, 2, 2, 0}));
  BatchToSpace(p, 4, nullptr, nullptr);  // nothing to move
  ASSERT_TRUE(MakeBatchToSpace({4, 1, 1, 1}, {2, 2}, {1, 1, 2, 0}, &p, &out, &error)) << error;
  EXPECT_EQ(out, (Dims{1, 0, 0, 1}));
}

TEST(SpaceTest, BatchSpaceErrors) {
  BatchSpaceParams p;
  Dims out;
  std::string error;
  EXPECT_FALSE(MakeSpaceToBatch({1, 3, 4, 1}, {2, 2}, {0, 0, 0, 0}, &p, &out, &error));
  EXPECT_NE(error.find("padded spatial dimension 0 (3) is not a multiple of block_shape[0] 2"), std::string::npos)
      << error;
  EXPECT_FALSE(MakeSpaceToBatch({1, 4, 4, 1}, {0, 2}, {0, 0, 0, 0}, &p, &out, &error));
  EXPECT_NE(error.find("block_shape[0] is 0; it must be at least 1"), std::string::npos) << error;
  EXPECT_FALSE(MakeSpaceToBatch({1, 4, 4, 1}, {2, 2}, {0, -2, 0, 0}, &p, &out, &error));
  EXPECT_NE(error.find("paddings for spatial dimension 0 are (0, -2)"), std::string::npos) << error;
  EXPECT_FALSE(MakeSpaceToBatch({1, 4, 4, 1}, {2}, {0, 0}, &p, &out, &error));
  EXPECT_NE(error.find("block_shape has 1 entries and paddings 2; expected 2 and 4"), std::string::npos) << error;
  EXPECT_FALSE(MakeSpaceToBatch({4, 4}, {2}, {0, 0}, &p, &out, &error));
  EXPECT_NE(error.find("rank 3 or 4"), std::string::npos) << error;
  EXPECT_FALSE(MakeSpaceToBatch({65536, 65536, 1}, {65536}, {0, 0}, &p, &out, &error));
  EXPECT_NE(error.find("too large"), std::string::npos) << error;
  EXPECT_FALSE(MakeBatchToSpace({3, 2, 2, 1}, {2, 2}, {0, 0, 0, 0}, &p, &out, &error));
  EXPECT_NE(error.find("input batch 3 is not a multiple"), std::string::npos) << error;
  EXPECT_FALSE(MakeBatchToSpace({4, 1, 1, 1}, {2, 2}, {2, 1, 0, 0}, &p, &out, &error));
  EXPECT_NE(error.find("crops for spatial dimension 0 (2, 1) exceed its size 2"), std::string::npos) << error;
  EXPECT_FALSE(MakeBatchToSpace({4, 1, 1, 1}, {2, 2}, {0, 0, -1, 0}, &p, &out, &error));
  EXPECT_NE(error.find("crops for spatial dimension 1 are (-1, 0)"), std::string::npos) << error;
}

// MIRROR_PAD against a per-coordinate mirror written out for one dimension: REFLECT skips the edge.
int64_t Mirror(int64_t i, int64_t dim, int64_t before, bool reflect) {
  int64_t j = i - before;
  while (j < 0 || j >= dim) {
    if (j < 0) j = reflect ? -j : -1 - j;
    if (j >= dim) j = reflect ? 2 * (dim - 1) - j : 2 * dim - 1 - j;
  }
  return j;
}

TEST(SpaceTest, MirrorPadMatchesDefinition) {
  for (bool reflect : {true, false}) {
    const int64_t slack = reflect ? 1 : 0;
    for (const Dims& in : {Dims{5}, Dims{3, 4}, Dims{2, 3, 4}, Dims{1, 2, 3, 2}, Dims{2, 1, 2, 1, 3, 2}}) {
      std::vector<int64_t> before(in.size()), after(in.size());
      for (size_t d = 0; d < in.size(); ++d) {
        before[d] = (in[d] - slack) * (d % 2 == 0 ? 1 : 0);  // the limit, or none
        after[d] = std::min<int64_t>(in[d] - slack, 1);
      }
      Dims out;
      std::string error;
      ASSERT_TRUE(MirrorPadShape(in, before, after, reflect, &out, &error)) << error;
      const std::vector<int64_t> x = Values<int64_t>(NumElements(in));
      std::vector<int64_t> y(static_cast<size_t>(NumElements(out)), 99);
      MirrorPad(in, before, after, reflect, sizeof(int64_t), x.data(), y.data());
      for (int64_t k = 0; k < NumElements(out); ++k) {
        int64_t rest = k, offset = 0, stride = 1;
        for (size_t d = in.size(); d-- > 0;) {
          const int64_t c = rest % out[d];
          rest /= out[d];
          offset += Mirror(c, in[d], before[d], reflect) * stride;
          stride *= in[d];
        }
        ASSERT_EQ(y[k], x[offset]) << "element " << k << (reflect ? " reflect" : " symmetric");
      }
    }
  }
  // [1 2 3] by 2 each side.
  const float x[] = {1, 2, 3};
  float y[7];
  MirrorPad({3}, {2}, {2}, true, sizeof(float), x, y);
  EXPECT_EQ(std::vector<float>(y, y + 7), (std::vector<float>{3, 2, 1, 2, 3, 2, 1}));
  MirrorPad({3}, {2}, {2}, false, sizeof(float), x, y);
  EXPECT_EQ(std::vector<float>(y, y + 7), (std::vector<float>{2, 1, 1, 2, 3, 3, 2}));
}

TEST(SpaceTest, MirrorPadLimitsAndEmpty) {
  Dims out;
  std::string error;
  EXPECT_FALSE(MirrorPadShape({3}, {3}, {0}, true, &out, &error));
  EXPECT_NE(error.find("paddings (3, 0) for dimension 0 of size 3 must be in [0, 2] (REFLECT: dim - 1)"),
            std::string::npos)
      << error;
  EXPECT_TRUE(MirrorPadShape({3}, {3}, {0}, false, &out, &error)) << error;
  EXPECT_FALSE(MirrorPadShape({3}, {0}, {4}, false, &out, &error));
  EXPECT_NE(error.find("must be in [0, 3] (SYMMETRIC: dim)"), std::string::npos) << error;
  EXPECT_FALSE(MirrorPadShape({3}, {-1}, {0}, false, &out, &error));
  EXPECT_FALSE(MirrorPadShape({3, 2}, {0}, {0}, false, &out, &error));
  EXPECT_NE(error.find("one per input dimension (2)"), std::string::npos) << error;
  // An empty dimension takes no padding, in either mode; other dimensions may still pad.
  EXPECT_FALSE(MirrorPadShape({0, 2}, {1, 0}, {0, 0}, false, &out, &error));
  ASSERT_TRUE(MirrorPadShape({0, 2}, {0, 1}, {0, 1}, false, &out, &error)) << error;
  EXPECT_EQ(out, (Dims{0, 4}));
  MirrorPad({0, 2}, {0, 1}, {0, 1}, false, 4, nullptr, nullptr);
  // Rank 0: nothing to pad, one element copied.
  ASSERT_TRUE(MirrorPadShape({}, {}, {}, true, &out, &error)) << error;
  const int32_t one = 42;
  int32_t got = 0;
  MirrorPad({}, {}, {}, true, sizeof(int32_t), &one, &got);
  EXPECT_EQ(got, 42);
}

// REVERSE_V2 against a per-coordinate flip of each axis in [first, last].
TEST(SpaceTest, ReverseMatchesDefinition) {
  for (const Dims& in : {Dims{7}, Dims{2, 3}, Dims{2, 3, 4}, Dims{3, 1, 2, 2}, Dims{2, 2, 1, 3, 2, 2}}) {
    const int64_t rank = static_cast<int64_t>(in.size());
    for (int64_t first = 0; first < rank; ++first) {
      for (int64_t last = first - 1; last < rank; ++last) {
        const std::vector<int32_t> x = Values<int32_t>(NumElements(in));
        std::vector<int32_t> y(x.size(), 99);
        Reverse(in, first, last, sizeof(int32_t), x.data(), y.data());
        for (int64_t k = 0; k < NumElements(in); ++k) {
          int64_t rest = k, offset = 0, stride = 1;
          for (int64_t d = rank; d-- > 0;) {
            int64_t c = rest % in[d];
            rest /= in[d];
            if (d >= first && d <= last) c = in[d] - 1 - c;
            offset += c * stride;
            stride *= in[d];
          }
          ASSERT_EQ(y[k], x[offset]) << "element " << k << " axes " << first << ".." << last;
        }
      }
    }
  }
  // Empty and rank 0.
  Reverse({2, 0, 3}, 1, 1, 4, nullptr, nullptr);
  const int64_t one = 5;
  int64_t got = 0;
  Reverse({}, 0, -1, sizeof(int64_t), &one, &got);
  EXPECT_EQ(got, 5);
}

}  // namespace
}  // namespace kiln::ops::reference
