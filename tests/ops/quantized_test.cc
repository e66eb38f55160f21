// LiteRT's fixed-point helpers (ops/reference/quantized.h): hand-worked values, extreme scales, and agreement
// with the same math done in long double.

#include "ops/reference/quantized.h"

#include "ops/reference/common.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace kiln::ops::reference {
namespace {

constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax = std::numeric_limits<int32_t>::max();

TEST(QuantizedTest, QuantizeMultiplierHandWorked) {
  auto check = [](double m, int32_t q, int shift) {
    const QuantizedMultiplier r = QuantizeMultiplier(m);
    EXPECT_EQ(r.multiplier, q) << m;
    EXPECT_EQ(r.shift, shift) << m;
  };
  check(0.5, 1 << 30, 0);
  check(1.0, 1 << 30, 1);
  check(0.25, 1 << 30, -1);
  check(0.75, 3 << 29, 0);
  check(0.0, 0, 0);
  // f * 2^31 rounds up to 2^31: halved, shift one more.
  check(1.0 - std::ldexp(1.0, -33), 1 << 30, 1);
  // f * 2^31 = 2^30 + 0.5 rounds half away from zero.
  check(0.5 + std::ldexp(1.0, -32), (1 << 30) + 1, 0);
  // Extreme scales: below 2^-32 flushes to zero; 2^30 and above saturates at shift 30.
  check(std::ldexp(1.0, -33), 0, 0);
  check(std::ldexp(1.0, -32), 1 << 30, -31);
  check(std::ldexp(1.0, 29), 1 << 30, 30);
  check(std::ldexp(1.0, 30), kMax, 30);
  check(1e30, kMax, 30);
  check(std::nan(""), 0, 0);
}

TEST(QuantizedTest, QuantizeMultiplierWithinHalfUlpOfDouble) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(-31.0, 29.0);
  for (int i = 0; i < 20000; ++i) {
    const double m = std::exp2(exponent(rng));
    const QuantizedMultiplier r = QuantizeMultiplier(m);
    ASSERT_GE(r.multiplier, 1 << 30) << m;
    const double back = std::ldexp(static_cast<double>(r.multiplier), r.shift - 31);
    ASSERT_LE(std::fabs(back - m), std::ldexp(1.0, r.shift - 32) * (1 + 1e-12)) << m;
  }
}

TEST(QuantizedTest, SaturatingRoundingDoublingHighMul) {
  EXPECT_EQ(SaturatingRoundingDoublingHighMul(kMin, kMin), kMax);
  EXPECT_EQ(SaturatingRoundingDoublingHighMul(1 << 30, 1 << 30), 1 << 29);
  EXPECT_EQ(SaturatingRoundingDoublingHighMul(1, 1 << 30), 1);   // 0.5 rounds away from zero
  EXPECT_EQ(SaturatingRoundingDoublingHighMul(-1, 1 << 30), 0);  // -0.5: the nudge 1 - 2^30 keeps it at 0
  EXPECT_EQ(SaturatingRoundingDoublingHighMul(kMax, kMax), kMax - 1);
  EXPECT_EQ(SaturatingRoundingDoublingHighMul(kMin, kMax), -kMax);
  std::mt19937 rng(3);
  for (int i = 0; i < 20000; ++i) {
    const int32_t a = static_cast<int32_t>(rng()), b = static_cast<int32_t>(rng());
    if (a == kMin && b == kMin) continue;
    const long double exact = static_cast<long double>(a) * b / 2147483648.0L;
    ASSERT_LE(std::fabs(static_cast<long double>(SaturatingRoundingDoublingHighMul(a, b)) - exact), 0.5L)
        << a << " " << b;
  }
}

TEST(QuantizedTest, RoundingDivideByPOT) {
  EXPECT_EQ(RoundingDivideByPOT(5, 1), 3);    // 2.5 -> 3
  EXPECT_EQ(RoundingDivideByPOT(-5, 1), -3);  // -2.5 -> -3
  EXPECT_EQ(RoundingDivideByPOT(4, 1), 2);
  EXPECT_EQ(RoundingDivideByPOT(7, 2), 2);    // 1.75
  EXPECT_EQ(RoundingDivideByPOT(6, 2), 2);    // 1.5 -> 2
  EXPECT_EQ(RoundingDivideByPOT(-6, 2), -2);  // -1.5 -> -2
  EXPECT_EQ(RoundingDivideByPOT(-7, 2), -2);
  EXPECT_EQ(RoundingDivideByPOT(kMax, 31), 1);
  EXPECT_EQ(RoundingDivideByPOT(kMin, 31), -1);
  EXPECT_EQ(RoundingDivideByPOT(123, 0), 123);
  std::mt19937 rng(5);
  for (int i = 0; i < 20000; ++i) {
    const int32_t x = static_cast<int32_t>(rng());
    const int e = static_cast<int>(rng() % 32);
    const long double q = std::ldexp(static_cast<long double>(x), -e);
    const long double expected = q < 0 ? -std::floor(-q + 0.5L) : std::floor(q + 0.5L);  // half away from zero
    ASSERT_EQ(RoundingDivideByPOT(x, e), static_cast<int32_t>(expected)) << x << " " << e;
  }
}

TEST(QuantizedTest, MultiplyByQuantizedMultiplierSingleRoundingHandWorked) {
  const QuantizedMultiplier half = QuantizeMultiplier(0.5);
  EXPECT_EQ(MultiplyByQuantizedMultiplier(3, half), 2);    // 1.5 -> 2
  EXPECT_EQ(MultiplyByQuantizedMultiplier(-3, half), -1);  // -1.5 -> -1: half up, one rounding
  EXPECT_EQ(MultiplyByQuantizedMultiplier(-5, half), -2);  // -2.5 -> -2
  EXPECT_EQ(MultiplyByQuantizedMultiplier(1000, QuantizeMultiplier(3.0)), 3000);
  EXPECT_EQ(MultiplyByQuantizedMultiplier(kMax, QuantizedMultiplier{kMax, 0}), kMax - 1);
  EXPECT_EQ(MultiplyByQuantizedMultiplier(kMin, QuantizedMultiplier{1 << 30, -31}), 0);  // -2^31 * 2^-32 = -0.5
  EXPECT_EQ(MultiplyByQuantizedMultiplier(kMin + 1, QuantizedMultiplier{1 << 30, -31}), 0);
  EXPECT_EQ(MultiplyByQuantizedMultiplier(kMax, QuantizedMultiplier{1 << 30, -31}), 0);  // just under 0.5
  // Double rounding: the high multiply's nudge for negative products (1 - 2^30) takes a -2.5 tie toward zero;
  // the rounding shift then rounds ties away from zero.
  EXPECT_EQ(MultiplyByQuantizedMultiplierDoubleRounding(3, half.multiplier, half.shift), 2);
  EXPECT_EQ(MultiplyByQuantizedMultiplierDoubleRounding(-5, half.multiplier, half.shift), -2);
  EXPECT_EQ(MultiplyByQuantizedMultiplierDoubleRounding(-6, 1 << 30, -2), -1);   // -0.75
  EXPECT_EQ(MultiplyByQuantizedMultiplierDoubleRounding(-12, 1 << 30, -2), -2);  // -1.5: high mul -6, then -6/4
  EXPECT_EQ(MultiplyByQuantizedMultiplier(-6, QuantizedMultiplier{1 << 30, -1}), -1);  // single: -1.5 -> -1
}

TEST(QuantizedTest, MultiplyByQuantizedMultiplierAgainstLongDouble) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> exponent(-31.0, 8.0);
  for (int i = 0; i < 50000; ++i) {
    const QuantizedMultiplier m = QuantizeMultiplier(std::exp2(exponent(rng)));
    // Inputs that keep the product in int32, as the kernels' accumulators do.
    const int bits = m.shift > 0 ? 30 - m.shift : 31;
    const int32_t x = static_cast<int32_t>(static_cast<int64_t>(rng() % (uint64_t{1} << bits)) *
                                           ((rng() & 1) ? 1 : -1));
    // Single rounding: floor(x * q / 2^(31 - shift) + 1/2) exactly (the product fits a long double's 64 bits).
    const long double exact = static_cast<long double>(x) * m.multiplier;
    const long double expected = std::floor(std::ldexp(exact, m.shift - 31) + 0.5L);
    ASSERT_EQ(MultiplyByQuantizedMultiplier(x, m), static_cast<int32_t>(expected)) << x;
    // Double rounding: within one of the real product (two roundings of at most a half each).
    const int32_t twice = MultiplyByQuantizedMultiplierDoubleRounding(x, m.multiplier, m.shift);
    ASSERT_LE(std::fabs(static_cast<long double>(twice) - std::ldexp(exact, m.shift - 31)), 1.0L) << x;
  }
}

TEST(QuantizedTest, PerChannelMultipliers) {
  const std::vector<QuantizedMultiplier> one = PerChannelMultipliers(0.5f, {0.25f}, 0.125f, 3);
  ASSERT_EQ(one.size(), 3u);
  for (const QuantizedMultiplier& m : one) {
    EXPECT_EQ(m.multiplier, 1 << 30);
    EXPECT_EQ(m.shift, 1);  // 0.5 * 0.25 / 0.125 = 1
  }
  const std::vector<QuantizedMultiplier> each = PerChannelMultipliers(0.5f, {0.25f, 0.5f}, 0.125f, 2);
  EXPECT_EQ(each[1].shift, 2);
  // The product is formed in double from the float scales, as LiteRT does.
  const float in = 0.1f, f = 0.3f, out = 0.7f;
  const QuantizedMultiplier expected =
      QuantizeMultiplier(static_cast<double>(in) * static_cast<double>(f) / static_cast<double>(out));
  EXPECT_EQ(PerChannelMultipliers(in, {f}, out, 1)[0].multiplier, expected.multiplier);
}

TEST(QuantizedTest, QuantizedConvolutionMultiplierScaleProduct) {
  // The scales of quant_op_models.py's qu8_multiplier_* models: their float product is 2^-26 off the double one,
  // which moves the significand.
  const float in = 0.0219f, f = 0.00073f, out = 1.3f;
  const QuantizedMultiplier as_double =
      QuantizeMultiplier(static_cast<double>(in) * static_cast<double>(f) / static_cast<double>(out));
  const QuantizedMultiplier as_float = QuantizeMultiplier(static_cast<double>(in * f) / static_cast<double>(out));
  ASSERT_NE(as_double.multiplier, as_float.multiplier);
  const QuantizedMultiplier got_double = QuantizedConvolutionMultiplier(in, f, out, ScaleProduct::kDouble);
  const QuantizedMultiplier got_float = QuantizedConvolutionMultiplier(in, f, out, ScaleProduct::kFloat);
  EXPECT_EQ(got_double.multiplier, as_double.multiplier);
  EXPECT_EQ(got_double.shift, as_double.shift);
  EXPECT_EQ(got_float.multiplier, as_float.multiplier);
  EXPECT_EQ(got_float.shift, as_float.shift);
  EXPECT_EQ(PerChannelMultipliers(in, {f}, out, 2, ScaleProduct::kFloat)[1].multiplier, as_float.multiplier);
  EXPECT_EQ(QuantizedConvolutionMultiplier(in, f, out).multiplier, as_double.multiplier);  // the default
}

TEST(QuantizedTest, ActivationRange) {
  int32_t lo = 0, hi = 0;
  ASSERT_TRUE(QuantizedActivationRange(static_cast<int>(Activation::kNone), 0.1f, 5, &lo, &hi));
  EXPECT_EQ(lo, -128);
  EXPECT_EQ(hi, 127);
  ASSERT_TRUE(QuantizedActivationRange(static_cast<int>(Activation::kRelu), 0.1f, -128, &lo, &hi));
  EXPECT_EQ(lo, -128);
  EXPECT_EQ(hi, 127);
  ASSERT_TRUE(QuantizedActivationRange(static_cast<int>(Activation::kRelu6), 0.1f, -10, &lo, &hi));
  EXPECT_EQ(lo, -10);
  EXPECT_EQ(hi, 50);
  ASSERT_TRUE(QuantizedActivationRange(static_cast<int>(Activation::kRelu), 0.1f, 127, &lo, &hi));
  EXPECT_EQ(lo, 127);
  EXPECT_EQ(hi, 127);
  ASSERT_TRUE(QuantizedActivationRange(static_cast<int>(Activation::kReluN1To1), 0.25f, 0, &lo, &hi));
  EXPECT_EQ(lo, -4);
  EXPECT_EQ(hi, 4);
  EXPECT_FALSE(QuantizedActivationRange(static_cast<int>(Activation::kTanh), 0.1f, 0, &lo, &hi));
}


// gemmlowp's fixed-point functions against the real functions they approximate, over their whole input ranges,
// and worked values.
TEST(QuantizedTest, FixedPointPowersOfTwo) {
  using fixed_point::SaturatingRoundingMultiplyByPOT;
  EXPECT_EQ(SaturatingRoundingMultiplyByPOT(3, 2), 12);
  EXPECT_EQ(SaturatingRoundingMultiplyByPOT(-3, 2), -12);
  EXPECT_EQ(SaturatingRoundingMultiplyByPOT(1 << 29, 2), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(SaturatingRoundingMultiplyByPOT(-(1 << 29) - 1, 2), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(SaturatingRoundingMultiplyByPOT(5, -1), 3);    // 2.5 away from zero
  EXPECT_EQ(SaturatingRoundingMultiplyByPOT(-5, -1), -3);
  EXPECT_EQ(fixed_point::RoundingHalfSum(3, 4), 4);
  EXPECT_EQ(fixed_point::RoundingHalfSum(-3, -4), -4);
  EXPECT_EQ(fixed_point::RoundingHalfSum(std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::max()),
            std::numeric_limits<int32_t>::max());
}

TEST(QuantizedTest, FixedPointExpLogAndReciprocal) {
  const double q31 = 2147483648.0;
  // exp(0) is one; exp(-1) the product of three of the barrel shifter's factors, within 2.5e-7.
  EXPECT_EQ(fixed_point::ExpOnNegativeValues(0, 5), std::numeric_limits<int32_t>::max());
  EXPECT_NEAR(fixed_point::ExpOnNegativeValues(-(1 << 26), 5), std::exp(-1.0) * q31, 500);
  for (int bits : {0, 1, 5, 12}) {
    for (double x = 0; x >= -std::ldexp(1.0, bits) + 1e-9; x -= std::ldexp(1.0, bits) / 997) {
      const auto raw = static_cast<int32_t>(std::llround(std::ldexp(x, 31 - bits)));
      const double got = fixed_point::ExpOnNegativeValues(raw, bits) / q31;
      ASSERT_NEAR(got, std::exp(std::ldexp(raw, bits - 31)), 2e-8 * 64) << x << " bits " << bits;
    }
  }
  for (double x = 0; x < 1; x += 1.0 / 1013) {
    const auto raw = static_cast<int32_t>(x * q31);
    ASSERT_NEAR(fixed_point::OneOverOnePlusX(raw) / q31, 1.0 / (1.0 + raw / q31), 1e-8) << x;
  }
  // log x for x in [1, 2^12) with 12 integer bits, into 5 integer bits (LOG_SOFTMAX's use).
  for (double x = 1; x < 4096; x *= 1.0137) {
    const auto raw = static_cast<int32_t>(std::ldexp(x, 19));
    const double got = std::ldexp(fixed_point::LogXForXGreaterThanOrEqualTo1(raw, 12, 5), -26);
    ASSERT_NEAR(got, std::log(std::ldexp(raw, -19)), 1e-6) << x;
  }
}


// FULLY_CONNECTED's rounding: one rounding of the exact product, ties away from zero.
TEST(QuantizedTest, MultiplyByQuantizedMultiplierSingleAway) {
  const int32_t q = 1 << 30;  // 0.5 * 2^shift
  EXPECT_EQ(MultiplyByQuantizedMultiplierSingleAway(32, q, -5), 1);    // 0.5 -> 1
  EXPECT_EQ(MultiplyByQuantizedMultiplierSingleAway(-32, q, -5), -1);  // -0.5 -> -1 (half up gives 0)
  EXPECT_EQ(MultiplyByQuantizedMultiplier(-32, q, -5), 0);
  EXPECT_EQ(MultiplyByQuantizedMultiplierSingleAway(95, q, -5), 1);    // 1.484 -> 1 (double rounding gives 2)
  EXPECT_EQ(MultiplyByQuantizedMultiplierDoubleRounding(95, q, -5), 2);
  std::mt19937 rng(3);
  for (int i = 0; i < 100000; ++i) {
    const auto x = static_cast<int32_t>(rng());
    const int32_t m = static_cast<int32_t>((rng() >> 1) | (1u << 30));
    const int shift = static_cast<int>(rng() % 40) - 31;
    const long double exact = std::ldexp(static_cast<long double>(x) * m, shift - 31);
    const long double want = exact >= 0 ? std::floor(exact + 0.5L) : -std::floor(-exact + 0.5L);
    if (std::fabs(want) > 2147483647.0L) continue;
    ASSERT_EQ(MultiplyByQuantizedMultiplierSingleAway(x, m, shift), static_cast<int64_t>(want))
        << x << " " << m << " " << shift;
  }
}

}  // namespace
}  // namespace kiln::ops::reference
