// Kiln's own float GEMV for FULLY_CONNECTED with one to four rows of input (issue #10), on CPUs with AVX2 and
// FMA. Debian 12's XNNPACK (a 2022 snapshot) runs such a node as a GEMM whose one row keeps a single accumulator
// per 8 or 16 outputs, so each fused multiply-add waits for the one before it (4 to 5 cycles): about 2 multiply-
// adds per cycle with AVX2, against 16 that two FMA units can do. Here every row keeps eight independent
// accumulators (4 blocks of 8 outputs, over even and odd k), which keeps both units busy until memory limits. The
// AVX-512F form (one kernel body, ops/simd/float_gemv_kernel.inc) takes a block as 2 vectors of 16 over k modulo
// 4: eight accumulators again, each load twice the floats.
//
// y[m][n] = clamp(bias[n] + sum_k x[m][k] * W[n][k], min, max) in float32: the products are summed in another
// order than the reference kernel's (each output's k modulo 2, or 4 for AVX-512, separately, then added in that
// order), so results differ from it by rounding only (within fast_path_tests' bound of 1e-4 relative to the
// output's scale).
//
// The packed-weight format (made once, when the host run is built):
// - the output channels in blocks of up to 32 (4 vectors of 8; the last block as many vectors as needed, the
//   last vector padded with zero weights);
// - block b of w vectors holds, for each k in order, the 8 w weights W[32 b + j][k] (j < 8 w): K * 8 w floats,
//   blocks one after another;
// - the bias padded the same way (zero when the node has none).
#ifndef KILN_OPS_SIMD_FLOAT_GEMV_H_
#define KILN_OPS_SIMD_FLOAT_GEMV_H_

#include <cstdint>
#include <vector>

#include "ops/simd/cpu.h"

namespace kiln::ops::gemv {

// The vector width a packed GEMV runs at.
using Width = simd::Width;

// Whether this CPU runs the AVX2 form (AVX2 and FMA) and this build has it (x86-64 with GCC or clang). Read once;
// KILN_DISABLE_GEMV=1 in the environment turns the kernel off, both forms (to compare with XNNPACK's).
bool Available();
// Whether this CPU runs the form of `width` (AVX-512: AVX-512F) and this build has it; as above.
bool Available(Width width);

constexpr int kVector = 8;       // floats per vector
constexpr int kBlockVectors = 4;  // vectors per block
constexpr int kMaxRows = 4;       // rows of input the kernel takes (batch-1 to batch-4 FULLY_CONNECTED)

// The weights, bias and clamp of one FULLY_CONNECTED, packed for Gemv.
struct PackedGemv {
  Width width = Width::kAvx2;  // the form Gemv runs (blocks of 8 or 24 outputs take the AVX2 one either way)
  int64_t k = 0;        // input features
  int64_t n = 0;        // output features
  int64_t blocks = 0;   // ceil(n / 32)
  simd::AlignedVector<float> weights;  // the layout above
  simd::AlignedVector<float> bias;     // ceil(n / 8) * 8
  float min = 0.0f, max = 0.0f;  // the fused activation's clamp (-inf, +inf for none)
};

// Packs weights W [n][k] (row-major, as FULLY_CONNECTED stores them) and the bias [n] (or null).
PackedGemv PackGemv(const float* weights, int64_t n, int64_t k, const float* bias, float min, float max,
                    Width width = Width::kAvx2);

// Blocks [block_begin, block_end) of y = clamp(x W^T + bias) for `rows` rows (1 to kMaxRows): x is [rows][k]
// with rows `ldx` floats apart, y [rows][n] with rows `ldy` floats apart. Only when Available().
void Gemv(const PackedGemv& packed, const float* x, int64_t ldx, float* y, int64_t ldy, int64_t rows,
          int64_t block_begin, int64_t block_end);

}  // namespace kiln::ops::gemv

#endif  // KILN_OPS_SIMD_FLOAT_GEMV_H_
