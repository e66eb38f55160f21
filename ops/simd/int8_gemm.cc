// The AVX-512 VNNI int8 GEMM (int8_gemm.h). The vector code is compiled for its target with function attributes
// only, so the rest of the build keeps its baseline; Available() decides at run time whether it may be called.
#include "ops/simd/int8_gemm.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "ops/simd/cpu.h"

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*() (a variable initialised with itself), which its
// -Wuninitialized and -Wmaybe-uninitialized report once they are inlined here.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#if KILN_SIMD_X86_BUILD
#include <immintrin.h>
#endif

namespace kiln::ops::vnni {

bool Available() {
#if KILN_SIMD_X86_BUILD
  static const bool available = [] {
    if (simd::DisabledByEnv("KILN_DISABLE_VNNI")) return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
  }();
  return available;
#else
  return false;
#endif
}

PackedInt8Gemm PackInt8Gemm(const int8_t* weights, int64_t n, int64_t k, const int32_t* bias, int32_t input_zero_point,
                            const std::vector<reference::QuantizedMultiplier>& multipliers, int32_t output_zero_point,
                            int32_t activation_min, int32_t activation_max) {
  PackedInt8Gemm p;
  p.k = k;
  p.n = n;
  p.k_groups = (k + kGroupBytes - 1) / kGroupBytes;
  p.blocks = (n + kLanes - 1) / kLanes;
  const int64_t padded_n = p.blocks * kLanes;
  p.weights.assign(static_cast<size_t>(p.blocks * p.k_groups * kLanes * kGroupBytes), 0);
  p.bias.assign(static_cast<size_t>(padded_n), 0);
  p.multiplier.assign(static_cast<size_t>(padded_n), 0);
  p.left_shift.assign(static_cast<size_t>(padded_n), 0);
  p.rounding.assign(static_cast<size_t>(padded_n), int64_t{1} << 30);
  p.negative.assign(static_cast<size_t>(padded_n), 0);
  p.total_shift.assign(static_cast<size_t>(padded_n), 31);
  p.output_zero_point = output_zero_point;
  p.activation_min = activation_min;
  p.activation_max = activation_max;
  // The activations reach the kernel as a + 128: sum (a - zp) w = sum (a + 128) w - (zp + 128) sum w.
  const uint32_t offset = static_cast<uint32_t>(input_zero_point) + 128u;
  for (int64_t c = 0; c < n; ++c) {
    const int8_t* row = weights + c * k;
    uint32_t sum = 0;  // int32 arithmetic that wraps, as the reference kernel's sums
    const int64_t block = c / kLanes, lane = c % kLanes;
    for (int64_t i = 0; i < k; ++i) {
      sum += static_cast<uint32_t>(static_cast<int32_t>(row[i]));
      const int64_t g = i / kGroupBytes;
      p.weights[static_cast<size_t>(((block * p.k_groups + g) * kLanes + lane) * kGroupBytes + i % kGroupBytes)] =
          row[i];
    }
    const uint32_t b = bias != nullptr ? static_cast<uint32_t>(bias[c]) : 0u;
    p.bias[static_cast<size_t>(c)] = static_cast<int32_t>(b - offset * sum);
    const reference::QuantizedMultiplier& m = multipliers[multipliers.size() == 1 ? 0 : static_cast<size_t>(c)];
    p.multiplier[static_cast<size_t>(c)] = m.multiplier;
    const int right = m.shift > 0 ? 0 : -m.shift;
    p.left_shift[static_cast<size_t>(c)] = m.shift > 0 ? m.shift : 0;
    p.any_left_shift = p.any_left_shift || m.shift > 0;
    // Even channels of the block at 0..7, odd ones at 8..15.
    const size_t at = static_cast<size_t>(block * kLanes + (lane % 2) * (kLanes / 2) + lane / 2);
    p.rounding[at] = (int64_t{1} << 30) + (right >= 1 ? int64_t{1} << (30 + right) : 0);
    p.negative[at] = right >= 1 ? int64_t{1} << 31 : 0;
    p.total_shift[at] = 31 + right;
  }
  return p;
}

void UseFloatRequantization(PackedInt8Gemm* packed, float input_scale, const std::vector<float>& filter_scales,
                            float output_scale) {
  packed->float_requantization = true;
  packed->scale.assign(static_cast<size_t>(packed->blocks * kLanes), 0.0f);
  for (int64_t c = 0; c < packed->n; ++c) {
    const float filter_scale = filter_scales[filter_scales.size() == 1 ? 0 : static_cast<size_t>(c)];
    packed->scale[static_cast<size_t>(c)] = input_scale * filter_scale / output_scale;
  }
}

#if KILN_SIMD_X86_BUILD

#define KILN_VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

namespace {

// The requantization of one block of 16 lanes, per lane as the reference's
// MultiplyByQuantizedMultiplierDoubleRounding: x << left (wrapping), then both roundings in one 64-bit shift
// (int8_gemm.h), the even and odd int32 lanes in separate 64-bit halves; plus the output zero point (wrapping)
// and the clamp.
struct Requant {
  __m512i multiplier, multiplier_odd, left;
  __m512i rounding[2], negative[2], shift[2];  // even, odd
  __m512 scale, float_lo, float_hi;            // float_requantization
};

KILN_VNNI_TARGET inline Requant LoadRequant(const PackedInt8Gemm& p, int64_t block) {
  const size_t at = static_cast<size_t>(block * kLanes);
  Requant r;
  r.multiplier = _mm512_loadu_si512(p.multiplier.data() + at);
  r.multiplier_odd = _mm512_srli_epi64(r.multiplier, 32);
  r.left = _mm512_loadu_si512(p.left_shift.data() + at);
  for (int h = 0; h < 2; ++h) {
    r.rounding[h] = _mm512_loadu_si512(p.rounding.data() + at + h * 8);
    r.negative[h] = _mm512_loadu_si512(p.negative.data() + at + h * 8);
    r.shift[h] = _mm512_loadu_si512(p.total_shift.data() + at + h * 8);
  }
  if (p.float_requantization) {
    r.scale = _mm512_loadu_ps(p.scale.data() + at);
    r.float_lo = _mm512_set1_ps(static_cast<float>(p.activation_min - p.output_zero_point));
    r.float_hi = _mm512_set1_ps(static_cast<float>(p.activation_max - p.output_zero_point));
  }
  return r;
}

KILN_VNNI_TARGET inline __m512i Round64(__m512i product, const Requant& r, int h) {
  const __mmask8 below = _mm512_cmplt_epi64_mask(product, _mm512_set1_epi64(-(int64_t{1} << 30)));
  __m512i v = _mm512_add_epi64(product, r.rounding[h]);
  v = _mm512_mask_sub_epi64(v, below, v, r.negative[h]);
  return _mm512_srav_epi64(v, r.shift[h]);
}

// Returns the int32 values, each within [lo, hi] (a subset of int8's range).
template <bool kLeftShift>
KILN_VNNI_TARGET inline __m512i Requantize(__m512i acc, const Requant& r, __m512i zero_point, __m512i lo, __m512i hi) {
  const __m512i x = kLeftShift ? _mm512_sllv_epi32(acc, r.left) : acc;
  const __m512i even = Round64(_mm512_mul_epi32(x, r.multiplier), r, 0);
  const __m512i odd = Round64(_mm512_mul_epi32(_mm512_srli_epi64(x, 32), r.multiplier_odd), r, 1);
  __m512i out = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
  out = _mm512_add_epi32(out, zero_point);
  return _mm512_min_epi32(_mm512_max_epi32(out, lo), hi);
}

KILN_VNNI_TARGET inline __m512i RequantizeAny(const PackedInt8Gemm& p, __m512i zero_point, __m512i lo, __m512i hi,
                                              __m512i acc, const Requant& r) {
  if (p.float_requantization) {
    // XNNPACK's: float product, clamped in float to the range less the zero point, rounded to nearest even
    // (cvtps2dq under the default MXCSR), plus the zero point. Clamping below in float too keeps the conversion
    // in range; it gives the same bytes as XNNPACK's clamp after its saturating packs.
    __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), r.scale);
    v = _mm512_min_ps(_mm512_max_ps(v, r.float_lo), r.float_hi);
    return _mm512_add_epi32(_mm512_cvtps_epi32(v), zero_point);
  }
  return p.any_left_shift ? Requantize<true>(acc, r, zero_point, lo, hi)
                          : Requantize<false>(acc, r, zero_point, lo, hi);
}

// Four vectors of 16 int32 values in int8's range to 64 bytes, in the order a, b, c, d (the packs work within
// 128-bit lanes: lane L holds a's, b's, c's and d's values 4L..4L+3; the permutation gathers them).
KILN_VNNI_TARGET inline __m512i PackBytes(__m512i a, __m512i b, __m512i c, __m512i d) {
  const __m512i bytes = _mm512_packs_epi16(_mm512_packs_epi32(a, b), _mm512_packs_epi32(c, d));
  return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), bytes);
}

// MR rows (of the unsigned copy `a`, rows `lda` bytes apart, K padded to whole groups) times NB blocks of 16
// output channels starting at `block`; `last_lanes` output channels of the last block are real.
template <int MR, int NB>
KILN_VNNI_TARGET void MicroKernel(const PackedInt8Gemm& p, const uint8_t* a, int64_t lda, int64_t block, int8_t* c,
                                  int64_t ldc, int last_lanes) {
  __m512i acc[MR][NB];
  for (int j = 0; j < NB; ++j) {
    const __m512i bias = _mm512_loadu_si512(p.bias.data() + (block + j) * kLanes);
    for (int r = 0; r < MR; ++r) acc[r][j] = bias;
  }
  const int64_t block_bytes = p.k_groups * kLanes * kGroupBytes;
  const int8_t* w = p.weights.data() + block * block_bytes;
  for (int64_t g = 0; g < p.k_groups; ++g) {
    __m512i b[NB];
    for (int j = 0; j < NB; ++j) b[j] = _mm512_loadu_si512(w + j * block_bytes + g * kLanes * kGroupBytes);
    for (int r = 0; r < MR; ++r) {
      int32_t four;
      std::memcpy(&four, a + r * lda + g * kGroupBytes, sizeof(four));
      const __m512i x = _mm512_set1_epi32(four);
      for (int j = 0; j < NB; ++j) acc[r][j] = _mm512_dpbusd_epi32(acc[r][j], x, b[j]);
    }
  }
  const __m512i zero_point = _mm512_set1_epi32(p.output_zero_point);
  const __m512i lo = _mm512_set1_epi32(p.activation_min);
  const __m512i hi = _mm512_set1_epi32(p.activation_max);
  const Requant rq0 = LoadRequant(p, block);
  if constexpr (NB == 2) {
    // Two rows of 32 channels per 64-byte pack; stores of 32 bytes, the last block's padding masked off.
    const Requant rq1 = LoadRequant(p, block + 1);
    const __mmask32 store = static_cast<__mmask32>(0xFFFFu | (((1u << last_lanes) - 1u) << 16));
    for (int r = 0; r < MR; r += 2) {
      const __m512i a0 = RequantizeAny(p, zero_point, lo, hi, acc[r][0], rq0),
                    a1 = RequantizeAny(p, zero_point, lo, hi, acc[r][1], rq1);
      const bool pair = r + 1 < MR;
      const __m512i b0 = pair ? RequantizeAny(p, zero_point, lo, hi, acc[r + 1 < MR ? r + 1 : r][0], rq0) : a0;
      const __m512i b1 = pair ? RequantizeAny(p, zero_point, lo, hi, acc[r + 1 < MR ? r + 1 : r][1], rq1) : a1;
      const __m512i bytes = PackBytes(a0, a1, b0, b1);
      _mm256_mask_storeu_epi8(c + r * ldc, store, _mm512_castsi512_si256(bytes));
      if (pair) _mm256_mask_storeu_epi8(c + (r + 1) * ldc, store, _mm512_extracti64x4_epi64(bytes, 1));
    }
  } else {
    // Four rows of 16 channels per pack.
    const __mmask16 store = static_cast<__mmask16>((1u << last_lanes) - 1u);
    for (int r = 0; r < MR; r += 4) {
      __m512i v[4];
      for (int i = 0; i < 4; ++i)
        v[i] = r + i < MR ? RequantizeAny(p, zero_point, lo, hi, acc[r + i < MR ? r + i : r][0], rq0) : v[0];
      const __m512i bytes = PackBytes(v[0], v[1], v[2], v[3]);
      _mm_mask_storeu_epi8(c + r * ldc, store, _mm512_castsi512_si128(bytes));
      if (r + 1 < MR) _mm_mask_storeu_epi8(c + (r + 1) * ldc, store, _mm512_extracti32x4_epi32(bytes, 1));
      if (r + 2 < MR) _mm_mask_storeu_epi8(c + (r + 2) * ldc, store, _mm512_extracti32x4_epi32(bytes, 2));
      if (r + 3 < MR) _mm_mask_storeu_epi8(c + (r + 3) * ldc, store, _mm512_extracti32x4_epi32(bytes, 3));
    }
  }
}

constexpr int kMaxRows = 8;

template <int MR>
KILN_VNNI_TARGET void Rows(const PackedInt8Gemm& p, const uint8_t* a, int64_t lda, int8_t* c, int64_t ldc) {
  int64_t block = 0;
  for (; block + 2 <= p.blocks; block += 2) {
    const int last = block + 2 == p.blocks ? static_cast<int>(p.n - (p.blocks - 1) * kLanes) : kLanes;
    MicroKernel<MR, 2>(p, a, lda, block, c + block * kLanes, ldc, last);
  }
  if (block < p.blocks) {
    MicroKernel<MR, 1>(p, a, lda, block, c + block * kLanes, ldc, static_cast<int>(p.n - block * kLanes));
  }
}

// The unsigned form of `n` bytes (v + 128: a xor of 0x80) from `src` to `dst`.
KILN_VNNI_TARGET inline void FlipCopy(const int8_t* src, int64_t n, uint8_t* dst) {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) _mm512_storeu_si512(dst + i, _mm512_xor_si512(_mm512_loadu_si512(src + i), flip));
  if (i < n) {
    const __mmask64 m = (__mmask64{1} << (n - i)) - 1;
    _mm512_mask_storeu_epi8(dst + i, m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, src + i), flip));
  }
}

// Copies `rows` rows of A into `out` (rows `padded` bytes apart) as unsigned bytes (a + 128), the padding zero.
KILN_VNNI_TARGET void ToUnsigned(const int8_t* a, int64_t lda, int64_t row, int64_t rows, int64_t k,
                                 int64_t padded, uint8_t* out) {
  for (int64_t r = 0; r < rows; ++r) {
    uint8_t* dst = out + r * padded;
    FlipCopy(a + (row + r) * lda, k, dst);
    std::memset(dst + k, 0, static_cast<size_t>(padded - k));
  }
}

// Gathers the K values of output pixels [row, row + rows) of a CONV_2D into `out` (rows `padded` bytes apart) as
// unsigned bytes: for each tap (ky, kx) the pixel's input channels, or the input zero point where the tap falls in
// the padding; the bytes past K zero.
KILN_VNNI_TARGET void GatherUnsigned(const reference::ConvParams& s, int32_t input_zero_point, const int8_t* in,
                                     int64_t row, int64_t rows, int64_t padded, uint8_t* out) {
  const uint8_t zero = static_cast<uint8_t>(static_cast<uint8_t>(input_zero_point) ^ 0x80u);
  const int64_t c = s.input_channels, k = s.filter_height * s.filter_width * c;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t pixel = row + r, image = pixel / (s.output_height * s.output_width);
    const int64_t oy = pixel / s.output_width % s.output_height, ox = pixel % s.output_width;
    const int8_t* in_image = in + image * s.input_height * s.input_width * c;
    uint8_t* dst = out + r * padded;
    const int64_t ix0 = ox * s.stride_width - s.pad_left;
    for (int64_t ky = 0; ky < s.filter_height; ++ky) {
      const int64_t iy = oy * s.stride_height - s.pad_top + ky * s.dilation_height;
      if (iy < 0 || iy >= s.input_height) {
        std::memset(dst, zero, static_cast<size_t>(s.filter_width * c));
        dst += s.filter_width * c;
        continue;
      }
      if (s.dilation_width == 1) {  // the row's taps are one run of the input row: one copy, the edges padding
        const int64_t begin = std::min(std::max<int64_t>(0, -ix0), s.filter_width);
        const int64_t end = std::max(begin, std::min(s.filter_width, s.input_width - ix0));
        std::memset(dst, zero, static_cast<size_t>(begin * c));
        if (end > begin) {
          FlipCopy(in_image + (iy * s.input_width + ix0 + begin) * c, (end - begin) * c, dst + begin * c);
        }
        std::memset(dst + end * c, zero, static_cast<size_t>((s.filter_width - end) * c));
        dst += s.filter_width * c;
        continue;
      }
      for (int64_t kx = 0; kx < s.filter_width; ++kx, dst += c) {
        const int64_t ix = ix0 + kx * s.dilation_width;
        if (ix < 0 || ix >= s.input_width) {
          std::memset(dst, zero, static_cast<size_t>(c));
        } else {
          FlipCopy(in_image + (iy * s.input_width + ix) * c, c, dst);
        }
      }
    }
    std::memset(dst, 0, static_cast<size_t>(padded - k));
  }
}

// Rows [row_begin, row_end) of the product, in tiles of kMaxRows: `fill(row, rows, scratch, padded)` writes a tile's
// unsigned rows of A into the thread's scratch, and the micro-kernels multiply them.
template <typename Fill>
KILN_VNNI_TARGET void Tiles(const PackedInt8Gemm& p, int8_t* c, int64_t ldc, int64_t row_begin, int64_t row_end,
                            const Fill& fill) {
  const int64_t padded = p.k_groups * kGroupBytes;
  thread_local std::vector<uint8_t> scratch;
  if (scratch.size() < static_cast<size_t>(kMaxRows * padded)) scratch.resize(static_cast<size_t>(kMaxRows * padded));
  for (int64_t row = row_begin; row < row_end; row += kMaxRows) {
    const int64_t rows = std::min<int64_t>(kMaxRows, row_end - row);
    fill(row, rows, scratch.data(), padded);
    int8_t* out = c + row * ldc;
    switch (rows) {
      case 8: Rows<8>(p, scratch.data(), padded, out, ldc); break;
      case 7: Rows<7>(p, scratch.data(), padded, out, ldc); break;
      case 6: Rows<6>(p, scratch.data(), padded, out, ldc); break;
      case 5: Rows<5>(p, scratch.data(), padded, out, ldc); break;
      case 4: Rows<4>(p, scratch.data(), padded, out, ldc); break;
      case 3: Rows<3>(p, scratch.data(), padded, out, ldc); break;
      case 2: Rows<2>(p, scratch.data(), padded, out, ldc); break;
      default: Rows<1>(p, scratch.data(), padded, out, ldc); break;
    }
  }
}

}  // namespace

KILN_VNNI_TARGET void Int8Gemm(const PackedInt8Gemm& p, const int8_t* a, int64_t lda, int8_t* c, int64_t ldc,
                               int64_t row_begin, int64_t row_end) {
  Tiles(p, c, ldc, row_begin, row_end, [&](int64_t row, int64_t rows, uint8_t* scratch, int64_t padded) {
    ToUnsigned(a, lda, row, rows, p.k, padded, scratch);
  });
}

KILN_VNNI_TARGET void Int8Conv(const PackedInt8Gemm& p, const reference::ConvParams& shape, int32_t input_zero_point,
                               const int8_t* input, int8_t* output, int64_t row_begin, int64_t row_end) {
  Tiles(p, output, p.n, row_begin, row_end, [&](int64_t row, int64_t rows, uint8_t* scratch, int64_t padded) {
    GatherUnsigned(shape, input_zero_point, input, row, rows, padded, scratch);
  });
}

#else

void Int8Gemm(const PackedInt8Gemm&, const int8_t*, int64_t, int8_t*, int64_t, int64_t, int64_t) {}
void Int8Conv(const PackedInt8Gemm&, const reference::ConvParams&, int32_t, const int8_t*, int8_t*, int64_t,
              int64_t) {}

#endif

}  // namespace kiln::ops::vnni
