// The AVX2/FMA float GEMM of 1x1 convolutions (float_gemm.h). The vector code is compiled for its target with
// function attributes only, so the rest of the build keeps its baseline; Available() decides at run time whether it
// may be called.
#include "ops/simd/float_gemm.h"

#include <algorithm>

#include "ops/simd/cpu.h"

#if KILN_SIMD_X86_BUILD
#include "ops/simd/avx2.h"
#endif

namespace kiln::ops::gemm {

bool Available() {
#if KILN_SIMD_X86_BUILD
  static const bool available = simd::Avx2FmaKernelEnabled("KILN_DISABLE_GEMM");
  return available;
#else
  return false;
#endif
}

PackedGemm PackGemm(const float* weights, int64_t n, int64_t k, const float* bias, float min, float max) {
  PackedGemm p;
  p.k = k;
  p.n = n;
  p.min = min;
  p.max = max;
  p.blocks = (n + kColumns - 1) / kColumns;
  p.weights.assign(static_cast<size_t>(p.blocks * k * kColumns), 0.0f);
  p.bias.assign(static_cast<size_t>(p.blocks * kColumns), 0.0f);
  if (bias != nullptr) std::copy(bias, bias + n, p.bias.begin());
  float* out = p.weights.data();
  for (int64_t b = 0; b < p.blocks; ++b) {
    for (int64_t kk = 0; kk < k; ++kk) {
      for (int64_t j = 0; j < kColumns; ++j) {
        const int64_t o = b * kColumns + j;
        *out++ = o < n ? weights[o * k + kk] : 0.0f;
      }
    }
  }
  return p;
}

#if KILN_SIMD_X86_BUILD

namespace {

// R rows (1 to kRows) of one block of V vectors (1 or 2) of output channels; `valid` of the block's channels are
// stored (the rest are padding).
template <int R, int V>
KILN_AVX2_TARGET inline void Tile(const float* a, int64_t lda, int64_t k, const float* w, const float* bias,
                                  __m256 lo, __m256 hi, float* c, int64_t ldc, int64_t valid) {
  __m256 acc[R][V];
  for (int v = 0; v < V; ++v) {
    const __m256 b = _mm256_loadu_ps(bias + 8 * v);
    for (int r = 0; r < R; ++r) acc[r][v] = b;
  }
  const float* rows[R];
  for (int r = 0; r < R; ++r) rows[r] = a + r * lda;
  for (int64_t kk = 0; kk < k; ++kk, w += kColumns) {
    __m256 wv[V];
    for (int v = 0; v < V; ++v) wv[v] = _mm256_loadu_ps(w + 8 * v);
    for (int r = 0; r < R; ++r) {
      const __m256 x = _mm256_broadcast_ss(rows[r] + kk);
      for (int v = 0; v < V; ++v) acc[r][v] = _mm256_fmadd_ps(x, wv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) {
      const int64_t left = valid - 8 * v;
      if (left > 0) simd::StoreFirstLanes(c + r * ldc + 8 * v, simd::Clamp(acc[r][v], lo, hi), left);
    }
  }
}

// R rows, every block of output channels.
template <int R>
KILN_AVX2_TARGET void Rows(const PackedGemm& p, const float* a, int64_t lda, float* c, int64_t ldc) {
  const __m256 lo = _mm256_set1_ps(p.min), hi = _mm256_set1_ps(p.max);
  for (int64_t b = 0; b < p.blocks; ++b) {
    const float* w = p.weights.data() + b * p.k * kColumns;
    const float* bias = p.bias.data() + b * kColumns;
    const int64_t valid = std::min<int64_t>(kColumns, p.n - b * kColumns);
    if (valid > 8) {
      Tile<R, 2>(a, lda, p.k, w, bias, lo, hi, c + b * kColumns, ldc, valid);
    } else {  // the last block's second vector is all padding: skip its multiply-adds
      Tile<R, 1>(a, lda, p.k, w, bias, lo, hi, c + b * kColumns, ldc, valid);
    }
  }
}

}  // namespace

void Gemm(const PackedGemm& packed, const float* a, int64_t lda, float* c, int64_t ldc, int64_t row_begin,
          int64_t row_end) {
  int64_t m = row_begin;
  for (; m + kRows <= row_end; m += kRows) Rows<kRows>(packed, a + m * lda, lda, c + m * ldc, ldc);
  switch (row_end - m) {
    case 5:
      Rows<5>(packed, a + m * lda, lda, c + m * ldc, ldc);
      break;
    case 4:
      Rows<4>(packed, a + m * lda, lda, c + m * ldc, ldc);
      break;
    case 3:
      Rows<3>(packed, a + m * lda, lda, c + m * ldc, ldc);
      break;
    case 2:
      Rows<2>(packed, a + m * lda, lda, c + m * ldc, ldc);
      break;
    case 1:
      Rows<1>(packed, a + m * lda, lda, c + m * ldc, ldc);
      break;
    default:
      break;
  }
}

#else

void Gemm(const PackedGemm&, const float*, int64_t, float*, int64_t, int64_t, int64_t) {}

#endif

}  // namespace kiln::ops::gemm
