// The int8 elementwise kernels (ops/reference/quantized_elementwise.h) against plain implementations of
// LiteRT's integer formulas written here: rounding from its definition in long double
// (quantized_test_helpers.h), broadcasting by unravelling each output index, HARD_SWISH's 16-bit arithmetic
// spelled out again. Many shapes, scales (1e-5 to 4) and zero points (at -128 and 127); the unary ops over
// all 256 input values.
#include "ops/reference/quantized_elementwise.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ops/reference/quantized_kernels.h"
#include "tests/ops/quantized_test_helpers.h"

namespace kiln::ops::reference {
namespace {

using testing::AllInt8;
using testing::ApplyDouble;
using testing::Clamp;
using testing::RandomInt8;

const float kScales[] = {0.5f, 0.0039215f, 1e-5f, 0.1f, 2.0f, 0.0078125f};
const int32_t kZeroPoints[] = {-128, 127, 0, 3, -77};

// The flat index into an operand of shape `in` of the output element `flat` of shape `out` (numpy
// broadcasting: trailing dimensions aligned, size-1 dimensions repeated).
int64_t BroadcastSource(int64_t flat, const Dims& out, const Dims& in) {
  int64_t source = 0, stride = 1;
  for (size_t k = 0; k < out.size(); ++k) {
    const size_t d = out.size() - 1 - k;
    const int64_t coordinate = flat % out[d];
    flat /= out[d];
    if (k < in.size()) {
      const int64_t size = in[in.size() - 1 - k];
      source += (size == 1 ? 0 : coordinate) * stride;
      stride *= size;
    }
  }
  return source;
}

struct ShapePair {
  Dims a, b;
};
const ShapePair kShapes[] = {{{2, 3, 4}, {2, 3, 4}},       {{2, 3, 4}, {3, 1}}, {{5}, {1}},  {{1}, {7}},
                             {{2, 1, 3, 1}, {1, 4, 1, 5}}, {{3, 0, 2}, {2}},    {{}, {2, 2}}};

// The fused activation's clamp, from LiteRT's definition: bounds quantized with roundf in float.
void ExpectedRange(Activation activation, float scale, int32_t zero_point, int64_t* lo, int64_t* hi) {
  const auto q = [&](float v) { return zero_point + static_cast<int64_t>(std::round(v / scale)); };
  *lo = -128;
  *hi = 127;
  if (activation == Activation::kRelu || activation == Activation::kRelu6)
    *lo = std::max<int64_t>(*lo, q(0.0f));
  if (activation == Activation::kRelu6) *hi = std::min<int64_t>(*hi, q(6.0f));
  if (activation == Activation::kReluN1To1) {
    *lo = std::max<int64_t>(*lo, q(-1.0f));
    *hi = std::min<int64_t>(*hi, q(1.0f));
  }
}

TEST(QuantizedElementwiseTest, SubMatchesPlainFormulaWithBroadcast) {
  std::mt19937 rng(11);
  int variant = 0;
  for (float sa : kScales) {
    for (float sb : kScales) {
      for (const ShapePair& shapes : kShapes) {
        const float so = kScales[variant % 6];
        AddInt8Params p;
        p.a_zero_point = kZeroPoints[variant % 5];
        p.b_zero_point = kZeroPoints[(variant + 1) % 5];
        p.output_zero_point = kZeroPoints[(variant + 3) % 5];
        const Activation activation = variant % 4 == 1 ? Activation::kRelu6 : Activation::kNone;
        ASSERT_TRUE(QuantizedActivationRange(static_cast<int>(activation), so, p.output_zero_point,
                                             &p.activation_min, &p.activation_max));
        ++variant;
        PrepareAddInt8(sa, sb, so, &p);
        BinaryParams shape;
        ASSERT_TRUE(MakeBinaryParams(BinaryOp::kSub, Activation::kNone, shapes.a, shapes.b, &shape));
        const std::vector<int8_t> a = RandomInt8(static_cast<size_t>(NumElements(shapes.a)), rng);
        const std::vector<int8_t> b = RandomInt8(static_cast<size_t>(NumElements(shapes.b)), rng);
        const int64_t count = NumElements(shape.output_dims);
        std::vector<int8_t> out(static_cast<size_t>(count));
        SubInt8(shape, p, a.data(), b.data(), out.data());
        int64_t lo, hi;
        ExpectedRange(activation, so, p.output_zero_point, &lo, &hi);
        for (int64_t i = 0; i < count; ++i) {
          const int64_t x = a[BroadcastSource(i, shape.output_dims, shapes.a)] - int64_t{p.a_zero_point};
          const int64_t y = b[BroadcastSource(i, shape.output_dims, shapes.b)] - int64_t{p.b_zero_point};
          // Each operand scaled and rounded on its own, then subtracted (not ADD of a negated operand).
          const int64_t difference =
              ApplyDouble(x * 1048576, p.a_multiplier) - ApplyDouble(y * 1048576, p.b_multiplier);
          ASSERT_EQ(out[i], Clamp(ApplyDouble(difference, p.output_multiplier) + p.output_zero_point, lo, hi))
              << sa << " " << sb << " " << so << " at " << i;
        }
      }
    }
  }
}

TEST(QuantizedElementwiseTest, MulMatchesPlainFormulaWithBroadcast) {
  std::mt19937 rng(12);
  int variant = 0;
  for (float sa : kScales) {
    for (float sb : kScales) {
      for (float so : {0.1f, 0.0078125f, 3.0f, 1e-4f}) {
        const ShapePair& shapes = kShapes[variant % 7];
        MulInt8Params p;
        p.a_zero_point = kZeroPoints[variant % 5];
        p.b_zero_point = kZeroPoints[(variant + 2) % 5];
        p.output_zero_point = kZeroPoints[(variant + 4) % 5];
        const Activation activation = variant % 3 == 1 ? Activation::kRelu : Activation::kNone;
        ASSERT_TRUE(QuantizedActivationRange(static_cast<int>(activation), so, p.output_zero_point,
                                             &p.activation_min, &p.activation_max));
        ++variant;
        PrepareMulInt8(sa, sb, so, &p);
        // LiteRT's multiplier: the scales multiplied and divided in float.
        const float real = sa * sb / so;
        EXPECT_EQ(p.multiplier.multiplier, QuantizeMultiplier(static_cast<double>(real)).multiplier);
        BinaryParams shape;
        ASSERT_TRUE(MakeBinaryParams(BinaryOp::kMul, Activation::kNone, shapes.a, shapes.b, &shape));
        const std::vector<int8_t> a = RandomInt8(static_cast<size_t>(NumElements(shapes.a)), rng);
        const std::vector<int8_t> b = RandomInt8(static_cast<size_t>(NumElements(shapes.b)), rng);
        const int64_t count = NumElements(shape.output_dims);
        std::vector<int8_t> out(static_cast<size_t>(count));
        MulInt8(shape, p, a.data(), b.data(), out.data());
        int64_t lo, hi;
        ExpectedRange(activation, so, p.output_zero_point, &lo, &hi);
        for (int64_t i = 0; i < count; ++i) {
          const int64_t x = a[BroadcastSource(i, shape.output_dims, shapes.a)] - int64_t{p.a_zero_point};
          const int64_t y = b[BroadcastSource(i, shape.output_dims, shapes.b)] - int64_t{p.b_zero_point};
          const int64_t expected = Clamp(ApplyDouble(x * y, p.multiplier) + p.output_zero_point, lo, hi);
          ASSERT_EQ(out[i], expected) << sa << " " << sb << " " << so << " at " << i;
          // And it is the product, to within one step, where it is in range.
          const double product =
              static_cast<double>(x) * sa * static_cast<double>(y) * sb / so + p.output_zero_point;
          if (product > lo && product < hi && real < 1e6f) {
            EXPECT_NEAR(out[i], product, 1.0 + 1e-6 * std::fabs(product));
          }
        }
      }
    }
  }
}

TEST(QuantizedElementwiseTest, MaximumMinimumComparesStoredValues) {
  std::mt19937 rng(13);
  for (const ShapePair& shapes : kShapes) {
    for (BinaryOp op : {BinaryOp::kMaximum, BinaryOp::kMinimum}) {
      BinaryParams shape;
      ASSERT_TRUE(MakeBinaryParams(op, Activation::kNone, shapes.a, shapes.b, &shape));
      const std::vector<int8_t> a = RandomInt8(static_cast<size_t>(NumElements(shapes.a)), rng);
      const std::vector<int8_t> b = RandomInt8(static_cast<size_t>(NumElements(shapes.b)), rng);
      std::vector<int8_t> out(static_cast<size_t>(NumElements(shape.output_dims)));
      MaximumMinimumInt8(shape, a.data(), b.data(), out.data());
      for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i) {
        const int8_t x = a[BroadcastSource(i, shape.output_dims, shapes.a)];
        const int8_t y = b[BroadcastSource(i, shape.output_dims, shapes.b)];
        ASSERT_EQ(out[i], op == BinaryOp::kMaximum ? (x > y ? x : y) : (x < y ? x : y));
      }
    }
  }
}

TEST(QuantizedElementwiseTest, PreluMatchesPlainFormula) {
  std::mt19937 rng(14);
  int variant = 0;
  for (float si : kScales) {
    for (float sa : {0.01f, 0.5f, 1e-4f}) {
      for (const ShapePair& shapes :
           {ShapePair{{2, 3, 4}, {4}}, ShapePair{{2, 3, 4}, {3, 1}}, ShapePair{{6}, {6}}}) {
        const float so = kScales[(variant + 2) % 6];
        PreluInt8Params p;
        p.input_zero_point = kZeroPoints[variant % 5];
        p.alpha_zero_point = kZeroPoints[(variant + 1) % 5];
        p.output_zero_point = kZeroPoints[(variant + 2) % 5];
        ++variant;
        PreparePreluInt8(si, sa, so, &p);
        const QuantizedMultiplier positive = QuantizeMultiplier(static_cast<double>(si / so));
        const QuantizedMultiplier negative = QuantizeMultiplier(static_cast<double>(si * sa / so));
        BinaryParams shape;
        ASSERT_TRUE(MakeBinaryParams(BinaryOp::kPrelu, Activation::kNone, shapes.a, shapes.b, &shape));
        const std::vector<int8_t> x = RandomInt8(static_cast<size_t>(NumElements(shapes.a)), rng);
        const std::vector<int8_t> alpha = RandomInt8(static_cast<size_t>(NumElements(shapes.b)), rng);
        std::vector<int8_t> out(x.size());
        PreluInt8(shape, p, x.data(), alpha.data(), out.data());
        for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i) {
          const int64_t v = x[static_cast<size_t>(i)] - int64_t{p.input_zero_point};
          const int64_t slope =
              alpha[BroadcastSource(i, shape.output_dims, shapes.b)] - int64_t{p.alpha_zero_point};
          const int64_t scaled = v >= 0 ? ApplyDouble(v, positive) : ApplyDouble(v * slope, negative);
          ASSERT_EQ(out[static_cast<size_t>(i)], Clamp(scaled + p.output_zero_point))
              << si << " " << sa << " at " << i;
        }
      }
    }
  }
}

TEST(QuantizedElementwiseTest, ReluFamilyOverEveryInput) {
  const std::vector<int8_t> x = AllInt8();
  for (float si : kScales) {
    for (float so : kScales) {
      for (int32_t zi : kZeroPoints) {
        for (int32_t zo : kZeroPoints) {
          for (Activation activation : {Activation::kRelu, Activation::kRelu6, Activation::kReluN1To1}) {
            RequantizeClampInt8Params p;
            PrepareReluInt8(static_cast<int>(activation), si, so, zi, zo, &p);
            std::vector<int8_t> out(256);
            RequantizeClampInt8(p, 256, x.data(), out.data());
            const QuantizedMultiplier m = QuantizeMultiplier(static_cast<double>(si / so));
            int64_t lo, hi;
            ExpectedRange(activation, so, zo, &lo, &hi);
            for (size_t i = 0; i < 256; ++i) {
              ASSERT_EQ(out[i], Clamp(zo + ApplyDouble(x[i] - int64_t{zi}, m), lo, hi))
                  << si << " " << so << " " << zi << " " << zo << " at " << static_cast<int>(x[i]);
            }
          }
        }
      }
    }
  }
}

TEST(QuantizedElementwiseTest, LeakyReluOverEveryInput) {
  const std::vector<int8_t> x = AllInt8();
  for (float si : kScales) {
    for (float so : {0.1f, 0.0078125f, 2.0f}) {
      for (float alpha : {0.2f, 0.0f, -0.5f, 1.7f, 1e-3f}) {
        for (int32_t zi : {-128, 127, 5}) {
          LeakyReluInt8Params p;
          p.input_zero_point = zi;
          p.output_zero_point = -zi / 2;
          PrepareLeakyReluInt8(si, alpha, so, &p);
          std::vector<int8_t> out(256);
          LeakyReluInt8(p, 256, x.data(), out.data());
          const QuantizedMultiplier identity = QuantizeMultiplier(static_cast<double>(si / so));
          const float alpha_real = si * alpha / so;
          const QuantizedMultiplier slope = QuantizeMultiplier(std::fabs(static_cast<double>(alpha_real)));
          for (size_t i = 0; i < 256; ++i) {
            const int64_t v = x[i] - int64_t{zi};
            // The sign of alpha applies after the rounding.
            const int64_t scaled =
                v >= 0 ? ApplyDouble(v, identity) : (alpha_real < 0 ? -1 : 1) * ApplyDouble(v, slope);
            ASSERT_EQ(out[i], Clamp(scaled + p.output_zero_point))
                << si << " " << so << " " << alpha << " " << zi;
          }
        }
      }
    }
  }
  // int16 (symmetric, as LiteRT's int16 kernel requires) over every input: the same arithmetic, clamped to
  // int16.
  std::vector<int16_t> x16(65536);
  for (size_t i = 0; i < x16.size(); ++i) x16[i] = static_cast<int16_t>(static_cast<int32_t>(i) - 32768);
  for (float si : {1e-3f, 3e-5f, 0.5f}) {
    for (float so : {1e-3f, 4e-4f, 2e-2f}) {
      for (float alpha : {0.2f, -0.5f, 1.7f}) {
        LeakyReluInt8Params p;
        PrepareLeakyReluInt8(si, alpha, so, &p);
        std::vector<int16_t> out(x16.size());
        LeakyReluQuantized<int16_t>(p, static_cast<int64_t>(x16.size()), x16.data(), out.data());
        const QuantizedMultiplier identity = QuantizeMultiplier(static_cast<double>(si / so));
        const float alpha_real = si * alpha / so;
        const QuantizedMultiplier slope = QuantizeMultiplier(std::fabs(static_cast<double>(alpha_real)));
        for (size_t i = 0; i < x16.size(); ++i) {
          const int64_t v = x16[i];
          const int64_t scaled = v >= 0 ? ApplyDouble(v, identity) : (alpha_real < 0 ? -1 : 1) * ApplyDouble(v, slope);
          ASSERT_EQ(out[i], std::min<int64_t>(std::max<int64_t>(scaled, -32768), 32767))
              << si << " " << so << " " << alpha << " " << v;
        }
      }
    }
  }
}

float Logistic(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float Tanh(float x) { return std::tanh(x); }
float Elu(float x) { return x < 0.0f ? std::expm1(x) : x; }
float Exp(float x) { return std::exp(x); }

TEST(QuantizedElementwiseTest, LookupTablesOverEveryInput) {
  struct Case {
    LookupFunction function;
    float (*f)(float);
  };
  const std::vector<int8_t> x = AllInt8();
  for (const Case& c : {Case{LookupFunction::kLogistic, &Logistic}, Case{LookupFunction::kTanh, &Tanh},
                        Case{LookupFunction::kElu, &Elu}, Case{LookupFunction::kExp, &Exp}}) {
    for (float si : kScales) {
      for (int32_t zi : kZeroPoints) {
        for (float so : {1.0f / 256, 1.0f / 128, 0.05f, 1e-5f}) {
          for (int32_t zo : {-128, 0, 60}) {
            LookupTableInt8 table;
            PrepareLookupTableInt8(c.function, si, zi, so, zo, &table);
            std::vector<int8_t> out(256);
            LookupInt8(table, 256, x.data(), out.data());
            for (size_t i = 0; i < 256; ++i) {
              // LiteRT's table entry: f of the dequantized value, times 1 / scale, rounded, in float.
              const float y = c.f(si * static_cast<float>(x[i] - zi));
              const float rounded = std::round(y * (1.0f / so)) + static_cast<float>(zo);
              const int64_t expected = rounded > 1e6f    ? 127
                                       : rounded < -1e6f ? -128
                                                         : static_cast<int64_t>(rounded);
              ASSERT_EQ(out[i], Clamp(expected)) << si << " " << zi << " " << so << " " << zo;
              // And it is the function, to within one step, where in range.
              const double real = static_cast<double>(y) / so + zo;
              if (real > -128 && real < 127) {
                EXPECT_NEAR(out[i], real, 0.5 + 1e-3);
              }
            }
          }
        }
      }
    }
  }
}

// HARD_SWISH's fixed-point arithmetic written out again with plain int32/int64 operations.
int8_t PlainHardSwish(int8_t in, float si, int32_t zi, float so, int32_t zo) {
  const auto to_q15 = [](float real, int* exponent) {
    const QuantizedMultiplier m = QuantizeMultiplier(static_cast<double>(real));
    *exponent = m.shift;
    if (m.multiplier >= 2147483647 - 32768) return int32_t{32767};
    return static_cast<int32_t>((int64_t{m.multiplier} + 32768) / 65536);
  };
  const auto sat16 = [](int64_t v) { return std::min<int64_t>(std::max<int64_t>(v, -32768), 32767); };
  // Rounding doubling high multiply: nearest of a * b / 2^15, ties of positive products up, negative toward
  // 0.
  const auto rdhm = [&](int64_t a, int64_t b) -> int64_t {
    if (a == -32768 && b == -32768) return 32767;
    const int64_t p = a * b;
    return p >= 0 ? (p + 16384) / 32768 : -((-p + 16383) / 32768);
  };
  // Division by 2^e rounded half away from zero (e < 16 here).
  const auto rdiv = [](int64_t v, int e) -> int64_t {
    if (e == 0) return v;
    const int64_t d = int64_t{1} << e;
    return v >= 0 ? (v + d / 2) / d : -((-v + d / 2) / d);
  };
  int output_exponent = 0, reluish_exponent = 0;
  const float hires_scale = si / 128.0f;
  const int64_t output_q15 = to_q15(hires_scale / so, &output_exponent);
  const int64_t reluish_q15 = to_q15(hires_scale / (3.0f / 32768.0f), &reluish_exponent);
  const int64_t hires = (in - int64_t{zi}) * 128;
  const int64_t on_output_scale = rdhm(hires, output_q15);
  int64_t reluish = hires;
  if (reluish_exponent > 0) reluish = sat16(reluish * (int64_t{1} << (reluish_exponent - 1)));
  reluish = rdhm(reluish, reluish_q15);
  if (reluish_exponent > 0) reluish = sat16(reluish * 2);
  if (reluish_exponent < 0) reluish = rdiv(reluish, -reluish_exponent);
  reluish = (reluish + 32768) / 2;
  const int64_t product = (reluish * on_output_scale) / 32768;  // truncating
  return Clamp(rdiv(product, -output_exponent) + zo);
}

TEST(QuantizedElementwiseTest, HardSwishOverEveryInput) {
  const std::vector<int8_t> x = AllInt8();
  int tested = 0;
  for (float si : {0.05f, 0.1f, 0.02f, 1e-3f, 0.2f, 0.5f, 0.0078125f, 4.0f}) {
    for (float so : {0.03f, 0.1f, 0.5f, 1e-3f, 0.01f, 0.004f, 0.25f}) {
      for (int32_t zi : kZeroPoints) {
        for (int32_t zo : {-128, 0, -100, 5}) {
          HardSwishInt8Params p;
          p.input_zero_point = zi;
          p.output_zero_point = zo;
          if (!PrepareHardSwishInt8(si, so, &p)) {
            EXPECT_GE(si / 128.0f / so, 0.999f) << si << " " << so;  // refused only where LiteRT refuses
            continue;
          }
          ++tested;
          std::vector<int8_t> out(256);
          HardSwishInt8(p, 256, x.data(), out.data());
          for (size_t i = 0; i < 256; ++i) {
            ASSERT_EQ(out[i], PlainHardSwish(x[i], si, zi, so, zo))
                << si << " " << so << " " << zi << " " << zo << " at " << static_cast<int>(x[i]);
            // Close to x * relu6(x + 3) / 6 (LiteRT's fixed point is within a few steps).
            const double real = si * (x[i] - zi);
            const double expected = real * std::min(6.0, std::max(0.0, real + 3)) / 6 / so + zo;
            if (expected > -128 && expected < 127 && so >= 1e-2f) {
              EXPECT_NEAR(out[i], expected, 3.0);
            }
          }
        }
      }
    }
  }
  EXPECT_GT(tested, 100);
}

// LEAKY_RELU, PRELU and HARD_SWISH on uint8 depend only on x - zero point: over every uint8 input they equal the
// int8 kernels (held to the formulas above) on the values and zero points moved down by 128, moved back up.
TEST(QuantizedElementwiseTest, Uint8ActivationsAreTheInt8KernelsShifted) {
  std::vector<uint8_t> x(256);
  std::vector<int8_t> x8(256);
  for (int v = 0; v < 256; ++v) {
    x[static_cast<size_t>(v)] = static_cast<uint8_t>(v);
    x8[static_cast<size_t>(v)] = static_cast<int8_t>(v - 128);
  }
  const auto expect_shifted = [](const std::vector<uint8_t>& out, const std::vector<int8_t>& out8,
                                 const std::string& what) {
    for (size_t i = 0; i < out.size(); ++i) {
      ASSERT_EQ(static_cast<int>(out[i]), out8[i] + 128) << what << " at " << i;
    }
  };
  int hard_swishes = 0;
  for (float si : {0.05f, 0.1f, 1e-3f, 0.5f, 2.0f}) {
    for (float so : {0.03f, 0.1f, 0.5f, 0.01f}) {
      for (int32_t zi : {0, 255, 128, 3}) {
        for (int32_t zo : {0, 255, 128, 200}) {
          const std::string what =
              std::to_string(si) + " " + std::to_string(so) + " " + std::to_string(zi) + " " + std::to_string(zo);
          for (float alpha : {0.2f, -0.5f, 1.7f}) {
            LeakyReluInt8Params p, p8;
            p.input_zero_point = zi;
            p.output_zero_point = zo;
            p8.input_zero_point = zi - 128;
            p8.output_zero_point = zo - 128;
            PrepareLeakyReluInt8(si, alpha, so, &p);
            PrepareLeakyReluInt8(si, alpha, so, &p8);
            std::vector<uint8_t> out(256);
            std::vector<int8_t> out8(256);
            LeakyReluQuantized<uint8_t>(p, 256, x.data(), out.data());
            LeakyReluInt8(p8, 256, x8.data(), out8.data());
            expect_shifted(out, out8, "LEAKY_RELU " + what);
          }
          {
            PreluInt8Params p, p8;
            p.input_zero_point = zi;
            p.alpha_zero_point = 255 - zo;
            p.output_zero_point = zo;
            p8.input_zero_point = zi - 128;
            p8.alpha_zero_point = 127 - zo;
            p8.output_zero_point = zo - 128;
            PreparePreluInt8(si, 0.01f, so, &p);
            PreparePreluInt8(si, 0.01f, so, &p8);
            BinaryParams shape;
            ASSERT_TRUE(MakeBinaryParams(BinaryOp::kPrelu, Activation::kNone, {64, 4}, {4}, &shape));
            const std::vector<uint8_t> alpha = {0, 90, 200, 255};
            std::vector<int8_t> alpha8(4);
            for (size_t i = 0; i < 4; ++i) alpha8[i] = static_cast<int8_t>(alpha[i] - 128);
            std::vector<uint8_t> out(256);
            std::vector<int8_t> out8(256);
            PreluQuantized<uint8_t>(shape, p, x.data(), alpha.data(), out.data());
            PreluInt8(shape, p8, x8.data(), alpha8.data(), out8.data());
            expect_shifted(out, out8, "PRELU " + what);
          }
          HardSwishInt8Params p, p8;
          p.input_zero_point = zi;
          p.output_zero_point = zo;
          p8.input_zero_point = zi - 128;
          p8.output_zero_point = zo - 128;
          if (!PrepareHardSwishInt8(si, so, &p)) continue;
          ASSERT_TRUE(PrepareHardSwishInt8(si, so, &p8));
          ++hard_swishes;
          std::vector<uint8_t> out(256);
          std::vector<int8_t> out8(256);
          HardSwishQuantized<uint8_t>(p, 256, x.data(), out.data());
          HardSwishInt8(p8, 256, x8.data(), out8.data());
          expect_shifted(out, out8, "HARD_SWISH " + what);
        }
      }
    }
  }
  EXPECT_GT(hard_swishes, 100);
}

// uint8 storage (legacy per-tensor models): the same formulas with zero points in [0, 255] and the clamp at
// [0, 255] (or the activation's bounds there), for ADD, SUB, MUL, MAXIMUM/MINIMUM, the RELUs, the tables, the
// requantize between int8 and uint8 and the pools.
TEST(QuantizedElementwiseTest, Uint8KernelsMatchPlainFormulas) {
  std::mt19937 rng(41);
  const int32_t zero_points[] = {0, 255, 128, 3, 200};
  const auto random_u8 = [&rng](size_t n) {
    std::vector<uint8_t> v(n);
    for (uint8_t& x : v) x = static_cast<uint8_t>(rng() % 256);
    return v;
  };
  const auto clamp_u8 = [](int64_t v, int64_t lo = 0, int64_t hi = 255) { return std::min(std::max(v, lo), hi); };
  BinaryParams shape;
  ASSERT_TRUE(MakeBinaryParams(BinaryOp::kAdd, Activation::kNone, {2, 3, 4}, {3, 1}, &shape));
  int variant = 0;
  for (float sa : kScales) {
    for (float so : {0.02f, 1e-3f, 3.0f}) {
      const int32_t za = zero_points[variant % 5], zb = zero_points[(variant + 1) % 5], zo = zero_points[(variant + 3) % 5];
      ++variant;
      const Activation activation = variant % 3 == 0 ? Activation::kRelu6 : Activation::kNone;
      const std::vector<uint8_t> a = random_u8(24), b = random_u8(3);
      AddInt8Params add;
      add.a_zero_point = za;
      add.b_zero_point = zb;
      add.output_zero_point = zo;
      ASSERT_TRUE(QuantizedActivationRange(static_cast<int>(activation), so, zo, &add.activation_min,
                                           &add.activation_max, 0, 255));
      PrepareAddInt8(sa, 0.05f, so, &add);
      MulInt8Params mul;
      mul.a_zero_point = za;
      mul.b_zero_point = zb;
      mul.output_zero_point = zo;
      mul.activation_min = add.activation_min;
      mul.activation_max = add.activation_max;
      PrepareMulInt8(sa, 0.05f, so, &mul);
      std::vector<uint8_t> sum(24), difference(24), product(24), maximum(24);
      AddQuantized<uint8_t>(shape, add, a.data(), b.data(), sum.data());
      SubQuantized<uint8_t>(shape, add, a.data(), b.data(), difference.data());
      MulQuantized<uint8_t>(shape, mul, a.data(), b.data(), product.data());
      BinaryParams max_shape = shape;
      max_shape.op = BinaryOp::kMaximum;
      MaximumMinimumQuantized<uint8_t>(max_shape, a.data(), b.data(), maximum.data());
      for (int64_t i = 0; i < 24; ++i) {
        const int64_t bi = BroadcastSource(i, {2, 3, 4}, {3, 1});
        const int64_t xa = ApplyDouble((a[static_cast<size_t>(i)] - int64_t{za}) * (int64_t{1} << 20), add.a_multiplier);
        const int64_t xb = ApplyDouble((b[static_cast<size_t>(bi)] - int64_t{zb}) * (int64_t{1} << 20), add.b_multiplier);
        ASSERT_EQ(sum[static_cast<size_t>(i)],
                  clamp_u8(ApplyDouble(xa + xb, add.output_multiplier) + zo, add.activation_min, add.activation_max));
        ASSERT_EQ(difference[static_cast<size_t>(i)],
                  clamp_u8(ApplyDouble(xa - xb, add.output_multiplier) + zo, add.activation_min, add.activation_max));
        ASSERT_EQ(product[static_cast<size_t>(i)],
                  clamp_u8(ApplyDouble((a[static_cast<size_t>(i)] - int64_t{za}) * (b[static_cast<size_t>(bi)] - int64_t{zb}),
                                       mul.multiplier) + zo,
                           mul.activation_min, mul.activation_max));
        ASSERT_EQ(maximum[static_cast<size_t>(i)], std::max(a[static_cast<size_t>(i)], b[static_cast<size_t>(bi)]));
      }
      // RELU6 into uint8, the table of LOGISTIC, and requantize to int8 and back, over all 256 inputs.
      std::vector<uint8_t> all(256);
      for (int v = 0; v < 256; ++v) all[static_cast<size_t>(v)] = static_cast<uint8_t>(v);
      RequantizeClampInt8Params relu;
      PrepareReluInt8(static_cast<int>(Activation::kRelu6), sa, so, za, zo, &relu, 0, 255);
      LookupTable<uint8_t> table;
      PrepareLookupTable(LookupFunction::kLogistic, sa, za, 1.0f / 256, 0, &table);
      const QuantizedMultiplier to_int8 = QuantizeMultiplier(static_cast<double>(sa) / static_cast<double>(so));
      std::vector<uint8_t> relu_out(256), logistic_out(256);
      std::vector<int8_t> requantized(256);
      RequantizeClampQuantized<uint8_t>(relu, 256, all.data(), relu_out.data());
      Lookup<uint8_t>(table, 256, all.data(), logistic_out.data());
      Requantize<uint8_t, int8_t>(256, za, to_int8, -7, all.data(), requantized.data());
      for (int v = 0; v < 256; ++v) {
        const size_t k = static_cast<size_t>(v);
        ASSERT_EQ(relu_out[k], clamp_u8(ApplyDouble(v - za, relu.multiplier) + zo, relu.activation_min, relu.activation_max));
        const float y = 1.0f / (1.0f + std::exp(-(sa * static_cast<float>(v - za))));
        ASSERT_EQ(logistic_out[k], clamp_u8(static_cast<int64_t>(std::round(y * 256.0f))));
        ASSERT_EQ(requantized[k], Clamp(ApplyDouble(v - za, to_int8) - 7));
      }
      EXPECT_GE(relu.activation_min, 0);
      EXPECT_LE(relu.activation_max, 255);
    }
  }
  // Pools over uint8: the max, and the rounded mean of the window's cells.
  PoolParams pool;
  pool.batch = 1;
  pool.input_height = 5;
  pool.input_width = 5;
  pool.channels = 2;
  pool.output_height = 2;
  pool.output_width = 2;
  pool.filter_height = 3;
  pool.filter_width = 3;
  pool.stride_height = 2;
  pool.stride_width = 2;
  const std::vector<uint8_t> x = random_u8(50);
  std::vector<uint8_t> mx(8), avg(8);
  MaxPoolQuantized<uint8_t>(pool, 0, 255, x.data(), mx.data());
  AveragePoolQuantized<uint8_t>(pool, 0, 255, x.data(), avg.data());
  for (int64_t oy = 0; oy < 2; ++oy) {
    for (int64_t ox = 0; ox < 2; ++ox) {
      for (int64_t c = 0; c < 2; ++c) {
        int64_t m = 0, total = 0;
        for (int64_t fy = 0; fy < 3; ++fy) {
          for (int64_t fx = 0; fx < 3; ++fx) {
            const int64_t v = x[static_cast<size_t>(((oy * 2 + fy) * 5 + ox * 2 + fx) * 2 + c)];
            m = std::max(m, v);
            total += v;
          }
        }
        EXPECT_EQ(mx[static_cast<size_t>((oy * 2 + ox) * 2 + c)], m);
        EXPECT_EQ(avg[static_cast<size_t>((oy * 2 + ox) * 2 + c)], (total + 4) / 9);
      }
    }
  }
}


// int16 (symmetric, zero points 0): ADD and SUB with LiteRT's int16 left shift of 15, MUL, the RELU clamp, all
// clamped to [-32768, 32767], against the formulas.
TEST(QuantizedElementwiseTest, Int16KernelsMatchPlainFormulas) {
  std::mt19937 rng(43);
  BinaryParams shape;
  ASSERT_TRUE(MakeBinaryParams(BinaryOp::kAdd, Activation::kNone, {4, 25}, {25}, &shape));
  const auto clamp16 = [](int64_t v, int64_t lo = -32768, int64_t hi = 32767) { return std::min(std::max(v, lo), hi); };
  for (const auto& scales : std::vector<std::array<float, 3>>{{1e-3f, 2e-3f, 3e-3f}, {3e-5f, 1e-4f, 2e-4f},
                                                             {0.01f, 5e-4f, 0.02f}, {1e-4f, 1e-4f, 1e-6f}}) {
    std::vector<int16_t> a(100), b(25);
    for (int16_t& v : a) v = static_cast<int16_t>(static_cast<int>(rng() % 65536) - 32768);
    for (int16_t& v : b) v = static_cast<int16_t>(static_cast<int>(rng() % 65536) - 32768);
    AddInt8Params add;
    add.left_shift = 15;
    add.activation_min = -32768;
    add.activation_max = 32767;
    PrepareAddInt8(scales[0], scales[1], scales[2], &add);
    MulInt8Params mul;
    mul.activation_min = -32768;
    mul.activation_max = 32767;
    PrepareMulInt8(scales[0], scales[1], scales[2], &mul);
    std::vector<int16_t> sum(100), difference(100), product(100);
    AddQuantized<int16_t>(shape, add, a.data(), b.data(), sum.data());
    SubQuantized<int16_t>(shape, add, a.data(), b.data(), difference.data());
    MulQuantized<int16_t>(shape, mul, a.data(), b.data(), product.data());
    for (size_t i = 0; i < 100; ++i) {
      const int64_t xa = ApplyDouble(a[i] * (int64_t{1} << 15), add.a_multiplier);
      const int64_t xb = ApplyDouble(b[i % 25] * (int64_t{1} << 15), add.b_multiplier);
      ASSERT_EQ(sum[i], clamp16(ApplyDouble(xa + xb, add.output_multiplier))) << i;
      ASSERT_EQ(difference[i], clamp16(ApplyDouble(xa - xb, add.output_multiplier))) << i;
      ASSERT_EQ(product[i], clamp16(ApplyDouble(int64_t{a[i]} * b[i % 25], mul.multiplier))) << i;
    }
    RequantizeClampInt8Params relu;
    PrepareReluInt8(static_cast<int>(Activation::kRelu6), scales[0], scales[2], 0, 0, &relu, -32768, 32767);
    std::vector<int16_t> relu_out(100);
    RequantizeClampQuantized<int16_t>(relu, 100, a.data(), relu_out.data());
    for (size_t i = 0; i < 100; ++i) {
      ASSERT_EQ(relu_out[i], clamp16(ApplyDouble(a[i], relu.multiplier), relu.activation_min, relu.activation_max));
    }
    EXPECT_EQ(relu.activation_min, 0);
  }
}

}  // namespace
}  // namespace kiln::ops::reference
