// Kiln's own AVX2/FMA float DEPTHWISE_CONV_2D (depth multiplier 1), issue #10. Debian 12's XNNPACK (a 2022
// snapshot built with GCC) ran ts_mobilenet_v1_025_224_float's 3x3 depthwise layers in 23% of the model's time,
// against 16% for LiteRT's newer build of the same kind of kernel (`perf`).
//
// Each step takes one vector of 8 channels over 4 output pixels of a row: the kernel's weights for those channels
// stay in registers (3x3: 9 vectors) and every input vector loaded feeds one fused multiply-add into one of 4
// independent sums. Pixels whose window lies inside the input run without checks; the few at the row's ends, and
// the rows whose window crosses the top or bottom edge, skip the taps that fall in the padding (zeros, as
// DEPTHWISE_CONV_2D's).
//
// out[b][y][x][c] = clamp(bias[c] + sum_{ky,kx} in[b][y s_h - pad_top + ky][x s_w - pad_left + kx][c]
//                                              * W[ky][kx][c], min, max), in float32: the taps are summed in the
// reference kernel's order (ky, then kx) but with fused multiply-adds, so results differ from it by rounding only.
//
// The AVX-512F form takes vectors of 16 channels, the same kernel body (ops/simd/float_depthwise_kernel.inc).
//
// The packed-weight format (made once, when the host run is built, for one width): the channels in vectors of L = 8
// (AVX2) or 16 (AVX-512), the last padded with zero weights; vector v holds, for each tap (ky, kx) in order, the L
// weights W[ky][kx][L v + j]. The bias
// is padded the same way (zero when the node has none).
#ifndef KILN_OPS_SIMD_FLOAT_DEPTHWISE_H_
#define KILN_OPS_SIMD_FLOAT_DEPTHWISE_H_

#include <cstdint>
#include <vector>

#include "ops/simd/cpu.h"
#include "ops/simd/float_conv.h"

namespace kiln::ops::depthwise {

// Whether this CPU runs the kernel (AVX2 and FMA) and this build has it (x86-64 with GCC or clang). Read once;
// KILN_DISABLE_DEPTHWISE=1 in the environment turns the kernel off, both forms (to compare with XNNPACK's).
bool Available();
// Whether this CPU runs the form of `width` (AVX-512: AVX-512F, 16 channels a vector) and this build has it.
using Width = simd::Width;
bool Available(Width width);

// The most channels the host engine gives the kernel. On the AVX2 EPYC of 2026-12-05 (bench/float_conv_bench.cc,
// one thread) it ran 3x3 layers of 8 to 32 channels 1.1 to 2x as fast as XNNPACK's, and 5x5 ones 2x; with 64 to 256
// channels over small images XNNPACK's kernel, which walks all channels of one pixel, is up to 1.7x faster.
constexpr int64_t kMaxChannels = 32;

// The weights, bias and clamp of one DEPTHWISE_CONV_2D, packed for Depthwise. The shape's in_c and out_c are both
// the channel count.
struct PackedDepthwise {
  Width width = Width::kAvx2;
  int64_t lanes = 8;            // channels per vector: 8 (AVX2) or 16 (AVX-512)
  conv::ConvShape shape;
  int64_t vectors = 0;          // ceil(channels / lanes)
  simd::AlignedVector<float> weights;   // the layout above
  simd::AlignedVector<float> bias;      // vectors * lanes
  float min = 0.0f, max = 0.0f;  // the fused activation's clamp (-inf, +inf for none)
};

// Packs weights W [1][kernel_h][kernel_w][channels] (as DEPTHWISE_CONV_2D stores them with depth multiplier 1)
// and the bias [channels] (or null).
PackedDepthwise PackDepthwise(const conv::ConvShape& shape, const float* weights, const float* bias, float min,
                              float max, Width width = Width::kAvx2);

// Output rows [row_begin, row_end) of the whole batch (row r is image r / out_h, row r % out_h), all channels:
// `in` and `out` are dense NHWC tensors, at the packed width. Only when Available(packed.width).
void Depthwise(const PackedDepthwise& packed, const float* in, float* out, int64_t row_begin, int64_t row_end);

}  // namespace kiln::ops::depthwise

#endif  // KILN_OPS_SIMD_FLOAT_DEPTHWISE_H_
