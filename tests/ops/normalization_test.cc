// L2_NORMALIZATION, LOCAL_RESPONSE_NORMALIZATION (reference/normalization.h), L2_POOL_2D (reference/pooling.h)
// and CUMSUM (reference/tensor_ops.h), each against a plain formulation in double written here.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ops/reference/normalization.h"
#include "ops/reference/pooling.h"
#include "ops/reference/tensor_ops.h"
#include "tests/ops/test_helpers.h"

namespace kiln::ops::reference {
namespace {

using testing::ExpectAllNear;
using testing::RandomFloats;

TEST(L2NormalizationTest, MatchesPlainOverShapes) {
  for (int64_t depth : {1, 2, 7, 64}) {
    for (int64_t outer : {1, 3, 10}) {
      const auto input = RandomFloats(outer * depth, static_cast<uint32_t>(depth * 31 + outer), -5, 5);
      std::vector<double> want(input.size());
      for (int64_t i = 0; i < outer; ++i) {
        double squares = 0;
        for (int64_t c = 0; c < depth; ++c) squares += double{input[i * depth + c]} * input[i * depth + c];
        const double norm = std::max(std::sqrt(squares), double{kL2NormEpsilon});
        for (int64_t c = 0; c < depth; ++c) want[i * depth + c] = input[i * depth + c] / norm;
      }
      std::vector<float> got(input.size());
      L2NormalizationFloat(outer, depth, input.data(), got.data());
      ExpectAllNear(got, want, "depth " + std::to_string(depth) + " outer " + std::to_string(outer));
    }
  }
  // An all-zero row stays zero (the epsilon floor), and a tiny one is divided by the floor, not its norm.
  const float tiny[] = {0, 0, 0, 1e-8f, 0, 0};
  float out[6];
  L2NormalizationFloat(2, 3, tiny, out);
  for (float v : {out[0], out[1], out[2], out[4], out[5]}) EXPECT_EQ(v, 0.0f);
  EXPECT_FLOAT_EQ(out[3], 1e-8f / kL2NormEpsilon);
}

TEST(LocalResponseNormTest, MatchesPlainOverRadii) {
  const int64_t outer = 3, depth = 150;
  const auto input = RandomFloats(outer * depth, 5, -2, 2);
  // Narrow windows summed directly, wide ones slid (kLocalResponseNormDirectRadius); both within the bound.
  for (int64_t radius : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{5}, int64_t{20}, kLocalResponseNormDirectRadius, kLocalResponseNormDirectRadius + 1,
                         int64_t{1} << 40}) {
    LocalResponseNormParams p;
    p.radius = radius;
    p.bias = 1.5f;
    p.alpha = 0.3f;
    p.beta = 0.75f;
    std::vector<double> want(input.size());
    for (int64_t i = 0; i < outer; ++i) {
      for (int64_t c = 0; c < depth; ++c) {
        double squares = 0;
        for (int64_t j = std::max<int64_t>(0, c - radius); j <= std::min(depth - 1, c + radius); ++j) {
          squares += double{input[i * depth + j]} * input[i * depth + j];
        }
        want[i * depth + c] = input[i * depth + c] * std::pow(p.bias + p.alpha * squares, -double{p.beta});
      }
    }
    std::vector<float> got(input.size());
    LocalResponseNormFloat(p, outer, depth, input.data(), got.data());
    ExpectAllNear(got, want, "radius " + std::to_string(radius));
  }
}

TEST(L2PoolTest, MatchesPlainOverWindows) {
  for (int64_t filter : {1, 2, 3}) {
    for (int64_t stride : {1, 2}) {
      for (int64_t pad : {0, 1}) {
        PoolParams p;
        p.batch = 2;
        p.input_height = 5;
        p.input_width = 6;
        p.channels = 3;
        p.filter_height = filter;
        p.filter_width = filter + 1;
        p.stride_height = stride;
        p.stride_width = stride;
        p.pad_top = pad;
        p.pad_left = pad;
        p.output_height = (p.input_height + 2 * pad - p.filter_height) / stride + 1;
        p.output_width = (p.input_width + 2 * pad - p.filter_width) / stride + 1;
        const auto input = RandomFloats(p.batch * p.input_height * p.input_width * p.channels,
                                        static_cast<uint32_t>(filter * 7 + stride * 3 + pad), -3, 3);
        std::vector<double> want;
        for (int64_t b = 0; b < p.batch; ++b) {
          for (int64_t oy = 0; oy < p.output_height; ++oy) {
            for (int64_t ox = 0; ox < p.output_width; ++ox) {
              for (int64_t c = 0; c < p.channels; ++c) {
                double squares = 0;
                int count = 0;
                for (int64_t fy = 0; fy < p.filter_height; ++fy) {
                  for (int64_t fx = 0; fx < p.filter_width; ++fx) {
                    const int64_t y = oy * stride - pad + fy, x = ox * stride - pad + fx;
                    if (y < 0 || x < 0 || y >= p.input_height || x >= p.input_width) continue;
                    const double v = input[((b * p.input_height + y) * p.input_width + x) * p.channels + c];
                    squares += v * v;
                    ++count;
                  }
                }
                want.push_back(count == 0 ? 0.0 : std::sqrt(squares / count));
              }
            }
          }
        }
        std::vector<float> got(want.size());
        L2PoolFloat(p, input.data(), got.data());
        ExpectAllNear(got, want,
                      "filter " + std::to_string(filter) + " stride " + std::to_string(stride) + " pad " +
                          std::to_string(pad));
      }
    }
  }
}

TEST(CumsumTest, MatchesPlainOnEveryAxisAndMode) {
  const Dims dims = {3, 4, 5};
  std::vector<int64_t> longs(60);
  for (size_t i = 0; i < longs.size(); ++i) longs[i] = static_cast<int64_t>(i * 7919 % 101) - 50;
  const auto floats = RandomFloats(60, 11, -2, 2);
  for (int axis = 0; axis < 3; ++axis) {
    for (bool exclusive : {false, true}) {
      for (bool reverse : {false, true}) {
        CumsumParams p;
        p.dims = dims;
        p.axis = axis;
        p.exclusive = exclusive;
        p.reverse = reverse;
        // Plain: each output sums the inputs that share its other coordinates and come before it (or after,
        // reversed) along the axis, itself included unless exclusive.
        std::vector<int64_t> want(60);
        std::vector<double> want_float(60);
        for (int64_t i = 0; i < 60; ++i) {
          const int64_t coords[3] = {i / 20, (i / 5) % 4, i % 5};
          int64_t sum = 0;
          double sum_float = 0;
          for (int64_t k = 0; k < dims[axis]; ++k) {
            const bool before = reverse ? k > coords[axis] : k < coords[axis];
            if (!before && !(k == coords[axis] && !exclusive)) continue;
            int64_t at[3] = {coords[0], coords[1], coords[2]};
            at[axis] = k;
            sum += longs[(at[0] * 4 + at[1]) * 5 + at[2]];
            sum_float += floats[(at[0] * 4 + at[1]) * 5 + at[2]];
          }
          want[i] = sum;
          want_float[i] = sum_float;
        }
        std::vector<int64_t> got(60);
        Cumsum<int64_t>(p, longs.data(), got.data());
        EXPECT_EQ(got, want) << "axis " << axis << " exclusive " << exclusive << " reverse " << reverse;
        std::vector<float> got_float(60);
        Cumsum<float>(p, floats.data(), got_float.data());
        ExpectAllNear(got_float, want_float, "float axis " + std::to_string(axis));
      }
    }
  }
  // int32 running sums wrap rather than overflow (UBSan would flag a signed overflow).
  CumsumParams p;
  p.dims = {3};
  const int32_t big[] = {std::numeric_limits<int32_t>::max(), 1, 1};
  int32_t out[3];
  Cumsum<int32_t>(p, big, out);
  EXPECT_EQ(out[1], std::numeric_limits<int32_t>::min());
  EXPECT_EQ(out[2], std::numeric_limits<int32_t>::min() + 1);
}

}  // namespace
}  // namespace kiln::ops::reference
