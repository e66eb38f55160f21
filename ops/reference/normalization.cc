// L2_NORMALIZATION and LOCAL_RESPONSE_NORMALIZATION (normalization.h).

#include "ops/reference/normalization.h"

#include <algorithm>
#include <cmath>

namespace kiln::ops::reference {

void L2NormalizationFloat(int64_t outer, int64_t depth, const float* input, float* output) {
  for (int64_t i = 0; i < outer; ++i) {
    const float* row = input + i * depth;
    float squares = 0.0f;
    for (int64_t c = 0; c < depth; ++c) squares += row[c] * row[c];
    const float norm = std::max(std::sqrt(squares), kL2NormEpsilon);
    for (int64_t c = 0; c < depth; ++c) output[i * depth + c] = row[c] / norm;
  }
}

void LocalResponseNormFloat(const LocalResponseNormParams& params, int64_t outer, int64_t depth, const float* input,
                            float* output) {
  const bool narrow = params.radius <= kLocalResponseNormDirectRadius;
  for (int64_t i = 0; i < outer; ++i) {
    const float* row = input + i * depth;
    double window = 0.0;  // wide windows: the sum of squares over [c - radius, c + radius], slid along the row
    if (!narrow) {
      for (int64_t j = 0; j < std::min(depth, params.radius); ++j) window += double{row[j]} * row[j];
    }
    for (int64_t c = 0; c < depth; ++c) {
      float squares = 0.0f;
      if (narrow) {
        const int64_t begin = std::max<int64_t>(0, c - params.radius);
        const int64_t end = std::min(depth, c + params.radius + 1);
        for (int64_t j = begin; j < end; ++j) squares += row[j] * row[j];
      } else {
        const int64_t enter = c + params.radius, leave = c - params.radius - 1;
        if (enter < depth) window += double{row[enter]} * row[enter];
        if (leave >= 0) window -= double{row[leave]} * row[leave];
        squares = static_cast<float>(std::max(window, 0.0));
      }
      output[i * depth + c] = row[c] * std::pow(params.bias + params.alpha * squares, -params.beta);
    }
  }
}

}  // namespace kiln::ops::reference
