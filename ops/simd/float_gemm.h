// Kiln's own AVX2/FMA and AVX-512F float GEMM for 1x1 CONV_2D (stride 1: out[pixel][o] = bias[o] +
// sum_c in[pixel][c] W[o][c]), issue #10. Debian 12's XNNPACK runs these with its 4x16 "s4" kernel built by GCC,
// which keeps copying registers in the inner loop and spills (seen in `perf annotate`); LiteRT's build of the same
// kind of kernel spent 55% of ts_mobilenet_v1_025_224_float's time where Kiln spent 69%.
//
// A step takes 6 rows (pixels) x 16 output channels on AVX2 (8 floats a vector): 12 vectors of sums, two weight
// vectors and one broadcast input value per k, so every weight vector loaded serves 6 fused multiply-adds and every
// input value 2. On AVX-512 (16 floats a vector, 32 registers) a step takes 8 rows x 32 output channels: 16 vectors
// of sums, every weight vector serving 8 multiply-adds. Both widths run one kernel body
// (ops/simd/float_gemm_kernel.inc over the traits of ops/simd/vec.h).
//
// c[m][o] = clamp(bias[o] + sum_k a[m][k] * W[o][k], min, max) in float32: the products are summed in the
// reference kernel's order (k ascending) but with fused multiply-adds, so results differ from it by rounding only.
//
// The packed-weight format (made once, when the host run is built, for one width): the output channels in blocks of
// B = 16 (AVX2) or 32 (AVX-512), the last padded with zero weights; block b holds, for each k in order, the B weights
// W[B b + j][k]. The bias is padded the same way (zero when the node has none).
#ifndef KILN_OPS_SIMD_FLOAT_GEMM_H_
#define KILN_OPS_SIMD_FLOAT_GEMM_H_

#include <cstdint>
#include <vector>

#include "ops/simd/cpu.h"

namespace kiln::ops::gemm {

// The vector width a packed GEMM runs at.
using Width = simd::Width;

// Whether this CPU runs the AVX2 form (AVX2 and FMA) and this build has it (x86-64 with GCC or clang). Read once;
// KILN_DISABLE_GEMM=1 in the environment turns the kernel off, both forms (to compare with XNNPACK's).
bool Available();
// Whether this CPU runs the form of `width` (AVX-512: AVX-512F) and this build has it; as above.
bool Available(Width width);

constexpr int kRows = 6;      // the AVX2 form's rows per step
constexpr int kColumns = 16;  // the AVX2 form's output channels per block
constexpr int kRows512 = 8;      // the AVX-512 form's
constexpr int kColumns512 = 32;

// The weights, bias and clamp of one 1x1 CONV_2D, packed for Gemm at one width.
struct PackedGemm {
  Width width = Width::kAvx2;
  int64_t rows = kRows;        // rows per step (kRows or kRows512): split a node across threads in multiples of it
  int64_t columns = kColumns;  // output channels per block (kColumns or kColumns512)
  int64_t k = 0;       // input channels
  int64_t n = 0;       // output channels
  int64_t blocks = 0;  // ceil(n / columns)
  simd::AlignedVector<float> weights;  // the layout above
  simd::AlignedVector<float> bias;     // blocks * columns
  float min = 0.0f, max = 0.0f;  // the fused activation's clamp (-inf, +inf for none)
};

// Packs weights W [n][k] (a 1x1 CONV_2D's [n][1][1][k]) and the bias [n] (or null) for the form of `width`.
PackedGemm PackGemm(const float* weights, int64_t n, int64_t k, const float* bias, float min, float max,
                    Width width = Width::kAvx2);

// Rows [row_begin, row_end) of c = clamp(a W^T + bias): a is [rows][k] with rows `lda` floats apart, c [rows][n]
// with rows `ldc` floats apart, at the packed width. Only when Available(packed.width).
void Gemm(const PackedGemm& packed, const float* a, int64_t lda, float* c, int64_t ldc, int64_t row_begin,
          int64_t row_end);

}  // namespace kiln::ops::gemm

#endif  // KILN_OPS_SIMD_FLOAT_GEMM_H_
