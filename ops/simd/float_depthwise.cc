// The AVX2/FMA and AVX-512F depthwise convolution (float_depthwise.h). The vector code is compiled for its target
// with function attributes only, so the rest of the build keeps its baseline; Available(width) decides at run time
// whether a form may be called.
#include "ops/simd/float_depthwise.h"

#include <algorithm>

#include "ops/simd/cpu.h"

#if KILN_SIMD_X86_BUILD
#include "ops/simd/vec.h"
#endif

namespace kiln::ops::depthwise {

bool Available() { return Available(Width::kAvx2); }

bool Available(Width width) {
#if KILN_SIMD_X86_BUILD
  static const bool avx2 = simd::Avx2FmaKernelEnabled("KILN_DISABLE_DEPTHWISE");
  static const bool avx512 = avx2 && simd::HasAvx512f();
  return width == Width::kAvx512 ? avx512 : avx2;
#else
  (void)width;
  return false;
#endif
}

PackedDepthwise PackDepthwise(const conv::ConvShape& shape, const float* weights, const float* bias, float min,
                              float max, Width width) {
  PackedDepthwise p;
  p.width = width;
  p.lanes = width == Width::kAvx512 ? 16 : 8;
  p.shape = shape;
  p.min = min;
  p.max = max;
  const int64_t channels = shape.out_c, taps = shape.kernel_h * shape.kernel_w;
  p.vectors = (channels + p.lanes - 1) / p.lanes;
  p.weights.assign(static_cast<size_t>(p.vectors * taps * p.lanes), 0.0f);
  p.bias.assign(static_cast<size_t>(p.vectors * p.lanes), 0.0f);
  if (bias != nullptr) std::copy(bias, bias + channels, p.bias.begin());
  float* out = p.weights.data();
  for (int64_t v = 0; v < p.vectors; ++v) {
    for (int64_t t = 0; t < taps; ++t) {
      for (int64_t j = 0; j < p.lanes; ++j) {
        const int64_t c = v * p.lanes + j;
        *out++ = c < channels ? weights[t * channels + c] : 0.0f;
      }
    }
  }
  return p;
}

#if KILN_SIMD_X86_BUILD

#define KILN_KERNEL_BODY "ops/simd/float_depthwise_kernel.inc"
#include "ops/simd/each_width.inc"

void Depthwise(const PackedDepthwise& packed, const float* in, float* out, int64_t row_begin, int64_t row_end) {
  if (packed.width == Width::kAvx512) {
    avx512::DepthwiseRows(packed, in, out, row_begin, row_end);
  } else {
    avx2::DepthwiseRows(packed, in, out, row_begin, row_end);
  }
}

#else

void Depthwise(const PackedDepthwise&, const float*, float*, int64_t, int64_t) {}

#endif

}  // namespace kiln::ops::depthwise
