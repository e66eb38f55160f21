// Kiln's own AVX2/FMA direct convolution for float CONV_2D over few input channels (1 to 4: the first layer of
// an image model, which reads RGB), issue #10. Debian 12's XNNPACK (a 2022 snapshot built with GCC) runs such a
// node as an indirect GEMM whose K is the input channels of one tap (3), in its "s4" form that works on four k
// at a time: every tap takes the remainder path, masking a quarter of each load away, and GCC's build of it keeps
// moving registers. On ts_mobilenet_v1_025_224_float that first layer (224 x 224 x 3 -> 112 x 112 x 8) took 17%
// of the model's time against LiteRT's 6.5%.
//
// Here the channels of each tap are a compile-time count, and each step keeps eight vectors of sums: 8 output
// pixels x 8 output channels, or 4 pixels x 16 channels. Every weight vector loaded serves 8 fused multiply-adds.
// Pixels whose window lies inside the input (the interior of each row) run 8 or 4 at a time without checks; the
// few at the row's ends, and the rows whose window crosses the top or bottom edge, skip the taps that fall in the
// padding (padding is zeros, as CONV_2D's).
//
// out[b][y][x][o] = clamp(bias[o] + sum_{ky,kx,c} in[b][y s_h - pad_top + ky][x s_w - pad_left + kx][c]
//                                            * W[o][ky][kx][c], min, max), in float32 (summed in another order
// than the reference kernel's: results differ from it by rounding only).
//
// The packed-weight format (made once, when the host run is built): the output channels in blocks of 8 V floats
// (V = 1 vector when there are at most 8 output channels, else 2), the last block padded with zero weights; block
// b holds, for each tap (ky, kx) and input channel c in that order, the 8 V weights W[8 V b + j][ky][kx][c]. The
// bias is padded the same way (zero when the node has none).
#ifndef KILN_OPS_SIMD_FLOAT_CONV_H_
#define KILN_OPS_SIMD_FLOAT_CONV_H_

#include <cstdint>
#include <vector>

#include "ops/simd/cpu.h"

namespace kiln::ops::conv {

// Whether this CPU runs the kernel (AVX2 and FMA) and this build has it (x86-64 with GCC or clang). Read once;
// KILN_DISABLE_CONV=1 in the environment turns the kernel off (to compare with XNNPACK's).
bool Available();

constexpr int kMaxInputChannels = 4;  // the kernel's input channels: 1 to 4

// A convolution's geometry (NHWC input and output; the output's size as the node's shape gives it).
struct ConvShape {
  int64_t batch = 1;
  int64_t in_h = 0, in_w = 0, in_c = 0;
  int64_t out_h = 0, out_w = 0, out_c = 0;
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0;  // the padding before the first row and column (after the last: implied)
};

// The weights, bias and clamp of one CONV_2D, packed for Conv.
struct PackedConv {
  ConvShape shape;
  int vectors = 1;     // V: vectors of 8 output channels per block (1 or 2)
  int64_t blocks = 0;  // ceil(out_c / (8 V))
  simd::AlignedVector<float> weights;  // the layout above
  simd::AlignedVector<float> bias;     // blocks * 8 V
  float min = 0.0f, max = 0.0f;  // the fused activation's clamp (-inf, +inf for none)
};

// Packs weights W [out_c][kernel_h][kernel_w][in_c] (as CONV_2D stores them) and the bias [out_c] (or null).
// `shape.in_c` must be 1 to kMaxInputChannels.
PackedConv PackConv(const ConvShape& shape, const float* weights, const float* bias, float min, float max);

// Output rows [row_begin, row_end) of the whole batch (row r is image r / out_h, row r % out_h), all output
// channels: `in` and `out` are dense NHWC tensors. Only when Available().
void Conv(const PackedConv& packed, const float* in, float* out, int64_t row_begin, int64_t row_end);

}  // namespace kiln::ops::conv

#endif  // KILN_OPS_SIMD_FLOAT_CONV_H_
