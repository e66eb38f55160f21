// DEQUANTIZE and the float16 conversion (dequantize.h).

#include "ops/reference/dequantize.h"

#include <cmath>
#include <cstring>
#include <utility>

namespace kiln::ops::reference {

DequantizeParams MakeDequantizeParams(const Dims& dims, int quantized_dimension, std::vector<float> scales,
                                      std::vector<int32_t> zero_points) {
  DequantizeParams params;
  params.channels = static_cast<int64_t>(scales.size());
  if (params.channels <= 1) {
    params.outer = 1;
    params.channels = 1;
    params.inner = NumElements(dims);
  } else {
    params.outer = 1;
    params.inner = 1;
    for (int d = 0; d < quantized_dimension; ++d) params.outer *= dims[d];
    for (size_t d = quantized_dimension + 1; d < dims.size(); ++d) params.inner *= dims[d];
  }
  params.scales = std::move(scales);
  params.zero_points = std::move(zero_points);
  return params;
}

namespace {

template <typename T>
void Dequantize(const DequantizeParams& p, const T* input, float* output) {
  int64_t i = 0;
  for (int64_t o = 0; o < p.outer; ++o) {
    for (int64_t c = 0; c < p.channels; ++c) {
      const float scale = p.scales[c];
      const int32_t zero_point = p.zero_points[c];
      for (int64_t k = 0; k < p.inner; ++k, ++i) {
        output[i] = scale * static_cast<float>(static_cast<int32_t>(input[i]) - zero_point);
      }
    }
  }
}

}  // namespace

void DequantizeFloat(const DequantizeParams& p, const int8_t* input, float* output) {
  Dequantize(p, input, output);
}
void DequantizeFloat(const DequantizeParams& p, const uint8_t* input, float* output) {
  Dequantize(p, input, output);
}
void DequantizeFloat(const DequantizeParams& p, const int16_t* input, float* output) {
  Dequantize(p, input, output);
}

float HalfToFloat(uint16_t bits) {
  const uint32_t sign = (bits >> 15) & 1u;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // zero or subnormal: mantissa * 2^-24
  } else if (exponent == 0x1f) {
    magnitude = mantissa == 0 ? INFINITY : NAN;
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400u), static_cast<int>(exponent) - 25);
  }
  return sign ? -magnitude : magnitude;
}

void HalfToFloatArray(int64_t count, const uint16_t* input, float* output) {
  for (int64_t i = 0; i < count; ++i) output[i] = HalfToFloat(input[i]);
}

}  // namespace kiln::ops::reference
