// LiteRT's fixed-point helpers (quantized.h), written from the published formulas.
#include "ops/reference/quantized.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/reference/common.h"

namespace kiln::ops::reference {

QuantizedMultiplier QuantizeMultiplier(double multiplier) {
  QuantizedMultiplier result;
  if (multiplier == 0.0 || !std::isfinite(multiplier)) return result;
  int exponent = 0;
  const double fraction = std::frexp(multiplier, &exponent);
  int64_t q = static_cast<int64_t>(std::round(fraction * static_cast<double>(int64_t{1} << 31)));
  if (q == (int64_t{1} << 31)) {
    q /= 2;
    ++exponent;
  }
  if (exponent < -31) {
    exponent = 0;
    q = 0;
  }
  if (exponent > 30) {
    exponent = 30;
    q = (int64_t{1} << 31) - 1;
  }
  result.multiplier = static_cast<int32_t>(q);
  result.shift = exponent;
  return result;
}

int32_t SaturatingRoundingDoublingHighMul(int32_t a, int32_t b) {
  if (a == b && a == std::numeric_limits<int32_t>::min()) return std::numeric_limits<int32_t>::max();
  const int64_t product = static_cast<int64_t>(a) * static_cast<int64_t>(b);
  const int64_t nudge = product >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
  // C++ division truncates toward zero, as LiteRT's does.
  return static_cast<int32_t>((product + nudge) / (int64_t{1} << 31));
}

int32_t RoundingDivideByPOT(int32_t x, int exponent) {
  const int32_t mask = static_cast<int32_t>((int64_t{1} << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

int32_t MultiplyByQuantizedMultiplier(int32_t x, int32_t multiplier, int shift) {
  const int total_shift = 31 - shift;
  const int64_t round = int64_t{1} << (total_shift - 1);
  // |x * multiplier| < 2^62 and round <= 2^61: no overflow. >> on a negative int64 is arithmetic (clang;
  // LiteRT relies on it too).
  const int64_t result = (static_cast<int64_t>(x) * static_cast<int64_t>(multiplier) + round) >> total_shift;
  return static_cast<int32_t>(result);
}

int32_t MultiplyByQuantizedMultiplierInt64(int64_t x, int32_t multiplier, int shift) {
  const int64_t reduced =
      multiplier < 0x7FFF0000 ? (static_cast<int64_t>(multiplier) + (1 << 15)) >> 16 : 0x7FFF;
  const int total_shift = 15 - shift;
  // |x| < 2^47 (LiteRT's assumption) keeps the product within int64; a crafted int64 bias can break it, and
  // the product then wraps as LiteRT's does. >> of a negative is arithmetic.
  const int64_t result = WrapAdd(WrapMul(x, reduced), int64_t{1} << (total_shift - 1)) >> total_shift;
  return static_cast<int32_t>(result);
}

int32_t MultiplyByQuantizedMultiplierSingleAway(int32_t x, int32_t multiplier, int shift) {
  const int total_shift = 31 - shift;
  const int64_t round = int64_t{1} << (total_shift - 1);
  // |x * multiplier| < 2^62: no overflow, and its negation is representable.
  const int64_t product = static_cast<int64_t>(x) * static_cast<int64_t>(multiplier);
  const int64_t magnitude = ((product < 0 ? -product : product) + round) >> total_shift;
  return static_cast<int32_t>(product < 0 ? -magnitude : magnitude);
}

int32_t MultiplyByQuantizedMultiplierDoubleRounding(int32_t x, int32_t multiplier, int shift) {
  const int left_shift = shift > 0 ? shift : 0;
  const int right_shift = shift > 0 ? 0 : -shift;
  // LiteRT multiplies in int32; wrap as two's complement rather than overflow.
  const int32_t shifted = static_cast<int32_t>(static_cast<uint32_t>(x) * (uint32_t{1} << left_shift));
  return RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(shifted, multiplier), right_shift);
}

QuantizedMultiplier QuantizedConvolutionMultiplier(float input_scale, float filter_scale, float output_scale,
                                                   ScaleProduct product) {
  const double scale_product = product == ScaleProduct::kFloat
                                   ? static_cast<double>(input_scale * filter_scale)
                                   : static_cast<double>(input_scale) * static_cast<double>(filter_scale);
  return QuantizeMultiplier(scale_product / static_cast<double>(output_scale));
}

std::vector<QuantizedMultiplier> PerChannelMultipliers(float input_scale, const std::vector<float>& filter_scales,
                                                       float output_scale, int64_t channels, ScaleProduct product) {
  std::vector<QuantizedMultiplier> result(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    const float filter_scale = filter_scales.size() == 1 ? filter_scales[0] : filter_scales[static_cast<size_t>(c)];
    result[static_cast<size_t>(c)] = QuantizedConvolutionMultiplier(input_scale, filter_scale, output_scale, product);
  }
  return result;
}

bool QuantizedActivationRange(int activation, float output_scale, int32_t output_zero_point, int32_t* min,
                              int32_t* max, int32_t type_min, int32_t type_max) {
  const auto quantize = [&](float value) {
    return output_zero_point + static_cast<int32_t>(std::round(value / output_scale));
  };
  int32_t lo = type_min, hi = type_max;
  switch (static_cast<Activation>(activation)) {
    case Activation::kNone:
      break;
    case Activation::kRelu:
      lo = std::max(lo, quantize(0.0f));
      break;
    case Activation::kRelu6:
      lo = std::max(lo, quantize(0.0f));
      hi = std::min(hi, quantize(6.0f));
      break;
    case Activation::kReluN1To1:
      lo = std::max(lo, quantize(-1.0f));
      hi = std::min(hi, quantize(1.0f));
      break;
    default:
      return false;
  }
  *min = lo;
  *max = hi;
  return true;
}

namespace fixed_point {
namespace {

int32_t Add(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
int32_t Sub(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
}
int32_t Mul(int32_t a, int32_t b) { return SaturatingRoundingDoublingHighMul(a, b); }

int32_t Saturate(int64_t v) {
  return static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(v, std::numeric_limits<int32_t>::min()),
                                                std::numeric_limits<int32_t>::max()));
}

int CountLeadingZeros(uint32_t x) {
  int n = 0;
  for (uint32_t bit = uint32_t{1} << 31; bit != 0 && (x & bit) == 0; bit >>= 1) ++n;
  return n;
}

// exp(a) for a in [-1/4, 0), Q0.31: exp(-1/8) * (1 + x + x^2/2 + x^3/6 + x^4/24) with x = a + 1/8.
int32_t ExpOnIntervalBetweenNegativeOneQuarterAnd0(int32_t a) {
  constexpr int32_t kExpMinusOneEighth = 1895147668;  // exp(-1/8) in Q0.31
  constexpr int32_t kOneThird = 715827883;
  const int32_t x = Add(a, int32_t{1} << 28);
  const int32_t x2 = Mul(x, x);
  const int32_t x3 = Mul(x2, x);
  const int32_t x4 = Mul(x2, x2);
  const int32_t x4_over_4 = SaturatingRoundingMultiplyByPOT(x4, -2);
  const int32_t rest = SaturatingRoundingMultiplyByPOT(Add(Mul(Add(x4_over_4, x3), kOneThird), x2), -1);
  return Add(kExpMinusOneEighth, Mul(kExpMinusOneEighth, Add(x, rest)));
}

}  // namespace

int32_t SaturatingRoundingMultiplyByPOT(int32_t x, int exponent) {
  if (exponent == 0) return x;
  if (exponent < 0) return RoundingDivideByPOT(x, -exponent);
  const int32_t threshold = static_cast<int32_t>((int64_t{1} << (31 - exponent)) - 1);
  if (x > threshold) return std::numeric_limits<int32_t>::max();
  if (x < -threshold) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(static_cast<uint32_t>(x) << exponent);
}

int32_t RoundingHalfSum(int32_t a, int32_t b) {
  const int64_t sum = int64_t{a} + int64_t{b};
  return static_cast<int32_t>((sum + (sum >= 0 ? 1 : -1)) / 2);
}

int32_t ExpOnNegativeValues(int32_t a, int bits) {
  const int fractional = 31 - bits;
  const int32_t one_quarter = int32_t{1} << (fractional - 2);
  const int32_t a_mod_quarter_minus_one_quarter = Sub(a & (one_quarter - 1), one_quarter);
  int32_t result =
      ExpOnIntervalBetweenNegativeOneQuarterAnd0(Rescale(a_mod_quarter_minus_one_quarter, bits, 0));
  const int32_t remainder = Sub(a_mod_quarter_minus_one_quarter, a);
  // exp(-2^k) in Q0.31 for k = -2 .. 4.
  constexpr int32_t kFactors[] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
  for (int k = -2; k <= 4; ++k) {
    if (bits > k && (remainder & (int32_t{1} << (fractional + k))) != 0)
      result = Mul(result, kFactors[k + 2]);
  }
  if (bits > 5 && a < -(int32_t{1} << (36 - bits))) result = 0;  // below -32: exp rounds to 0
  if (a == 0) result = std::numeric_limits<int32_t>::max();
  return result;
}

int32_t OneOverOnePlusX(int32_t a) {
  // Q2.29 Newton-Raphson for 1 / d, d = (1 + a) / 2, from 48/17 - 32/17 * d.
  const int32_t half_denominator = RoundingHalfSum(a, std::numeric_limits<int32_t>::max());
  constexpr int32_t k48Over17 = 1515870810, kMinus32Over17 = -1010580540, kOne = int32_t{1} << 29;
  int32_t x = Add(k48Over17, Mul(half_denominator, kMinus32Over17));
  for (int i = 0; i < 3; ++i) {
    const int32_t one_minus = Sub(kOne, Mul(half_denominator, x));
    x = Add(x, Rescale(Mul(x, one_minus), 4, 2));
  }
  // x / 2 (Q1.30 reinterpreted), then to Q0.31.
  return Rescale(x, 1, 0);
}

int32_t LogXForXGreaterThanOrEqualTo1(int32_t x, int input_bits, int output_bits) {
  const int accum_bits = output_bits + 1;
  constexpr int32_t kLog2 = 1488522236, kSqrtSqrtHalf = 1805811301, kSqrtHalf = 1518500250;
  constexpr int32_t kOneQuarter = 536870912;
  constexpr int32_t kAlphaN = 117049297, kAlphaD = 127690142, kAlphaI = 1057819769, kAlphaF = 638450708;
  const int32_t shifted_quarter = Rescale(kOneQuarter, 0, accum_bits);
  // x read as Q0.31; its power of two comes from the leading zeros, in two candidates a and b (b from
  // x * sqrt(1/2)), each with its mantissa r.
  const int z_a_headroom_plus_1 = CountLeadingZeros(static_cast<uint32_t>(x));
  const int32_t r_a_tmp = SaturatingRoundingMultiplyByPOT(x, z_a_headroom_plus_1 - 1);
  const int32_t r_a = SaturatingRoundingMultiplyByPOT(Mul(r_a_tmp, kSqrtHalf), 1);
  const int32_t z_a_pow_2_adj =
      Saturate(int64_t{SaturatingRoundingMultiplyByPOT(input_bits - z_a_headroom_plus_1, 31 - accum_bits)} +
               shifted_quarter);
  const int32_t z_b = Mul(x, kSqrtHalf);
  const int z_b_headroom = CountLeadingZeros(static_cast<uint32_t>(z_b)) - 1;
  const int32_t r_b = SaturatingRoundingMultiplyByPOT(x, z_b_headroom);
  const int32_t z_b_pow_2_adj = Saturate(
      int64_t{SaturatingRoundingMultiplyByPOT(input_bits - z_b_headroom, 31 - accum_bits)} - shifted_quarter);
  const int32_t r = std::min(r_a, r_b);
  const int32_t z_pow_2_adj = std::max(z_a_pow_2_adj, z_b_pow_2_adj);
  // log(r) by a rational approximation in q = 2 * (r - sqrt(sqrt(1/2))).
  const int32_t p = RoundingHalfSum(r, kSqrtSqrtHalf);
  int32_t q = Sub(r, kSqrtSqrtHalf);
  q = Add(q, q);
  const int32_t common_sq = Mul(q, q);
  const int32_t num = Add(Mul(q, r), Mul(Mul(q, common_sq), kAlphaN));
  const int32_t denom_minus_one = Add(Mul(p, Add(Add(kAlphaI, q), Mul(kAlphaD, common_sq))), Mul(kAlphaF, q));
  const int32_t recip_denom = OneOverOnePlusX(denom_minus_one);
  const int32_t num_scaled = Rescale(num, 0, accum_bits);
  return Rescale(Add(Mul(z_pow_2_adj, kLog2), Mul(num_scaled, recip_denom)), accum_bits, output_bits);
}

void InvSqrtMultiplier(int32_t x, int32_t* multiplier, int* right_shift) {
  if (x <= 1) {
    *multiplier = std::numeric_limits<int32_t>::max();
    *right_shift = 0;
    return;
  }
  int shift = 11;
  while (x >= (int32_t{1} << 29)) {
    x /= 4;
    ++shift;
  }
  // Up by pairs of bits until x is in [2^27, 2^29).
  const int pairs = (CountLeadingZeros(static_cast<uint32_t>(x)) - 1) / 2 - 1;
  shift -= pairs;
  x = static_cast<int32_t>(static_cast<uint32_t>(x) << (2 * pairs));
  constexpr int32_t kOne = int32_t{1} << 28;                            // 1 in Q3.28
  constexpr int32_t kThreeHalves = (int32_t{1} << 28) + (int32_t{1} << 27);  // 1.5 in Q3.28
  constexpr int32_t kHalfSqrt2 = 1518500250;                            // sqrt(2) / 2 in Q0.31
  const int32_t value = x >> 1;                                          // Q3.28
  const int32_t half_value = SaturatingRoundingMultiplyByPOT(value, -1);
  int32_t y = kOne;
  for (int step = 0; step < 5; ++step) {
    const int32_t y3 = Rescale(Mul(Mul(y, y), y), 9, 3);                 // Q9 -> Q3
    y = Rescale(Sub(Mul(kThreeHalves, y), Mul(half_value, y3)), 6, 3);  // Q6 -> Q3
  }
  int32_t m = Mul(y, kHalfSqrt2);  // Q3 * Q0 -> Q3
  if (shift < 0) {
    m = static_cast<int32_t>(static_cast<uint32_t>(m) << -shift);
    shift = 0;
  }
  *multiplier = m;
  *right_shift = shift;
}

}  // namespace fixed_point

}  // namespace kiln::ops::reference
