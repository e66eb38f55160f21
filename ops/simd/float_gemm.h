// Kiln's own AVX2/FMA float GEMM for 1x1 CONV_2D (stride 1: out[pixel][o] = bias[o] + sum_c in[pixel][c] W[o][c]),
// issue #10. Debian 12's XNNPACK runs these with its 4x16 "s4" kernel built by GCC, which keeps copying registers
// in the inner loop and spills (seen in `perf annotate`); LiteRT's build of the same kind of kernel spent 55% of
// ts_mobilenet_v1_025_224_float's time where Kiln spent 69%.
//
// A step takes 6 rows (pixels) x 16 output channels: 12 vectors of sums, two weight vectors and one broadcast input
// value per k, so every weight vector loaded serves 6 fused multiply-adds and every input value 2.
//
// c[m][o] = clamp(bias[o] + sum_k a[m][k] * W[o][k], min, max) in float32: the products are summed in the
// reference kernel's order (k ascending) but with fused multiply-adds, so results differ from it by rounding only.
//
// The packed-weight format (made once, when the host run is built): the output channels in blocks of 16 (the last
// padded with zero weights); block b holds, for each k in order, the 16 weights W[16 b + j][k]. The bias is padded
// the same way (zero when the node has none).
#ifndef KILN_OPS_SIMD_FLOAT_GEMM_H_
#define KILN_OPS_SIMD_FLOAT_GEMM_H_

#include <cstdint>
#include <vector>

namespace kiln::ops::gemm {

// Whether this CPU runs the kernel (AVX2 and FMA) and this build has it (x86-64 with GCC or clang). Read once;
// KILN_DISABLE_GEMM=1 in the environment turns the kernel off (to compare with XNNPACK's).
bool Available();

constexpr int kRows = 6;      // rows per step
constexpr int kColumns = 16;  // output channels per block

// The weights, bias and clamp of one 1x1 CONV_2D, packed for Gemm.
struct PackedGemm {
  int64_t k = 0;       // input channels
  int64_t n = 0;       // output channels
  int64_t blocks = 0;  // ceil(n / 16)
  std::vector<float> weights;  // the layout above
  std::vector<float> bias;     // blocks * 16
  float min = 0.0f, max = 0.0f;  // the fused activation's clamp (-inf, +inf for none)
};

// Packs weights W [n][k] (a 1x1 CONV_2D's [n][1][1][k]) and the bias [n] (or null).
PackedGemm PackGemm(const float* weights, int64_t n, int64_t k, const float* bias, float min, float max);

// Rows [row_begin, row_end) of c = clamp(a W^T + bias): a is [rows][k] with rows `lda` floats apart, c [rows][n]
// with rows `ldc` floats apart. Only when Available().
void Gemm(const PackedGemm& packed, const float* a, int64_t lda, float* c, int64_t ldc, int64_t row_begin,
          int64_t row_end);

}  // namespace kiln::ops::gemm

#endif  // KILN_OPS_SIMD_FLOAT_GEMM_H_
