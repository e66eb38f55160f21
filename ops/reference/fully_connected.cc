// FULLY_CONNECTED and SOFTMAX (fully_connected.h).

#include "ops/reference/fully_connected.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::ops::reference {

void FullyConnectedFloat(const FullyConnectedParams& p, const float* input, const float* weights,
                         const float* bias, float* output) {
  for (int64_t b = 0; b < p.batch; ++b) {
    const float* row = input + b * p.input_size;
    for (int64_t u = 0; u < p.num_units; ++u) {
      const float* unit_weights = weights + u * p.input_size;
      float sum = 0.0f;
      for (int64_t i = 0; i < p.input_size; ++i) sum += row[i] * unit_weights[i];
      if (bias != nullptr) sum += bias[u];
      output[b * p.num_units + u] = Activate(p.activation, sum);
    }
  }
}

void SoftmaxFloat(const SoftmaxParams& p, const float* input, float* output) {
  if (p.depth == 0) return;
  for (int64_t o = 0; o < p.outer; ++o) {
    const float* in = input + o * p.depth;
    float* out = output + o * p.depth;
    float max = in[0];
    for (int64_t i = 1; i < p.depth; ++i) max = std::max(max, in[i]);
    float sum = 0.0f;
    for (int64_t i = 0; i < p.depth; ++i) {
      out[i] = std::exp((in[i] - max) * p.beta);
      sum += out[i];
    }
    for (int64_t i = 0; i < p.depth; ++i) out[i] /= sum;
  }
}

void LogSoftmaxFloat(const SoftmaxParams& p, const float* input, float* output) {
  for (int64_t row = 0; row < p.outer; ++row) {
    const float* in = input + row * p.depth;
    float* out = output + row * p.depth;
    float max = std::numeric_limits<float>::lowest();
    for (int64_t j = 0; j < p.depth; ++j) max = std::max(max, in[j]);
    float sum = 0.0f;
    for (int64_t j = 0; j < p.depth; ++j) sum += std::exp(in[j] - max);
    const float log_sum = std::log(sum);
    for (int64_t j = 0; j < p.depth; ++j) out[j] = in[j] - max - log_sum;
  }
}

void BatchMatMulFloat(const BatchMatMulParams& params, const float* lhs, const float* rhs, float* output) {
  WalkBatchMatMul(params, lhs, rhs, output, [](const auto& x, const auto& y, int64_t depth) {
    float sum = 0.0f;
    for (int64_t d = 0; d < depth; ++d) sum += x(d) * y(d);
    return sum;
  });
}

}  // namespace kiln::ops::reference
