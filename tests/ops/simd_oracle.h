// The oracle of the tests of Kiln's own SIMD kernels (ops/simd): plain double-precision convolutions and matrix
// products, random data, and the float bound every kernel is held to. A sum of K products in any order, with or
// without fused multiply-adds, is within 2 (K + 2) eps sum |terms| of the exact sum (the bias counted as a term).
// Each check also fills the output with a sentinel first and fails if anything past the output (or in a row's
// padding) is written.
#ifndef KILN_TESTS_OPS_SIMD_ORACLE_H_
#define KILN_TESTS_OPS_SIMD_ORACLE_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ops/simd/float_conv.h"

namespace kiln::ops::simd_test {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kSentinel = 12345.0f;

inline std::vector<float> RandomValues(size_t n, std::mt19937* rng) {
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = value(*rng);
  return v;
}

// Whether `got` is within the bound of a clamped sum of `terms` products whose exact value is `exact` and whose
// terms' magnitudes add up to `magnitude`.
inline bool WithinSumBound(float got, double exact, double magnitude, double terms, float min, float max) {
  const double want = std::fmin(std::fmax(exact, static_cast<double>(min)), static_cast<double>(max));
  return std::fabs(got - want) <= 2.0 * (terms + 2.0) * std::numeric_limits<float>::epsilon() * magnitude;
}

// A convolution over NHWC tensors with TensorFlow's padding (SAME: ceil(in / stride) outputs, the odd row or
// column of padding after). Depthwise: out_c is the channel count, in_c is ignored.
struct ConvCase {
  int64_t batch, in_h, in_w, in_c, out_c, kernel_h, kernel_w, stride_h, stride_w;
  bool same = true;
  bool bias = true;
  float min = -kInf, max = kInf;
};

inline std::string Describe(const ConvCase& c) {
  return "batch=" + std::to_string(c.batch) + " in=" + std::to_string(c.in_h) + "x" + std::to_string(c.in_w) +
         "x" + std::to_string(c.in_c) + " out_c=" + std::to_string(c.out_c) + " kernel=" +
         std::to_string(c.kernel_h) + "x" + std::to_string(c.kernel_w) + " stride=" + std::to_string(c.stride_h) +
         "x" + std::to_string(c.stride_w) + (c.same ? " SAME" : " VALID") + (c.bias ? "" : " no bias");
}

inline conv::ConvShape TensorFlowShape(const ConvCase& c, bool depthwise) {
  conv::ConvShape s;
  s.batch = c.batch;
  s.in_h = c.in_h;
  s.in_w = c.in_w;
  s.in_c = depthwise ? c.out_c : c.in_c;
  s.out_c = c.out_c;
  s.kernel_h = c.kernel_h;
  s.kernel_w = c.kernel_w;
  s.stride_h = c.stride_h;
  s.stride_w = c.stride_w;
  if (c.same) {
    s.out_h = (c.in_h + c.stride_h - 1) / c.stride_h;
    s.out_w = (c.in_w + c.stride_w - 1) / c.stride_w;
    s.pad_top = std::max<int64_t>(0, (s.out_h - 1) * c.stride_h + c.kernel_h - c.in_h) / 2;
    s.pad_left = std::max<int64_t>(0, (s.out_w - 1) * c.stride_w + c.kernel_w - c.in_w) / 2;
  } else {
    s.out_h = (c.in_h - c.kernel_h) / c.stride_h + 1;
    s.out_w = (c.in_w - c.kernel_w) / c.stride_w + 1;
  }
  return s;
}

// Runs a convolution kernel on random data and checks it against a double-precision convolution. `run` packs the
// weights (CONV_2D's [out_c][kh][kw][in_c], or DEPTHWISE_CONV_2D's [1][kh][kw][channels]), bias (or null) and
// clamp for the shape and computes output rows [begin, end); it is called for two row ranges, as two threads would.
// The input ends exactly at its last element (a read past it is caught by ASan).
using ConvRun = std::function<void(const conv::ConvShape& shape, const float* in, const float* weights,
                                   const float* bias, float min, float max, float* out, int64_t begin, int64_t end)>;

inline void CheckConvolution(const ConvCase& c, bool depthwise, uint32_t seed, const ConvRun& run) {
  SCOPED_TRACE(Describe(c));
  const conv::ConvShape s = TensorFlowShape(c, depthwise);
  ASSERT_GT(s.out_h, 0);
  ASSERT_GT(s.out_w, 0);
  std::mt19937 rng(seed);
  const int64_t taps_per_output = c.kernel_h * c.kernel_w * (depthwise ? 1 : s.in_c);
  const std::vector<float> in = RandomValues(static_cast<size_t>(c.batch * c.in_h * c.in_w * s.in_c), &rng);
  const std::vector<float> w = RandomValues(static_cast<size_t>(c.out_c * taps_per_output), &rng);
  const std::vector<float> bias = RandomValues(static_cast<size_t>(c.out_c), &rng);
  const int64_t rows = c.batch * s.out_h;
  std::vector<float> out(static_cast<size_t>(rows * s.out_w * c.out_c + 8), kSentinel);
  const float* b = c.bias ? bias.data() : nullptr;
  run(s, in.data(), w.data(), b, c.min, c.max, out.data(), 0, rows / 2);
  run(s, in.data(), w.data(), b, c.min, c.max, out.data(), rows / 2, rows);
  int bad = 0;
  for (int64_t image = 0; image < c.batch; ++image) {
    for (int64_t y = 0; y < s.out_h; ++y) {
      for (int64_t x = 0; x < s.out_w; ++x) {
        for (int64_t o = 0; o < c.out_c; ++o) {
          double exact = c.bias ? bias[static_cast<size_t>(o)] : 0.0, magnitude = std::fabs(exact);
          for (int64_t ky = 0; ky < c.kernel_h; ++ky) {
            for (int64_t kx = 0; kx < c.kernel_w; ++kx) {
              const int64_t iy = y * c.stride_h - s.pad_top + ky, ix = x * c.stride_w - s.pad_left + kx;
              if (iy < 0 || iy >= c.in_h || ix < 0 || ix >= c.in_w) continue;
              const float* pixel = in.data() + ((image * c.in_h + iy) * c.in_w + ix) * s.in_c;
              for (int64_t ci = depthwise ? o : 0; ci < (depthwise ? o + 1 : s.in_c); ++ci) {
                const float weight =
                    depthwise ? w[static_cast<size_t>((ky * c.kernel_w + kx) * c.out_c + o)]
                              : w[static_cast<size_t>(((o * c.kernel_h + ky) * c.kernel_w + kx) * s.in_c + ci)];
                const double product = static_cast<double>(pixel[ci]) * weight;
                exact += product;
                magnitude += std::fabs(product);
              }
            }
          }
          const float got = out[static_cast<size_t>(((image * s.out_h + y) * s.out_w + x) * c.out_c + o)];
          if (!WithinSumBound(got, exact, magnitude, static_cast<double>(taps_per_output), c.min, c.max) &&
              bad++ < 5) {
            ADD_FAILURE() << "out[" << image << "][" << y << "][" << x << "][" << o << "] = " << got << ", exact "
                          << exact << " before the clamp";
          }
        }
      }
    }
  }
  EXPECT_EQ(bad, 0);
  for (size_t i = static_cast<size_t>(rows * s.out_w * c.out_c); i < out.size(); ++i) {
    EXPECT_EQ(out[i], kSentinel) << "written past the output at " << i;
  }
}

// A matrix product c = clamp(a W^T + bias): a [rows][k] with rows lda = k + lda_pad floats apart, W [n][k], c
// [rows][n] with rows ldc = n + ldc_pad apart.
struct DenseCase {
  int64_t rows, k, n;
  bool bias = true;
  float min = -kInf, max = kInf;
  int64_t lda_pad = 0, ldc_pad = 0;
};

// Runs a matrix-product kernel on random data and checks it against a double-precision product. `run` packs W and
// the bias (or null) and computes the whole product; `a` ends exactly at its last element.
using DenseRun = std::function<void(const float* a, int64_t lda, const float* weights, const float* bias, float* c,
                                    int64_t ldc)>;

inline void CheckDense(const DenseCase& d, uint32_t seed, const DenseRun& run) {
  SCOPED_TRACE("rows=" + std::to_string(d.rows) + " K=" + std::to_string(d.k) + " N=" + std::to_string(d.n) +
               (d.bias ? "" : " no bias") + " clamp=[" + std::to_string(d.min) + "," + std::to_string(d.max) + "]");
  std::mt19937 rng(seed);
  const int64_t lda = d.k + d.lda_pad, ldc = d.n + d.ldc_pad;
  const std::vector<float> a = RandomValues(static_cast<size_t>((d.rows - 1) * lda + d.k), &rng);
  const std::vector<float> w = RandomValues(static_cast<size_t>(d.n * d.k), &rng);
  const std::vector<float> bias = RandomValues(static_cast<size_t>(d.n), &rng);
  std::vector<float> c(static_cast<size_t>(d.rows * ldc), kSentinel);
  run(a.data(), lda, w.data(), d.bias ? bias.data() : nullptr, c.data(), ldc);
  int bad = 0;
  for (int64_t r = 0; r < d.rows; ++r) {
    for (int64_t j = 0; j < d.n; ++j) {
      double exact = d.bias ? bias[static_cast<size_t>(j)] : 0.0, magnitude = std::fabs(exact);
      for (int64_t kk = 0; kk < d.k; ++kk) {
        const double product =
            static_cast<double>(a[static_cast<size_t>(r * lda + kk)]) * w[static_cast<size_t>(j * d.k + kk)];
        exact += product;
        magnitude += std::fabs(product);
      }
      const float got = c[static_cast<size_t>(r * ldc + j)];
      if (!WithinSumBound(got, exact, magnitude, static_cast<double>(d.k), d.min, d.max) && bad++ < 5) {
        ADD_FAILURE() << "c[" << r << "][" << j << "] = " << got << ", exact " << exact << " before the clamp";
      }
    }
    for (int64_t j = d.n; j < ldc; ++j) {
      EXPECT_EQ(c[static_cast<size_t>(r * ldc + j)], kSentinel) << "row " << r << " padding " << j;
    }
  }
  EXPECT_EQ(bad, 0);
}

}  // namespace kiln::ops::simd_test

#endif  // KILN_TESTS_OPS_SIMD_ORACLE_H_
