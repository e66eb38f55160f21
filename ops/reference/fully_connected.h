// FULLY_CONNECTED and SOFTMAX: the row-wise ops.
#ifndef KILN_OPS_REFERENCE_FULLY_CONNECTED_H_
#define KILN_OPS_REFERENCE_FULLY_CONNECTED_H_

#include <cstdint>

#include "ops/reference/common.h"

namespace kiln::ops::reference {

// output[b, u] = activation(sum_i input[b, i] * weights[u, i] + bias[u]).
// input [batch, input_size], weights [num_units, input_size], bias [num_units] or null,
// output [batch, num_units].
struct FullyConnectedParams {
  int64_t batch = 0;
  int64_t input_size = 0;
  int64_t num_units = 0;
  Activation activation = Activation::kNone;
};

void FullyConnectedFloat(const FullyConnectedParams& params, const float* input, const float* weights,
                         const float* bias, float* output);

// Softmax over the innermost dimension of an [outer, depth] array: exp(beta * (x - max)) / sum. Subtracting
// the row maximum keeps exp from overflowing without changing the result.
struct SoftmaxParams {
  int64_t outer = 0;
  int64_t depth = 0;
  float beta = 1.0f;
};

void SoftmaxFloat(const SoftmaxParams& params, const float* input, float* output);

// LOG_SOFTMAX over the innermost dimension (LiteRT's float kernel): x - max - log(sum exp(x - max)), the sum in
// float in order. `beta` is not used (LOG_SOFTMAX has none).
void LogSoftmaxFloat(const SoftmaxParams& params, const float* input, float* output);

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_FULLY_CONNECTED_H_
