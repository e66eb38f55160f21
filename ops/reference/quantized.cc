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
  // |x * multiplier| < 2^62 and round <= 2^61: no overflow. >> on a negative int64 is arithmetic (clang; LiteRT relies on it too).
  const int64_t result = (static_cast<int64_t>(x) * static_cast<int64_t>(multiplier) + round) >> total_shift;
  return static_cast<int32_t>(result);
}

int32_t MultiplyByQuantizedMultiplierDoubleRounding(int32_t x, int32_t multiplier, int shift) {
  const int left_shift = shift > 0 ? shift : 0;
  const int right_shift = shift > 0 ? 0 : -shift;
  // LiteRT multiplies in int32; wrap as two's complement rather than overflow.
  const int32_t shifted = static_cast<int32_t>(static_cast<uint32_t>(x) * (uint32_t{1} << left_shift));
  return RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(shifted, multiplier), right_shift);
}

std::vector<QuantizedMultiplier> PerChannelMultipliers(float input_scale, const std::vector<float>& filter_scales,
                                                       float output_scale, int64_t channels) {
  std::vector<QuantizedMultiplier> result(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    const double filter_scale = static_cast<double>(filter_scales.size() == 1 ? filter_scales[0]
                                                                               : filter_scales[static_cast<size_t>(c)]);
    result[static_cast<size_t>(c)] =
        QuantizeMultiplier(static_cast<double>(input_scale) * filter_scale / static_cast<double>(output_scale));
  }
  return result;
}

bool QuantizedActivationRange(int activation, float output_scale, int32_t output_zero_point, int32_t* min,
                              int32_t* max) {
  const auto quantize = [&](float value) {
    return output_zero_point + static_cast<int32_t>(std::round(value / output_scale));
  };
  int32_t lo = -128, hi = 127;
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

}  // namespace kiln::ops::reference
