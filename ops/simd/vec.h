// Vector traits for Kiln's float kernels (ops/simd): one kernel body, written against `Vec`, serves AVX2/FMA (8
// floats per __m256) and AVX-512F (16 floats per __m512). Each member is compiled for its own instructions with a
// function attribute only (the rest of the build keeps its baseline), so a kernel body using Vec must itself carry
// Vec's target: the kernels include their body once per width (e.g. ops/simd/float_gemm_kernel.inc) with
// KILN_VEC_TARGET set to the width's attribute. Include only from a file that checks KILN_SIMD_X86_BUILD
// (ops/simd/cpu.h), and call only from functions compiled for the width's target.
#ifndef KILN_OPS_SIMD_VEC_H_
#define KILN_OPS_SIMD_VEC_H_

#include <immintrin.h>

#include <cstdint>

#include "ops/simd/avx2.h"

#define KILN_AVX512_TARGET __attribute__((target("avx512f")))

namespace kiln::ops::simd {

// 8 floats: AVX2 and FMA.
struct Avx2F32 {
  using V = __m256;
  static constexpr int kLanes = 8;
  KILN_AVX2_TARGET static V Load(const float* p) { return _mm256_loadu_ps(p); }
  KILN_AVX2_TARGET static V Set1(float x) { return _mm256_set1_ps(x); }
  KILN_AVX2_TARGET static V Broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  // Lanes [0, valid) of p (valid 1 to 8; 8 or more: all), the others 0; nothing past them is read.
  KILN_AVX2_TARGET static V LoadFirst(const float* p, int64_t valid) { return LoadFirstLanes(p, valid); }
  KILN_AVX2_TARGET static V Fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  KILN_AVX2_TARGET static V Add(V a, V b) { return _mm256_add_ps(a, b); }
  KILN_AVX2_TARGET static V Clamp(V v, V lo, V hi) { return simd::Clamp(v, lo, hi); }
  // Lanes [0, valid) of v (valid 1 to 8; 8 or more: all); nothing past them is written.
  KILN_AVX2_TARGET static void StoreFirst(float* out, V v, int64_t valid) { StoreFirstLanes(out, v, valid); }
};

// 16 floats: AVX-512F; the tails through a lane mask (__mmask16).
struct Avx512F32 {
  using V = __m512;
  static constexpr int kLanes = 16;
  KILN_AVX512_TARGET static V Load(const float* p) { return _mm512_loadu_ps(p); }
  KILN_AVX512_TARGET static V Set1(float x) { return _mm512_set1_ps(x); }
  KILN_AVX512_TARGET static V Broadcast(const float* p) { return _mm512_set1_ps(*p); }
  // Lanes [0, valid) of p (valid 1 to 16; 16 or more: all), the others 0; nothing past them is read.
  KILN_AVX512_TARGET static V LoadFirst(const float* p, int64_t valid) {
    if (valid >= 16) return _mm512_loadu_ps(p);
    return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << valid) - 1u), p);
  }
  KILN_AVX512_TARGET static V Fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  KILN_AVX512_TARGET static V Add(V a, V b) { return _mm512_add_ps(a, b); }
  // max then min with v as the second operand, as simd::Clamp: a NaN stays NaN. The zero-masked forms with every
  // lane kept: GCC 12's _mm512_max_ps starts from _mm512_undefined_ps, which -Wmaybe-uninitialized reports.
  KILN_AVX512_TARGET static V Clamp(V v, V lo, V hi) {
    constexpr __mmask16 kAll = 0xFFFF;
    return _mm512_maskz_min_ps(kAll, hi, _mm512_maskz_max_ps(kAll, lo, v));
  }
  // Lanes [0, valid) of v (valid 1 to 16; 16 or more: all); nothing past them is written.
  KILN_AVX512_TARGET static void StoreFirst(float* out, V v, int64_t valid) {
    if (valid >= 16) {
      _mm512_storeu_ps(out, v);
      return;
    }
    _mm512_mask_storeu_ps(out, static_cast<__mmask16>((1u << valid) - 1u), v);
  }
};

}  // namespace kiln::ops::simd

#endif  // KILN_OPS_SIMD_VEC_H_
