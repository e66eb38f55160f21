// The AVX2/FMA direct convolution over few input channels (float_conv.h). The vector code is compiled for its
// target with function attributes only, so the rest of the build keeps its baseline; Available() decides at run
// time whether it may be called.
#include "ops/simd/float_conv.h"

#include <algorithm>

#include "ops/simd/cpu.h"

#if KILN_SIMD_X86_BUILD
#include "ops/simd/avx2.h"
#endif

namespace kiln::ops::conv {

bool Available() {
#if KILN_SIMD_X86_BUILD
  static const bool available = simd::Avx2FmaKernelEnabled("KILN_DISABLE_CONV");
  return available;
#else
  return false;
#endif
}

PackedConv PackConv(const ConvShape& shape, const float* weights, const float* bias, float min, float max) {
  PackedConv p;
  p.shape = shape;
  p.min = min;
  p.max = max;
  p.vectors = shape.out_c <= 8 ? 1 : 2;
  const int64_t width = 8 * int64_t{p.vectors};
  p.blocks = (shape.out_c + width - 1) / width;
  const int64_t taps = shape.kernel_h * shape.kernel_w * shape.in_c;  // per output channel
  p.weights.assign(static_cast<size_t>(p.blocks * taps * width), 0.0f);
  p.bias.assign(static_cast<size_t>(p.blocks * width), 0.0f);
  if (bias != nullptr) std::copy(bias, bias + shape.out_c, p.bias.begin());
  float* out = p.weights.data();
  for (int64_t b = 0; b < p.blocks; ++b) {
    for (int64_t t = 0; t < taps; ++t) {  // (ky, kx, c) in W's own order
      for (int64_t j = 0; j < width; ++j) {
        const int64_t o = b * width + j;
        *out++ = o < shape.out_c ? weights[o * taps + t] : 0.0f;
      }
    }
  }
  return p;
}

#if KILN_SIMD_X86_BUILD

namespace {

// P output pixels of one row, one block of V vectors of output channels, C input channels. `in_row0` is the
// image's first input row; x0 the first pixel's first input column (before adding kx), stepping `stride` pixels;
// taps [ky_begin, ky_end) of the kernel's rows are inside the input. kChecked: columns outside [0, in_w) are
// skipped (the row's end pixels), else every column is inside.
template <int V, int P, int C, bool kChecked>
KILN_AVX2_TARGET void Pixels(const PackedConv& pc, const float* w, const float* bias, const float* in_image,
                             int64_t iy0, int64_t ky_begin, int64_t ky_end, int64_t x0, float* out,
                             int64_t valid_channels) {
  const ConvShape& s = pc.shape;
  __m256 acc[P][V];
  for (int v = 0; v < V; ++v) {
    const __m256 b = _mm256_loadu_ps(bias + 8 * v);
    for (int p = 0; p < P; ++p) acc[p][v] = b;
  }
  for (int64_t ky = ky_begin; ky < ky_end; ++ky) {
    const float* row = in_image + (iy0 + ky) * s.in_w * C;
    const float* wk = w + ky * s.kernel_w * C * 8 * V;
    for (int64_t kx = 0; kx < s.kernel_w; ++kx) {
      const float* wt = wk + kx * C * 8 * V;
      for (int c = 0; c < C; ++c) {
        __m256 wv[V];
        for (int v = 0; v < V; ++v) wv[v] = _mm256_loadu_ps(wt + (c * V + v) * 8);
        for (int p = 0; p < P; ++p) {
          const int64_t ix = x0 + p * s.stride_w + kx;
          if (kChecked && (ix < 0 || ix >= s.in_w)) continue;
          const __m256 x = _mm256_broadcast_ss(row + ix * C + c);
          for (int v = 0; v < V; ++v) acc[p][v] = _mm256_fmadd_ps(wv[v], x, acc[p][v]);
        }
      }
    }
  }
  const __m256 lo = _mm256_set1_ps(pc.min), hi = _mm256_set1_ps(pc.max);
  for (int p = 0; p < P; ++p) {
    for (int v = 0; v < V; ++v) {
      const int64_t left = valid_channels - 8 * v;
      if (left > 0) simd::StoreFirstLanes(out + p * s.out_c + 8 * v, simd::Clamp(acc[p][v], lo, hi), left);
    }
  }
}

// Output rows [row_begin, row_end) for C input channels and V vectors per block.
template <int V, int C>
KILN_AVX2_TARGET void Rows(const PackedConv& pc, const float* in, float* out, int64_t row_begin, int64_t row_end) {
  constexpr int P = V == 1 ? 8 : 4;  // pixels per step: 8 vectors of sums either way
  const ConvShape& s = pc.shape;
  const int64_t width = 8 * V;
  const int64_t taps = s.kernel_h * s.kernel_w * C * width;  // weights per block
  // The pixels whose window is inside the row: x s_w - pad_left >= 0 and x s_w - pad_left + kernel_w <= in_w.
  int64_t x_begin = (s.pad_left + s.stride_w - 1) / s.stride_w;
  int64_t x_end = s.in_w + s.pad_left - s.kernel_w >= 0 ? (s.in_w + s.pad_left - s.kernel_w) / s.stride_w + 1 : 0;
  x_begin = std::min(x_begin, s.out_w);
  x_end = std::max(x_begin, std::min(x_end, s.out_w));
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t image = r / s.out_h, y = r % s.out_h;
    const float* in_image = in + image * s.in_h * s.in_w * C;
    float* out_row = out + r * s.out_w * s.out_c;
    const int64_t iy0 = y * s.stride_h - s.pad_top;
    const int64_t ky_begin = std::max<int64_t>(0, -iy0);
    const int64_t ky_end = std::min<int64_t>(s.kernel_h, s.in_h - iy0);
    for (int64_t b = 0; b < pc.blocks; ++b) {
      const float* w = pc.weights.data() + b * taps;
      const float* bias = pc.bias.data() + b * width;
      const int64_t valid = std::min<int64_t>(width, s.out_c - b * width);
      float* o = out_row + b * width;
      auto x0 = [&](int64_t x) { return x * s.stride_w - s.pad_left; };
      for (int64_t x = 0; x < x_begin; ++x) {
        Pixels<V, 1, C, true>(pc, w, bias, in_image, iy0, ky_begin, ky_end, x0(x), o + x * s.out_c, valid);
      }
      int64_t x = x_begin;
      for (; x + P <= x_end; x += P) {
        Pixels<V, P, C, false>(pc, w, bias, in_image, iy0, ky_begin, ky_end, x0(x), o + x * s.out_c, valid);
      }
      // The rest of the interior in smaller steps: a lone pixel's one chain of sums waits on each multiply-add.
      if (P > 4 && x + 4 <= x_end) {
        Pixels<V, 4, C, false>(pc, w, bias, in_image, iy0, ky_begin, ky_end, x0(x), o + x * s.out_c, valid);
        x += 4;
      }
      if (x + 2 <= x_end) {
        Pixels<V, 2, C, false>(pc, w, bias, in_image, iy0, ky_begin, ky_end, x0(x), o + x * s.out_c, valid);
        x += 2;
      }
      for (; x < x_end; ++x) {
        Pixels<V, 1, C, false>(pc, w, bias, in_image, iy0, ky_begin, ky_end, x0(x), o + x * s.out_c, valid);
      }
      for (x = x_end; x < s.out_w; ++x) {
        Pixels<V, 1, C, true>(pc, w, bias, in_image, iy0, ky_begin, ky_end, x0(x), o + x * s.out_c, valid);
      }
    }
  }
}

template <int V>
void RowsFor(const PackedConv& pc, const float* in, float* out, int64_t row_begin, int64_t row_end) {
  switch (pc.shape.in_c) {
    case 1:
      Rows<V, 1>(pc, in, out, row_begin, row_end);
      break;
    case 2:
      Rows<V, 2>(pc, in, out, row_begin, row_end);
      break;
    case 3:
      Rows<V, 3>(pc, in, out, row_begin, row_end);
      break;
    default:
      Rows<V, 4>(pc, in, out, row_begin, row_end);
      break;
  }
}

}  // namespace

void Conv(const PackedConv& packed, const float* in, float* out, int64_t row_begin, int64_t row_end) {
  if (packed.vectors == 1) {
    RowsFor<1>(packed, in, out, row_begin, row_end);
  } else {
    RowsFor<2>(packed, in, out, row_begin, row_end);
  }
}

#else

void Conv(const PackedConv&, const float*, float*, int64_t, int64_t) {}

#endif

}  // namespace kiln::ops::conv
