// The int16 reference kernels of LOGISTIC, TANH and SOFTMAX: symmetric int16 tensors (zero point 0), LiteRT's
// int16 arithmetic (its reference_integer_ops Logistic / Tanh on a 256-entry sigmoid table with linear
// interpolation, and its reference SoftmaxInt16 on two 513-entry interpolated tables), so that outputs equal
// LiteRT's byte for byte. Products LiteRT computes in plain int32 wrap here (two's complement), where LiteRT's
// are undefined behaviour that wraps on the machines it runs on; they only leave the range for input scales
// far beyond any converter's (an input multiplier above 2^16).
#ifndef KILN_OPS_REFERENCE_QUANTIZED_INT16_H_
#define KILN_OPS_REFERENCE_QUANTIZED_INT16_H_

#include <cstdint>

#include "ops/reference/quantized.h"

namespace kiln::ops::reference {

// LiteRT's CheckedLog2 on a float scale: l = round(log(x) * (1 / log(2))) in float (half away from zero); true
// where |log(x) / log(2) - l| < 1e-3, i.e. x is a power of two up to float rounding.
bool CheckedLog2(float x, int* log2_rounded);

// LOGISTIC and TANH int16. The input is rescaled into the table's domain, where 2^17 stands for +-10.7 (the
// table holds sigmoid(i / 24) for i in [0, 255], 0.16 fixed point).
//  - A power-of-two input scale that the table takes directly (LOGISTIC: 2^-12; TANH: 2^-12 or 2^-11, the
//    latter doubling the input): `multiplier` 0, `left_shift` 0 or 1.
//  - Any other scale s: m = s * 4096 * 3 in double, doubled (left_shift += 1) while m <= 32767 / 2 and
//    left_shift <= 30; `multiplier` = (int32) m.
// Both then take x = (in * multiplier + 2^(left_shift - 1)) >> left_shift, where multiplier 0 means 3 <<
// left_shift and no shift; |x| indexes the table (LOGISTIC: top bits >> 9, 9 fraction bits; TANH: >> 8, 8
// fraction bits, so twice the slope), entries past the table saturate, the interpolated value is mirrored for
// x < 0 and rounded back to 16 bits (output scale 2^-15: LOGISTIC in [0, 32767], TANH in [-32767, 32767]).
struct SigmoidTanhInt16Params {
  int32_t multiplier = 0;
  int left_shift = 0;
};
// False where the input scale leaves LiteRT's arithmetic undefined: its multiplier beyond int32, or 0 for a
// non-power-of-two scale (below about 4e-14; LiteRT would shift 3 left by 31).
bool PrepareLogisticInt16(float input_scale, SigmoidTanhInt16Params* params);
bool PrepareTanhInt16(float input_scale, SigmoidTanhInt16Params* params);
// The 256 entries of that table (0.16 fixed point).
const uint16_t* SigmoidTable();
void LogisticInt16(const SigmoidTanhInt16Params& params, int64_t count, const int16_t* input, int16_t* output);
void TanhInt16(const SigmoidTanhInt16Params& params, int64_t count, const int16_t* input, int16_t* output);

// LiteRT's 513-entry int16 table of a function f (LUTPopulate<int16_t> with double arithmetic): 512 steps over
// [input_min, input_max] (the int16 range at the input scale and zero point), each entry f at its step scaled
// to the output range (x 65536 / (output_max - output_min)), rounded, less half the rounded error of linear
// interpolation at the step's midpoint, clamped to int16; the last entry f(input_max).
struct Int16Table {
  int16_t values[513] = {};
};
// The two tables SOFTMAX int16 uses, which depend on nothing: exp(x) on [-10, 0] and 1 / (1 + x) on [0, 1],
// both to the output range [-1, 1].
const Int16Table& SoftmaxExpTable();
const Int16Table& SoftmaxReciprocalTable();
// LiteRT's LUTLookup: index 256 + (value >> 7), then the entry plus (slope * (value & 127) + 64) >> 7.
int16_t LookupInt16(const Int16Table& table, int16_t value);
void LookupInt16(const Int16Table& table, int64_t count, const int16_t* input, int16_t* output);

// GELU int16 (LiteRT's: the table of the float GELU, either form, built in float arithmetic, then LookupInt16).
// As LiteRT's table, the output zero point only moves the output range the table spans; it is not added.
void PrepareGeluInt16(bool approximate, float input_scale, int32_t input_zero_point, float output_scale,
                      int32_t output_zero_point, Int16Table* table);

// SOFTMAX int16 -> int16 over the innermost dimension (LiteRT's reference SoftmaxInt16). With the multiplier
// QuantizeMultiplier(float(input_scale * beta) / (10 / 65535)), per row: each d = x - row max is scaled by
// it (MultiplyByQuantizedMultiplier with `rounding`: [-65535, 0] stands for [-10, 0]), recentred by +32767,
// clamped to int16 and looked up in the exp table (Q0.15); the exps are summed (int32); with h = the sum's
// leading zeros, the sum normalised to Q1.15 ((sum << (h - 1)) + 2^13) >> 14, less 98304, clamped, gives
// the reciprocal from the 1 / (1 + x) table; out = clamp((exp * reciprocal + 2^(30 - h)) >> (31 - h), 0,
// 32767). The output is quantized 1/32768 with zero point 0.
struct SoftmaxInt16Params {
  int64_t outer = 0, depth = 0;
  QuantizedMultiplier multiplier;
  Rounding rounding = Rounding::kDouble;
};
void PrepareSoftmaxInt16(float input_scale, float beta, SoftmaxInt16Params* params);
// False (nothing defined written to the row) where a row's sum of exps exceeds int32, which LiteRT's kernel
// does not handle (rows of more than 65537 elements near the maximum).
bool SoftmaxInt16(const SoftmaxInt16Params& params, const int16_t* input, int16_t* output);

// SOFTMAX int8 / uint8 -> int16 (LiteRT's reference Softmax with an int16 output, gemmlowp fixed point): with
// the multiplier QuantizeMultiplier(min(beta * input_scale * 2^26, 2^31 - 1)) (shift s >= 0) and diff_min =
// -floor(31 * 2^26 / 2^s), per row: each d = x - max >= diff_min scaled into Q5.26 (`rounding`), exp of it
// (Q0.31) rescaled to Q12.19 and summed; the sum's reciprocal (LiteRT's GetReciprocal: normalised by its leading
// zeros h, 1 / (1 + x) in Q0.31, num_bits_over_unit = 12 - h); out = RoundingDivideByPOT(reciprocal * exp(d),
// num_bits_over_unit + 15) - 32768, clamped; -32768 where d < diff_min. The output is always written as 1/65536
// with zero point -32768, whatever the output tensor's quantization says (as LiteRT's kernel).
struct SoftmaxTo16Params {
  int64_t outer = 0, depth = 0;
  QuantizedMultiplier multiplier;
  int32_t diff_min = 0;
  Rounding rounding = Rounding::kDouble;
};
void PrepareSoftmaxTo16(float input_scale, float beta, SoftmaxTo16Params* params);
// T: int8_t or uint8_t. False where a row's exponent falls outside [0, 31] (LiteRT's TFLITE_CHECK aborts there).
template <typename T>
bool SoftmaxTo16(const SoftmaxTo16Params& params, const T* input, int16_t* output);

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_QUANTIZED_INT16_H_
