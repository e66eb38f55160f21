// Fixed-point arithmetic of the int8 reference kernels, computed exactly as LiteRT's reference kernels do, so
// that Kiln's integer outputs equal LiteRT's byte for byte.
//
// A real multiplier m > 0 is stored as a 31-bit significand q (in [2^30, 2^31)) and a power-of-two exponent
// e, m ~= q * 2^(e - 31). LiteRT has two ways of applying it to an int32 x, chosen when LiteRT is compiled:
//  - single rounding (TFLITE_SINGLE_ROUNDING): (x * q + 2^(30 - e)) >> (31 - e) in 64 bits, one rounding half
//    up; e is limited to [-31, 30];
//  - double rounding (gemmlowp's): shift x left by max(e, 0) (wrapping as int32), take the rounding doubling
//    high half of the 64-bit product with q (half away from zero, saturating the one overflow case), then
//    divide by 2^max(-e, 0) rounding half away from zero.
// The published ai-edge-litert package's reference kernels do not all round alike, so each Kiln kernel uses
// the one measured to equal them (docs/ops.md): single rounding with ties away from zero (kSingleAway) for
// FULLY_CONNECTED (single rounding matches on mt_ad01_fc_int8 and double does not; a model full of ties,
// q8_fc_ties, shows the ties go away from zero; the reference FULLY_CONNECTED itself applies the real multiplier
// in double, which this form equals below sums of about 2^24: quantized_kernels.h's real_multipliers); double
// rounding for CONV_2D, DEPTHWISE_CONV_2D and MEAN
// (measured layer by layer on real models) and for ADD, SUB, MUL, PRELU, the RELUs, LEAKY_RELU and QUANTIZE's
// int8 requantize (single rounding differs from the package on single-op models of each, double rounding on
// none). Both are here and tested.
#ifndef KILN_OPS_REFERENCE_QUANTIZED_H_
#define KILN_OPS_REFERENCE_QUANTIZED_H_

#include <cstdint>
#include <type_traits>
#include <vector>

namespace kiln::ops::reference {

// Two's-complement arithmetic that wraps instead of overflowing. LiteRT's kernels add and multiply in plain
// int32 (int64 for 16x8), which wraps on every machine it is built for but is undefined behaviour in C++; the
// values only leave the range on crafted models (huge multipliers or biases), and there Kiln must still give
// LiteRT's answer, not undefined behaviour.
template <typename T>
constexpr T WrapAdd(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename T>
constexpr T WrapSub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <typename T>
constexpr T WrapMul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

// A multiplier as a 31-bit significand and a shift (positive: left).
struct QuantizedMultiplier {
  int32_t multiplier = 0;
  int shift = 0;
};

// LiteRT's QuantizeMultiplier: frexp(m) = f * 2^e with f in [0.5, 1); q = round(f * 2^31) (half away from
// zero); q == 2^31 becomes 2^30 with e + 1. m == 0, or e < -31 (m below about 2^-32, which would shift every
// bit out), gives q = 0 and shift 0; e > 30 (m of 2^30 or more) saturates to q = 2^31 - 1, shift 30 (the
// single rounding build's limit). Non-finite m gives 0.
QuantizedMultiplier QuantizeMultiplier(double multiplier);

// a * b / 2^31 rounded to nearest, as gemmlowp: a tie rounds up for a positive product and toward zero for a
// negative one (the nudge 1 - 2^30 before a truncating division); INT32_MIN * INT32_MIN saturates to
// INT32_MAX.
int32_t SaturatingRoundingDoublingHighMul(int32_t a, int32_t b);

// x / 2^exponent rounded half away from zero, for exponent in [0, 31].
int32_t RoundingDivideByPOT(int32_t x, int exponent);

// kSingleAway: one rounding as kSingle, but ties away from zero (round(|x * q| / 2^(31 - e)) with the sign
// put back): what the published package's FULLY_CONNECTED does, int8 and uint8 (measured on models whose
// multiplier is a power of two, where every 64th output is a tie: half-up differs on the negative ones).
enum class Rounding { kSingle, kDouble, kSingleAway };

// LiteRT's MultiplyByQuantizedMultiplier for an int64 x (the 16x8 kernels' int64 accumulators): the
// multiplier rounded to its top 16 bits (q + 2^15) >> 16 (0x7FFF from 0x7FFF0000 up), then (x * that + 2^(14
// - shift)) >> (15 - shift), one rounding, ties up; shift in [-31, 7].
int32_t MultiplyByQuantizedMultiplierInt64(int64_t x, int32_t multiplier, int shift);

// x * multiplier * 2^(shift - 31) rounded once, ties away from zero; shift in [-31, 30].
int32_t MultiplyByQuantizedMultiplierSingleAway(int32_t x, int32_t multiplier, int shift);

// The same with gemmlowp's double rounding.
int32_t MultiplyByQuantizedMultiplierDoubleRounding(int32_t x, int32_t multiplier, int shift);

// x * multiplier * 2^(shift - 31), single rounding (see above); multiplier >= 0, shift in [-31, 30].
int32_t MultiplyByQuantizedMultiplier(int32_t x, int32_t multiplier, int shift);

inline int32_t MultiplyByQuantizedMultiplier(int32_t x, const QuantizedMultiplier& m,
                                             Rounding rounding = Rounding::kSingle) {
  switch (rounding) {
    case Rounding::kDouble:
      return MultiplyByQuantizedMultiplierDoubleRounding(x, m.multiplier, m.shift);
    case Rounding::kSingleAway:
      return MultiplyByQuantizedMultiplierSingleAway(x, m.multiplier, m.shift);
    case Rounding::kSingle:
      break;
  }
  return MultiplyByQuantizedMultiplier(x, m.multiplier, m.shift);
}

// How LiteRT forms the real multiplier input_scale * filter_scale / output_scale of a weighted op from the float
// scales: kDouble multiplies them in double (PopulateConvolutionQuantizationParams' per-channel multipliers:
// int8 and int16 kernels, and uint8 FULLY_CONNECTED in the ai-edge-litert 2.3.0 package); kFloat multiplies
// input_scale * filter_scale in float, then widens the product and divides by output_scale in double
// (GetQuantizedConvolutionMultipler: the scalar multiplier of uint8 CONV_2D, DEPTHWISE_CONV_2D and
// TRANSPOSE_CONV). The two differ by the float product's rounding, which moves the 31-bit significand.
enum class ScaleProduct { kDouble, kFloat };
QuantizedMultiplier QuantizedConvolutionMultiplier(float input_scale, float filter_scale, float output_scale,
                                                   ScaleProduct product = ScaleProduct::kDouble);

// Per-channel: one multiplier per output channel, QuantizedConvolutionMultiplier(input_scale, filter_scale[c],
// output_scale, product). A single filter scale applies to all `channels`.
std::vector<QuantizedMultiplier> PerChannelMultipliers(float input_scale, const std::vector<float>& filter_scales,
                                                       float output_scale, int64_t channels,
                                                       ScaleProduct product = ScaleProduct::kDouble);

// The int8 output range of a fused activation, as LiteRT's CalculateActivationRangeQuantized: the bounds
// 0, 6, -1 and 1 quantized with the output's scale and zero point (zero_point + round(v / scale), in float),
// intersected with [-128, 127]. `activation` is the value of reference::Activation (kNone, kRelu, kReluN1To1,
// kRelu6); false for activations that have no quantized range (TANH, SIGMOID).
// `type_min`/`type_max` replace int8's range for other output types (uint8: 0, 255).
bool QuantizedActivationRange(int activation, float output_scale, int32_t output_zero_point, int32_t* min,
                              int32_t* max, int32_t type_min = -128, int32_t type_max = 127);

// gemmlowp's fixed-point functions that LiteRT's LOG_SOFTMAX (and its other transcendental int8/int16
// kernels) are made of, on raw int32 values with `bits` integer bits (Q(bits).(31 - bits)). Additions wrap,
// as the library's plain int32 ones (which never overflow on the values these kernels give them).
namespace fixed_point {

// x * 2^exponent: a saturating left shift (exponent > 0) or RoundingDivideByPOT (exponent < 0).
int32_t SaturatingRoundingMultiplyByPOT(int32_t x, int exponent);
// The same value with `to` integer bits instead of `from`.
inline int32_t Rescale(int32_t x, int from, int to) { return SaturatingRoundingMultiplyByPOT(x, from - to); }
// (a + b) / 2 rounded half away from zero, in 64 bits.
int32_t RoundingHalfSum(int32_t a, int32_t b);
// exp(a) for a <= 0 with `bits` integer bits, as Q0.31 (exp(0) = 1 is INT32_MAX): exp of a + 1/4 - (a mod
// 1/4) by a Taylor series around -1/8, then one constant factor exp(-2^k) for each bit k set in the
// remainder.
int32_t ExpOnNegativeValues(int32_t a, int bits);
// 1 / (1 + a) for a Q0.31 a in [0, 1), by three Newton-Raphson steps; Q0.31.
int32_t OneOverOnePlusX(int32_t a);
// log(x) for x >= 1 with `input_bits` integer bits, with `output_bits` integer bits: LiteRT's
// log_x_for_x_greater_than_or_equal_to_1 (the power of two from the leading zeros, the rest by a rational
// approximation around sqrt(sqrt(1/2))).
int32_t LogXForXGreaterThanOrEqualTo1(int32_t x, int input_bits, int output_bits);

// 1 / sqrt(x) for an int32 x as a multiplier and right shift, as LiteRT's GetInvSqrtQuantizedMultiplierExp:
// x <= 1 gives INT32_MAX and 0; otherwise x is scaled by powers of 4 into [2^27, 2^29) (the shift counting
// them from 11), read as Q3.28 of x / 2^29 (its half), five Newton-Raphson steps y = 1.5 y - (x / 2) y^3 from
// y = 1 in Q3.28 (each product a rounding doubling high multiply, rescaled with saturation), times sqrt(2) / 2
// (Q0.31); a negative shift is moved into the multiplier. x * multiplier * 2^-(31 + right_shift) ~=
// 1 / sqrt(x).
void InvSqrtMultiplier(int32_t x, int32_t* multiplier, int* right_shift);

}  // namespace fixed_point

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_QUANTIZED_H_
