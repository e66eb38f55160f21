// The int8 reference kernels (ops/reference/quantized_kernels.h) against plain implementations of the same
// integer formulas written here: 64-bit sums, the rounding done with long double or int64 division instead of
// the library's helpers, loops written from the definitions. Many shapes, scales (down to 1e-6 and up to
// multipliers above 1) and zero points (at -128 and 127), per-channel weights including a single channel.

#include "ops/reference/quantized_kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ops/reference/conv.h"
#include "ops/reference/elementwise.h"
#include "ops/reference/quantized.h"
#include "tests/ops/quantized_test_helpers.h"

namespace kiln::ops::reference {
namespace {

using testing::ApplyDouble;
using testing::ApplySingle;
using testing::Clamp;
using testing::RandomInt8;

// Quantization for a weighted op: zero points cycle through the limits, scales through extremes.
struct QuantSetup {
  WeightedQuantParams q;
  std::vector<int32_t> bias;
};

QuantSetup MakeSetup(std::mt19937& rng, int64_t channels, int variant, int64_t accumulate_count) {
  QuantSetup s;
  const int32_t zero_points[] = {-128, 127, 0, -5, 64};
  s.q.input_zero_point = zero_points[variant % 5];
  s.q.output_zero_point = zero_points[(variant + 2) % 5];
  const float input_scales[] = {0.0078125f, 1e-3f, 0.5f, 0.02f};
  const float output_scales[] = {0.02f, 1e-6f, 4.0f, 0.05f};
  const float input_scale = input_scales[variant % 4];
  const float output_scale = output_scales[(variant / 4) % 4];
  std::vector<float> filter_scales(static_cast<size_t>(variant % 3 == 0 ? 1 : channels));
  std::uniform_real_distribution<float> u(0.001f, 0.05f);
  for (float& f : filter_scales) f = u(rng);
  s.q.multipliers = PerChannelMultipliers(input_scale, filter_scales, output_scale, channels);
  if (variant % 7 == 3) {  // a fused RELU6
    QuantizedActivationRange(static_cast<int>(Activation::kRelu6), output_scale, s.q.output_zero_point,
                             &s.q.activation_min, &s.q.activation_max);
  }
  s.bias.resize(static_cast<size_t>(channels));
  std::uniform_int_distribution<int32_t> b(-20000, 20000);
  for (int32_t& x : s.bias) x = b(rng);
  (void)accumulate_count;
  return s;
}

int8_t Out(const WeightedQuantParams& q, int64_t channel, int64_t acc, bool single) {
  const QuantizedMultiplier& m = q.multipliers[static_cast<size_t>(channel)];
  return Clamp((single ? ApplySingle(acc, m) : ApplyDouble(acc, m)) + q.output_zero_point, q.activation_min,
               q.activation_max);
}

TEST(QuantizedKernelsTest, FullyConnectedMatchesPlainFormula) {
  std::mt19937 rng(1);
  int variant = 0;
  for (int64_t batch : {1, 3}) {
    for (int64_t in : {1, 7, 64}) {
      for (int64_t units : {1, 5, 16}) {
        for (bool with_bias : {true, false}) {
          FullyConnectedParams p;
          p.batch = batch;
          p.input_size = in;
          p.num_units = units;
          QuantSetup s = MakeSetup(rng, units, variant++, in);
          const std::vector<int8_t> x = RandomInt8(static_cast<size_t>(batch * in), rng);
          std::vector<int8_t> w = RandomInt8(static_cast<size_t>(units * in), rng);
          std::vector<int8_t> out(static_cast<size_t>(batch * units));
          FullyConnectedInt8(p, s.q, x.data(), w.data(), with_bias ? s.bias.data() : nullptr, out.data());
          for (int64_t b = 0; b < batch; ++b) {
            for (int64_t u = 0; u < units; ++u) {
              int64_t acc = with_bias ? s.bias[static_cast<size_t>(u)] : 0;
              for (int64_t i = 0; i < in; ++i)
                acc += (x[b * in + i] - int64_t{s.q.input_zero_point}) * w[u * in + i];
              ASSERT_EQ(out[b * units + u], Out(s.q, u, acc, /*single=*/true)) << "variant " << variant;
            }
          }
        }
      }
    }
  }
}

// FULLY_CONNECTED as LiteRT's reference kernels compute it: the int32 sum times the real multiplier (the scales'
// product in double) rounded half away from zero, int8 and uint8; against the sum written out in int64 and
// rounded here. Biases above 2^27 put the sums where the fixed-point multiplier's 31-bit significand would move
// outputs one step: the kernel must not take it. A product beyond int32 saturates.
TEST(QuantizedKernelsTest, FullyConnectedAppliesTheRealMultiplier) {
  std::mt19937 rng(43);
  const float input_scale = 0.0219f, output_scale = 28.470489501953125f;
  const std::vector<float> filter_scales = {0.00073f, 0.0004011022f, 0.02f};
  for (int64_t units : {1, 3, 8}) {
    FullyConnectedParams p;
    p.batch = 2;
    p.input_size = 5;
    p.num_units = units;
    WeightedQuantParams q;
    q.input_zero_point = 3;
    q.output_zero_point = -100;
    std::vector<float> channel_scales(static_cast<size_t>(units));
    for (int64_t c = 0; c < units; ++c)
      channel_scales[static_cast<size_t>(c)] = filter_scales[static_cast<size_t>(c % 3)];
    q.real_multipliers = RealMultipliers(input_scale, channel_scales, output_scale, units);
    q.multipliers = PerChannelMultipliers(input_scale, {filter_scales[0]}, output_scale, units);
    std::uniform_int_distribution<int32_t> big(150000000, 420000000);
    std::vector<int32_t> bias(static_cast<size_t>(units));
    for (int32_t& b : bias) b = big(rng);
    const std::vector<int8_t> x = RandomInt8(10, rng);
    const std::vector<int8_t> w = RandomInt8(static_cast<size_t>(units * 5), rng);
    std::vector<int8_t> out(static_cast<size_t>(2 * units));
    FullyConnectedInt8(p, q, x.data(), w.data(), bias.data(), out.data());
    for (int64_t b = 0; b < 2; ++b) {
      for (int64_t u = 0; u < units; ++u) {
        int64_t acc = bias[static_cast<size_t>(u)];
        for (int64_t i = 0; i < 5; ++i) acc += (x[b * 5 + i] - int64_t{3}) * w[u * 5 + i];
        const float fs = filter_scales[static_cast<size_t>(u % 3)];
        const double m = double{input_scale} * double{fs} / double{output_scale};
        const double expect = std::round(static_cast<double>(acc) * m) - 100;
        ASSERT_EQ(out[b * units + u], static_cast<int8_t>(std::min(std::max(expect, -128.0), 127.0))) << u;
      }
    }
  }
  // A sum above 2^27 where the two forms part (as the biases of qu8_fc_large_sums): the kernel gives the
  // double one, and the fixed-point form only when no real multiplier is set.
  const double m = double{input_scale} * double{0.00073f} / double{output_scale};
  const QuantizedMultiplier fixed = QuantizeMultiplier(m);
  int32_t parted = 0;
  for (int32_t acc = 1 << 27; acc < (1 << 27) + 20000000 && parted == 0; ++acc) {
    const double in_double = std::round(static_cast<double>(acc) * m);
    if (in_double != MultiplyByQuantizedMultiplier(acc, fixed, Rounding::kSingleAway) && in_double < 200) parted = acc;
  }
  ASSERT_NE(parted, 0);
  FullyConnectedParams one;
  one.batch = one.input_size = one.num_units = 1;
  WeightedQuantParams q;
  q.input_zero_point = 0;
  q.filter_zero_point = 7;
  q.output_zero_point = 0;
  q.activation_min = 0;
  q.activation_max = 255;
  q.multipliers = {fixed};
  q.real_multipliers = {m};
  const uint8_t ux = 200, uw = 7;  // the weight equals its zero point: the sum is the bias alone
  uint8_t uout = 0;
  FullyConnectedQuantized<uint8_t>(one, q, &ux, &uw, &parted, &uout);
  EXPECT_EQ(uout, static_cast<uint8_t>(std::round(static_cast<double>(parted) * m)));
  q.real_multipliers.clear();
  FullyConnectedQuantized<uint8_t>(one, q, &ux, &uw, &parted, &uout);
  EXPECT_EQ(uout, MultiplyByQuantizedMultiplier(parted, fixed, Rounding::kSingleAway));
  // Saturation: a multiplier of 1e6 on a sum of 1e9 leaves int32; the output clamps, with no undefined conversion.
  q.real_multipliers = {1e6};
  q.output_zero_point = 0;
  const int32_t huge = 1000000000, negative_huge = -1000000000;
  FullyConnectedQuantized<uint8_t>(one, q, &ux, &uw, &huge, &uout);
  EXPECT_EQ(uout, 255);
  FullyConnectedQuantized<uint8_t>(one, q, &ux, &uw, &negative_huge, &uout);
  EXPECT_EQ(uout, 0);
}

// A crafted model can push the int32 sums past their range (a huge bias, a multiplier that lands next to
// INT32_MIN before the zero point is added). LiteRT's int32 arithmetic wraps there; Kiln's must give the same
// answer and not be undefined behaviour (the interpreter fuzzer found the second case under UBSan).
TEST(QuantizedKernelsTest, SumsPastInt32WrapAsLiteRTsDo) {
  FullyConnectedParams p;
  p.batch = 1;
  p.input_size = 2;
  p.num_units = 1;
  WeightedQuantParams q;
  q.input_zero_point = -128;
  q.multipliers = {QuantizeMultiplier(1.0)};  // the identity: out = acc + output zero point
  const int8_t x[] = {127, 127};              // 255 after the zero point
  const int8_t w[] = {127, 127};              // sum of products: 2 * 255 * 127 = 64770
  int8_t out = 0;

  // The accumulator wraps: INT32_MAX - 100 + 64770 is INT32_MIN + 64669, which clamps to -128.
  const int32_t wrapping_bias = std::numeric_limits<int32_t>::max() - 100;
  FullyConnectedInt8(p, q, x, w, &wrapping_bias, &out);
  EXPECT_EQ(out, -128);

  // The zero point's add wraps: the sum is INT32_MIN + 5, and INT32_MIN + 5 - 128 is INT32_MAX - 122, which
  // clamps to 127.
  const int8_t negative_w[] = {-127, -127};  // sum of products: -64770
  q.output_zero_point = -128;
  const int32_t low_bias = std::numeric_limits<int32_t>::min() + 5 + 64770;
  FullyConnectedInt8(p, q, x, negative_w, &low_bias, &out);
  EXPECT_EQ(out, 127);

  // The same through DEPTHWISE_CONV_2D (double rounding), where the fuzzer found it.
  DepthwiseConvParams d;
  d.batch = 1;
  d.input_height = d.input_width = 1;
  d.input_channels = 1;
  d.depth_multiplier = 1;
  d.filter_height = d.filter_width = 1;
  d.stride_height = d.stride_width = 1;
  d.dilation_height = d.dilation_width = 1;
  d.output_height = d.output_width = 1;
  q.rounding = Rounding::kDouble;
  q.multipliers = {
      QuantizedMultiplier{std::numeric_limits<int32_t>::max(), 0}};  // just under 1, no left shift
  const int32_t dw_bias = std::numeric_limits<int32_t>::min() + 5 + 255 * 127;
  DepthwiseConvInt8(d, q, x, negative_w, &dw_bias, &out);
  EXPECT_EQ(out, 127);
}

TEST(QuantizedKernelsTest, ConvAndDepthwiseMatchPlainFormula) {
  std::mt19937 rng(2);
  int variant = 0;
  for (int64_t size : {1, 5, 8}) {
    for (int64_t kernel : {1, 3}) {
      for (int64_t stride : {1, 2}) {
        for (Padding padding : {Padding::kSame, Padding::kValid}) {
          for (int64_t channels : {1, 3}) {
            WindowSize rows, cols;
            if (!ComputeWindowSize(padding, size, kernel, stride, 1, &rows) || rows.output <= 0) continue;
            ComputeWindowSize(padding, size, kernel, stride, 1, &cols);
            const int64_t out_channels = channels == 1 ? 1 : 4;
            // CONV_2D
            ConvParams c;
            c.batch = 2;
            c.input_height = c.input_width = size;
            c.input_channels = channels;
            c.output_height = rows.output;
            c.output_width = cols.output;
            c.output_channels = out_channels;
            c.filter_height = c.filter_width = kernel;
            c.stride_height = c.stride_width = stride;
            c.pad_top = rows.pad_before;
            c.pad_left = cols.pad_before;
            QuantSetup s = MakeSetup(rng, out_channels, variant++, kernel * kernel * channels);
            s.q.rounding = Rounding::kDouble;
            const std::vector<int8_t> x = RandomInt8(static_cast<size_t>(2 * size * size * channels), rng);
            const std::vector<int8_t> f =
                RandomInt8(static_cast<size_t>(out_channels * kernel * kernel * channels), rng);
            std::vector<int8_t> out(static_cast<size_t>(2 * rows.output * cols.output * out_channels));
            ConvInt8(c, s.q, x.data(), f.data(), s.bias.data(), out.data());
            size_t k = 0;
            for (int64_t b = 0; b < 2; ++b)
              for (int64_t oy = 0; oy < rows.output; ++oy)
                for (int64_t ox = 0; ox < cols.output; ++ox)
                  for (int64_t oc = 0; oc < out_channels; ++oc) {
                    int64_t acc = s.bias[static_cast<size_t>(oc)];
                    for (int64_t fy = 0; fy < kernel; ++fy)
                      for (int64_t fx = 0; fx < kernel; ++fx)
                        for (int64_t ic = 0; ic < channels; ++ic) {
                          const int64_t iy = oy * stride + fy - rows.pad_before,
                                        ix = ox * stride + fx - cols.pad_before;
                          if (iy < 0 || ix < 0 || iy >= size || ix >= size) continue;
                          acc += (x[((b * size + iy) * size + ix) * channels + ic] -
                                  int64_t{s.q.input_zero_point}) *
                                 f[((oc * kernel + fy) * kernel + fx) * channels + ic];
                        }
                    ASSERT_EQ(out[k++], Out(s.q, oc, acc, /*single=*/false)) << "conv variant " << variant;
                  }
            // DEPTHWISE_CONV_2D with multiplier 2
            DepthwiseConvParams d;
            d.batch = 2;
            d.input_height = d.input_width = size;
            d.input_channels = channels;
            d.output_height = rows.output;
            d.output_width = cols.output;
            d.depth_multiplier = 2;
            d.filter_height = d.filter_width = kernel;
            d.stride_height = d.stride_width = stride;
            d.pad_top = rows.pad_before;
            d.pad_left = cols.pad_before;
            const int64_t dw_channels = channels * 2;
            QuantSetup t = MakeSetup(rng, dw_channels, variant++, kernel * kernel);
            t.q.rounding = Rounding::kDouble;
            const std::vector<int8_t> g = RandomInt8(static_cast<size_t>(kernel * kernel * dw_channels), rng);
            std::vector<int8_t> dout(static_cast<size_t>(2 * rows.output * cols.output * dw_channels));
            DepthwiseConvInt8(d, t.q, x.data(), g.data(), t.bias.data(), dout.data());
            k = 0;
            for (int64_t b = 0; b < 2; ++b)
              for (int64_t oy = 0; oy < rows.output; ++oy)
                for (int64_t ox = 0; ox < cols.output; ++ox)
                  for (int64_t oc = 0; oc < dw_channels; ++oc) {
                    int64_t acc = t.bias[static_cast<size_t>(oc)];
                    for (int64_t fy = 0; fy < kernel; ++fy)
                      for (int64_t fx = 0; fx < kernel; ++fx) {
                        const int64_t iy = oy * stride + fy - rows.pad_before,
                                      ix = ox * stride + fx - cols.pad_before;
                        if (iy < 0 || ix < 0 || iy >= size || ix >= size) continue;
                        acc += (x[((b * size + iy) * size + ix) * channels + oc / 2] -
                                int64_t{t.q.input_zero_point}) *
                               g[(fy * kernel + fx) * dw_channels + oc];
                      }
                    ASSERT_EQ(dout[k++], Out(t.q, oc, acc, /*single=*/false))
                        << "depthwise variant " << variant;
                  }
          }
        }
      }
    }
  }
}

// BATCH_MATMUL int8 against the sum of (lhs - zp) * (rhs - zp) written out in int64 over transposed operands and
// repeated (broadcast) matrices, then gemmlowp's double rounding (ApplyDouble), the output zero point and the
// int8 clamp; zero points at both ends of int8 and a multiplier above 1.
TEST(QuantizedKernelsTest, BatchMatMulMatchesPlainFormula) {
  std::mt19937 rng(7);
  const std::vector<std::array<int32_t, 3>> zero_points = {{0, 0, 0}, {-128, 127, 5}, {127, -128, -128}, {3, -7, 127}};
  const std::vector<double> multipliers = {0.0037, 1.0 / 256, 0.25, 1.7};
  int variant = 0;
  for (bool adj_x : {false, true}) {
    for (bool adj_y : {false, true}) {
      for (int64_t depth : {1, 5, 300}) {
        for (size_t v = 0; v < zero_points.size(); ++v, ++variant) {
          BatchMatMulParams p;
          p.rows = 3;
          p.depth = depth;
          p.cols = 4;
          p.adj_x = adj_x;
          p.adj_y = adj_y;
          p.lhs_batch = {0, 1, 0, 1};  // lhs has 2 matrices, rhs 2, 4 output batches
          p.rhs_batch = {0, 0, 1, 1};
          BatchMatMulInt8Params q;
          q.lhs_zero_point = zero_points[v][0];
          q.rhs_zero_point = zero_points[v][1];
          q.output_zero_point = zero_points[v][2];
          q.multiplier = QuantizeMultiplier(multipliers[v]);
          q.rounding = Rounding::kDouble;
          const std::vector<int8_t> lhs = RandomInt8(static_cast<size_t>(2 * 3 * depth), rng);
          const std::vector<int8_t> rhs = RandomInt8(static_cast<size_t>(2 * depth * 4), rng);
          std::vector<int8_t> got(4 * 3 * 4);
          BatchMatMulInt8(p, q, lhs.data(), rhs.data(), got.data());
          size_t at = 0;
          for (size_t b = 0; b < 4; ++b) {
            const int8_t* a = lhs.data() + p.lhs_batch[b] * 3 * depth;
            const int8_t* m = rhs.data() + p.rhs_batch[b] * depth * 4;
            for (int64_t i = 0; i < 3; ++i) {
              for (int64_t j = 0; j < 4; ++j, ++at) {
                int64_t acc = 0;
                for (int64_t d = 0; d < depth; ++d) {
                  const int64_t x = adj_x ? a[d * 3 + i] : a[i * depth + d];
                  const int64_t y = adj_y ? m[j * depth + d] : m[d * 4 + j];
                  acc += (x - q.lhs_zero_point) * (y - q.rhs_zero_point);
                }
                ASSERT_EQ(got[at], Clamp(ApplyDouble(acc, q.multiplier) + q.output_zero_point))
                    << "variant " << variant << " at " << at;
              }
            }
          }
        }
      }
    }
  }
}

// BATCH_MATMUL int16: the int64 sum of products (past int32 at depth 300 over the whole int16 range), then the
// int64 multiply (against its own tested helper) or, narrowed to int32, double rounding; clamped to int16.
TEST(QuantizedKernelsTest, BatchMatMul16MatchesPlainFormula) {
  std::mt19937 rng(9);
  for (bool wide : {true, false}) {
    for (int64_t depth : {1, 7, 300}) {
      for (double real : {1e-4, 0.01, 3.0}) {
        BatchMatMulParams p;
        p.rows = 2;
        p.depth = depth;
        p.cols = 3;
        p.adj_y = depth == 7;
        p.lhs_batch = {0, 0};
        p.rhs_batch = {0, 1};
        BatchMatMulInt8Params q;
        q.multiplier = QuantizeMultiplier(real);
        q.wide_multiply = wide;
        q.rounding = Rounding::kDouble;
        std::vector<int16_t> lhs(static_cast<size_t>(2 * depth)), rhs(static_cast<size_t>(2 * depth * 3));
        for (int16_t& v : lhs) v = static_cast<int16_t>(static_cast<int32_t>(rng() % 65536) - 32768);
        for (int16_t& v : rhs) v = static_cast<int16_t>(static_cast<int32_t>(rng() % 65536) - 32768);
        std::vector<int16_t> got(2 * 2 * 3);
        BatchMatMul16(p, q, lhs.data(), rhs.data(), got.data());
        size_t at = 0;
        for (size_t b = 0; b < 2; ++b) {
          const int16_t* m = rhs.data() + p.rhs_batch[b] * depth * 3;
          for (int64_t i = 0; i < 2; ++i) {
            for (int64_t j = 0; j < 3; ++j, ++at) {
              int64_t acc = 0;
              for (int64_t d = 0; d < depth; ++d)
                acc += int64_t{lhs[i * depth + d]} * (p.adj_y ? m[j * depth + d] : m[d * 3 + j]);
              const int64_t scaled =
                  wide ? MultiplyByQuantizedMultiplierInt64(acc, q.multiplier.multiplier, q.multiplier.shift)
                       : ApplyDouble(static_cast<int32_t>(static_cast<uint64_t>(acc)), q.multiplier);
              ASSERT_EQ(got[at], std::clamp<int64_t>(scaled, -32768, 32767))
                  << "wide " << wide << " depth " << depth << " real " << real << " at " << at;
            }
          }
        }
      }
    }
  }
}

// The inverse square root multiplier: x * 2^-(31 + shift) close to 1 / sqrt(x) over the int32 range, and x <= 1
// as 1 (INT32_MAX, shift 0).
TEST(QuantizedKernelsTest, InvSqrtMultiplierApproximatesInverseSqrt) {
  for (int32_t x : {-5, 0, 1}) {
    int32_t m = 0;
    int shift = -1;
    fixed_point::InvSqrtMultiplier(x, &m, &shift);
    EXPECT_EQ(m, std::numeric_limits<int32_t>::max());
    EXPECT_EQ(shift, 0);
  }
  std::mt19937 rng(3);
  std::vector<int32_t> xs = {2, 3, 4, 5, 127, 128, 16129, 65025, (1 << 27) - 1, 1 << 27, (1 << 29) + 3,
                             std::numeric_limits<int32_t>::max()};
  for (int i = 0; i < 2000; ++i) xs.push_back(static_cast<int32_t>(rng() >> (1 + rng() % 31)) | 2);
  for (int32_t x : xs) {
    int32_t m = 0;
    int shift = -1;
    fixed_point::InvSqrtMultiplier(x, &m, &shift);
    ASSERT_GE(shift, 0) << x;
    const double got = std::ldexp(static_cast<double>(m), -31 - shift);
    const double want = 1.0 / std::sqrt(static_cast<double>(x));
    ASSERT_NEAR(got / want, 1.0, 2e-6) << "x " << x << " m " << m << " shift " << shift;
  }
}

// L2_NORMALIZATION int8 and uint8 against the sum of squares written out here, the multiplier applied with
// gemmlowp's double rounding (ApplyDouble): uint8 to 128 * diff with the right shift, int8 to diff with 7 less.
TEST(QuantizedKernelsTest, L2NormalizationMatchesPlainFormula) {
  std::mt19937 rng(11);
  for (int64_t depth : {1, 2, 7, 300, 2000}) {
    for (int32_t zp_offset : {0, 1, 128, 200, 255}) {
      const int64_t outer = 3;
      const size_t n = static_cast<size_t>(outer * depth);
      const std::vector<int8_t> in8 = RandomInt8(n, rng);
      std::vector<uint8_t> inu(n);
      for (size_t i = 0; i < n; ++i) inu[i] = static_cast<uint8_t>(in8[i] + 128);
      std::vector<int8_t> out8(n);
      std::vector<uint8_t> outu(n);
      L2NormalizationQuantized<int8_t>(outer, depth, zp_offset - 128, 0, Rounding::kDouble, in8.data(), out8.data());
      L2NormalizationQuantized<uint8_t>(outer, depth, zp_offset, 128, Rounding::kDouble, inu.data(), outu.data());
      for (int64_t r = 0; r < outer; ++r) {
        int64_t sum8 = 0, sumu = 0;
        for (int64_t c = 0; c < depth; ++c) {
          const int64_t d8 = in8[r * depth + c] - (zp_offset - 128), du = inu[r * depth + c] - zp_offset;
          sum8 += d8 * d8;
          sumu += du * du;
        }
        QuantizedMultiplier m8, mu;
        int r8 = 0, ru = 0;
        fixed_point::InvSqrtMultiplier(static_cast<int32_t>(sum8), &m8.multiplier, &r8);
        fixed_point::InvSqrtMultiplier(static_cast<int32_t>(sumu), &mu.multiplier, &ru);
        m8.shift = 7 - r8;
        mu.shift = -ru;
        for (int64_t c = 0; c < depth; ++c) {
          const size_t at = static_cast<size_t>(r * depth + c);
          const int64_t d8 = in8[at] - (zp_offset - 128), du = inu[at] - zp_offset;
          ASSERT_EQ(out8[at], Clamp(ApplyDouble(d8, m8))) << depth << " " << zp_offset << " at " << at;
          ASSERT_EQ(outu[at], static_cast<uint8_t>(std::min<int64_t>(
                                  std::max<int64_t>(128 + ApplyDouble(128 * du, mu), 0), 255)))
              << depth << " " << zp_offset << " at " << at;
        }
      }
    }
  }
}

TEST(QuantizedKernelsTest, AddMatchesPlainFormulaWithBroadcast) {
  std::mt19937 rng(3);
  const float scales[] = {0.5f, 0.0039215f, 1e-5f, 0.1f, 2.0f};
  const int32_t zero_points[] = {-128, 127, 0, 3};
  int variant = 0;
  for (float sa : scales) {
    for (float sb : scales) {
      for (float so : {0.1f, 0.0078125f, 3.0f}) {
        AddInt8Params p;
        p.a_zero_point = zero_points[variant % 4];
        p.b_zero_point = zero_points[(variant + 1) % 4];
        p.output_zero_point = zero_points[(variant + 3) % 4];
        ++variant;
        PrepareAddInt8(sa, sb, so, &p);
        // The multipliers, from the definitions in double.
        const double twice = 2.0 * std::max<double>(sa, sb);
        EXPECT_EQ(p.a_multiplier.multiplier, QuantizeMultiplier(sa / twice).multiplier);
        EXPECT_EQ(p.output_multiplier.shift, QuantizeMultiplier(twice / (1048576.0 * so)).shift);
        BinaryParams shape;
        ASSERT_TRUE(MakeBinaryParams(BinaryOp::kAdd, Activation::kNone, {2, 3, 4}, {3, 1}, &shape));
        const std::vector<int8_t> a = RandomInt8(24, rng), b = RandomInt8(3, rng);
        std::vector<int8_t> out(24);
        AddInt8(shape, p, a.data(), b.data(), out.data());
        for (int64_t i = 0; i < 24; ++i) {
          const int64_t bi = (i / 4) % 3;
          const int64_t xa =
              ApplyDouble((a[i] - int64_t{p.a_zero_point}) * (int64_t{1} << 20), p.a_multiplier);
          const int64_t xb =
              ApplyDouble((b[bi] - int64_t{p.b_zero_point}) * (int64_t{1} << 20), p.b_multiplier);
          ASSERT_EQ(out[i], Clamp(ApplyDouble(xa + xb, p.output_multiplier) + p.output_zero_point, -128, 127))
              << sa << " " << sb << " " << so << " at " << i;
        }
      }
    }
  }
}

TEST(QuantizedKernelsTest, PoolsMatchPlainFormula) {
  std::mt19937 rng(4);
  for (int64_t size : {1, 4, 7}) {
    for (int64_t kernel : {1, 2, 3}) {
      for (int64_t stride : {1, 2}) {
        WindowSize rows;
        if (!ComputeWindowSize(Padding::kSame, size, kernel, stride, 1, &rows)) continue;
        PoolParams p;
        p.batch = 1;
        p.input_height = p.input_width = size;
        p.channels = 3;
        p.output_height = p.output_width = rows.output;
        p.filter_height = p.filter_width = kernel;
        p.stride_height = p.stride_width = stride;
        p.pad_top = p.pad_left = rows.pad_before;
        const std::vector<int8_t> x = RandomInt8(static_cast<size_t>(size * size * 3), rng);
        const size_t n = static_cast<size_t>(rows.output * rows.output * 3);
        std::vector<int8_t> avg(n), max(n);
        const int32_t lo = size == 4 ? -10 : -128, hi = size == 4 ? 50 : 127;
        AveragePoolInt8(p, lo, hi, x.data(), avg.data());
        MaxPoolInt8(p, lo, hi, x.data(), max.data());
        size_t k = 0;
        for (int64_t oy = 0; oy < rows.output; ++oy)
          for (int64_t ox = 0; ox < rows.output; ++ox)
            for (int64_t c = 0; c < 3; ++c, ++k) {
              int64_t sum = 0, count = 0, m = -128;
              for (int64_t iy = oy * stride - rows.pad_before; iy < oy * stride - rows.pad_before + kernel;
                   ++iy)
                for (int64_t ix = ox * stride - rows.pad_before; ix < ox * stride - rows.pad_before + kernel;
                     ++ix) {
                  if (iy < 0 || ix < 0 || iy >= size || ix >= size) continue;
                  const int64_t v = x[(iy * size + ix) * 3 + c];
                  sum += v;
                  ++count;
                  m = std::max(m, v);
                }
              // Rounded half away from zero.
              const long double mean = static_cast<long double>(sum) / count;
              const int64_t rounded =
                  static_cast<int64_t>(mean >= 0 ? std::floor(mean + 0.5L) : -std::floor(-mean + 0.5L));
              ASSERT_EQ(avg[k], Clamp(rounded, lo, hi)) << size << " " << kernel << " " << stride;
              ASSERT_EQ(max[k], Clamp(m, lo, hi));
            }
      }
    }
  }
}

TEST(QuantizedKernelsTest, QuantizeAndRequantize) {
  const std::vector<float> x = {0.0f, 0.25f, -0.25f, 0.75f, -0.75f, 1e9f, -1e9f, 0.124f, std::nanf("")};
  std::vector<int8_t> q(x.size());
  QuantizeFloatToInt8(static_cast<int64_t>(x.size()), 0.5f, -1, x.data(), q.data());
  // round(x / 0.5) ties away from zero, + (-1); huge values clamp; NaN becomes the zero point.
  EXPECT_EQ(std::vector<int>(q.begin(), q.end()), (std::vector<int>{-1, 0, -2, 1, -3, 127, -128, -1, -1}));
  std::mt19937 rng(5);
  for (float ratio : {1.0f, 0.3f, 3.7f, 1e-4f, 200.0f, 0.25f}) {
    const QuantizedMultiplier m = QuantizeMultiplier(ratio);
    for (int32_t zi : {-128, 127, 4}) {
      for (int32_t zo : {-128, 127, -9}) {
        const std::vector<int8_t> in = RandomInt8(64, rng);
        std::vector<int8_t> out(64);
        RequantizeInt8(64, zi, m, zo, in.data(), out.data());
        for (size_t i = 0; i < 64; ++i) {
          ASSERT_EQ(out[i], Clamp(ApplyDouble(in[i] - int64_t{zi}, m) + zo, -128, 127)) << ratio;
        }
      }
    }
  }
}

// SOFTMAX int8: the lookup-table formula written out (expf of the distance to the row max, float sums in
// order).
TEST(QuantizedKernelsTest, SoftmaxMatchesPlainFormula) {
  std::mt19937 rng(6);
  for (float input_scale : {0.1f, 1.0f / 256, 0.5f, 1e-4f}) {
    for (float beta : {1.0f, 0.5f}) {
      for (int64_t depth : {1, 4, 12, 100}) {
        SoftmaxInt8Params p;
        p.outer = 3;
        p.depth = depth;
        PrepareSoftmaxInt8(input_scale, beta, &p);
        std::vector<int8_t> x = RandomInt8(static_cast<size_t>(3 * depth), rng);
        x[0] = -128;  // a row with the type's limits
        if (depth > 1) x[1] = 127;
        std::vector<int8_t> out(x.size());
        SoftmaxInt8(p, x.data(), out.data());
        for (int64_t r = 0; r < 3; ++r) {
          int m = -128;
          for (int64_t j = 0; j < depth; ++j) m = std::max<int>(m, x[r * depth + j]);
          float sum = 0.0f;
          for (int64_t j = 0; j < depth; ++j)
            sum += std::exp(-input_scale * beta * static_cast<float>(m - x[r * depth + j]));
          for (int64_t j = 0; j < depth; ++j) {
            const float e = std::exp(-input_scale * beta * static_cast<float>(m - x[r * depth + j]));
            const float v = e * (1.0f / (sum * (1.0f / 256)));
            ASSERT_EQ(out[r * depth + j], Clamp(static_cast<int64_t>(std::round(v)) - 128, -128, 127))
                << input_scale << " " << depth;
          }
        }
        if (depth == 1) {  // probability 1 saturates at 255/256
          EXPECT_EQ(out[0], 127);
        }
      }
    }
  }
}

// MEAN int8 over height and width: the count folded into the multiplier, then one double-rounded multiply.
TEST(QuantizedKernelsTest, MeanHwMatchesPlainFormula) {
  std::mt19937 rng(7);
  for (int64_t size : {1, 3, 7, 16}) {
    for (float ratio : {1.0f, 0.37f, 2.5f}) {
      MeanHwInt8Params p;
      p.batch = 2;
      p.height = size;
      p.width = size + 1;
      p.channels = 3;
      p.input_zero_point = size == 3 ? -128 : 5;
      p.output_zero_point = size == 3 ? 127 : -9;
      PrepareMeanHwInt8(0.1f, 0.1f / ratio, &p);
      // The folded multiplier, from its definition.
      const QuantizedMultiplier base =
          QuantizeMultiplier(static_cast<double>(0.1f) / static_cast<double>(0.1f / ratio));
      const int64_t n = p.height * p.width;
      int k = 0;
      while ((int64_t{1} << (k + 1)) <= n) ++k;
      k = std::min({k, 32, 31 + base.shift});
      const QuantizedMultiplier folded{static_cast<int32_t>((int64_t{base.multiplier} << k) / n),
                                       base.shift - k};
      EXPECT_EQ(p.multiplier.multiplier, folded.multiplier);
      EXPECT_EQ(p.multiplier.shift, folded.shift);
      const std::vector<int8_t> x = RandomInt8(static_cast<size_t>(2 * n * 3), rng);
      std::vector<int8_t> out(6);
      MeanHwInt8(p, x.data(), out.data());
      for (int64_t b = 0; b < 2; ++b) {
        for (int64_t c = 0; c < 3; ++c) {
          int64_t sum = 0;
          for (int64_t i = 0; i < n; ++i) sum += x[(b * n + i) * 3 + c] - int64_t{p.input_zero_point};
          ASSERT_EQ(out[b * 3 + c], Clamp(ApplyDouble(sum, folded) + p.output_zero_point, -128, 127)) << size;
          // And it is the mean, to within one step of the real value.
          const double real = static_cast<double>(sum) / n * ratio + p.output_zero_point;
          if (real > -127 && real < 126) {
            EXPECT_NEAR(out[b * 3 + c], real, 1.0);
          }
        }
      }
    }
  }
}

// TRANSPOSE_CONV's scatter wraps its int32 sums as LiteRT's do (and as the other weighted kernels, above): one
// output summing enough maximal products passes INT32_MAX and comes out negative, clamped to the type's minimum.
TEST(QuantizedKernelsTest, TransposeConvSumsPastInt32Wrap) {
  const auto run = [](auto type_tag, int64_t channels, int32_t input_zero_point, int32_t value) {
    using T = decltype(type_tag);
    TransposeConvParams p;
    p.batch = 1;
    p.input_height = p.input_width = 1;
    p.input_channels = channels;
    p.output_height = p.output_width = 1;
    p.output_channels = 1;
    p.filter_height = p.filter_width = 1;
    WeightedQuantParams q;
    q.input_zero_point = input_zero_point;
    q.multipliers = {QuantizeMultiplier(0.5)};  // shift 0: no left shift (which would wrap again)
    q.rounding = Rounding::kDouble;
    q.activation_min = std::numeric_limits<T>::min();
    q.activation_max = std::numeric_limits<T>::max();
    const std::vector<T> x(static_cast<size_t>(channels), static_cast<T>(value));
    const std::vector<T> f(static_cast<size_t>(channels), static_cast<T>(value));
    T out = 0;
    TransposeConvQuantized<T>(p, q, x.data(), f.data(), nullptr, &out);
    return static_cast<int>(out);
  };
  // int8: 255 * 127 = 32385 per channel; 66400 channels sum to 2150364000, past INT32_MAX (wrapped: negative).
  EXPECT_EQ(run(int8_t{}, 66400, -128, 127), -128);
  EXPECT_EQ(run(int8_t{}, 66000, -128, 127), 127);  // 2137410000: no wrap, clamped high
  // uint8: 255 * 255 = 65025 per channel; 33100 channels sum to 2152327500.
  EXPECT_EQ(run(uint8_t{}, 33100, 0, 255), 0);
  EXPECT_EQ(run(uint8_t{}, 33000, 0, 255), 255);
}

// TRANSPOSE_CONV int8: each output gathered from the inputs whose scatter reaches it (y * stride - pad + fy
// == oy), over strides, paddings, per-tensor and per-channel filters, zero points at the limits and extreme
// scales.
TEST(QuantizedKernelsTest, TransposeConvMatchesPlainGather) {
  std::mt19937 rng(21);
  int variant = 0;
  for (int64_t size : {1, 3, 4}) {
    for (int64_t stride : {1, 2, 3}) {
      for (int64_t kernel : {1, 2, 3}) {
        for (int64_t pad : {int64_t{0}, kernel / 2}) {
          TransposeConvParams p;
          p.batch = 2;
          p.input_height = size;
          p.input_width = size + 1;
          p.input_channels = 3;
          p.output_channels = 4;
          p.filter_height = kernel;
          p.filter_width = kernel;
          p.stride_height = stride;
          p.stride_width = stride;
          p.pad_top = pad;
          p.pad_left = pad;
          p.output_height = size * stride + kernel - 1 - 2 * pad;
          p.output_width = (size + 1) * stride + kernel - 1 - 2 * pad;
          QuantSetup s = MakeSetup(rng, p.output_channels, variant++, 1);
          s.q.rounding = Rounding::kDouble;  // as the wrapper sets it (LiteRT's package, measured)
          const std::vector<int8_t> x = RandomInt8(static_cast<size_t>(2 * size * (size + 1) * 3), rng);
          const std::vector<int8_t> f = RandomInt8(static_cast<size_t>(4 * kernel * kernel * 3), rng);
          std::vector<int8_t> out(static_cast<size_t>(2 * p.output_height * p.output_width * 4));
          TransposeConvInt8(p, s.q, x.data(), f.data(), s.bias.data(), out.data());
          size_t k = 0;
          for (int64_t b = 0; b < 2; ++b) {
            for (int64_t oy = 0; oy < p.output_height; ++oy) {
              for (int64_t ox = 0; ox < p.output_width; ++ox) {
                for (int64_t co = 0; co < 4; ++co) {
                  int64_t acc = s.bias[static_cast<size_t>(co)];
                  for (int64_t y = 0; y < p.input_height; ++y) {
                    for (int64_t xx = 0; xx < p.input_width; ++xx) {
                      const int64_t fy = oy - (y * stride - pad), fx = ox - (xx * stride - pad);
                      if (fy < 0 || fy >= kernel || fx < 0 || fx >= kernel) continue;
                      for (int64_t ci = 0; ci < 3; ++ci) {
                        acc += (x[static_cast<size_t>(((b * p.input_height + y) * p.input_width + xx) * 3 +
                                                      ci)] -
                                int64_t{s.q.input_zero_point}) *
                               f[static_cast<size_t>(((co * kernel + fy) * kernel + fx) * 3 + ci)];
                      }
                    }
                  }
                  ASSERT_EQ(out[k++], Out(s.q, co, acc, /*single=*/false))
                      << "size " << size << " stride " << stride << " kernel " << kernel << " pad " << pad;
                }
              }
            }
          }
        }
      }
    }
  }
}

// TRANSPOSE_CONV 16x8: int16 input, int8 filter per channel, int64 bias (bias and sums beyond int32), against
// the plain gather with the sum in int64 and LiteRT's int64 multiply written out (the multiplier cut to its top 16
// bits, one rounding half up).
TEST(QuantizedKernelsTest, TransposeConv16x8MatchesPlainGather) {
  std::mt19937 rng(53);
  const auto int64_multiply = [](int64_t acc, const QuantizedMultiplier& m) {
    const int64_t reduced = m.multiplier < 0x7FFF0000 ? (int64_t{m.multiplier} + 32768) / 65536 : 0x7FFF;
    return static_cast<int64_t>(std::floor(std::ldexp(static_cast<long double>(acc) * reduced, m.shift - 15) + 0.5L));
  };
  for (int64_t stride : {1, 2, 3}) {
    for (int64_t kernel : {1, 3}) {
      for (bool with_bias : {true, false}) {
        TransposeConvParams p;
        p.batch = 1;
        p.input_height = 3;
        p.input_width = 4;
        p.input_channels = 2;
        p.output_channels = 3;
        p.filter_height = p.filter_width = kernel;
        p.stride_height = p.stride_width = stride;
        p.pad_top = p.pad_left = kernel / 2;
        p.output_height = 3 * stride + kernel - 1 - 2 * p.pad_top;
        p.output_width = 4 * stride + kernel - 1 - 2 * p.pad_left;
        WeightedQuantParams q;
        q.activation_min = stride == 2 ? 0 : -32768;
        q.activation_max = 32767;
        q.multipliers =
            PerChannelMultipliers(stride == 3 ? 3e-4f : 1e-3f, {0.01f, 0.002f, 0.03f}, with_bias ? 4e-3f : 0.5f, 3);
        std::vector<int16_t> x(24);
        for (int16_t& v : x) v = static_cast<int16_t>(static_cast<int>(rng() % 65536) - 32768);
        const std::vector<int8_t> f = RandomInt8(static_cast<size_t>(3 * kernel * kernel * 2), rng);
        std::vector<int64_t> bias(3);
        for (int64_t& b : bias) b = static_cast<int64_t>(rng() % 20000000001) - 10000000000;
        std::vector<int16_t> out(static_cast<size_t>(p.output_height * p.output_width * 3));
        TransposeConv16x8(p, q, x.data(), f.data(), with_bias ? bias.data() : nullptr, out.data());
        size_t k = 0;
        for (int64_t oy = 0; oy < p.output_height; ++oy) {
          for (int64_t ox = 0; ox < p.output_width; ++ox) {
            for (int64_t co = 0; co < 3; ++co) {
              int64_t acc = with_bias ? bias[static_cast<size_t>(co)] : 0;
              for (int64_t y = 0; y < 3; ++y) {
                for (int64_t xx = 0; xx < 4; ++xx) {
                  const int64_t fy = oy - (y * stride - p.pad_top), fx = ox - (xx * stride - p.pad_left);
                  if (fy < 0 || fy >= kernel || fx < 0 || fx >= kernel) continue;
                  for (int64_t ci = 0; ci < 2; ++ci) {
                    acc += int64_t{x[static_cast<size_t>((y * 4 + xx) * 2 + ci)]} *
                           f[static_cast<size_t>(((co * kernel + fy) * kernel + fx) * 2 + ci)];
                  }
                }
              }
              const int64_t want = std::min<int64_t>(
                  std::max<int64_t>(int64_multiply(acc, q.multipliers[static_cast<size_t>(co)]), q.activation_min),
                  q.activation_max);
              ASSERT_EQ(out[k++], want) << "stride " << stride << " kernel " << kernel;
            }
          }
        }
      }
    }
  }
}

// MEAN and SUM int8 over any axes (keep_dims or not): each output recomputed from the unravelled input
// indices, the MEAN through the folded multiplier (double rounding), the SUM through LiteRT's float formula.
TEST(QuantizedKernelsTest, ReduceInt8MatchesPlainFormula) {
  std::mt19937 rng(11);
  const std::vector<std::pair<Dims, std::vector<int32_t>>> cases = {{{2, 3, 4, 5}, {1, 2}},
                                                                    {{2, 3, 4, 5}, {-1}},
                                                                    {{2, 3, 4, 5}, {0, 2}},
                                                                    {{2, 3, 4, 5}, {0, 1, 2, 3}},
                                                                    {{7}, {0}},
                                                                    {{3, 1, 6}, {1, 1, -3}},
                                                                    {{4, 0, 3}, {0}},
                                                                    {{4, 0, 3}, {1}},
                                                                    {{1, 9, 9, 2}, {1, 2}},
                                                                    {{2, 2, 2, 2, 2}, {4, 0}}};
  // (input scale, zp), (output scale, zp): equal, extreme ratios, zero points at the limits.
  const std::vector<std::array<float, 4>> quants = {{0.1f, -3, 0.1f, -3},       {0.1f, 3, 0.05f, -7},
                                                    {0.02f, 127, 0.005f, -128}, {0.5f, -128, 0.0039215f, 127},
                                                    {1e-5f, 0, 2.0f, 10},       {4.0f, 5, 1e-3f, 0}};
  for (const auto& [dims, axes] : cases) {
    for (bool keep_dims : {false, true}) {
      for (const auto& qv : quants) {
        for (bool is_sum : {false, true}) {
          ReduceInt8Params p;
          Dims out_dims;
          std::string error;
          ASSERT_TRUE(MakeMeanParams(dims, axes, keep_dims, &p.shape, &out_dims, &error)) << error;
          p.input_zero_point = static_cast<int32_t>(qv[1]);
          p.output_zero_point = static_cast<int32_t>(qv[3]);
          PrepareReduceInt8(is_sum, qv[0], qv[2], &p);
          const int64_t in_count = NumElements(dims), out_count = NumElements(out_dims);
          const std::vector<int8_t> x = RandomInt8(static_cast<size_t>(in_count), rng);
          std::vector<int8_t> out(static_cast<size_t>(out_count), 99);
          ReduceInt8(p, x.data(), out.data());
          // Reference: which input dims are reduced, each input's output offset by unravelling.
          std::vector<bool> reduced(dims.size(), false);
          for (int32_t a : axes)
            reduced[static_cast<size_t>(a < 0 ? a + static_cast<int32_t>(dims.size()) : a)] = true;
          int64_t n = 1;
          for (size_t d = 0; d < dims.size(); ++d) n *= reduced[d] ? dims[d] : 1;
          std::vector<int64_t> sums(static_cast<size_t>(out_count), 0);
          for (int64_t i = 0; i < in_count; ++i) {
            int64_t rest = i, offset = 0, stride = 1;
            for (size_t d = dims.size(); d-- > 0;) {
              const int64_t index = rest % dims[d];
              rest /= dims[d];
              if (!reduced[d]) {
                offset += index * stride;
                stride *= dims[d];
              }
            }
            sums[static_cast<size_t>(offset)] += x[static_cast<size_t>(i)];
          }
          const QuantizedMultiplier base =
              QuantizeMultiplier(static_cast<double>(qv[0]) / static_cast<double>(qv[2]));
          int k = 0;
          while ((int64_t{1} << (k + 1)) <= n) ++k;
          k = std::max(0, std::min({k, 32, 31 + base.shift}));
          const QuantizedMultiplier folded{
              n > 0 ? static_cast<int32_t>((int64_t{base.multiplier} << k) / n) : base.multiplier,
              n > 0 ? base.shift - k : base.shift};
          for (int64_t o = 0; o < out_count; ++o) {
            const int64_t sum = sums[static_cast<size_t>(o)];
            int64_t want = 0;
            if (n == 0) {
              want = 0;
            } else if (is_sum) {
              const float scale = qv[0] / qv[2];
              const float bias = static_cast<float>(-p.input_zero_point) * scale * static_cast<float>(n);
              const float real = static_cast<float>(sum) * scale + bias;
              const float r = real >= 0 ? std::floor(real + 0.5f) : -std::floor(-real + 0.5f);
              want = Clamp(static_cast<int64_t>(std::max(std::min(r, 1e6f), -1e6f)) + p.output_zero_point);
            } else {
              want = Clamp(ApplyDouble(sum - n * p.input_zero_point, folded) + p.output_zero_point);
            }
            ASSERT_EQ(out[static_cast<size_t>(o)], want)
                << "output " << o << " of " << dims.size() << "-D, sum " << is_sum << " keep " << keep_dims;
          }
        }
      }
    }
  }
}

// SUM float: the plain sum of each output's inputs (in input order; an empty reduction gives 0).
TEST(QuantizedKernelsTest, SumFloatSumsReducedElements) {
  MeanParams p;
  Dims out_dims;
  std::string error;
  ASSERT_TRUE(MakeMeanParams({2, 3, 2}, {1}, false, &p, &out_dims, &error));
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  std::vector<float> out(4, -1.0f);
  SumFloat(p, x.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{9, 12, 27, 30}));
  ASSERT_TRUE(MakeMeanParams({2, 0}, {1}, true, &p, &out_dims, &error));
  std::vector<float> empty(2, -1.0f);
  SumFloat(p, nullptr, empty.data());
  EXPECT_EQ(empty, (std::vector<float>{0, 0}));
}

// LOG_SOFTMAX int8 against the real log softmax of the dequantized inputs: within one output step (16/256),
// -128 exactly where the result lies below the output range; and the multipliers from their definitions. The
// uint8 kernel on the inputs moved up by 128 gives the int8 outputs plus 128 (it sees only differences from the
// row max; its output zero point is 255).
TEST(QuantizedKernelsTest, LogSoftmaxNearRealValues) {
  std::mt19937 rng(31);
  for (float scale : {1e-3f, 0.02f, 0.1f, 1.0f / 16, 0.5f, 3.0f}) {
    LogSoftmaxInt8Params p;
    PrepareLogSoftmaxInt8(scale, &p);
    const QuantizedMultiplier in = QuantizeMultiplier(std::min(double{scale} * (1 << 26), 2147483647.0));
    EXPECT_EQ(p.input_multiplier.multiplier, in.multiplier);
    EXPECT_EQ(p.input_multiplier.shift, in.shift);
    EXPECT_EQ(p.diff_min, -static_cast<int32_t>(std::floor(31.0 * (1 << 26) / std::ldexp(1.0, in.shift))));
    for (int64_t depth : {1, 2, 16, 1000}) {
      p.outer = 3;
      p.depth = depth;
      const std::vector<int8_t> x = RandomInt8(static_cast<size_t>(3 * depth), rng);
      std::vector<int8_t> out(x.size());
      LogSoftmaxInt8(p, x.data(), out.data());
      std::vector<uint8_t> xu(x.size()), outu(x.size());
      for (size_t i = 0; i < x.size(); ++i) xu[i] = static_cast<uint8_t>(x[i] + 128);
      LogSoftmaxQuantized<uint8_t>(p, xu.data(), outu.data());
      for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(outu[i], out[i] + 128) << scale << " depth " << depth;
      for (int64_t row = 0; row < 3; ++row) {
        double max = -1e9, sum = 0;
        for (int64_t j = 0; j < depth; ++j)
          max = std::max(max, static_cast<double>(x[static_cast<size_t>(row * depth + j)]));
        for (int64_t j = 0; j < depth; ++j)
          sum += std::exp(scale * (x[static_cast<size_t>(row * depth + j)] - max));
        for (int64_t j = 0; j < depth; ++j) {
          const double real = scale * (x[static_cast<size_t>(row * depth + j)] - max) - std::log(sum);
          const double q = real / (16.0 / 256) + 127;
          const int got = out[static_cast<size_t>(row * depth + j)];
          if (q < -128.5) {
            ASSERT_EQ(got, -128) << scale << " " << depth;
          } else {
            ASSERT_NEAR(got, std::min(q, 127.0), 1.0) << scale << " depth " << depth << " real " << real;
          }
        }
      }
    }
  }
}

// uint8 MEAN and SOFTMAX are the int8 kernels on values moved up by 128: with the zero points moved alike,
// the outputs are the int8 ones plus 128 (every formula sees only differences from the zero points and the
// max).
TEST(QuantizedKernelsTest, Uint8MeanAndSoftmaxAreShiftedInt8) {
  std::mt19937 rng(13);
  for (const auto& [dims, axes] : std::vector<std::pair<Dims, std::vector<int32_t>>>{
           {{2, 3, 4, 5}, {1, 2}}, {{2, 3, 4, 5}, {-1}}, {{7, 9}, {0, 1}}, {{1, 9, 9, 2}, {1, 2}}}) {
    for (const auto& q : std::vector<std::array<float, 4>>{{0.1f, -3, 0.1f, -3},
                                                           {0.02f, 127, 0.005f, -128},
                                                           {1e-5f, 0, 2.0f, 10},
                                                           {0.5f, -128, 0.0039215f, 127}}) {
      ReduceInt8Params p8, pu;
      Dims out_dims;
      std::string error;
      ASSERT_TRUE(MakeMeanParams(dims, axes, true, &p8.shape, &out_dims, &error));
      pu.shape = p8.shape;
      p8.input_zero_point = static_cast<int32_t>(q[1]);
      p8.output_zero_point = static_cast<int32_t>(q[3]);
      pu.input_zero_point = p8.input_zero_point + 128;
      pu.output_zero_point = p8.output_zero_point + 128;
      PrepareReduceInt8(false, q[0], q[2], &p8);
      PrepareReduceInt8(false, q[0], q[2], &pu);
      const std::vector<int8_t> x = RandomInt8(static_cast<size_t>(NumElements(dims)), rng);
      std::vector<uint8_t> xu(x.size());
      for (size_t i = 0; i < x.size(); ++i) xu[i] = static_cast<uint8_t>(x[i] + 128);
      std::vector<int8_t> o8(static_cast<size_t>(NumElements(out_dims)));
      std::vector<uint8_t> ou(o8.size());
      ReduceInt8(p8, x.data(), o8.data());
      ReduceQuantized<uint8_t>(pu, xu.data(), ou.data());
      for (size_t i = 0; i < o8.size(); ++i) ASSERT_EQ(ou[i], o8[i] + 128) << i;
      SoftmaxInt8Params s8;
      s8.outer = NumElements(dims) / dims.back();
      s8.depth = dims.back();
      PrepareSoftmaxInt8(q[0], 1.0f, &s8);
      SoftmaxInt8Params su = s8;
      su.output_zero_point = 0;
      std::vector<int8_t> soft8(x.size());
      std::vector<uint8_t> softu(x.size());
      SoftmaxInt8(s8, x.data(), soft8.data());
      SoftmaxQuantized<uint8_t>(su, xu.data(), softu.data());
      for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(softu[i], soft8[i] + 128) << i;
    }
  }
}

// 16x8: int16 activations, int8 weights, int64 bias and accumulator, LiteRT's int64 multiply (the multiplier
// rounded to 16 bits, one rounding half up), restated here from its definition; FC with per-tensor weights
// narrows the sum and rounds as the int8 FC.
TEST(QuantizedKernelsTest, Conv16x8AndFullyConnected16x8MatchPlainFormula) {
  std::mt19937 rng(47);
  const auto int64_multiply = [](int64_t acc, const QuantizedMultiplier& m) {
    const int64_t reduced = m.multiplier < 0x7FFF0000 ? (int64_t{m.multiplier} + 32768) / 65536 : 0x7FFF;
    const long double exact = std::ldexp(static_cast<long double>(acc) * reduced, m.shift - 15);
    return static_cast<int64_t>(std::floor(exact + 0.5L));
  };
  ConvParams p;
  p.batch = 1;
  p.input_height = 5;
  p.input_width = 4;
  p.input_channels = 3;
  p.output_height = 5;
  p.output_width = 4;
  p.output_channels = 4;
  p.filter_height = 3;
  p.filter_width = 3;
  p.pad_top = 1;
  p.pad_left = 1;
  for (int variant = 0; variant < 6; ++variant) {
    WeightedQuantParams q;
    q.activation_min = variant == 2 ? 0 : -32768;
    q.activation_max = 32767;
    std::vector<float> filter_scales = {0.01f, 0.02f, 0.005f, 0.03f};
    q.multipliers =
        PerChannelMultipliers(variant % 2 ? 3e-4f : 1e-3f, filter_scales, variant < 3 ? 4e-3f : 0.5f, 4);
    std::vector<int16_t> x(60);
    for (int16_t& v : x) v = static_cast<int16_t>(static_cast<int>(rng() % 65536) - 32768);
    const std::vector<int8_t> f = RandomInt8(4 * 9 * 3, rng);
    std::vector<int64_t> bias(4);
    for (int64_t& b : bias) b = static_cast<int64_t>(rng() % 2000001) - 1000000;
    std::vector<int16_t> out(80);
    ConvQuantized<int16_t, int8_t, int64_t>(p, q, x.data(), f.data(), bias.data(), out.data());
    for (int64_t oy = 0; oy < 5; ++oy) {
      for (int64_t ox = 0; ox < 4; ++ox) {
        for (int64_t oc = 0; oc < 4; ++oc) {
          int64_t acc = bias[static_cast<size_t>(oc)];
          for (int64_t fy = 0; fy < 3; ++fy) {
            for (int64_t fx = 0; fx < 3; ++fx) {
              const int64_t iy = oy - 1 + fy, ix = ox - 1 + fx;
              if (iy < 0 || iy >= 5 || ix < 0 || ix >= 4) continue;
              for (int64_t ic = 0; ic < 3; ++ic) {
                acc += int64_t{x[static_cast<size_t>((iy * 4 + ix) * 3 + ic)]} *
                       f[static_cast<size_t>(((oc * 3 + fy) * 3 + fx) * 3 + ic)];
              }
            }
          }
          const int64_t want =
              std::min<int64_t>(std::max<int64_t>(int64_multiply(acc, q.multipliers[static_cast<size_t>(oc)]),
                                                  q.activation_min),
                                q.activation_max);
          ASSERT_EQ(out[static_cast<size_t>((oy * 4 + ox) * 4 + oc)], want) << variant;
        }
      }
    }
    // FULLY_CONNECTED over the same values with per-tensor weights: narrow, then the FC's ties-away rounding.
    FullyConnectedParams fc;
    fc.batch = 4;
    fc.input_size = 15;
    fc.num_units = 4;
    WeightedQuantParams qf = q;
    qf.multipliers.assign(4, q.multipliers[0]);
    qf.wide_multiply = false;
    qf.rounding = Rounding::kSingleAway;
    std::vector<int16_t> fc_out(16);
    FullyConnectedQuantized<int16_t, int8_t, int64_t>(fc, qf, x.data(), f.data(), bias.data(), fc_out.data());
    for (int64_t b = 0; b < 4; ++b) {
      for (int64_t u = 0; u < 4; ++u) {
        int64_t acc = bias[static_cast<size_t>(u)];
        for (int64_t i = 0; i < 15; ++i)
          acc += int64_t{x[static_cast<size_t>(b * 15 + i)]} * f[static_cast<size_t>(u * 15 + i)];
        const long double exact = std::ldexp(static_cast<long double>(acc) * qf.multipliers[0].multiplier,
                                             qf.multipliers[0].shift - 31);
        const int64_t rounded =
            static_cast<int64_t>(exact >= 0 ? std::floor(exact + 0.5L) : -std::floor(-exact + 0.5L));
        ASSERT_EQ(fc_out[static_cast<size_t>(b * 4 + u)],
                  std::min<int64_t>(std::max<int64_t>(rounded, qf.activation_min), qf.activation_max))
            << variant;
      }
    }
  }
}

}  // namespace
}  // namespace kiln::ops::reference
