// The float GEMV (float_gemv.h), AVX2/FMA and AVX-512F. The vector code is compiled for its target with function attributes
// only, so the rest of the build keeps its baseline; Available() decides at run time whether it may be called.
#include "ops/simd/float_gemv.h"

#include <algorithm>
#include <cstring>

#include "ops/simd/cpu.h"

#if KILN_SIMD_X86_BUILD
#include "ops/simd/vec.h"
#endif

namespace kiln::ops::gemv {

bool Available() {
#if KILN_SIMD_X86_BUILD
  static const bool available = simd::Avx2FmaKernelEnabled("KILN_DISABLE_GEMV");
  return available;
#else
  return false;
#endif
}

bool Available(Width width) {
#if KILN_SIMD_X86_BUILD
  static const bool avx512 = Available() && simd::HasAvx512f();
  return width == Width::kAvx512 ? avx512 : Available();
#else
  return false;
#endif
}

PackedGemv PackGemv(const float* weights, int64_t n, int64_t k, const float* bias, float min, float max,
                    Width width) {
  PackedGemv p;
  p.width = width;
  p.k = k;
  p.n = n;
  p.min = min;
  p.max = max;
  const int64_t vectors = (n + kVector - 1) / kVector;
  p.blocks = (vectors + kBlockVectors - 1) / kBlockVectors;
  p.weights.assign(static_cast<size_t>(vectors * kVector * k), 0.0f);
  p.bias.assign(static_cast<size_t>(vectors * kVector), 0.0f);
  if (bias != nullptr) std::copy(bias, bias + n, p.bias.begin());
  float* out = p.weights.data();
  for (int64_t b = 0; b < p.blocks; ++b) {
    const int64_t first = b * kBlockVectors * kVector;
    const int64_t width = std::min<int64_t>(kBlockVectors, vectors - b * kBlockVectors) * kVector;
    for (int64_t kk = 0; kk < k; ++kk) {
      for (int64_t j = 0; j < width; ++j) {
        const int64_t row = first + j;
        *out++ = row < n ? weights[row * k + kk] : 0.0f;
      }
    }
  }
  return p;
}

#if KILN_SIMD_X86_BUILD

#define KILN_KERNEL_BODY "ops/simd/float_gemv_kernel.inc"
#include "ops/simd/each_width.inc"

void Gemv(const PackedGemv& packed, const float* x, int64_t ldx, float* y, int64_t ldy, int64_t rows,
          int64_t block_begin, int64_t block_end) {
  const int64_t vectors = (packed.n + kVector - 1) / kVector;
  const bool avx512 = packed.width == Width::kAvx512;
  for (int64_t b = block_begin; b < block_end; ++b) {
    const int64_t first_vector = b * kBlockVectors;
    const int width = static_cast<int>(std::min<int64_t>(kBlockVectors, vectors - first_vector));
    const float* w = packed.weights.data() + first_vector * kVector * packed.k;
    const float* bias = packed.bias.data() + first_vector * kVector;
    const int64_t first = first_vector * kVector;
    const int64_t valid = std::min<int64_t>(packed.n - first, int64_t{width} * kVector);
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * ldx;
      float* yr = y + r * ldy + first;
      // The AVX-512 form takes the blocks of 2 or 4 vectors of 8 (1 or 2 of 16: each k's weights are the same
      // floats either way); blocks of 1 or 3 take the AVX2 one.
      switch (width) {
        case 4:
          if (avx512) {
            avx512::Block<2>(w, xr, packed.k, bias, packed.min, packed.max, yr, valid);
          } else {
            avx2::Block<4>(w, xr, packed.k, bias, packed.min, packed.max, yr, valid);
          }
          break;
        case 3:
          avx2::Block<3>(w, xr, packed.k, bias, packed.min, packed.max, yr, valid);
          break;
        case 2:
          if (avx512) {
            avx512::Block<1>(w, xr, packed.k, bias, packed.min, packed.max, yr, valid);
          } else {
            avx2::Block<2>(w, xr, packed.k, bias, packed.min, packed.max, yr, valid);
          }
          break;
        default:
          avx2::Block<1>(w, xr, packed.k, bias, packed.min, packed.max, yr, valid);
          break;
      }
    }
  }
}

#else

void Gemv(const PackedGemv&, const float*, int64_t, float*, int64_t, int64_t, int64_t, int64_t) {}

#endif

}  // namespace kiln::ops::gemv
