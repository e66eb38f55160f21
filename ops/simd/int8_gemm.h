// Kiln's own int8 GEMM for CPUs with AVX-512 VNNI (vpdpbusd: four u8 x s8 byte products summed into each int32
// lane per instruction), the fast path of int8 1x1 convolutions (issue #15). Debian 12's XNNPACK (a 2022
// snapshot) has no VNNI kernel: its qs8 GEMM widens bytes to 16 bits and uses vpmaddwd, about half the work per
// instruction.
//
// C[m][n] = requantize(bias[n] + sum_k (A[m][k] - input_zero_point) * W[n][k]), bit-exact with Kiln's reference
// int8 CONV_2D (ops/reference/quantized_kernels.h ConvQuantized with Rounding::kDouble): int32 sums that wrap,
// LiteRT's per-channel fixed-point multiplier with gemmlowp's double rounding, the output zero point, the clamp.
//
// The packed-weight format (made once, when the host run is built):
// - the output channels in blocks of 16 (one zmm of int32 lanes; the last block padded with zero weights);
// - within a block, K in groups of 4 consecutive bytes (the last group padded with zeros): group g of block b is
//   64 bytes, lane j holding W[16 b + j][4 g .. 4 g + 3]; blocks one after another, each ceil(K / 4) * 64 bytes;
// - vpdpbusd multiplies unsigned bytes by signed ones, so the activations are made unsigned by + 128 (a xor of
//   0x80) and the correction -(input_zero_point + 128) * sum_k W[n][k] is folded into the int32 bias once;
// - per output channel, the requantization: the multiplier and its left shift (shift > 0), and, for the right
//   shift e = max(-shift, 0), the two roundings in one: the reference's (x * m + 2^30) >> 31 (gemmlowp's rounding
//   doubling high multiply for m >= 0) followed by the divide by 2^e rounding half away from zero is exactly
//   (x * m + 2^30 + c * 2^31) >> (31 + e) in 64 bits, with c = 2^(e - 1) - (1 if x * m < -2^30) for e >= 1 and
//   c = 0 for e = 0 (floor((floor(a) + c) / n) = floor((a + c) / n)). The int64 constants are stored per block
//   with the even channels' 8 first and the odd channels' 8 after (the even and odd int32 lanes of a zmm are
//   multiplied separately, in 64-bit lanes).
#ifndef KILN_OPS_SIMD_INT8_GEMM_H_
#define KILN_OPS_SIMD_INT8_GEMM_H_

#include <cstdint>
#include <vector>

#include "ops/reference/conv.h"
#include "ops/reference/quantized.h"
#include "ops/simd/cpu.h"

namespace kiln::ops::vnni {

// Whether this CPU runs the kernel (AVX-512 F, BW, VL and VNNI), and this build has it (x86-64 with a compiler
// that knows the instructions). The answer is the CPU's, read once; KILN_DISABLE_VNNI=1 in the environment
// turns the kernel off (to compare with the path the machines without VNNI take).
bool Available();

constexpr int kLanes = 16;      // output channels per block
constexpr int kGroupBytes = 4;  // consecutive K bytes per int32 lane

// The weights, bias and requantization of one int8 GEMM (a 1x1 CONV_2D), packed for Int8Gemm.
struct PackedInt8Gemm {
  int64_t k = 0;                // input channels
  int64_t n = 0;                // output channels
  int64_t k_groups = 0;         // ceil(k / 4)
  int64_t blocks = 0;           // ceil(n / 16)
  simd::AlignedVector<int8_t> weights;  // blocks * k_groups * 64 bytes, the layout above
  // Per padded output channel (blocks * 16 entries):
  std::vector<int32_t> bias;        // bias[n] - (input_zero_point + 128) * sum_k W[n][k], wrapping
  std::vector<int32_t> multiplier;  // the fixed-point significand (>= 0)
  std::vector<int32_t> left_shift;  // max(shift, 0)
  bool any_left_shift = false;
  // Even channels first, then odd, per block (see above):
  std::vector<int64_t> rounding;     // 2^30 + (e >= 1 ? 2^(30 + e) : 0)
  std::vector<int64_t> negative;     // subtracted when x * m < -2^30: e >= 1 ? 2^31 : 0
  std::vector<int64_t> total_shift;  // 31 + e
  int32_t output_zero_point = 0;
  int32_t activation_min = -128, activation_max = 127;
  // XNNPACK's requantization instead (UseFloatRequantization): out = clamp(rne(min(max(float(acc) * scale[n],
  // activation_min - zero point), activation_max - zero point)) + zero point), in float32.
  bool float_requantization = false;
  std::vector<float> scale;  // per padded output channel
};

// Packs weights W [n][k] (row-major, symmetric int8), the int32 bias [n] (or null) and one multiplier per output
// channel (`multipliers.size()` == n, or 1 for all). Shifts must be in [-31, 30].
PackedInt8Gemm PackInt8Gemm(const int8_t* weights, int64_t n, int64_t k, const int32_t* bias, int32_t input_zero_point,
                            const std::vector<reference::QuantizedMultiplier>& multipliers, int32_t output_zero_point,
                            int32_t activation_min, int32_t activation_max);

// Makes `packed` requantize as XNNPACK's qs8/qc8 convolutions do (and so LiteRT's default XNNPACK delegate):
// scale[n] = input_scale * filter_scale[n] / output_scale in float32, the product of the int32 sum and the scale
// rounded to nearest even. Within one step of the fixed-point form; equal to XNNPACK's operator byte for byte.
void UseFloatRequantization(PackedInt8Gemm* packed, float input_scale, const std::vector<float>& filter_scales,
                            float output_scale);

// Rows [row_begin, row_end) of C = A * W^T: A is [rows][k] int8 with rows `lda` bytes apart, C [rows][n] int8
// with rows `ldc` bytes apart. Only when Available().
void Int8Gemm(const PackedInt8Gemm& packed, const int8_t* a, int64_t lda, int8_t* c, int64_t ldc, int64_t row_begin,
              int64_t row_end);

// Rows [row_begin, row_end) of a CONV_2D of any filter size, stride, dilation and padding through the same GEMM:
// row r is output pixel r (images one after another, NHWC), and its K = filter_height * filter_width *
// input_channels values, gathered from the dense NHWC int8 `input` in the filter's order (ky, kx, channel: a
// CONV_2D filter [n][ky][kx][c] is the GEMM's W [n][k] as it is stored), are copied tile by tile into the kernel's
// scratch rows; taps in the padding read `input_zero_point`, so they add nothing, as in the reference. `packed` was
// made from the whole filter (k == filter_height * filter_width * input_channels) with the same input zero point;
// `output` is dense NHWC ([rows][n]). Byte-exact with ConvQuantized on `shape` (or with XNNPACK's float
// requantization, as for Int8Gemm). Only when Available().
void Int8Conv(const PackedInt8Gemm& packed, const reference::ConvParams& shape, int32_t input_zero_point,
              const int8_t* input, int8_t* output, int64_t row_begin, int64_t row_end);

}  // namespace kiln::ops::vnni

#endif  // KILN_OPS_SIMD_INT8_GEMM_H_
