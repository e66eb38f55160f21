// The quantized reference kernels: asymmetric int8 activations (a zero point each), symmetric int8 weights (per
// tensor or per output channel), int32 bias; most are templated on the storage type and also serve uint8
// (legacy per-tensor models, asymmetric uint8 weights) and int16 (symmetric 16-bit activations; 16x8 with int64
// bias). The integer arithmetic is LiteRT's reference kernels' (reference_integer_ops, reference_ops), so
// outputs equal LiteRT's byte for byte. Shapes and windows come in the float kernels' params structs; the
// quantization in the *Params structs (named Int8 for history; they hold the other types' parameters too).
#ifndef KILN_OPS_REFERENCE_QUANTIZED_KERNELS_H_
#define KILN_OPS_REFERENCE_QUANTIZED_KERNELS_H_

#include <cstdint>
#include <vector>

#include "ops/reference/conv.h"
#include "ops/reference/elementwise.h"
#include "ops/reference/fully_connected.h"
#include "ops/reference/pooling.h"
#include "ops/reference/quantized.h"
#include "ops/reference/tensor_ops.h"

namespace kiln::ops::reference {

// The quantization of a weighted op (FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D):
// acc = bias[c] + sum (input - input_zero_point) * filter;
// out = clamp(MultiplyByQuantizedMultiplier(acc, multipliers[c]) + output_zero_point, act_min, act_max).
// `multipliers` holds one entry per output channel (repeat one for per-tensor filters).
struct WeightedQuantParams {
  int32_t input_zero_point = 0;
  // The weights' zero point, subtracted from every weight: 0 for int8 (symmetric); uint8 weights are
  // asymmetric (LiteRT's uint8 kernels add its negation, `weights_offset`).
  int32_t filter_zero_point = 0;
  int32_t output_zero_point = 0;
  int32_t activation_min = -128, activation_max = 127;
  std::vector<QuantizedMultiplier> multipliers;
  // LiteRT's: single for FULLY_CONNECTED, double for CONV_2D and DEPTHWISE_CONV_2D (quantized.h).
  Rounding rounding = Rounding::kSingle;
  // 16x8 (int64 accumulators): true applies LiteRT's int64 multiply (MultiplyByQuantizedMultiplierInt64: the
  // convolutions, and FULLY_CONNECTED with per-channel weights); false narrows the sum to int32 and applies
  // `rounding` (FULLY_CONNECTED with per-tensor weights: measured, the int64 multiply differs on 8 of 21).
  bool wide_multiply = true;
  // FULLY_CONNECTED (int8, uint8, and 16x8 with per-tensor weights): LiteRT's reference kernels apply the real
  // multiplier itself, not its fixed-point form: out = round(double(acc) * m[c]) (half away from zero), with
  // m[c] = double(input_scale) * double(filter_scale[c]) / double(output_scale) from the float scales
  // (RealMultipliers). The two agree except next to a rounding boundary, where the fixed-point significand's
  // 2^-31 relative error times a large sum (above about 2^24) moves the result one step. When set, it replaces
  // `multipliers` and `rounding` (the 16x8 int64 multiply, `wide_multiply`, takes precedence). A product beyond
  // int32 saturates (LiteRT's conversion is undefined there).
  std::vector<double> real_multipliers;
};

// One real multiplier per output channel: double(input_scale) * double(filter_scale[c]) / double(output_scale)
// (a single filter scale applies to all `channels`).
std::vector<double> RealMultipliers(float input_scale, const std::vector<float>& filter_scales, float output_scale,
                                    int64_t channels);

// input [batch, input_size], weights [num_units, input_size], bias [num_units] or null. The activation field of
// `shape` is ignored (the clamp is in `quant`).
// T (activations) / W (weights) / B (bias): int8/int8/int32; uint8/uint8/int32 for legacy per-tensor uint8
// models (LiteRT's reference_ops uint8 kernels: the same sums with the filter's zero point subtracted and the
// clamp within [0, 255]); int16/int8/int64 for 16x8 (LiteRT's int16 kernels: int64 accumulator and bias,
// symmetric activations, the int64 multiply MultiplyByQuantizedMultiplierInt64 whatever `quant.rounding` says).
template <typename T, typename W = T, typename B = int32_t>
void FullyConnectedQuantized(const FullyConnectedParams& shape, const WeightedQuantParams& quant, const T* input,
                             const W* weights, const B* bias, T* output);
template <typename T, typename W = T, typename B = int32_t>
void ConvQuantized(const ConvParams& shape, const WeightedQuantParams& quant, const T* input, const W* filter,
                   const B* bias, T* output);
template <typename T, typename W = T, typename B = int32_t>
void DepthwiseConvQuantized(const DepthwiseConvParams& shape, const WeightedQuantParams& quant, const T* input,
                            const W* filter, const B* bias, T* output);
inline void FullyConnectedInt8(const FullyConnectedParams& shape, const WeightedQuantParams& quant,
                               const int8_t* input, const int8_t* weights, const int32_t* bias, int8_t* output) {
  FullyConnectedQuantized<int8_t>(shape, quant, input, weights, bias, output);
}
inline void ConvInt8(const ConvParams& shape, const WeightedQuantParams& quant, const int8_t* input,
                     const int8_t* filter, const int32_t* bias, int8_t* output) {
  ConvQuantized<int8_t>(shape, quant, input, filter, bias, output);
}
// TRANSPOSE_CONV int8 (per-channel filter along dimension 0, int32 bias), LiteRT's reference integer kernel:
// the int32 scatter of (input - input_zero_point) * (filter - filter_zero_point) (TransposeConvFloat's loop,
// wrapping), plus bias, then each output channel's multiplier (quant.rounding), the output zero point and the
// clamp. T: int8_t, or uint8_t (LiteRT's uint8 kernel: asymmetric per-tensor uint8 filter, the same sums).
template <typename T>
void TransposeConvQuantized(const TransposeConvParams& shape, const WeightedQuantParams& quant, const T* input,
                            const T* filter, const int32_t* bias, T* output);
// TRANSPOSE_CONV 16x8 (LiteRT's reference integer kernel for int16 input): symmetric int16 input and output,
// symmetric int8 filter (per tensor or per channel along dimension 0), int64 bias or none; the scatter summed in
// int64, then LiteRT's int64 multiply (`quant.wide_multiply`, MultiplyByQuantizedMultiplierInt64) and the clamp.
void TransposeConv16x8(const TransposeConvParams& shape, const WeightedQuantParams& quant, const int16_t* input,
                       const int8_t* filter, const int64_t* bias, int16_t* output);
inline void TransposeConvInt8(const TransposeConvParams& shape, const WeightedQuantParams& quant, const int8_t* input,
                              const int8_t* filter, const int32_t* bias, int8_t* output) {
  TransposeConvQuantized<int8_t>(shape, quant, input, filter, bias, output);
}
inline void DepthwiseConvInt8(const DepthwiseConvParams& shape, const WeightedQuantParams& quant,
                              const int8_t* input, const int8_t* filter, const int32_t* bias, int8_t* output) {
  DepthwiseConvQuantized<int8_t>(shape, quant, input, filter, bias, output);
}

// BATCH_MATMUL int8 (LiteRT's reference integer kernel): per-tensor int8 lhs, rhs and output;
// acc = sum (lhs - lhs_zero_point) * (rhs - rhs_zero_point) in int32 (wrapping), then
// out = clamp(MultiplyByQuantizedMultiplier(acc, multiplier, rounding) + output_zero_point, -128, 127).
// The shapes, adj_x / adj_y and the batch broadcast as BatchMatMulFloat.
// int16 (BatchMatMul16): symmetric int16 lhs, rhs and output (zero points 0), the sum in int64, then LiteRT's
// int64 multiply (MultiplyByQuantizedMultiplierInt64) when `wide_multiply`, else the sum narrowed to int32
// (wrapping) and `rounding`; clamped to int16.
struct BatchMatMulInt8Params {
  int32_t lhs_zero_point = 0, rhs_zero_point = 0, output_zero_point = 0;
  QuantizedMultiplier multiplier;
  Rounding rounding = Rounding::kDouble;
  bool wide_multiply = true;  // int16 only
};
void BatchMatMulInt8(const BatchMatMulParams& shape, const BatchMatMulInt8Params& quant, const int8_t* lhs,
                     const int8_t* rhs, int8_t* output);
void BatchMatMul16(const BatchMatMulParams& shape, const BatchMatMulInt8Params& quant, const int16_t* lhs,
                   const int16_t* rhs, int16_t* output);

// L2_NORMALIZATION int8 / uint8 (LiteRT's reference integer kernels) over `outer` rows of `depth`: the int32 sum
// of squared (x - input_zero_point) (wrapping), its inverse square root as a multiplier and right shift r
// (fixed_point::InvSqrtMultiplier), then each out = clamp(output_zero_point + that multiplier applied with
// `rounding`), in the type's range: uint8 to 128 * (x - input_zero_point) with shift -r (LiteRT's reference_ops),
// int8 to x - input_zero_point with shift 7 - r (LiteRT's integer_ops fold the 128 into the shift; the two round
// differently). The output is quantized 1/128 with zero point 0 (int8)
// or 128 (uint8), as LiteRT requires.
template <typename T>
void L2NormalizationQuantized(int64_t outer, int64_t depth, int32_t input_zero_point, int32_t output_zero_point,
                              Rounding rounding, const T* input, T* output);

// ADD, LiteRT's scheme: each input, less its zero point, is shifted left by `left_shift` (20) and scaled by its
// multiplier (scale / (2 * max input scale)); the sum is scaled by the output multiplier
// (2 * max input scale / (2^left_shift * output scale)), the output zero point added and the result clamped.
// Every multiplier is applied with double rounding, as the published LiteRT package does.
// Broadcasting as the float ADD: `a_index`/`b_index` map each output element to its inputs' elements.
struct AddInt8Params {
  int left_shift = 20;
  int32_t a_zero_point = 0, b_zero_point = 0, output_zero_point = 0;
  QuantizedMultiplier a_multiplier, b_multiplier, output_multiplier;
  int32_t activation_min = -128, activation_max = 127;
};
// Computes the multipliers of `params` from the scales as LiteRT's Prepare does.
void PrepareAddInt8(float a_scale, float b_scale, float output_scale, AddInt8Params* params);
int8_t AddInt8(const AddInt8Params& params, int8_t a, int8_t b);
// ADD over tensors, broadcasting by the strides of `shape` (MakeBinaryParams; its activation is ignored).
// T: int8_t, uint8_t (LiteRT's uint8 ADD has the same arithmetic; the activation bounds set the clamp), or
// int16_t (LiteRT's general int16 path: zero points 0 and left_shift 15; set `left_shift` before Prepare).
template <typename T>
void AddQuantized(const BinaryParams& shape, const AddInt8Params& params, const T* a, const T* b, T* output);
inline void AddInt8(const BinaryParams& shape, const AddInt8Params& params, const int8_t* a, const int8_t* b,
                    int8_t* output) {
  AddQuantized<int8_t>(shape, params, a, b, output);
}

// Pools: the clamp of `quant_min`/`quant_max` replaces the float activation. Average: the int32 sum of the
// window's cells inside the input divided by their count, rounded half away from zero.
// T: int8_t, uint8_t or int16_t (the same arithmetic; the clamp bounds come from the output's type).
template <typename T>
void AveragePoolQuantized(const PoolParams& shape, int32_t activation_min, int32_t activation_max, const T* input,
                          T* output);
template <typename T>
void MaxPoolQuantized(const PoolParams& shape, int32_t activation_min, int32_t activation_max, const T* input,
                      T* output);
void AveragePoolInt8(const PoolParams& shape, int32_t activation_min, int32_t activation_max, const int8_t* input,
                     int8_t* output);
void MaxPoolInt8(const PoolParams& shape, int32_t activation_min, int32_t activation_max, const int8_t* input,
                 int8_t* output);

// QUANTIZE float32 -> int8: clamp(round(x / scale) + zero_point) with the division and rounding in float (half
// away from zero), as LiteRT's AffineQuantize.
void QuantizeFloatToInt8(int64_t count, float scale, int32_t zero_point, const float* input, int8_t* output);
// The same into uint8 ([0, 255]) and int16 ([-32768, 32767]).
void QuantizeFloatToUInt8(int64_t count, float scale, int32_t zero_point, const float* input, uint8_t* output);
void QuantizeFloatToInt16(int64_t count, float scale, int32_t zero_point, const float* input, int16_t* output);
// QUANTIZE int8 -> int8 (requantize): clamp(MultiplyByQuantizedMultiplier(x - in_zp, in_scale / out_scale) +
// out_zp), double rounding as the published LiteRT package.
// Requantize between int8 and uint8, int8 and int16, and int16 to int16 (LiteRT's Requantize: the same formula, clamped to Out's range; its
// shortcut for int8 <-> uint8 with one scale and zero points 128 apart, flipping the top bit, gives the same).
template <typename In, typename Out>
void Requantize(int64_t count, int32_t input_zero_point, const QuantizedMultiplier& multiplier,
                int32_t output_zero_point, const In* input, Out* output);
void RequantizeInt8(int64_t count, int32_t input_zero_point, const QuantizedMultiplier& multiplier,
                    int32_t output_zero_point, const int8_t* input, int8_t* output);

// SOFTMAX int8 -> int8 over the innermost dimension, as LiteRT's int8 softmax (its reference resolver uses the
// same lookup-table kernel as its optimized one): table[255 - d] = expf(-input_scale * beta * d) for d in
// [0, 255] in float; per row, sum = table entries of (max - x) summed in order in float, inv = 1 / (sum *
// output_scale), out = clamp(round(table[max - x] * inv) + output_zero_point) (std::round: ties away from zero).
struct SoftmaxInt8Params {
  int64_t outer = 0;
  int64_t depth = 0;
  float output_scale = 1.0f / 256;
  int32_t output_zero_point = -128;
  float table[256] = {};
};
void PrepareSoftmaxInt8(float input_scale, float beta, SoftmaxInt8Params* params);
// T: int8_t, or uint8_t (LiteRT's uint8 softmax: the same table; the output clamped to [0, 255], usually
// quantized as 1/256, 0).
template <typename T>
void SoftmaxQuantized(const SoftmaxInt8Params& params, const T* input, T* output);
inline void SoftmaxInt8(const SoftmaxInt8Params& params, const int8_t* input, int8_t* output) {
  SoftmaxQuantized<int8_t>(params, input, output);
}

// LOG_SOFTMAX int8 -> int8 over the innermost dimension, LiteRT's reference integer kernel (gemmlowp fixed point,
// quantized.h's fixed_point): the output is quantized as 16/256, zero point 127 (LiteRT's requirement). With
// d = x - row max: each d >= diff_min, scaled by the input multiplier into Q5.26, gives exp(d) (Q0.31) summed in
// Q12.19; L = log(sum) in Q5.26; out = RoundingDivideByPOT(d_q5 - L, 22) + 127 where d exceeds the adjusted
// minimum max(diff_min - 1, (L - 2^31) scaled back by the reverse multiplier), else -128.
// The multipliers: input = QuantizeMultiplier(min(input_scale * 2^26, 2^31 - 1)) (its shift >= 0), reverse =
// QuantizeMultiplier(2^(31 - input shift) / input multiplier), diff_min = -floor(31 * 2^26 / 2^input shift).
struct LogSoftmaxInt8Params {
  int64_t outer = 0, depth = 0;
  QuantizedMultiplier input_multiplier, reverse_multiplier;
  int32_t diff_min = 0;
  Rounding rounding = Rounding::kDouble;  // of the two multipliers (measured: docs/ops.md)
};
void PrepareLogSoftmaxInt8(float input_scale, LogSoftmaxInt8Params* params);
// T: int8_t, or uint8_t (LiteRT's reference uint8 kernel: the same arithmetic, the output quantized as 16/256 with
// zero point 255, values at or below the adjusted minimum 0).
template <typename T>
void LogSoftmaxQuantized(const LogSoftmaxInt8Params& params, const T* input, T* output);
inline void LogSoftmaxInt8(const LogSoftmaxInt8Params& params, const int8_t* input, int8_t* output) {
  LogSoftmaxQuantized<int8_t>(params, input, output);
}

// MEAN int8 over the height and width of an NHWC input (keep_dims, axes [1, 2]: LiteRT's integer kernel for
// that case). The division by the count n = height * width is folded into the multiplier: with (q, e) =
// QuantizeMultiplier(input scale / output scale) and k = min(floor(log2 n), 32, 31 + e), the multiplier is
// (q * 2^k) / n (int64 division) with shift e - k. out = clamp(MultiplyByQuantizedMultiplier(sum (x -
// input_zero_point)) + output_zero_point), double rounding (measured: single rounding differs from the
// published package on 32 of 1280 outputs of tm_mobilenet_v2_int8_224, as does dividing after the multiply).
struct MeanHwInt8Params {
  int64_t batch = 0, height = 0, width = 0, channels = 0;
  int32_t input_zero_point = 0, output_zero_point = 0;
  QuantizedMultiplier multiplier;  // with the count folded in (PrepareMeanHwInt8)
};
void PrepareMeanHwInt8(float input_scale, float output_scale, MeanHwInt8Params* params);
void MeanHwInt8(const MeanHwInt8Params& params, const int8_t* input, int8_t* output);

// MEAN (every other case: any axes, with or without keep_dims) and SUM over int8. With s the sum of an output's
// n stored inputs:
//  - MEAN, as LiteRT's reference QuantizedMeanOrSum (whatever the quantizations, equal ones too): out =
//    clamp(MultiplyByQuantizedMultiplier(s - n * input_zero_point) + output_zero_point), the multiplier
//    input_scale / output_scale (in double) with 1 / n folded in as MeanHw's (k = min(floor(log2 n), 32, 31 +
//    e)), double rounding (measured: it equals the package on outputs where single rounding and truncating
//    division do not).
//  - SUM, as LiteRT's builtin kernel (its reference kernel for int8 writes garbage in the published package):
//    in float, scale = input_scale / output_scale, bias = -input_zero_point * scale * n, out =
//    clamp(round(s * scale + bias) + output_zero_point), round half away from zero.
// n = 0 (an empty input) writes zeros.
struct ReduceInt8Params {
  bool is_sum = false;
  MeanParams shape;
  int64_t count = 0;  // n
  int32_t input_zero_point = 0, output_zero_point = 0;
  QuantizedMultiplier multiplier;  // MEAN
  float scale = 0, bias = 0;       // SUM
};
// `shape` and the zero points must be set; fills the rest.
void PrepareReduceInt8(bool is_sum, float input_scale, float output_scale, ReduceInt8Params* params);
// T: int8_t, uint8_t or int16_t (the same arithmetic, clamped to the type; for uint8 and int16 also the
// keep_dims mean over height and width, which the package computes this way too: measured, its older uint8
// formula with a float bias differs on 4 of 10 outputs of qu8_mean_7; LiteRT's int16 MEAN has only this
// kernel). int16 sums over more than 65536 inputs can pass int32, and wrap as LiteRT's int32 sum does.
template <typename T>
void ReduceQuantized(const ReduceInt8Params& params, const T* input, T* output);
inline void ReduceInt8(const ReduceInt8Params& params, const int8_t* input, int8_t* output) {
  ReduceQuantized<int8_t>(params, input, output);
}

// REDUCE_PROD int8 / int16 (LiteRT's reference QuantizedReduceProd), per output over its n inputs in row-major
// order: p = x_0 - input_zero_point, then p = M(int64(p) * (x_i - input_zero_point)) for each next input, and out
// = clamp(M(p) + output_zero_point), where M is LiteRT's int64 multiply (MultiplyByQuantizedMultiplierInt64) by
// QuantizeMultiplier(input_scale / output_scale^(1 / n)) (each step rescaled so the product stays in range). n = 0
// (an empty input, where LiteRT writes nothing) gives 1 quantized as the output. The running product is an
// int32, as LiteRT's (M's int64 result narrowed, wrapping where an output scale far below the product's lets it
// grow past int32).
struct ReduceProdQuantizedParams {
  MeanParams shape;
  int64_t count = 0;  // n
  int32_t input_zero_point = 0, output_zero_point = 0;
  float output_scale = 1;
  QuantizedMultiplier multiplier;
};
// `shape` and the zero points must be set. False where the multiplier's shift passes 14, beyond which LiteRT's
// int64 multiply shifts by a negative amount (input_scale / output_scale^(1 / n) of 2^14 or more).
bool PrepareReduceProdQuantized(float input_scale, float output_scale, ReduceProdQuantizedParams* params);
// T: int8_t or int16_t.
template <typename T>
void ReduceProdQuantized(const ReduceProdQuantizedParams& params, const T* input, T* output);


}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_QUANTIZED_KERNELS_H_
