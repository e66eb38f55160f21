// The AVX2/FMA and AVX-512F float GEMM of 1x1 convolutions (float_gemm.h). The vector code is compiled for its
// target with function attributes only, so the rest of the build keeps its baseline; Available(width) decides at run
// time whether a form may be called.
#include "ops/simd/float_gemm.h"

#include <algorithm>

#include "ops/simd/cpu.h"

#if KILN_SIMD_X86_BUILD
#include "ops/simd/vec.h"
#endif

namespace kiln::ops::gemm {

bool Available() { return Available(Width::kAvx2); }

bool Available(Width width) {
#if KILN_SIMD_X86_BUILD
  static const bool avx2 = simd::Avx2FmaKernelEnabled("KILN_DISABLE_GEMM");
  static const bool avx512 = avx2 && simd::HasAvx512f();
  return width == Width::kAvx512 ? avx512 : avx2;
#else
  (void)width;
  return false;
#endif
}

PackedGemm PackGemm(const float* weights, int64_t n, int64_t k, const float* bias, float min, float max,
                    Width width) {
  PackedGemm p;
  p.width = width;
  p.rows = width == Width::kAvx512 ? kRows512 : kRows;
  p.columns = width == Width::kAvx512 ? kColumns512 : kColumns;
  p.k = k;
  p.n = n;
  p.min = min;
  p.max = max;
  p.blocks = (n + p.columns - 1) / p.columns;
  p.weights.assign(static_cast<size_t>(p.blocks * k * p.columns), 0.0f);
  p.bias.assign(static_cast<size_t>(p.blocks * p.columns), 0.0f);
  if (bias != nullptr) std::copy(bias, bias + n, p.bias.begin());
  float* out = p.weights.data();
  for (int64_t b = 0; b < p.blocks; ++b) {
    for (int64_t kk = 0; kk < k; ++kk) {
      for (int64_t j = 0; j < p.columns; ++j) {
        const int64_t o = b * p.columns + j;
        *out++ = o < n ? weights[o * k + kk] : 0.0f;
      }
    }
  }
  return p;
}

#if KILN_SIMD_X86_BUILD

#define KILN_KERNEL_BODY "ops/simd/float_gemm_kernel.inc"
#include "ops/simd/each_width.inc"

void Gemm(const PackedGemm& packed, const float* a, int64_t lda, float* c, int64_t ldc, int64_t row_begin,
          int64_t row_end) {
  if (packed.width == Width::kAvx512) {
    avx512::GemmRows(packed, a, lda, c, ldc, row_begin, row_end);
  } else {
    avx2::GemmRows(packed, a, lda, c, ldc, row_begin, row_end);
  }
}

#else

void Gemm(const PackedGemm&, const float*, int64_t, float*, int64_t, int64_t, int64_t) {}

#endif

}  // namespace kiln::ops::gemm
