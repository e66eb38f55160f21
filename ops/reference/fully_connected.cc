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
  const int64_t r = params.rows, k = params.depth, c = params.cols;
  for (size_t b = 0; b < params.lhs_batch.size(); ++b) {
    const float* a = lhs + params.lhs_batch[b] * r * k;
    const float* m = rhs + params.rhs_batch[b] * k * c;
    float* out = output + static_cast<int64_t>(b) * r * c;
    for (int64_t i = 0; i < r; ++i) {
      for (int64_t j = 0; j < c; ++j) {
        float sum = 0.0f;
        for (int64_t d = 0; d < k; ++d) {
          const float x = params.adj_x ? a[d * r + i] : a[i * k + d];
          const float y = params.adj_y ? m[j * k + d] : m[d * c + j];
          sum += x * y;
        }
        out[i * c + j] = sum;
      }
    }
  }
}

}  // namespace kiln::ops::reference
