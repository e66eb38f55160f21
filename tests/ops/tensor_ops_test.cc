// Reshape, concatenation, pad, transpose, mean and the element reductions (ops/reference/tensor_ops.h).

#include "ops/reference/tensor_ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>

#include "tests/ops/test_helpers.h"

namespace kiln::ops::reference {
namespace {

using testing::ExpectAllNear;
using testing::RandomFloats;
using testing::ToDouble;

std::vector<float> Iota(int64_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

TEST(ReshapeTest, Shapes) {
  Dims out;
  std::string error;
  ASSERT_TRUE(ReshapeOutputShape({2, 3, 4}, {6, 4}, &out, &error));
  EXPECT_EQ(out, (Dims{6, 4}));
  ASSERT_TRUE(ReshapeOutputShape({2, 3, 4}, {-1, 12}, &out, &error));
  EXPECT_EQ(out, (Dims{2, 12}));
  ASSERT_TRUE(ReshapeOutputShape({2, 3, 4}, {4, -1, 2}, &out, &error));
  EXPECT_EQ(out, (Dims{4, 3, 2}));
  ASSERT_TRUE(ReshapeOutputShape({1}, {}, &out, &error));  // to a scalar
  EXPECT_EQ(out, Dims{});
  ASSERT_TRUE(ReshapeOutputShape({0, 3}, {3, 0}, &out, &error));
  EXPECT_EQ(out, (Dims{3, 0}));
  ASSERT_TRUE(ReshapeOutputShape({0, 3}, {-1, 3}, &out, &error));
  EXPECT_EQ(out, (Dims{0, 3}));
  EXPECT_FALSE(ReshapeOutputShape({2, 3}, {4, 2}, &out, &error));
  EXPECT_NE(error.find("6 elements"), std::string::npos) << error;
  EXPECT_FALSE(ReshapeOutputShape({2, 3}, {-1, -1}, &out, &error));
  EXPECT_FALSE(ReshapeOutputShape({2, 3}, {-1, 4}, &out, &error));  // 6 is not a multiple of 4
  EXPECT_FALSE(ReshapeOutputShape({2, 3}, {-2, -3}, &out, &error));
  EXPECT_FALSE(ReshapeOutputShape({0, 3}, {-1, 0}, &out, &error));  // nothing to infer from
  // A shape whose element count passes int64 is refused, with or without a -1 (found by interpreter_fuzzer's
  // campaign: the product overflowed, undefined behaviour), unless a 0 makes it empty.
  const int32_t big = 2147483647;
  EXPECT_FALSE(ReshapeOutputShape({2, 3}, {big, big, big, -1}, &out, &error));
  EXPECT_NE(error.find("more elements than a 64-bit count holds"), std::string::npos) << error;
  EXPECT_FALSE(ReshapeOutputShape({2, 3}, {big, big, big}, &out, &error));
  EXPECT_NE(error.find("more elements than a 64-bit count holds"), std::string::npos) << error;
  ASSERT_TRUE(ReshapeOutputShape({0}, {big, big, big, 0}, &out, &error)) << error;
  EXPECT_EQ(out, (Dims{big, big, big, 0}));
}

TEST(SqueezeTest, Shapes) {
  Dims out;
  std::string error;
  ASSERT_TRUE(SqueezeOutputShape({1, 3, 1, 2, 1}, {}, &out, &error));
  EXPECT_EQ(out, (Dims{3, 2}));
  ASSERT_TRUE(SqueezeOutputShape({1, 3, 1, 2, 1}, {0, -1}, &out, &error));
  EXPECT_EQ(out, (Dims{3, 1, 2}));
  ASSERT_TRUE(SqueezeOutputShape({1, 3, 1}, {2, -1}, &out, &error));  // the same dimension twice
  EXPECT_EQ(out, (Dims{1, 3}));
  ASSERT_TRUE(SqueezeOutputShape({1, 1}, {}, &out, &error));
  EXPECT_EQ(out, Dims{});
  EXPECT_FALSE(SqueezeOutputShape({1, 3}, {1}, &out, &error));
  EXPECT_NE(error.find("not 1"), std::string::npos) << error;
  EXPECT_FALSE(SqueezeOutputShape({1, 3}, {2}, &out, &error));
  EXPECT_FALSE(SqueezeOutputShape({1, 3}, {-3}, &out, &error));
}

// Naive concatenation: each output element looks up which input it came from by its axis coordinate.
std::vector<double> NaiveConcat(const std::vector<Dims>& dims, const std::vector<std::vector<float>>& inputs,
                                int axis, const Dims& out_dims) {
  std::vector<double> out(NumElements(out_dims));
  for (size_t i = 0; i < out.size(); ++i) {
    Dims idx(out_dims.size());
    int64_t rem = static_cast<int64_t>(i);
    for (size_t d = out_dims.size(); d-- > 0;) {
      idx[d] = rem % out_dims[d];
      rem /= out_dims[d];
    }
    size_t which = 0;
    while (idx[axis] >= dims[which][axis]) idx[axis] -= dims[which++][axis];
    int64_t flat = 0;
    for (size_t d = 0; d < idx.size(); ++d) flat = flat * dims[which][d] + idx[d];
    out[i] = inputs[which][flat];
  }
  return out;
}

TEST(ConcatTest, HandComputed) {
  const std::vector<Dims> dims = {{2, 1}, {2, 2}};
  Dims out_dims;
  std::string error;
  ASSERT_TRUE(ConcatOutputShape(dims, 1, &out_dims, &error));
  EXPECT_EQ(out_dims, (Dims{2, 3}));
  const std::vector<float> a = {1, 2}, b = {3, 4, 5, 6};
  const float* inputs[] = {a.data(), b.data()};
  std::vector<float> out(6);
  ConcatFloat(MakeConcatParams(dims, 1, Activation::kNone), inputs, out.data());
  EXPECT_EQ(out, (std::vector<float>{1, 3, 4, 2, 5, 6}));
  ConcatFloat(MakeConcatParams(dims, 1, Activation::kRelu6), inputs, out.data());
  EXPECT_EQ(out, (std::vector<float>{1, 3, 4, 2, 5, 6}));
  EXPECT_FALSE(ConcatOutputShape({{2, 1}, {3, 2}}, 1, &out_dims, &error));
  EXPECT_FALSE(ConcatOutputShape({{2, 1}, {2, 1, 1}}, 1, &out_dims, &error));
  EXPECT_FALSE(ConcatOutputShape({{2, 1}}, 2, &out_dims, &error));
}

TEST(ConcatTest, MatchesNaiveOnEveryAxis) {
  uint32_t seed = 21;
  const Dims base = {2, 3, 1, 4};
  for (int axis = 0; axis < 4; ++axis) {
    for (int n : {1, 2, 3}) {
      std::vector<Dims> dims;
      std::vector<std::vector<float>> data;
      std::vector<const float*> ptrs;
      for (int i = 0; i < n; ++i) {
        Dims d = base;
        d[axis] = 1 + (seed + i) % 3;
        if (i == 1 && n == 3) d[axis] = 0;  // an empty input contributes nothing
        dims.push_back(d);
        data.push_back(RandomFloats(NumElements(d), seed++, -2, 2));
      }
      for (auto& v : data) ptrs.push_back(v.data());
      Dims out_dims;
      std::string error;
      ASSERT_TRUE(ConcatOutputShape(dims, axis, &out_dims, &error)) << error;
      std::vector<float> out(NumElements(out_dims));
      ConcatFloat(MakeConcatParams(dims, axis, Activation::kNone), ptrs.data(), out.data());
      ExpectAllNear(out, NaiveConcat(dims, data, axis, out_dims), "concat axis " + std::to_string(axis), 0);
    }
  }
}

TEST(PadTest, HandComputed) {
  PadParams p{{2, 2}, {1, 0}, {0, 2}, 0.0f};
  EXPECT_EQ(PadOutputShape(p), (Dims{3, 4}));
  const std::vector<float> input = {1, 2, 3, 4};
  std::vector<float> out(12, -1);
  PadFloat(p, input.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0}));
}

TEST(PadTest, MatchesNaiveOverRanks) {
  uint32_t seed = 31;
  const std::vector<Dims> shapes = {{}, {3}, {2, 1}, {1, 3, 2}, {2, 2, 1, 3}, {1, 2, 1, 2, 2}, {2, 0, 3}};
  for (const Dims& dims : shapes) {
    PadParams p;
    p.input_dims = dims;
    for (size_t d = 0; d < dims.size(); ++d) {
      p.before.push_back((seed + d) % 3);
      p.after.push_back((seed + 2 * d) % 2);
    }
    const auto input = RandomFloats(NumElements(dims), seed++);
    const Dims out_dims = PadOutputShape(p);
    std::vector<double> expected(NumElements(out_dims));
    for (size_t i = 0; i < expected.size(); ++i) {
      // Unravel the output index; inside the copied block it maps back to an input element.
      Dims idx(out_dims.size());
      int64_t rem = static_cast<int64_t>(i);
      for (size_t d = out_dims.size(); d-- > 0;) {
        idx[d] = rem % out_dims[d];
        rem /= out_dims[d];
      }
      bool inside = true;
      int64_t flat = 0;
      for (size_t d = 0; d < idx.size(); ++d) {
        const int64_t j = idx[d] - p.before[d];
        inside = inside && j >= 0 && j < dims[d];
        flat = flat * dims[d] + j;
      }
      expected[i] = inside ? input[flat] : 0.0;
    }
    std::vector<float> out(expected.size(), -7);
    PadFloat(p, input.data(), out.data());
    ExpectAllNear(out, expected, "pad rank " + std::to_string(dims.size()), 0);
  }
}

// The quantized kernels move stored values: uint8 as int8 (PAD filling with the zero point it is given).
TEST(PadTest, QuantizedStorageTypes) {
  PadParams p{{2, 2}, {1, 0}, {0, 1}, 0.0f};
  const std::vector<uint8_t> input = {0, 128, 254, 255};
  std::vector<uint8_t> out(9, 7);
  PadQuantized<uint8_t>(p, 200, input.data(), out.data());
  EXPECT_EQ(out, (std::vector<uint8_t>{200, 200, 200, 0, 128, 200, 254, 255, 200}));
  const std::vector<int8_t> input8 = {-128, 0, 1, 127};
  std::vector<int8_t> out8(9, 7);
  PadInt8(p, -5, input8.data(), out8.data());
  EXPECT_EQ(out8, (std::vector<int8_t>{-5, -5, -5, -128, 0, -5, 1, 127, -5}));
  std::vector<uint8_t> transposed(4);
  TransposeQuantized<uint8_t>(TransposeParams{{2, 2}, {1, 0}}, input.data(), transposed.data());
  EXPECT_EQ(transposed, (std::vector<uint8_t>{0, 254, 128, 255}));
}

TEST(TransposeTest, HandComputed) {
  Dims out_dims;
  std::string error;
  ASSERT_TRUE(TransposeOutputShape({2, 3}, {1, 0}, &out_dims, &error));
  EXPECT_EQ(out_dims, (Dims{3, 2}));
  const auto input = Iota(6);
  std::vector<float> out(6);
  TransposeFloat(TransposeParams{{2, 3}, {1, 0}}, input.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_FALSE(TransposeOutputShape({2, 3}, {0, 0}, &out_dims, &error));
  EXPECT_FALSE(TransposeOutputShape({2, 3}, {0, 2}, &out_dims, &error));
  EXPECT_FALSE(TransposeOutputShape({2, 3}, {0}, &out_dims, &error));
}

TEST(TransposeTest, MatchesNaiveUpTo6D) {
  const std::vector<std::pair<Dims, std::vector<int32_t>>> cases = {
      {{5}, {0}},
      {{2, 3, 4}, {2, 0, 1}},
      {{2, 3, 4}, {1, 2, 0}},
      {{1, 2, 3, 5}, {0, 3, 1, 2}},
      {{2, 1, 3, 2, 2}, {4, 3, 2, 1, 0}},
      {{2, 3, 1, 2, 3, 2}, {5, 1, 3, 0, 4, 2}},
      {{1, 3, 4, 5}, {0, 2, 3, 1}},  // NCHW -> NHWC, as tm_mobilenet_v2_int8_224 begins
      {{3, 0, 2}, {2, 1, 0}},
  };
  for (const auto& [dims, perm] : cases) {
    Dims out_dims;
    std::string error;
    ASSERT_TRUE(TransposeOutputShape(dims, perm, &out_dims, &error)) << error;
    const auto input = Iota(NumElements(dims));
    std::vector<double> expected(input.size());
    // Scatter: input index i goes to the output index whose coordinate d is i's coordinate perm[d].
    for (size_t i = 0; i < input.size(); ++i) {
      Dims idx(dims.size());
      int64_t rem = static_cast<int64_t>(i);
      for (size_t d = dims.size(); d-- > 0;) {
        idx[d] = rem % dims[d];
        rem /= dims[d];
      }
      int64_t flat = 0;
      for (size_t d = 0; d < perm.size(); ++d) flat = flat * out_dims[d] + idx[perm[d]];
      expected[flat] = input[i];
    }
    std::vector<float> out(input.size());
    TransposeFloat(TransposeParams{dims, perm}, input.data(), out.data());
    ExpectAllNear(out, expected, "transpose rank " + std::to_string(dims.size()), 0);
  }
}

TEST(MeanTest, HandComputed) {
  MeanParams params;
  Dims out_dims;
  std::string error;
  ASSERT_TRUE(MakeMeanParams({2, 3}, {1}, false, &params, &out_dims, &error));
  EXPECT_EQ(out_dims, (Dims{2}));
  const auto input = Iota(6);
  std::vector<float> out(2);
  MeanFloat(params, input.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{1, 4}));
  ASSERT_TRUE(MakeMeanParams({2, 3}, {0, -1, 1}, true, &params, &out_dims, &error));  // duplicate axis
  EXPECT_EQ(out_dims, (Dims{1, 1}));
  std::vector<float> all(1);
  MeanFloat(params, input.data(), all.data());
  EXPECT_EQ(all[0], 2.5f);
  ASSERT_TRUE(MakeMeanParams({2, 3}, {}, false, &params, &out_dims, &error));  // no axes: a copy
  EXPECT_EQ(out_dims, (Dims{2, 3}));
  EXPECT_FALSE(MakeMeanParams({2, 3}, {2}, false, &params, &out_dims, &error));
  EXPECT_FALSE(MakeMeanParams({2, 3}, {-3}, false, &params, &out_dims, &error));
  // Mean over an empty axis is NaN.
  ASSERT_TRUE(MakeMeanParams({2, 0}, {1}, false, &params, &out_dims, &error));
  MeanFloat(params, nullptr, out.data());
  EXPECT_TRUE(std::isnan(out[0]) && std::isnan(out[1]));
}

TEST(MeanTest, MatchesNaiveOverAxisSets) {
  const Dims dims = {2, 3, 4, 5};
  const auto input = RandomFloats(NumElements(dims), 41, -3, 3);
  for (int mask = 0; mask < 16; ++mask) {
    for (bool keep : {false, true}) {
      std::vector<int32_t> axes;
      for (int d = 0; d < 4; ++d) {
        if (mask & (1 << d)) axes.push_back(d % 2 ? d - 4 : d);  // mix negative and positive axes
      }
      MeanParams params;
      Dims out_dims;
      std::string error;
      ASSERT_TRUE(MakeMeanParams(dims, axes, keep, &params, &out_dims, &error)) << error;
      // Naive: for each output cell, visit every input cell and keep those agreeing on the kept axes.
      Dims kept_dims;
      for (int d = 0; d < 4; ++d) kept_dims.push_back((mask & (1 << d)) ? 1 : dims[d]);
      std::vector<double> sums(NumElements(kept_dims), 0.0);
      std::vector<int> counts(sums.size(), 0);
      for (int64_t i = 0; i < NumElements(dims); ++i) {
        int64_t rem = i, flat = 0, stride = 1;
        for (int d = 3; d >= 0; --d) {
          const int64_t c = rem % dims[d];
          rem /= dims[d];
          if (!(mask & (1 << d))) flat += c * stride;
          stride *= kept_dims[d];
        }
        sums[flat] += input[i];
        ++counts[flat];
      }
      for (size_t k = 0; k < sums.size(); ++k) sums[k] /= counts[k];
      EXPECT_EQ(NumElements(out_dims), static_cast<int64_t>(sums.size()));
      std::vector<float> out(sums.size());
      MeanFloat(params, input.data(), out.data());
      ExpectAllNear(out, sums, "mean mask " + std::to_string(mask));
    }
  }
}

// REDUCE_MAX/MIN/PROD/ANY/ALL against a plain fold over every axis set of a 4-D input (negative axes mixed in).
template <typename T, typename Fold>
void CheckReduceOverAxisSets(ReduceKind kind, const std::vector<T>& input, T init, Fold fold,
                             const std::string& what) {
  const Dims dims = {2, 3, 4, 5};
  ASSERT_EQ(NumElements(dims), static_cast<int64_t>(input.size()));
  for (int mask = 0; mask < 16; ++mask) {
    for (bool keep : {false, true}) {
      std::vector<int32_t> axes;
      for (int d = 0; d < 4; ++d) {
        if (mask & (1 << d)) axes.push_back(d % 2 ? d - 4 : d);
      }
      MeanParams params;
      Dims out_dims;
      std::string error;
      ASSERT_TRUE(MakeMeanParams(dims, axes, keep, &params, &out_dims, &error)) << error;
      Dims kept_dims;
      for (int d = 0; d < 4; ++d) kept_dims.push_back((mask & (1 << d)) ? 1 : dims[d]);
      std::vector<T> want(NumElements(kept_dims), init);
      for (int64_t i = 0; i < NumElements(dims); ++i) {
        int64_t rem = i, flat = 0, stride = 1;
        for (int d = 3; d >= 0; --d) {
          const int64_t c = rem % dims[d];
          rem /= dims[d];
          if (!(mask & (1 << d))) flat += c * stride;
          stride *= kept_dims[d];
        }
        want[flat] = fold(want[flat], input[i]);
      }
      ASSERT_EQ(NumElements(out_dims), static_cast<int64_t>(want.size()));
      std::vector<T> got(want.size());
      ReduceElements<T>(kind, params, input.data(), got.data());
      for (size_t k = 0; k < want.size(); ++k) {
        EXPECT_EQ(got[k], want[k]) << what << " mask " << mask << " keep " << keep << " output " << k;
      }
    }
  }
}

TEST(ReduceElementsTest, MatchesPlainFoldsOverAxisSets) {
  const auto floats = RandomFloats(120, 43, -4, 4);
  CheckReduceOverAxisSets<float>(ReduceKind::kMax, floats, std::numeric_limits<float>::lowest(),
                                 [](float a, float x) { return std::max(a, x); }, "max");
  CheckReduceOverAxisSets<float>(ReduceKind::kMin, floats, std::numeric_limits<float>::max(),
                                 [](float a, float x) { return std::min(a, x); }, "min");
  std::vector<int8_t> bytes(120);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<int8_t>((i * 37 + 11) % 256 - 128);
  CheckReduceOverAxisSets<int8_t>(ReduceKind::kMax, bytes, int8_t{-128},
                                  [](int8_t a, int8_t x) { return std::max(a, x); }, "int8 max");
  std::vector<uint8_t> ubytes(120);
  for (size_t i = 0; i < ubytes.size(); ++i) ubytes[i] = static_cast<uint8_t>((i * 53 + 7) % 256);
  CheckReduceOverAxisSets<uint8_t>(ReduceKind::kMin, ubytes, uint8_t{255},
                                   [](uint8_t a, uint8_t x) { return std::min(a, x); }, "uint8 min");
  // Products in int64 of values in [-3, 3]: up to 3^120 overflows, so the fold wraps as the kernel must.
  std::vector<int64_t> longs(120);
  for (size_t i = 0; i < longs.size(); ++i) longs[i] = static_cast<int64_t>(i % 7) - 3;
  CheckReduceOverAxisSets<int64_t>(
      ReduceKind::kProd, longs, int64_t{1},
      [](int64_t a, int64_t x) {
        return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(x));
      },
      "int64 prod");
  std::vector<float> small(120);
  for (size_t i = 0; i < small.size(); ++i) small[i] = 0.5f + 0.01f * static_cast<float>(i % 13);
  CheckReduceOverAxisSets<float>(ReduceKind::kProd, small, 1.0f, [](float a, float x) { return a * x; },
                                 "float prod");
  // Bools as bytes: any non-zero byte is true (2, 8 and 255 included), and the outputs are 0 or 1.
  std::vector<uint8_t> plain(120);
  for (size_t i = 0; i < plain.size(); ++i) plain[i] = (i * 7) % 11 == 0 ? static_cast<uint8_t>(1 + i % 255) : 0;
  for (ReduceKind kind : {ReduceKind::kAny, ReduceKind::kAll}) {
    const Dims dims = {2, 3, 4, 5};
    for (int axis = -4; axis < 4; ++axis) {
      MeanParams params;
      Dims out_dims;
      std::string error;
      ASSERT_TRUE(MakeMeanParams(dims, {axis}, false, &params, &out_dims, &error)) << error;
      std::vector<uint8_t> got(NumElements(out_dims));
      ReduceElements<uint8_t>(kind, params, plain.data(), got.data());
      // Plain: output o collects the inputs whose coordinates off `axis` equal o's.
      const int a = axis < 0 ? axis + 4 : axis;
      int64_t inner = 1;
      for (int d = a + 1; d < 4; ++d) inner *= dims[d];
      for (int64_t o = 0; o < NumElements(out_dims); ++o) {
        const int64_t outer_index = o / inner, inner_index = o % inner;
        bool want = kind == ReduceKind::kAll;
        for (int64_t k = 0; k < dims[a]; ++k) {
          const bool x = plain[(outer_index * dims[a] + k) * inner + inner_index] != 0;
          want = kind == ReduceKind::kAll ? (want && x) : (want || x);
        }
        EXPECT_EQ(got[o], want ? 1 : 0) << "axis " << axis << " output " << o;
      }
    }
  }
}

// Zero elements reduce to each fold's start; a NaN never wins MAX or MIN; int32 products wrap; rank 0 and 6.
TEST(ReduceElementsTest, EdgesEmptyNaNWrapAndRanks) {
  MeanParams params;
  Dims out_dims;
  std::string error;
  ASSERT_TRUE(MakeMeanParams({3, 0}, {1}, false, &params, &out_dims, &error));
  EXPECT_EQ(out_dims, (Dims{3}));
  std::vector<float> out(3);
  ReduceElements<float>(ReduceKind::kMax, params, nullptr, out.data());
  EXPECT_EQ(out, std::vector<float>(3, std::numeric_limits<float>::lowest()));
  ReduceElements<float>(ReduceKind::kMin, params, nullptr, out.data());
  EXPECT_EQ(out, std::vector<float>(3, std::numeric_limits<float>::max()));
  ReduceElements<float>(ReduceKind::kProd, params, nullptr, out.data());
  EXPECT_EQ(out, std::vector<float>(3, 1.0f));
  uint8_t flags[3] = {7, 7, 7};
  ReduceElements<uint8_t>(ReduceKind::kAny, params, nullptr, flags);
  EXPECT_EQ(std::vector<uint8_t>(flags, flags + 3), std::vector<uint8_t>(3, 0));
  ReduceElements<uint8_t>(ReduceKind::kAll, params, nullptr, flags);
  EXPECT_EQ(std::vector<uint8_t>(flags, flags + 3), std::vector<uint8_t>(3, 1));

  ASSERT_TRUE(MakeMeanParams({4}, {0}, false, &params, &out_dims, &error));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float with_nan[] = {1, nan, 3, 2};
  float one = 0;
  ReduceElements<float>(ReduceKind::kMax, params, with_nan, &one);
  EXPECT_EQ(one, 3.0f);
  ReduceElements<float>(ReduceKind::kMin, params, with_nan, &one);
  EXPECT_EQ(one, 1.0f);

  const int32_t big[] = {65536, 65536, 3, -1};
  int32_t product = 0;
  ReduceElements<int32_t>(ReduceKind::kProd, params, big, &product);
  EXPECT_EQ(product, 0);  // 2^32 wraps to 0
  const int16_t shorts[] = {-32768, -32768, 1, 1};
  int16_t short_product = 7;
  ReduceElements<int16_t>(ReduceKind::kProd, params, shorts, &short_product);  // 2^30: wraps to 0, no UB
  EXPECT_EQ(short_product, 0);

  // Rank 0: no axes, the value itself.
  ASSERT_TRUE(MakeMeanParams({}, {}, false, &params, &out_dims, &error));
  EXPECT_TRUE(out_dims.empty());
  const int64_t scalar = -5;
  int64_t scalar_out = 0;
  ReduceElements<int64_t>(ReduceKind::kMin, params, &scalar, &scalar_out);
  EXPECT_EQ(scalar_out, -5);
  // Rank 6 over the first and last axes.
  const Dims six = {2, 1, 2, 1, 1, 3};
  ASSERT_TRUE(MakeMeanParams(six, {0, -1}, true, &params, &out_dims, &error));
  EXPECT_EQ(out_dims, (Dims{1, 1, 2, 1, 1, 1}));
  const float values[] = {1, 9, 2, 3, 4, 5, 6, 0, 7, 8, -1, -2};
  float maxima[2];
  ReduceElements<float>(ReduceKind::kMax, params, values, maxima);
  EXPECT_EQ(maxima[0], 9.0f);  // {1, 9, 2} and {6, 0, 7}
  EXPECT_EQ(maxima[1], 8.0f);  // {3, 4, 5} and {8, -1, -2}
  EXPECT_FALSE(MakeMeanParams(six, {6}, false, &params, &out_dims, &error));
  EXPECT_NE(error.find("axis 6 is out of range for rank 6"), std::string::npos) << error;
}

}  // namespace
}  // namespace kiln::ops::reference
