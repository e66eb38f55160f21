// The int8 reference kernels of the elementwise ops (quantized_elementwise.h).
#include "ops/reference/elementwise.h"
#include "ops/reference/quantized_elementwise.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::ops::reference {
namespace {

// Clamped to T's range.
template <typename T>
T ClampTo(int32_t value) {
  constexpr int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  return static_cast<T>(std::min(std::max(value, lo), hi));
}

// The published LiteRT package applies these ops' multipliers with gemmlowp's double rounding (measured:
// single rounding differs from its reference kernels on SUB, MUL, PRELU, RELU_N1_TO_1 and LEAKY_RELU models,
// double rounding on none; see docs/ops.md).
int32_t Scale(int32_t x, const QuantizedMultiplier& m) {
  return MultiplyByQuantizedMultiplier(x, m, Rounding::kDouble);
}

// LiteRT's frexp-based multiplier of a real multiplier computed in float (its Prepare functions compute the
// ratios of float scales in float, then widen to double).
QuantizedMultiplier FloatMultiplier(float real) { return QuantizeMultiplier(static_cast<double>(real)); }

// gemmlowp's 16-bit fixed-point helpers, as LiteRT's HardSwish uses them.
int16_t SaturatingRoundingDoublingHighMul16(int16_t a, int16_t b) {
  if (a == b && a == std::numeric_limits<int16_t>::min()) return std::numeric_limits<int16_t>::max();
  const int32_t product = static_cast<int32_t>(a) * static_cast<int32_t>(b);
  const int32_t nudge = product >= 0 ? (1 << 14) : (1 - (1 << 14));
  return static_cast<int16_t>((product + nudge) / (1 << 15));  // truncating division
}

// a * b / 2^15 truncated toward zero (ARM's SQDMULH), saturating the one overflow case.
int16_t SaturatingDoublingHighMul16(int16_t a, int16_t b) {
  if (a == b && a == std::numeric_limits<int16_t>::min()) return std::numeric_limits<int16_t>::max();
  return static_cast<int16_t>((static_cast<int32_t>(a) * static_cast<int32_t>(b)) / (1 << 15));
}

// x / 2^exponent rounded half away from zero, with gemmlowp's int16 mask: for exponents of 16 and more the
// mask (2^exponent - 1) wraps to -1 in 16 bits, which LiteRT's results then follow.
int16_t RoundingDivideByPOT16(int16_t x, int exponent) {
  const int16_t mask = static_cast<int16_t>((int64_t{1} << std::min(exponent, 62)) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  const int32_t shifted = static_cast<int32_t>(x) >> std::min(exponent, 31);
  return static_cast<int16_t>(shifted + (remainder > threshold ? 1 : 0));
}

int16_t SaturatingLeftShift16(int16_t value, int amount) {
  const int64_t result = static_cast<int64_t>(value) * (int64_t{1} << std::min(amount, 40));
  return static_cast<int16_t>(std::min<int64_t>(std::max<int64_t>(result, -32768), 32767));
}

// LiteRT's DownScaleInt32ToInt16Multiplier: the 31-bit significand rounded to its top 16 bits (half up),
// saturating at 2^15 - 1.
int16_t DownScaleMultiplier(int32_t multiplier) {
  constexpr int32_t kRoundingOffset = 1 << 15;
  if (multiplier >= std::numeric_limits<int32_t>::max() - kRoundingOffset)
    return std::numeric_limits<int16_t>::max();
  return static_cast<int16_t>((multiplier + kRoundingOffset) >> 16);
}

}  // namespace

namespace {

int32_t SubValues(const AddInt8Params& p, int32_t a, int32_t b) {
  const int32_t shifted_a = (a - p.a_zero_point) * (int32_t{1} << p.left_shift);
  const int32_t shifted_b = (b - p.b_zero_point) * (int32_t{1} << p.left_shift);
  const int32_t difference = WrapSub(Scale(shifted_a, p.a_multiplier), Scale(shifted_b, p.b_multiplier));
  const int32_t out = WrapAdd(Scale(difference, p.output_multiplier), p.output_zero_point);
  return std::min(std::max(out, p.activation_min), p.activation_max);
}

}  // namespace

int8_t SubInt8(const AddInt8Params& p, int8_t a, int8_t b) { return static_cast<int8_t>(SubValues(p, a, b)); }

template <typename T>
void SubQuantized(const BinaryParams& shape, const AddInt8Params& params, const T* a, const T* b, T* output) {
  ForEachBroadcast(shape, [&](int64_t i, int64_t a_offset, int64_t b_offset) {
    output[i] = static_cast<T>(SubValues(params, a[a_offset], b[b_offset]));
  });
}

void PrepareMulInt8(float a_scale, float b_scale, float output_scale, MulInt8Params* params) {
  params->multiplier = FloatMultiplier(a_scale * b_scale / output_scale);
}

template <typename T>
void MulQuantized(const BinaryParams& shape, const MulInt8Params& p, const T* a, const T* b, T* output) {
  ForEachBroadcast(shape, [&](int64_t i, int64_t a_offset, int64_t b_offset) {
    const int32_t product = (static_cast<int32_t>(a[a_offset]) - p.a_zero_point) *
                            (static_cast<int32_t>(b[b_offset]) - p.b_zero_point);
    const int32_t out = WrapAdd(Scale(product, p.multiplier), p.output_zero_point);
    output[i] = static_cast<T>(std::min(std::max(out, p.activation_min), p.activation_max));
  });
}

template <typename T>
void MaximumMinimumQuantized(const BinaryParams& shape, const T* a, const T* b, T* output) {
  const bool maximum = shape.op == BinaryOp::kMaximum;
  ForEachBroadcast(shape, [&](int64_t i, int64_t a_offset, int64_t b_offset) {
    const T x = a[a_offset], y = b[b_offset];
    output[i] = maximum ? std::max(x, y) : std::min(x, y);
  });
}

void PreparePreluInt8(float input_scale, float alpha_scale, float output_scale, PreluInt8Params* params) {
  params->positive = FloatMultiplier(input_scale / output_scale);
  params->negative = FloatMultiplier(input_scale * alpha_scale / output_scale);
}

template <typename T>
void PreluQuantized(const BinaryParams& shape, const PreluInt8Params& p, const T* input, const T* alpha, T* output) {
  ForEachBroadcast(shape, [&](int64_t i, int64_t input_offset, int64_t alpha_offset) {
    const int32_t x = static_cast<int32_t>(input[input_offset]) - p.input_zero_point;
    int32_t out;
    if (x >= 0) {
      out = Scale(x, p.positive);
    } else {
      const int32_t slope = static_cast<int32_t>(alpha[alpha_offset]) - p.alpha_zero_point;
      out = Scale(x * slope, p.negative);
    }
    output[i] = ClampTo<T>(WrapAdd(out, p.output_zero_point));
  });
}

void PrepareReluInt8(int activation, float input_scale, float output_scale, int32_t input_zero_point,
                     int32_t output_zero_point, RequantizeClampInt8Params* params, int32_t type_min,
                     int32_t type_max) {
  params->input_zero_point = input_zero_point;
  params->output_zero_point = output_zero_point;
  params->multiplier = FloatMultiplier(input_scale / output_scale);
  QuantizedActivationRange(activation, output_scale, output_zero_point, &params->activation_min,
                           &params->activation_max, type_min, type_max);
}

template <typename T>
void RequantizeClampQuantized(const RequantizeClampInt8Params& p, int64_t count, const T* input, T* output) {
  for (int64_t i = 0; i < count; ++i) {
    const int32_t out = WrapAdd(p.output_zero_point,
                                Scale(static_cast<int32_t>(input[i]) - p.input_zero_point, p.multiplier));
    output[i] = static_cast<T>(std::min(std::max(out, p.activation_min), p.activation_max));
  }
}

void PrepareLeakyReluInt8(float input_scale, float alpha, float output_scale, LeakyReluInt8Params* params) {
  params->identity = FloatMultiplier(input_scale / output_scale);
  const float alpha_multiplier = input_scale * alpha / output_scale;
  params->alpha_negative = alpha_multiplier < 0.0f;
  params->alpha = FloatMultiplier(std::fabs(alpha_multiplier));
}

template <typename T>
void LeakyReluQuantized(const LeakyReluInt8Params& p, int64_t count, const T* input, T* output) {
  for (int64_t i = 0; i < count; ++i) {
    const int32_t x = static_cast<int32_t>(input[i]) - p.input_zero_point;
    int32_t out = p.output_zero_point;
    if (x >= 0) {
      out = WrapAdd(out, Scale(x, p.identity));
    } else {
      const int32_t scaled = Scale(x, p.alpha);
      out = p.alpha_negative ? WrapSub(out, scaled) : WrapAdd(out, scaled);
    }
    output[i] = ClampTo<T>(out);
  }
}

template <typename T>
void PrepareLookupTable(LookupFunction function, float input_scale, int32_t input_zero_point,
                        float output_scale, int32_t output_zero_point, LookupTable<T>* table) {
  constexpr int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  const float inverse_scale = 1.0f / output_scale;
  for (int32_t v = lo; v <= hi; ++v) {
    const float x = input_scale * static_cast<float>(v - input_zero_point);
    float y = 0.0f;
    switch (function) {
      case LookupFunction::kLogistic:
        y = 1.0f / (1.0f + std::exp(-x));
        break;
      case LookupFunction::kTanh:
        y = std::tanh(x);
        break;
      case LookupFunction::kElu:
        y = x < 0.0f ? std::expm1(x) : x;
        break;
      case LookupFunction::kExp:
        y = std::exp(x);  // +inf beyond float's range: clamped below
        break;
      case LookupFunction::kGelu:
      case LookupFunction::kGeluApproximate:
        y = Gelu(function == LookupFunction::kGeluApproximate, x);
        break;
    }
    const float rounded = std::round(y * inverse_scale) + static_cast<float>(output_zero_point);
    // Clamped in float first, so that huge values (a tiny output scale) convert to int32 defined.
    const float clamped = std::min(std::max(rounded, static_cast<float>(lo)), static_cast<float>(hi));
    table->table[v - lo] = static_cast<T>(std::isnan(clamped) ? static_cast<float>(lo) : clamped);
  }
}

template <typename T>
void Lookup(const LookupTable<T>& table, int64_t count, const T* input, T* output) {
  constexpr int32_t lo = std::numeric_limits<T>::min();
  for (int64_t i = 0; i < count; ++i) output[i] = table.table[static_cast<int32_t>(input[i]) - lo];
}

#define KILN_INSTANTIATE_QUANTIZED(T)                                                                   \
  template void SubQuantized<T>(const BinaryParams&, const AddInt8Params&, const T*, const T*, T*);     \
  template void MulQuantized<T>(const BinaryParams&, const MulInt8Params&, const T*, const T*, T*);     \
  template void MaximumMinimumQuantized<T>(const BinaryParams&, const T*, const T*, T*);                \
  template void RequantizeClampQuantized<T>(const RequantizeClampInt8Params&, int64_t, const T*, T*);   \
  template void PrepareLookupTable<T>(LookupFunction, float, int32_t, float, int32_t, LookupTable<T>*); \
  template void Lookup<T>(const LookupTable<T>&, int64_t, const T*, T*);
KILN_INSTANTIATE_QUANTIZED(int8_t)
KILN_INSTANTIATE_QUANTIZED(uint8_t)
template void SubQuantized<int16_t>(const BinaryParams&, const AddInt8Params&, const int16_t*, const int16_t*,
                                    int16_t*);
template void MulQuantized<int16_t>(const BinaryParams&, const MulInt8Params&, const int16_t*, const int16_t*,
                                    int16_t*);
template void MaximumMinimumQuantized<int16_t>(const BinaryParams&, const int16_t*, const int16_t*, int16_t*);
template void RequantizeClampQuantized<int16_t>(const RequantizeClampInt8Params&, int64_t, const int16_t*,
                                                int16_t*);
#undef KILN_INSTANTIATE_QUANTIZED

bool PrepareHardSwishInt8(float input_scale, float output_scale, HardSwishInt8Params* params) {
  const float hires_input_scale = (1.0f / 128.0f) * input_scale;
  const float reluish_scale = 3.0f / 32768.0f;
  const QuantizedMultiplier output = FloatMultiplier(hires_input_scale / output_scale);
  const QuantizedMultiplier reluish = FloatMultiplier(hires_input_scale / reluish_scale);
  params->output_multiplier = DownScaleMultiplier(output.multiplier);
  params->output_exponent = output.shift;
  params->reluish_multiplier = DownScaleMultiplier(reluish.multiplier);
  params->reluish_exponent = reluish.shift;
  return output.shift <= 0;
}

template <typename T>
void HardSwishQuantized(const HardSwishInt8Params& p, int64_t count, const T* input, T* output) {
  for (int64_t i = 0; i < count; ++i) {
    const int16_t x = static_cast<int16_t>(static_cast<int32_t>(input[i]) - p.input_zero_point);
    const int16_t hires = static_cast<int16_t>(x * (1 << 7));  // |x| <= 255 (uint8 too): fits
    const int16_t preshift_output = SaturatingRoundingDoublingHighMul16(hires, p.output_multiplier);
    // The reluish value: hires rescaled so that 3.0 is 2^15 (saturating), in [-1, 1] as Q15. A left shift is
    // split around the multiply so that saturation shows only in the last step.
    int16_t reluish = hires;
    if (p.reluish_exponent > 0) reluish = SaturatingLeftShift16(reluish, p.reluish_exponent - 1);
    reluish = SaturatingRoundingDoublingHighMul16(reluish, p.reluish_multiplier);
    if (p.reluish_exponent > 0) reluish = SaturatingLeftShift16(reluish, 1);
    if (p.reluish_exponent < 0) reluish = RoundingDivideByPOT16(reluish, -p.reluish_exponent);
    // [-1, 1] -> [0, 1].
    reluish = static_cast<int16_t>((static_cast<int32_t>(reluish) + (1 << 15)) >> 1);
    const int16_t preshift = SaturatingDoublingHighMul16(reluish, preshift_output);
    // The zero point is added in 16 bits, wrapping as LiteRT's int16 arithmetic does.
    const int16_t shifted = RoundingDivideByPOT16(preshift, -p.output_exponent);
    const int16_t out = static_cast<int16_t>(static_cast<int32_t>(shifted) + p.output_zero_point);
    output[i] = ClampTo<T>(out);
  }
}

#define KILN_INSTANTIATE_ACTIVATIONS(T)                                                                 \
  template void PreluQuantized<T>(const BinaryParams&, const PreluInt8Params&, const T*, const T*, T*); \
  template void LeakyReluQuantized<T>(const LeakyReluInt8Params&, int64_t, const T*, T*);               \
  template void HardSwishQuantized<T>(const HardSwishInt8Params&, int64_t, const T*, T*);
KILN_INSTANTIATE_ACTIVATIONS(int8_t)
KILN_INSTANTIATE_ACTIVATIONS(uint8_t)
#undef KILN_INSTANTIATE_ACTIVATIONS
template void LeakyReluQuantized<int16_t>(const LeakyReluInt8Params&, int64_t, const int16_t*, int16_t*);

}  // namespace kiln::ops::reference
