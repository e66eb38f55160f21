// L2_NORMALIZATION and LOCAL_RESPONSE_NORMALIZATION (float32), as TFLite's reference kernels compute them.
#ifndef KILN_OPS_REFERENCE_NORMALIZATION_H_
#define KILN_OPS_REFERENCE_NORMALIZATION_H_

#include <cstdint>

namespace kiln::ops::reference {

// TFLite's floor on the norm, so that an all-zero row gives zeros rather than NaN.
constexpr float kL2NormEpsilon = 1e-6f;

// Each of `outer` rows of `depth` values divided by max(its L2 norm, kL2NormEpsilon); the squares are summed in
// float in row order.
void L2NormalizationFloat(int64_t outer, int64_t depth, const float* input, float* output);

struct LocalResponseNormParams {
  int64_t radius = 0;
  float bias = 1.0f, alpha = 1.0f, beta = 0.5f;
};

// Over the last axis (channels) of `outer` rows of `depth`: x * (bias + alpha * sum of x_j^2)^-beta, the sum over
// channels j in [c - radius, c + radius] inside the row. Up to kLocalResponseNormDirectRadius each window is
// summed afresh in float, in channel order, as LiteRT does; beyond it (no real model has such windows, a crafted
// one would cost depth^2) one window is slid along the row in double, so the cost stays linear in depth.
constexpr int64_t kLocalResponseNormDirectRadius = 32;
void LocalResponseNormFloat(const LocalResponseNormParams& params, int64_t outer, int64_t depth, const float* input,
                            float* output);

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_NORMALIZATION_H_
