// Small AVX2 helpers shared by Kiln's float kernels (ops/simd). Include only from a file that checks
// KILN_SIMD_X86_BUILD (ops/simd/cpu.h) and call only from functions compiled for AVX2.
#ifndef KILN_OPS_SIMD_AVX2_H_
#define KILN_OPS_SIMD_AVX2_H_

#include <immintrin.h>

#include <cstdint>

#define KILN_AVX2_TARGET __attribute__((target("avx2,fma")))

namespace kiln::ops::simd {

// Lanes [0, valid) of `v` to `out` (valid 1 to 8; 8 or more: the whole vector); nothing past them is written.
KILN_AVX2_TARGET inline void StoreFirstLanes(float* out, __m256 v, int64_t valid) {
  if (valid >= 8) {
    _mm256_storeu_ps(out, v);
    return;
  }
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(valid)), lane);
  _mm256_maskstore_ps(out, mask, v);
}

// Lanes [0, valid) of `in` (valid 1 to 8), the others 0; nothing past them is read.
KILN_AVX2_TARGET inline __m256 LoadFirstLanes(const float* in, int64_t valid) {
  if (valid >= 8) return _mm256_loadu_ps(in);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(valid)), lane);
  return _mm256_maskload_ps(in, mask);
}

// clamp(v, lo, hi) as max then min with v as the second operand: both return their second operand when either is
// NaN, so a NaN stays NaN, as in the reference kernels without an activation.
KILN_AVX2_TARGET inline __m256 Clamp(__m256 v, __m256 lo, __m256 hi) {
  return _mm256_min_ps(hi, _mm256_max_ps(lo, v));
}

}  // namespace kiln::ops::simd

#endif  // KILN_OPS_SIMD_AVX2_H_
