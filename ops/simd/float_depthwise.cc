// The AVX2/FMA depthwise convolution (float_depthwise.h). The vector code is compiled for its target with function
// attributes only, so the rest of the build keeps its baseline; Available() decides at run time whether it may be
// called.
#include "ops/simd/float_depthwise.h"

#include <algorithm>

#include "ops/simd/cpu.h"

#if KILN_SIMD_X86_BUILD
#include "ops/simd/avx2.h"
#endif

namespace kiln::ops::depthwise {

bool Available() {
#if KILN_SIMD_X86_BUILD
  static const bool available = simd::Avx2FmaKernelEnabled("KILN_DISABLE_DEPTHWISE");
  return available;
#else
  return false;
#endif
}

PackedDepthwise PackDepthwise(const conv::ConvShape& shape, const float* weights, const float* bias, float min,
                              float max) {
  PackedDepthwise p;
  p.shape = shape;
  p.min = min;
  p.max = max;
  const int64_t channels = shape.out_c, taps = shape.kernel_h * shape.kernel_w;
  p.vectors = (channels + 7) / 8;
  p.weights.assign(static_cast<size_t>(p.vectors * taps * 8), 0.0f);
  p.bias.assign(static_cast<size_t>(p.vectors * 8), 0.0f);
  if (bias != nullptr) std::copy(bias, bias + channels, p.bias.begin());
  float* out = p.weights.data();
  for (int64_t v = 0; v < p.vectors; ++v) {
    for (int64_t t = 0; t < taps; ++t) {
      for (int64_t j = 0; j < 8; ++j) {
        const int64_t c = v * 8 + j;
        *out++ = c < channels ? weights[t * channels + c] : 0.0f;
      }
    }
  }
  return p;
}

#if KILN_SIMD_X86_BUILD

namespace {

// P output pixels of one row, one vector of channels starting at `c` (`valid` of them, 1 to 8), kernel KH x KW
// (0: the shape's, read at run time). `in_image` is the image's first input row; x0 the first pixel's first input
// column, stepping `stride` pixels; taps [ky_begin, ky_end) of the kernel's rows are inside the input (kFull: all
// KH of them, a compile-time count). kChecked: columns outside [0, in_w) are skipped (the row's end pixels), else
// every column is inside. A tail vector (valid < 8) loads and stores only its channels.
template <int KH, int KW, int P, bool kChecked, bool kFull>
KILN_AVX2_TARGET inline void Pixels(const PackedDepthwise& pd, const float* w, __m256 bias, const float* in_image,
                                    int64_t c, int64_t valid, int64_t iy0, int64_t ky_begin, int64_t ky_end,
                                    int64_t x0, float* out) {
  const conv::ConvShape& s = pd.shape;
  const int64_t kw = KW > 0 ? KW : s.kernel_w;
  const int64_t channels = s.out_c;
  const int64_t row_floats = s.in_w * channels, pixel_floats = s.stride_w * channels;
  __m256 acc[P];
  for (int p = 0; p < P; ++p) acc[p] = bias;
  const int64_t first = kFull ? 0 : ky_begin, last = kFull ? KH : ky_end;
  // Row ky's first tap of the first pixel; the others step by `channels` (kx) and `pixel_floats` (p).
  const float* tap_row = in_image + (iy0 + first) * row_floats + x0 * channels + c;
  for (int64_t ky = first; ky < last; ++ky, tap_row += row_floats) {
    const float* tap = tap_row;
    for (int64_t kx = 0; kx < kw; ++kx, tap += channels) {
      const __m256 wv = _mm256_loadu_ps(w + (ky * kw + kx) * 8);
      for (int p = 0; p < P; ++p) {
        if (kChecked) {
          const int64_t ix = x0 + p * s.stride_w + kx;
          if (ix < 0 || ix >= s.in_w) continue;
        }
        const float* at = tap + p * pixel_floats;
        const __m256 x = valid >= 8 ? _mm256_loadu_ps(at) : simd::LoadFirstLanes(at, valid);
        acc[p] = _mm256_fmadd_ps(x, wv, acc[p]);
      }
    }
  }
  const __m256 lo = _mm256_set1_ps(pd.min), hi = _mm256_set1_ps(pd.max);
  for (int p = 0; p < P; ++p) simd::StoreFirstLanes(out + p * channels, simd::Clamp(acc[p], lo, hi), valid);
}

// P pixels from output column x of one row, every channel vector in turn: pixels outer and channel vectors inner,
// so that consecutive steps read consecutive memory. The full vectors of a row whose window is inside the input
// vertically take the compile-time form.
template <int KH, int KW, int P, bool kChecked>
KILN_AVX2_TARGET inline void Step(const PackedDepthwise& pd, const float* in_image, int64_t iy0, int64_t ky_begin,
                                  int64_t ky_end, int64_t x, float* out_row) {
  const conv::ConvShape& s = pd.shape;
  const int64_t channels = s.out_c, taps = s.kernel_h * s.kernel_w;
  const int64_t x0 = x * s.stride_w - s.pad_left;
  const bool full = KH > 0 && ky_begin == 0 && ky_end == KH;
  const int64_t full_vectors = channels / 8;
  int64_t v = 0;
  if (full) {
    for (; v < full_vectors; ++v) {
      Pixels<KH, KW, P, kChecked, true>(pd, pd.weights.data() + v * taps * 8, _mm256_loadu_ps(pd.bias.data() + v * 8),
                                        in_image, v * 8, 8, iy0, 0, KH, x0, out_row + x * channels + v * 8);
    }
  }
  for (; v < pd.vectors; ++v) {
    const int64_t c = v * 8;
    Pixels<KH, KW, P, kChecked, false>(pd, pd.weights.data() + v * taps * 8, _mm256_loadu_ps(pd.bias.data() + c),
                                       in_image, c, std::min<int64_t>(8, channels - c), iy0, ky_begin, ky_end, x0,
                                       out_row + x * channels + c);
  }
}

template <int KH, int KW>
KILN_AVX2_TARGET void Rows(const PackedDepthwise& pd, const float* in, float* out, int64_t row_begin,
                           int64_t row_end) {
  constexpr int P = 4;  // pixels per step
  const conv::ConvShape& s = pd.shape;
  const int64_t channels = s.out_c;
  // The pixels whose window is inside the row: x s_w - pad_left >= 0 and x s_w - pad_left + kernel_w <= in_w.
  int64_t x_begin = (s.pad_left + s.stride_w - 1) / s.stride_w;
  int64_t x_end = s.in_w + s.pad_left - s.kernel_w >= 0 ? (s.in_w + s.pad_left - s.kernel_w) / s.stride_w + 1 : 0;
  x_begin = std::min(x_begin, s.out_w);
  x_end = std::max(x_begin, std::min(x_end, s.out_w));
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t image = r / s.out_h, y = r % s.out_h;
    const float* in_image = in + image * s.in_h * s.in_w * channels;
    float* out_row = out + r * s.out_w * channels;
    const int64_t iy0 = y * s.stride_h - s.pad_top;
    const int64_t ky_begin = std::max<int64_t>(0, -iy0);
    const int64_t ky_end = std::min<int64_t>(s.kernel_h, s.in_h - iy0);
    for (int64_t x = 0; x < x_begin; ++x) Step<KH, KW, 1, true>(pd, in_image, iy0, ky_begin, ky_end, x, out_row);
    int64_t x = x_begin;
    for (; x + P <= x_end; x += P) Step<KH, KW, P, false>(pd, in_image, iy0, ky_begin, ky_end, x, out_row);
    if (x + 2 <= x_end) {
      Step<KH, KW, 2, false>(pd, in_image, iy0, ky_begin, ky_end, x, out_row);
      x += 2;
    }
    for (; x < x_end; ++x) Step<KH, KW, 1, false>(pd, in_image, iy0, ky_begin, ky_end, x, out_row);
    for (x = x_end; x < s.out_w; ++x) Step<KH, KW, 1, true>(pd, in_image, iy0, ky_begin, ky_end, x, out_row);
  }
}

}  // namespace

void Depthwise(const PackedDepthwise& packed, const float* in, float* out, int64_t row_begin, int64_t row_end) {
  const conv::ConvShape& s = packed.shape;
  if (s.kernel_h == 3 && s.kernel_w == 3) {
    Rows<3, 3>(packed, in, out, row_begin, row_end);
  } else if (s.kernel_h == 5 && s.kernel_w == 5) {
    Rows<5, 5>(packed, in, out, row_begin, row_end);
  } else {
    Rows<0, 0>(packed, in, out, row_begin, row_end);
  }
}

#else

void Depthwise(const PackedDepthwise&, const float*, float*, int64_t, int64_t) {}

#endif

}  // namespace kiln::ops::depthwise
