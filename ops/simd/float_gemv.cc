// The AVX2/FMA float GEMV (float_gemv.h). The vector code is compiled for its target with function attributes
// only, so the rest of the build keeps its baseline; Available() decides at run time whether it may be called.
#include "ops/simd/float_gemv.h"

#include <algorithm>
#include <cstring>

#include "ops/simd/cpu.h"

#if KILN_SIMD_X86_BUILD
#include <immintrin.h>
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

PackedGemv PackGemv(const float* weights, int64_t n, int64_t k, const float* bias, float min, float max) {
  PackedGemv p;
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

#define KILN_GEMV_TARGET __attribute__((target("avx2,fma")))

namespace {

// One block of W vectors for one row: the sums over even k and odd k in separate accumulators (2 W independent
// chains of fused multiply-adds), added at the end with the bias, clamped, stored (the padded lanes of the last
// vector to a scratch row).
template <int W>
KILN_GEMV_TARGET void Block(const float* w, const float* x, int64_t k, const float* bias, float lo, float hi,
                            float* y, int64_t valid) {
  __m256 even[W], odd[W];
  for (int v = 0; v < W; ++v) {
    even[v] = _mm256_setzero_ps();
    odd[v] = _mm256_setzero_ps();
  }
  int64_t kk = 0;
  for (; kk + 2 <= k; kk += 2) {
    const __m256 x0 = _mm256_broadcast_ss(x + kk);
    const __m256 x1 = _mm256_broadcast_ss(x + kk + 1);
    const float* w0 = w + kk * W * kVector;
    for (int v = 0; v < W; ++v) {
      even[v] = _mm256_fmadd_ps(_mm256_loadu_ps(w0 + v * kVector), x0, even[v]);
      odd[v] = _mm256_fmadd_ps(_mm256_loadu_ps(w0 + (W + v) * kVector), x1, odd[v]);
    }
  }
  if (kk < k) {
    const __m256 x0 = _mm256_broadcast_ss(x + kk);
    const float* w0 = w + kk * W * kVector;
    for (int v = 0; v < W; ++v) even[v] = _mm256_fmadd_ps(_mm256_loadu_ps(w0 + v * kVector), x0, even[v]);
  }
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  for (int v = 0; v < W; ++v) {
    __m256 sum = _mm256_add_ps(_mm256_add_ps(even[v], odd[v]), _mm256_loadu_ps(bias + v * kVector));
    // max then min with the sum as the second operand: both return their second operand when either is NaN, so
    // a NaN sum stays NaN, as in the reference kernel without an activation.
    sum = _mm256_min_ps(vhi, _mm256_max_ps(vlo, sum));
    const int64_t left = valid - v * kVector;
    if (left >= kVector) {
      _mm256_storeu_ps(y + v * kVector, sum);
    } else if (left > 0) {
      alignas(32) float lanes[kVector];
      _mm256_store_ps(lanes, sum);
      std::memcpy(y + v * kVector, lanes, static_cast<size_t>(left) * sizeof(float));
    }
  }
}

}  // namespace

void Gemv(const PackedGemv& packed, const float* x, int64_t ldx, float* y, int64_t ldy, int64_t rows,
          int64_t block_begin, int64_t block_end) {
  const int64_t vectors = (packed.n + kVector - 1) / kVector;
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
      switch (width) {
        case 4:
          Block<4>(w, xr, packed.k, bias, packed.min, packed.max, yr, valid);
          break;
        case 3:
          Block<3>(w, xr, packed.k, bias, packed.min, packed.max, yr, valid);
          break;
        case 2:
          Block<2>(w, xr, packed.k, bias, packed.min, packed.max, yr, valid);
          break;
        default:
          Block<1>(w, xr, packed.k, bias, packed.min, packed.max, yr, valid);
          break;
      }
    }
  }
}

#else

void Gemv(const PackedGemv&, const float*, int64_t, float*, int64_t, int64_t, int64_t, int64_t) {}

#endif

}  // namespace kiln::ops::gemv
