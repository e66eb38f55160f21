// Kiln's AVX-512 VNNI int8 GEMM (ops/simd/int8_gemm.h) against the reference int8 CONV_2D (a 1x1 convolution of
// M pixels, K input channels, N output channels), byte for byte: sizes that are and are not multiples of the
// kernel's blocks (4 bytes of K, 16 output channels, 8 rows), K = 1, per-tensor and per-channel multipliers,
// multipliers from the smallest to shifts of 30 left (where the int32 left shift wraps), zero points at the
// limits, biases that make the int32 sums wrap, activation clamps, row strides and row ranges. Skipped on a CPU
// without VNNI. Int8Conv (the same GEMM over each pixel's gathered taps) against the reference int8 CONV_2D of the
// same geometry: filters, strides, dilations, SAME and VALID padding, input zero points at the limits.
#include <gtest/gtest.h>

#include "ops/simd/int8_gemm.h"

#if KILN_TEST_WITH_XNNPACK
#include <xnnpack.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ops/reference/conv.h"
#include "ops/reference/quantized.h"
#include "ops/reference/quantized_kernels.h"

namespace kiln::ops::vnni {
namespace {

struct Case {
  int64_t m, k, n;
  bool per_channel = true;
  int32_t input_zero_point = 0, output_zero_point = 0;
  int32_t activation_min = -128, activation_max = 127;
  int min_shift = -12, max_shift = -4;  // the multipliers' shift range
  bool bias = true;
  bool extreme_bias = false;  // biases near the int32 limits: the sums wrap
  int64_t lda_pad = 0, ldc_pad = 0;
};

std::string Describe(const Case& c) {
  return "M=" + std::to_string(c.m) + " K=" + std::to_string(c.k) + " N=" + std::to_string(c.n) +
         (c.per_channel ? " per-channel" : " per-tensor") + " in_zp=" + std::to_string(c.input_zero_point) +
         " out_zp=" + std::to_string(c.output_zero_point) + " clamp=[" + std::to_string(c.activation_min) + "," +
         std::to_string(c.activation_max) + "] shifts=[" + std::to_string(c.min_shift) + "," +
         std::to_string(c.max_shift) + "]" + (c.bias ? "" : " no bias") + (c.extreme_bias ? " extreme bias" : "");
}

void Check(const Case& c, uint32_t seed) {
  SCOPED_TRACE(Describe(c));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(-128, 127);
  const int64_t lda = c.k + c.lda_pad, ldc = c.n + c.ldc_pad;
  std::vector<int8_t> input(static_cast<size_t>(c.m * lda)), weights(static_cast<size_t>(c.n * c.k));
  for (auto& v : input) v = static_cast<int8_t>(byte(rng));
  for (auto& v : weights) v = static_cast<int8_t>(byte(rng));
  std::vector<int32_t> bias(static_cast<size_t>(c.n));
  std::uniform_int_distribution<int32_t> small(-100000, 100000);
  std::uniform_int_distribution<int32_t> any(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
  for (auto& b : bias) b = c.extreme_bias ? any(rng) : small(rng);
  std::uniform_int_distribution<int32_t> significand(1 << 30, std::numeric_limits<int32_t>::max());
  std::uniform_int_distribution<int> shift(c.min_shift, c.max_shift);
  std::vector<reference::QuantizedMultiplier> multipliers(c.per_channel ? static_cast<size_t>(c.n) : 1);
  for (auto& m : multipliers) m = {significand(rng), shift(rng)};

  // The reference: a 1x1 CONV_2D over an M x 1 image, on a dense copy of the input.
  std::vector<int8_t> dense(static_cast<size_t>(c.m * c.k));
  for (int64_t r = 0; r < c.m; ++r) {
    for (int64_t i = 0; i < c.k; ++i) dense[static_cast<size_t>(r * c.k + i)] = input[static_cast<size_t>(r * lda + i)];
  }
  reference::ConvParams shape;
  shape.batch = 1;
  shape.input_height = shape.output_height = c.m;
  shape.input_width = shape.output_width = 1;
  shape.input_channels = c.k;
  shape.output_channels = c.n;
  shape.filter_height = shape.filter_width = 1;
  reference::WeightedQuantParams quant;
  quant.input_zero_point = c.input_zero_point;
  quant.output_zero_point = c.output_zero_point;
  quant.activation_min = c.activation_min;
  quant.activation_max = c.activation_max;
  quant.rounding = reference::Rounding::kDouble;
  for (int64_t ch = 0; ch < c.n; ++ch) quant.multipliers.push_back(multipliers[c.per_channel ? ch : 0]);
  std::vector<int8_t> expected(static_cast<size_t>(c.m * c.n));
  reference::ConvInt8(shape, quant, dense.data(), weights.data(), c.bias ? bias.data() : nullptr, expected.data());

  const PackedInt8Gemm packed =
      PackInt8Gemm(weights.data(), c.n, c.k, c.bias ? bias.data() : nullptr, c.input_zero_point, multipliers,
                   c.output_zero_point, c.activation_min, c.activation_max);
  const int8_t sentinel = 0x5A;
  std::vector<int8_t> output(static_cast<size_t>(c.m * ldc), sentinel);
  // In two row ranges, as two threads would split it.
  const int64_t split = c.m / 3;
  Int8Gemm(packed, input.data(), lda, output.data(), ldc, 0, split);
  Int8Gemm(packed, input.data(), lda, output.data(), ldc, split, c.m);
  int mismatches = 0;
  for (int64_t r = 0; r < c.m; ++r) {
    for (int64_t ch = 0; ch < ldc; ++ch) {
      const int8_t got = output[static_cast<size_t>(r * ldc + ch)];
      const int8_t want = ch < c.n ? expected[static_cast<size_t>(r * c.n + ch)] : sentinel;  // padding untouched
      if (got != want && ++mismatches <= 5) {
        ADD_FAILURE() << "row " << r << " channel " << ch << ": got " << int{got} << ", expected " << int{want};
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

class VnniInt8GemmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Available()) GTEST_SKIP() << "this CPU has no AVX-512 VNNI (or KILN_DISABLE_VNNI is set): kernel not run";
  }
};

TEST_F(VnniInt8GemmTest, ManyShapes) {
  uint32_t seed = 1;
  for (int64_t m : {1, 2, 7, 8, 9, 17, 33}) {
    for (int64_t k : {1, 2, 3, 4, 5, 15, 16, 17, 63, 64, 65, 130}) {
      for (int64_t n : {1, 5, 15, 16, 17, 31, 32, 33, 48, 70}) {
        Case c{m, k, n};
        c.input_zero_point = static_cast<int32_t>(seed % 37) - 18;
        c.output_zero_point = static_cast<int32_t>(seed % 23) - 11;
        c.per_channel = seed % 2 == 0;
        Check(c, seed++);
      }
    }
  }
}

TEST_F(VnniInt8GemmTest, MobilenetShapes) {
  uint32_t seed = 100;
  for (const auto& s : std::vector<std::vector<int64_t>>{
           {3136, 24, 144}, {784, 144, 32}, {196, 64, 384}, {49, 960, 160}, {49, 320, 1280}, {125, 64, 64}}) {
    Check({s[0], s[1], s[2]}, seed++);
  }
}

TEST_F(VnniInt8GemmTest, ZeroPointsAtTheLimits) {
  uint32_t seed = 200;
  for (int32_t in_zp : {-128, 127}) {
    for (int32_t out_zp : {-128, 127}) {
      for (bool per_channel : {false, true}) {
        Case c{19, 37, 21};
        c.input_zero_point = in_zp;
        c.output_zero_point = out_zp;
        c.per_channel = per_channel;
        Check(c, seed++);
      }
    }
  }
}

TEST_F(VnniInt8GemmTest, ExtremeMultipliersAndBiases) {
  uint32_t seed = 300;
  // Shifts from -31 (everything rounds to 0 or +-1) to 30 (the int32 left shift wraps, as the reference's).
  for (const auto& range :
       std::vector<std::pair<int, int>>{{-31, -31}, {-31, -20}, {-3, 3}, {0, 0}, {1, 8}, {20, 30}, {-31, 30}}) {
    for (bool extreme : {false, true}) {
      Case c{23, 45, 37};
      c.min_shift = range.first;
      c.max_shift = range.second;
      c.extreme_bias = extreme;
      c.input_zero_point = -128;
      Check(c, seed++);
    }
  }
  Case no_bias{10, 9, 18};
  no_bias.bias = false;
  Check(no_bias, seed++);
}

TEST_F(VnniInt8GemmTest, ActivationClampsAndStrides) {
  uint32_t seed = 400;
  for (const auto& clamp : std::vector<std::pair<int32_t, int32_t>>{{-128, 127}, {0, 127}, {-5, 40}, {3, 3}}) {
    Case c{27, 50, 40};
    c.activation_min = clamp.first;
    c.activation_max = clamp.second;
    c.output_zero_point = -7;
    c.lda_pad = 3;  // rows further apart than K (a strided view), and output rows wider than N
    c.ldc_pad = 5;
    Check(c, seed++);
  }
}

// Int8Conv: a CONV_2D of any filter, stride, dilation and padding, its taps gathered into the GEMM's rows, against
// the reference int8 CONV_2D on the same geometry, byte for byte.
struct ConvCase {
  int64_t batch, in_h, in_w, in_c, out_c, kernel_h, kernel_w, stride, dilation;
  bool same = true;  // SAME padding (else VALID)
  int32_t input_zero_point = 0, output_zero_point = 0;
  bool per_channel = true;
};

void CheckConv(const ConvCase& c, uint32_t seed) {
  reference::ConvParams g;
  g.batch = c.batch;
  g.input_height = c.in_h;
  g.input_width = c.in_w;
  g.input_channels = c.in_c;
  g.output_channels = c.out_c;
  g.filter_height = c.kernel_h;
  g.filter_width = c.kernel_w;
  g.stride_height = g.stride_width = c.stride;
  g.dilation_height = g.dilation_width = c.dilation;
  auto side = [&](int64_t in, int64_t kernel, int64_t* out, int64_t* before) {
    const int64_t extent = (kernel - 1) * c.dilation + 1;
    *out = c.same ? (in + c.stride - 1) / c.stride : (in - extent) / c.stride + 1;
    *before = c.same ? std::max<int64_t>(0, (*out - 1) * c.stride + extent - in) / 2 : 0;
  };
  side(c.in_h, c.kernel_h, &g.output_height, &g.pad_top);
  side(c.in_w, c.kernel_w, &g.output_width, &g.pad_left);
  const std::string what = "batch=" + std::to_string(c.batch) + " in=" + std::to_string(c.in_h) + "x" +
                           std::to_string(c.in_w) + "x" + std::to_string(c.in_c) + " out_c=" + std::to_string(c.out_c) +
                           " filter=" + std::to_string(c.kernel_h) + "x" + std::to_string(c.kernel_w) +
                           " stride=" + std::to_string(c.stride) + " dilation=" + std::to_string(c.dilation) +
                           (c.same ? " SAME" : " VALID") + " in_zp=" + std::to_string(c.input_zero_point) +
                           " out_zp=" + std::to_string(c.output_zero_point);
  SCOPED_TRACE(what);
  ASSERT_GE(g.output_height, 1);
  ASSERT_GE(g.output_width, 1);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(-128, 127);
  const int64_t k = c.kernel_h * c.kernel_w * c.in_c;
  std::vector<int8_t> input(static_cast<size_t>(c.batch * c.in_h * c.in_w * c.in_c)),
      filter(static_cast<size_t>(c.out_c * k));
  for (auto& v : input) v = static_cast<int8_t>(byte(rng));
  for (auto& v : filter) v = static_cast<int8_t>(byte(rng));
  std::vector<int32_t> bias(static_cast<size_t>(c.out_c));
  for (auto& b : bias) b = std::uniform_int_distribution<int32_t>(-100000, 100000)(rng);
  std::uniform_int_distribution<int32_t> significand(1 << 30, std::numeric_limits<int32_t>::max());
  std::uniform_int_distribution<int> shift(-12, -4);
  std::vector<reference::QuantizedMultiplier> multipliers(c.per_channel ? static_cast<size_t>(c.out_c) : 1);
  for (auto& m : multipliers) m = {significand(rng), shift(rng)};

  reference::WeightedQuantParams quant;
  quant.input_zero_point = c.input_zero_point;
  quant.output_zero_point = c.output_zero_point;
  quant.rounding = reference::Rounding::kDouble;
  for (int64_t ch = 0; ch < c.out_c; ++ch) quant.multipliers.push_back(multipliers[c.per_channel ? ch : 0]);
  const int64_t rows = c.batch * g.output_height * g.output_width;
  std::vector<int8_t> expected(static_cast<size_t>(rows * c.out_c));
  reference::ConvInt8(g, quant, input.data(), filter.data(), bias.data(), expected.data());

  const PackedInt8Gemm packed = PackInt8Gemm(filter.data(), c.out_c, k, bias.data(), c.input_zero_point,
                                             multipliers, c.output_zero_point, -128, 127);
  std::vector<int8_t> output(static_cast<size_t>(rows * c.out_c), 0x5A);
  const int64_t split = rows / 3;  // two row ranges, as two threads would split it
  Int8Conv(packed, g, c.input_zero_point, input.data(), output.data(), 0, split);
  Int8Conv(packed, g, c.input_zero_point, input.data(), output.data(), split, rows);
  int mismatches = 0;
  for (size_t i = 0; i < output.size(); ++i) {
    if (output[i] != expected[i] && ++mismatches <= 5) {
      ADD_FAILURE() << "pixel " << i / static_cast<size_t>(c.out_c) << " channel " << i % static_cast<size_t>(c.out_c)
                    << ": got " << int{output[i]} << ", expected " << int{expected[i]};
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST_F(VnniInt8GemmTest, ConvolutionsGatherTheirTaps) {
  uint32_t seed = 500;
  // mt_kws_dscnn_int8's first layer (10x4 over one channel, stride 2), tm_mobilenet_v2_int8_224's (3x3x3, stride
  // 2), and odd ones: 1x1 of stride 2, dilation, VALID, batches, channel counts around the kernel's blocks.
  const std::vector<ConvCase> cases = {
      {1, 49, 10, 1, 64, 10, 4, 2, 1},     {1, 32, 32, 3, 32, 3, 3, 2, 1},   {1, 9, 7, 5, 17, 3, 3, 1, 1},
      {2, 8, 8, 16, 33, 1, 1, 2, 1},       {1, 11, 13, 3, 8, 3, 3, 1, 2},    {1, 10, 10, 7, 31, 5, 5, 3, 1},
      {3, 6, 5, 2, 16, 2, 3, 1, 1, false}, {1, 7, 7, 65, 15, 3, 3, 2, 1, false}, {1, 1, 1, 4, 5, 3, 3, 1, 1},
      {1, 5, 40, 1, 1, 1, 7, 1, 1},
  };
  for (const ConvCase& base : cases) {
    for (int32_t in_zp : {0, -128, 127}) {
      ConvCase c = base;
      c.input_zero_point = in_zp;
      c.output_zero_point = static_cast<int32_t>(seed % 23) - 11;
      c.per_channel = seed % 2 == 0;
      CheckConv(c, seed++);
    }
  }
}

#if KILN_TEST_WITH_XNNPACK
// The float requantization (UseFloatRequantization) against XNNPACK's own 1x1 convolution, byte for byte: qc8
// (per-channel scales) and qs8 (one scale), zero points at the limits, clamps, scales from tiny to above 1.
TEST_F(VnniInt8GemmTest, FloatRequantizationEqualsXnnpack) {
  ASSERT_EQ(xnn_initialize(nullptr), xnn_status_success);
  std::mt19937 rng(99);
  std::uniform_int_distribution<int> byte(-128, 127);
  auto log_uniform = [&rng](float lo, float hi) {
    return std::exp(std::uniform_real_distribution<float>(std::log(lo), std::log(hi))(rng));
  };
  int compared = 0;
  for (int c = 0; c < 60; ++c) {
    const int64_t m = std::uniform_int_distribution<int64_t>(1, 40)(rng);
    const int64_t k = std::uniform_int_distribution<int64_t>(1, 100)(rng);
    const int64_t n = std::uniform_int_distribution<int64_t>(1, 70)(rng);
    const bool per_channel = c % 2 == 0;
    const int32_t in_zp = c % 5 == 0 ? -128 : c % 5 == 1 ? 127 : byte(rng);
    const int32_t out_zp = c % 7 == 0 ? -128 : c % 7 == 1 ? 127 : byte(rng);
    int32_t lo = c % 3 == 0 ? out_zp : -128, hi = c % 4 == 0 ? std::min(127, out_zp + 50) : 127;
    if (lo > hi) lo = hi;
    std::vector<int8_t> input(static_cast<size_t>(m * k)), weights(static_cast<size_t>(n * k));
    for (auto& v : input) v = static_cast<int8_t>(byte(rng));
    for (auto& v : weights) v = static_cast<int8_t>(std::max(-127, byte(rng)));
    std::vector<int32_t> bias(static_cast<size_t>(n));
    for (auto& b : bias) b = std::uniform_int_distribution<int32_t>(-30000, 30000)(rng);
    const float in_scale = log_uniform(1e-3f, 1.0f);
    std::vector<float> scales(per_channel ? static_cast<size_t>(n) : 1);
    for (auto& s : scales) s = log_uniform(1e-3f, 0.1f);
    const float out_scale = in_scale * scales[0] * std::sqrt(static_cast<float>(k)) * log_uniform(0.5f, 500.0f);
    SCOPED_TRACE("case " + std::to_string(c) + ": M=" + std::to_string(m) + " K=" + std::to_string(k) +
                 " N=" + std::to_string(n) + (per_channel ? " qc8" : " qs8"));

    xnn_operator_t op = nullptr;
    const size_t kk = static_cast<size_t>(k), nn = static_cast<size_t>(n);
    const xnn_status created =
        per_channel ? xnn_create_convolution2d_nhwc_qc8(
                          0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, kk, nn, kk, nn, static_cast<int8_t>(in_zp), in_scale,
                          scales.data(), weights.data(), bias.data(), static_cast<int8_t>(out_zp), out_scale,
                          static_cast<int8_t>(lo), static_cast<int8_t>(hi), 0, &op)
                    : xnn_create_convolution2d_nhwc_qs8(0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, kk, nn, kk, nn,
                                                        static_cast<int8_t>(in_zp), in_scale, scales[0], weights.data(),
                                                        bias.data(), static_cast<int8_t>(out_zp), out_scale,
                                                        static_cast<int8_t>(lo), static_cast<int8_t>(hi), 0, &op);
    if (created != xnn_status_success) continue;  // a scale XNNPACK refuses (the engine would not map it either)
    std::vector<int8_t> expected(static_cast<size_t>(m * n));
    ASSERT_EQ(per_channel ? xnn_setup_convolution2d_nhwc_qc8(op, 1, static_cast<size_t>(m), 1, input.data(),
                                                             expected.data(), nullptr)
                          : xnn_setup_convolution2d_nhwc_qs8(op, 1, static_cast<size_t>(m), 1, input.data(),
                                                             expected.data(), nullptr),
              xnn_status_success);
    ASSERT_EQ(xnn_run_operator(op, nullptr), xnn_status_success);
    xnn_delete_operator(op);

    PackedInt8Gemm packed = PackInt8Gemm(weights.data(), n, k, bias.data(), in_zp, {{1 << 30, -1}}, out_zp, lo, hi);
    UseFloatRequantization(&packed, in_scale, scales, out_scale);
    std::vector<int8_t> output(static_cast<size_t>(m * n));
    Int8Gemm(packed, input.data(), k, output.data(), n, 0, m);
    int mismatches = 0;
    for (size_t i = 0; i < output.size(); ++i) {
      if (output[i] != expected[i] && ++mismatches <= 5) {
        ADD_FAILURE() << "element " << i << ": got " << int{output[i]} << ", XNNPACK " << int{expected[i]};
      }
    }
    EXPECT_EQ(mismatches, 0);
    ++compared;
  }
  EXPECT_GE(compared, 50) << "XNNPACK refused too many cases";
}
#endif

TEST(VnniInt8GemmPackTest, PackedFormat) {
  // Runs everywhere: the layout the header documents.
  const int64_t n = 17, k = 5;
  std::vector<int8_t> w(static_cast<size_t>(n * k));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(i % 100);
  const std::vector<int32_t> bias(static_cast<size_t>(n), 1000);
  const PackedInt8Gemm p = PackInt8Gemm(w.data(), n, k, bias.data(), 2, {{1 << 30, -3}}, 0, -128, 127);
  EXPECT_EQ(p.k_groups, 2);
  EXPECT_EQ(p.blocks, 2);
  ASSERT_EQ(p.weights.size(), static_cast<size_t>(2 * 2 * 64));
  for (int64_t c = 0; c < n; ++c) {
    int32_t sum = 0;
    for (int64_t i = 0; i < k; ++i) {
      const int64_t at = (((c / 16) * 2 + i / 4) * 16 + c % 16) * 4 + i % 4;
      EXPECT_EQ(p.weights[static_cast<size_t>(at)], w[static_cast<size_t>(c * k + i)]);
      sum += w[static_cast<size_t>(c * k + i)];
    }
    EXPECT_EQ(p.bias[static_cast<size_t>(c)], 1000 - (2 + 128) * sum);
    const size_t at = static_cast<size_t>((c / 16) * 16 + (c % 2) * 8 + (c % 16) / 2);  // even channels first
    EXPECT_EQ(p.rounding[at], (int64_t{1} << 30) + (int64_t{1} << 33));
    EXPECT_EQ(p.negative[at], int64_t{1} << 31);
    EXPECT_EQ(p.total_shift[at], 34);
  }
  EXPECT_EQ(p.weights[static_cast<size_t>(((0 * 2 + 1) * 16 + 0) * 4 + 1)], 0);  // K padding is zero
  EXPECT_EQ(p.bias[17], 0);                                                      // N padding too
}

}  // namespace
}  // namespace kiln::ops::vnni
