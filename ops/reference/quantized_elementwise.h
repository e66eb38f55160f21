// The int8 reference kernels of the elementwise ops (SUB, MUL, MAXIMUM, MINIMUM, PRELU, the activations),
// with LiteRT's reference arithmetic so that outputs equal LiteRT's byte for byte; the *Quantized templates also
// serve uint8 and (some) int16. ADD is in quantized_kernels.h.
#ifndef KILN_OPS_REFERENCE_QUANTIZED_ELEMENTWISE_H_
#define KILN_OPS_REFERENCE_QUANTIZED_ELEMENTWISE_H_

#include <cstdint>

#include "ops/reference/elementwise.h"
#include "ops/reference/quantized.h"
#include "ops/reference/quantized_kernels.h"

namespace kiln::ops::reference {

// SUB, LiteRT's scheme (the same parameters as ADD, PrepareAddInt8): each input, less its zero point, shifted
// left by `left_shift` and scaled by its own multiplier; the scaled values are subtracted (each one rounded
// on its own, so this is not ADD of a negated input), then scaled by the output multiplier, offset and
// clamped.
int8_t SubInt8(const AddInt8Params& params, int8_t a, int8_t b);
// T: int8_t or uint8_t, for this and the other *Quantized kernels below: LiteRT's uint8 paths have the same
// arithmetic; the zero points and the activation bounds (the clamp) differ. SUB, MUL, MAXIMUM, MINIMUM and the
// RELUs also take int16_t (LiteRT's int16 paths: zero points 0, SUB's left_shift 15).
template <typename T>
void SubQuantized(const BinaryParams& shape, const AddInt8Params& params, const T* a, const T* b, T* output);
inline void SubInt8(const BinaryParams& shape, const AddInt8Params& params, const int8_t* a, const int8_t* b,
                    int8_t* output) {
  SubQuantized<int8_t>(shape, params, a, b, output);
}

// MUL: out = clamp(MultiplyByQuantizedMultiplier((a - a_zp) * (b - b_zp), multiplier) + output_zp) with one
// multiplier, a_scale * b_scale / output_scale computed in float as LiteRT's Prepare does.
struct MulInt8Params {
  int32_t a_zero_point = 0, b_zero_point = 0, output_zero_point = 0;
  QuantizedMultiplier multiplier;
  int32_t activation_min = -128, activation_max = 127;
};
void PrepareMulInt8(float a_scale, float b_scale, float output_scale, MulInt8Params* params);
template <typename T>
void MulQuantized(const BinaryParams& shape, const MulInt8Params& params, const T* a, const T* b, T* output);
inline void MulInt8(const BinaryParams& shape, const MulInt8Params& params, const int8_t* a, const int8_t* b,
                    int8_t* output) {
  MulQuantized<int8_t>(shape, params, a, b, output);
}

// MAXIMUM and MINIMUM compare the stored values (LiteRT's int8 kernel: the operands and the output share one
// quantization, which the wrapper checks). `shape.op` picks which.
template <typename T>
void MaximumMinimumQuantized(const BinaryParams& shape, const T* a, const T* b, T* output);
inline void MaximumMinimumInt8(const BinaryParams& shape, const int8_t* a, const int8_t* b, int8_t* output) {
  MaximumMinimumQuantized<int8_t>(shape, a, b, output);
}

// PRELU: with x = input - input_zp, out = MultiplyByQuantizedMultiplier(x, positive) for x >= 0, else
// MultiplyByQuantizedMultiplier(x * (alpha - alpha_zp), negative); plus output_zp, clamped to int8.
// positive = input_scale / output_scale, negative = input_scale * alpha_scale / output_scale (in float).
struct PreluInt8Params {
  int32_t input_zero_point = 0, alpha_zero_point = 0, output_zero_point = 0;
  QuantizedMultiplier positive, negative;
};
void PreparePreluInt8(float input_scale, float alpha_scale, float output_scale, PreluInt8Params* params);
// T: int8_t, or uint8_t (LiteRT's uint8 PRELU: input, alpha and output uint8, the same arithmetic clamped to
// [0, 255]).
template <typename T>
void PreluQuantized(const BinaryParams& shape, const PreluInt8Params& params, const T* input, const T* alpha,
                    T* output);
inline void PreluInt8(const BinaryParams& shape, const PreluInt8Params& params, const int8_t* input,
                      const int8_t* alpha, int8_t* output) {
  PreluQuantized<int8_t>(shape, params, input, alpha, output);
}

// RELU, RELU6, RELU_N1_TO_1 (LiteRT's ReluX): out = clamp(output_zp + MultiplyByQuantizedMultiplier(x -
// input_zp, input_scale / output_scale), lo, hi), the bounds those of the fused activation
// (QuantizedActivationRange).
struct RequantizeClampInt8Params {
  int32_t input_zero_point = 0, output_zero_point = 0;
  QuantizedMultiplier multiplier;
  int32_t activation_min = -128, activation_max = 127;
};
// `activation` is the value of reference::Activation (kRelu, kRelu6 or kReluN1To1).
// `type_min`/`type_max`: the output type's range ([-128, 127] for int8, [0, 255] for uint8).
void PrepareReluInt8(int activation, float input_scale, float output_scale, int32_t input_zero_point,
                     int32_t output_zero_point, RequantizeClampInt8Params* params, int32_t type_min = -128,
                     int32_t type_max = 127);
template <typename T>
void RequantizeClampQuantized(const RequantizeClampInt8Params& params, int64_t count, const T* input, T* output);
inline void RequantizeClampInt8(const RequantizeClampInt8Params& params, int64_t count, const int8_t* input,
                                int8_t* output) {
  RequantizeClampQuantized<int8_t>(params, count, input, output);
}

// LEAKY_RELU: with x = input - input_zp, out = output_zp + MultiplyByQuantizedMultiplier(x, identity) for
// x >= 0, else +- MultiplyByQuantizedMultiplier(x, |alpha multiplier|) (the sign of alpha applied after the
// rounding, as LiteRT); clamped. identity = input_scale / output_scale, alpha = input_scale * alpha /
// output_scale (in float).
struct LeakyReluInt8Params {
  int32_t input_zero_point = 0, output_zero_point = 0;
  QuantizedMultiplier identity, alpha;  // alpha holds |multiplier|
  bool alpha_negative = false;
};
void PrepareLeakyReluInt8(float input_scale, float alpha, float output_scale, LeakyReluInt8Params* params);
// T: int8_t, uint8_t or int16_t (LiteRT's QuantizeLeakyRelu serves all three; the clamp is the type's range).
template <typename T>
void LeakyReluQuantized(const LeakyReluInt8Params& params, int64_t count, const T* input, T* output);
inline void LeakyReluInt8(const LeakyReluInt8Params& params, int64_t count, const int8_t* input, int8_t* output) {
  LeakyReluQuantized<int8_t>(params, count, input, output);
}

// LOGISTIC, TANH, ELU, EXP, GELU (either form, GeluFloat's): LiteRT's 256-entry table, built from the float function: for every int8 value v,
// table[v] = clamp(round(f(input_scale * (v - input_zp)) * (1 / output_scale)) + output_zp), all in float
// (round half away from zero), then out = table[in].
// T: int8_t or uint8_t (the table then covers [0, 255] and clamps there).
enum class LookupFunction { kLogistic, kTanh, kElu, kExp, kGelu, kGeluApproximate };
template <typename T>
struct LookupTable {
  T table[256] = {};  // indexed by value - the type's minimum
};
using LookupTableInt8 = LookupTable<int8_t>;
template <typename T>
void PrepareLookupTable(LookupFunction function, float input_scale, int32_t input_zero_point, float output_scale,
                        int32_t output_zero_point, LookupTable<T>* table);
template <typename T>
void Lookup(const LookupTable<T>& table, int64_t count, const T* input, T* output);
inline void PrepareLookupTableInt8(LookupFunction function, float input_scale, int32_t input_zero_point,
                                   float output_scale, int32_t output_zero_point, LookupTableInt8* table) {
  PrepareLookupTable<int8_t>(function, input_scale, input_zero_point, output_scale, output_zero_point, table);
}
inline void LookupInt8(const LookupTableInt8& table, int64_t count, const int8_t* input, int8_t* output) {
  Lookup<int8_t>(table, count, input, output);
}

// HARD_SWISH, LiteRT's 16-bit fixed-point reference (reference_ops::HardSwish): the input, less its zero
// point, times 2^7 ("hires"), is scaled to the output scale (Q15 multiplier output_multiplier, exponent <= 0)
// and, separately, to a "reluish" value in [-1, 1] for x in [-3, 3] (Q15 multiplier and any exponent,
// saturating); the product of the two (a truncating doubling high multiply) is shifted right by -output
// exponent, offset and clamped. The Q15 multipliers are the 31-bit ones rounded to 16 bits.
struct HardSwishInt8Params {
  int32_t input_zero_point = 0, output_zero_point = 0;
  int16_t output_multiplier = 0, reluish_multiplier = 0;
  int output_exponent = 0, reluish_exponent = 0;
};
// False where the output multiplier is 1 or more (input_scale / 128 >= output_scale), which LiteRT rejects.
bool PrepareHardSwishInt8(float input_scale, float output_scale, HardSwishInt8Params* params);
// T: int8_t or uint8_t (LiteRT's HardSwish<T>: the same 16-bit steps, |input - zero point| <= 255, clamped to
// the type's range).
template <typename T>
void HardSwishQuantized(const HardSwishInt8Params& params, int64_t count, const T* input, T* output);
inline void HardSwishInt8(const HardSwishInt8Params& params, int64_t count, const int8_t* input, int8_t* output) {
  HardSwishQuantized<int8_t>(params, count, input, output);
}

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_QUANTIZED_ELEMENTWISE_H_
