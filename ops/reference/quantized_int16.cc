// The int16 reference kernels of LOGISTIC, TANH and SOFTMAX (quantized_int16.h).
#include "ops/reference/quantized_int16.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "ops/reference/elementwise.h"

namespace kiln::ops::reference {
namespace {

// sigmoid(i / 24) in 0.16 fixed point for i in [0, 255]: the values of LiteRT's sigmoid_table_uint16 (its
// int16 LOGISTIC and TANH interpolate in it; the entries are not plain roundings of the function, so they are
// given as data).
constexpr uint16_t kSigmoidTable[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794, 41432, 42064, 42688,
    43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409,
    51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110,
    61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186,
    63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900,
    64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208,
    65221, 65234, 65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433, 65438, 65442, 65445, 65449,
    65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491,
    65493, 65495, 65497, 65498, 65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530,
    65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535};

// |x| as an unsigned value (2^31 for INT32_MIN).
uint32_t UnsignedAbs(int32_t x) { return x < 0 ? 0u - static_cast<uint32_t>(x) : static_cast<uint32_t>(x); }

// The non-power-of-two multiplier shared by LOGISTIC and TANH: s * 4096 * 3, doubled while at most 32767 / 2.
bool GeneralMultiplier(float input_scale, SigmoidTanhInt16Params* params) {
  double multiplier = static_cast<double>(input_scale) * 4096.0 * 3.0;
  int shift = 0;
  while (multiplier <= 32767.0 / 2.0 && shift <= 30) {
    ++shift;
    multiplier *= 2.0;
  }
  if (!(multiplier < 2147483648.0) || multiplier < 1.0) return false;
  params->multiplier = static_cast<int32_t>(multiplier);
  params->left_shift = shift;
  return true;
}

int16_t ClampInt16(int64_t value) {
  return static_cast<int16_t>(std::min<int64_t>(std::max<int64_t>(value, -32768), 32767));
}

// LiteRT's LUTPopulate<int16_t> with arithmetic in FloatT (double for SOFTMAX's tables, float for GELU's; see
// Int16Table). A NaN entry (a NaN scale) becomes the table's minimum rather than an undefined conversion.
template <typename FloatT, typename F>
Int16Table MakeInt16Table(FloatT input_scale, int32_t input_zero_point, FloatT output_scale, int32_t output_zero_point,
                          F f) {
  Int16Table table;
  const FloatT input_min = input_scale * static_cast<FloatT>(-32768 - input_zero_point);
  const FloatT input_max = input_scale * static_cast<FloatT>(32767 - input_zero_point);
  const FloatT output_min = output_scale * static_cast<FloatT>(-32768 - output_zero_point);
  const FloatT output_max = output_scale * static_cast<FloatT>(32767 - output_zero_point);
  constexpr int kSteps = 512;
  const FloatT step = (input_max - input_min) / static_cast<FloatT>(kSteps);
  const FloatT half_step = step / 2;
  const FloatT inv = static_cast<FloatT>(65536) / (output_max - output_min);
  const auto clamp = [](FloatT v) {
    if (std::isnan(v)) return int16_t{-32768};
    return static_cast<int16_t>(std::min<FloatT>(std::max<FloatT>(v, -32768), 32767));
  };
  for (int i = 0; i < kSteps; ++i) {
    const FloatT value = f(input_min + static_cast<FloatT>(i) * step);
    const FloatT midpoint = f(input_min + static_cast<FloatT>(i) * step + half_step);
    const FloatT next = f(input_min + static_cast<FloatT>(i + 1) * step);
    const FloatT sample = std::round(value * inv);
    const FloatT interpolated = std::round((next * inv + std::round(value * inv)) / 2);
    const FloatT midpoint_value = std::round(midpoint * inv);
    const FloatT bias = std::round((interpolated - midpoint_value) / 2);
    table.values[i] = clamp(sample - bias);
  }
  table.values[kSteps] = clamp(std::round(f(input_max) * inv));
  return table;
}

}  // namespace

bool CheckedLog2(float x, int* log2_rounded) {
  const float x_log2 = std::log(x) * (1.0f / std::log(2.0f));
  const float rounded = std::round(x_log2);
  *log2_rounded = std::isfinite(rounded) && std::abs(rounded) < 1000.0f ? static_cast<int>(rounded) : 0;
  return std::isfinite(x_log2) && std::abs(x_log2 - rounded) < 1e-3f;
}

bool PrepareLogisticInt16(float input_scale, SigmoidTanhInt16Params* params) {
  int log2 = 0;
  if (CheckedLog2(input_scale, &log2) && 12 + log2 == 0) {
    *params = {0, 0};  // the table's own scale
    return true;
  }
  return GeneralMultiplier(input_scale, params);
}

bool PrepareTanhInt16(float input_scale, SigmoidTanhInt16Params* params) {
  int log2 = 0;
  if (CheckedLog2(input_scale, &log2) && (12 + log2 == 0 || 12 + log2 == 1)) {
    *params = {0, 12 + log2};
    return true;
  }
  return GeneralMultiplier(input_scale, params);
}

namespace {

// The input in the table's domain: (in * multiplier + 2^(shift - 1)) >> shift, where multiplier 0 (a power-of-two
// scale) means 3 << shift and no shift. Wrapping, as LiteRT's int32 arithmetic does on its machines.
struct TableInput {
  int32_t multiplier;
  int shift;
  int32_t round;
  explicit TableInput(const SigmoidTanhInt16Params& params) : multiplier(params.multiplier), shift(params.left_shift) {
    if (multiplier == 0) {
      multiplier = 3 << shift;
      shift = 0;
    }
    round = shift > 0 ? int32_t{1} << (shift - 1) : 0;
  }
  int32_t operator()(int16_t in) const {
    return WrapAdd(WrapMul(static_cast<int32_t>(in), multiplier), round) >> shift;
  }
};

// The table interpolated at |x| with `fraction_bits` fraction bits, saturating at `saturated` past its end.
uint32_t Interpolate(uint32_t magnitude, int fraction_bits, uint32_t saturated) {
  const uint32_t index = magnitude >> fraction_bits;
  if (index >= 255) return saturated;
  const uint32_t a = kSigmoidTable[index], b = kSigmoidTable[index + 1];
  return (a << fraction_bits) + (magnitude & ((1u << fraction_bits) - 1)) * (b - a);
}

}  // namespace

const uint16_t* SigmoidTable() { return kSigmoidTable; }

void LogisticInt16(const SigmoidTanhInt16Params& params, int64_t count, const int16_t* input, int16_t* output) {
  const TableInput scale(params);
  for (int64_t i = 0; i < count; ++i) {
    const int32_t x = scale(input[i]);
    uint32_t result = Interpolate(UnsignedAbs(x), 9, 0x7FFFu << 10);
    result = x >= 0 ? result + (1u << 9) : (1u << 25) - result + (1u << 9) - 1;
    output[i] = static_cast<int16_t>(result >> 10);
  }
}

void TanhInt16(const SigmoidTanhInt16Params& params, int64_t count, const int16_t* input, int16_t* output) {
  const TableInput scale(params);
  for (int64_t i = 0; i < count; ++i) {
    const int32_t x = scale(input[i]);
    int32_t result = static_cast<int32_t>(Interpolate(UnsignedAbs(x), 8, 0xFFFFu << 8));
    result = x >= 0 ? result - (1 << 23) + (1 << 7) : -result + (1 << 23) + (1 << 7) - 1;
    output[i] = static_cast<int16_t>(result >> 8);
  }
}

const Int16Table& SoftmaxExpTable() {
  static const Int16Table table =
      MakeInt16Table<double>(10.0 / 65535, 32767, 2.0 / 65535, 0, [](double x) { return std::exp(x); });
  return table;
}

const Int16Table& SoftmaxReciprocalTable() {
  static const Int16Table table =
      MakeInt16Table<double>(1.0 / 65535, -32768, 2.0 / 65535, 0, [](double x) { return 1.0 / (1.0 + x); });
  return table;
}

void PrepareGeluInt16(bool approximate, float input_scale, int32_t input_zero_point, float output_scale,
                      int32_t output_zero_point, Int16Table* table) {
  *table = MakeInt16Table<float>(input_scale, input_zero_point, output_scale, output_zero_point,
                                 [approximate](float x) { return Gelu(approximate, x); });
}

void LookupInt16(const Int16Table& table, int64_t count, const int16_t* input, int16_t* output) {
  for (int64_t i = 0; i < count; ++i) output[i] = LookupInt16(table, input[i]);
}

int16_t LookupInt16(const Int16Table& table, int16_t value) {
  const int index = 256 + (value >> 7);  // [0, 511]
  const int offset = value & 0x7F;
  const int16_t base = table.values[index];
  const auto slope = static_cast<int16_t>(table.values[index + 1] - base);
  const int delta = (slope * offset + 64) >> 7;
  return static_cast<int16_t>(base + delta);
}

void PrepareSoftmaxInt16(float input_scale, float beta, SoftmaxInt16Params* params) {
  const float scaled = input_scale * beta;  // LiteRT multiplies the two floats in float
  params->multiplier = QuantizeMultiplier(static_cast<double>(scaled) / (10.0 / 65535.0));
}

bool SoftmaxInt16(const SoftmaxInt16Params& params, const int16_t* input, int16_t* output) {
  const Int16Table& exp_table = SoftmaxExpTable();
  const Int16Table& reciprocal_table = SoftmaxReciprocalTable();
  const int64_t depth = params.depth;
  for (int64_t row = 0; row < params.outer; ++row) {
    const int16_t* in = input + row * depth;
    int16_t* out = output + row * depth;
    const int16_t max = *std::max_element(in, in + depth);
    int64_t sum = 0;
    for (int64_t c = 0; c < depth; ++c) {
      const int32_t diff = static_cast<int32_t>(in[c]) - max;
      const int32_t scaled = MultiplyByQuantizedMultiplier(diff, params.multiplier, params.rounding);
      const int16_t centred = ClampInt16(static_cast<int64_t>(scaled) + 32767);
      out[c] = LookupInt16(exp_table, centred);
      sum += out[c];
    }
    if (sum > std::numeric_limits<int32_t>::max() || sum <= 0) return false;
    int headroom_plus_one = 0;  // the leading zeros of the 32-bit sum: [1, 31]
    while ((static_cast<uint32_t>(sum) << headroom_plus_one) < 0x80000000u) ++headroom_plus_one;
    const int64_t shifted_sum = ((sum << (headroom_plus_one - 1)) + (1 << 13)) >> 14;
    const int16_t reciprocal = LookupInt16(reciprocal_table, ClampInt16(shifted_sum - ((1 << 15) + (1 << 16))));
    const int right_shift = 31 - headroom_plus_one;
    const int64_t round = right_shift > 0 ? int64_t{1} << (right_shift - 1) : 0;
    for (int64_t c = 0; c < depth; ++c) {
      const int64_t result = (static_cast<int64_t>(out[c]) * reciprocal + round) >> right_shift;
      out[c] = static_cast<int16_t>(std::min<int64_t>(std::max<int64_t>(result, 0), 32767));
    }
  }
  return true;
}

void PrepareSoftmaxTo16(float input_scale, float beta, SoftmaxTo16Params* params) {
  constexpr int kInputBits = 5;
  const double real = std::min(static_cast<double>(beta) * static_cast<double>(input_scale) *
                                   static_cast<double>(int64_t{1} << (31 - kInputBits)),
                               static_cast<double>((int64_t{1} << 31) - 1));
  params->multiplier = QuantizeMultiplier(real);
  const double max_input_rescaled = static_cast<double>((1 << kInputBits) - 1) *
                                    static_cast<double>(int64_t{1} << (31 - kInputBits)) /
                                    std::ldexp(1.0, params->multiplier.shift);
  params->diff_min = -static_cast<int32_t>(std::floor(max_input_rescaled));
}

template <typename T>
bool SoftmaxTo16(const SoftmaxTo16Params& p, const T* input, int16_t* output) {
  constexpr int kInputBits = 5, kAccumulationBits = 12;
  for (int64_t row = 0; row < p.outer; ++row) {
    const T* in = input + row * p.depth;
    int16_t* out = output + row * p.depth;
    int32_t max = std::numeric_limits<T>::min();
    for (int64_t j = 0; j < p.depth; ++j) max = std::max<int32_t>(max, in[j]);
    const auto exp_of = [&](int32_t diff) {
      return fixed_point::ExpOnNegativeValues(MultiplyByQuantizedMultiplier(diff, p.multiplier, p.rounding),
                                              kInputBits);
    };
    uint32_t sum = 0;  // Q12.19, wrapping as LiteRT's fixed-point additions
    for (int64_t j = 0; j < p.depth; ++j) {
      const int32_t diff = in[j] - max;
      if (diff >= p.diff_min) {
        sum += static_cast<uint32_t>(fixed_point::Rescale(exp_of(diff), 0, kAccumulationBits));
      }
    }
    int headroom_plus_one = 0;  // the sum's leading zeros
    while (headroom_plus_one < 32 && (sum << headroom_plus_one) < 0x80000000u) ++headroom_plus_one;
    if (headroom_plus_one >= 32) return false;  // a zero sum (not reached: the row maximum's exp is 1)
    const int num_bits_over_unit = kAccumulationBits - headroom_plus_one;
    const auto shifted_minus_one = static_cast<int32_t>((sum << headroom_plus_one) - 0x80000000u);
    const int32_t reciprocal = fixed_point::OneOverOnePlusX(shifted_minus_one);
    const int exponent = num_bits_over_unit + 31 - 16;
    if (exponent < 0 || exponent > 31) return false;
    for (int64_t j = 0; j < p.depth; ++j) {
      const int32_t diff = in[j] - max;
      if (diff < p.diff_min) {
        out[j] = -32768;
        continue;
      }
      const int32_t unsaturated =
          RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(reciprocal, exp_of(diff)), exponent);
      out[j] = ClampInt16(static_cast<int64_t>(unsaturated) - 32768);
    }
  }
  return true;
}

template bool SoftmaxTo16<int8_t>(const SoftmaxTo16Params&, const int8_t*, int16_t*);
template bool SoftmaxTo16<uint8_t>(const SoftmaxTo16Params&, const uint8_t*, int16_t*);

}  // namespace kiln::ops::reference
