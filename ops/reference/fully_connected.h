// FULLY_CONNECTED and SOFTMAX: the row-wise ops.
#ifndef KILN_OPS_REFERENCE_FULLY_CONNECTED_H_
#define KILN_OPS_REFERENCE_FULLY_CONNECTED_H_

#include <cstdint>
#include <vector>

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

// BATCH_MATMUL: out[b, i, j] = sum over k, in order, of lhs[b, i, k] * rhs[b, k, j] in float. The operands are
// given as `batch` matrices each, batch b reading matrix lhs_batch[b] and rhs_batch[b] (broadcast batch
// dimensions repeat a matrix); adj_x / adj_y mean the operand is stored transposed.
struct BatchMatMulParams {
  int64_t rows = 0, depth = 0, cols = 0;
  bool adj_x = false, adj_y = false;
  std::vector<int64_t> lhs_batch, rhs_batch;  // per output batch: the operand's matrix index
};
void BatchMatMulFloat(const BatchMatMulParams& params, const float* lhs, const float* rhs, float* output);

// The walk every BATCH_MATMUL kernel shares: for each output batch, row i and column j it calls
// `cell(x, y, depth)`, where x(d) and y(d) read lhs[b, i, d] and rhs[b, d, j] through adj_x / adj_y and the batch
// broadcast, and stores the returned value at out[b, i, j]. The cell owns the arithmetic (float sum, int32 or
// int64 accumulator and requantization).
template <typename In, typename Out, typename Cell>
void WalkBatchMatMul(const BatchMatMulParams& params, const In* lhs, const In* rhs, Out* output, Cell cell) {
  const int64_t r = params.rows, k = params.depth, c = params.cols;
  for (size_t b = 0; b < params.lhs_batch.size(); ++b) {
    const In* a = lhs + params.lhs_batch[b] * r * k;
    const In* m = rhs + params.rhs_batch[b] * k * c;
    Out* out = output + static_cast<int64_t>(b) * r * c;
    for (int64_t i = 0; i < r; ++i) {
      for (int64_t j = 0; j < c; ++j) {
        const auto x = [&](int64_t d) { return params.adj_x ? a[d * r + i] : a[i * k + d]; };
        const auto y = [&](int64_t d) { return params.adj_y ? m[j * k + d] : m[d * c + j]; };
        out[i * c + j] = cell(x, y, k);
      }
    }
  }
}

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_FULLY_CONNECTED_H_
