// DEQUANTIZE: real = scale * (quantized - zero_point), per tensor or per channel; and float16 -> float32.
// Also used to expand constant int8 weights of hybrid ops to float once, in Prepare.
#ifndef KILN_OPS_REFERENCE_DEQUANTIZE_H_
#define KILN_OPS_REFERENCE_DEQUANTIZE_H_

#include <cstdint>
#include <vector>

#include "ops/reference/common.h"

namespace kiln::ops::reference {

// The tensor is viewed as [outer, channels, inner]; element (o, c, i) uses scales[c] and zero_points[c].
// Per-tensor quantization is channels == 1 (outer = 1, inner = element count).
struct DequantizeParams {
  int64_t outer = 0;
  int64_t channels = 1;
  int64_t inner = 0;
  std::vector<float> scales;
  std::vector<int32_t> zero_points;
};

// Params for a tensor of shape `dims` quantized along `quantized_dimension` with `scales.size()` channels
// (a single scale means per tensor, and then quantized_dimension is ignored).
DequantizeParams MakeDequantizeParams(const Dims& dims, int quantized_dimension, std::vector<float> scales,
                                      std::vector<int32_t> zero_points);

void DequantizeFloat(const DequantizeParams& params, const int8_t* input, float* output);
void DequantizeFloat(const DequantizeParams& params, const uint8_t* input, float* output);
void DequantizeFloat(const DequantizeParams& params, const int16_t* input, float* output);

// IEEE 754 binary16 (bits) to binary32, exactly: normals, subnormals, zeros, infinities and NaNs.
float HalfToFloat(uint16_t bits);
void HalfToFloatArray(int64_t count, const uint16_t* input, float* output);

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_DEQUANTIZE_H_
