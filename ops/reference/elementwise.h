// Elementwise ops: binary ops with numpy broadcasting (ADD, SUB, MUL, DIV, ATAN2, MAXIMUM, MINIMUM,
// SQUARED_DIFFERENCE, PRELU) and unary activations (LOGISTIC, TANH, RELU, RELU6, RELU_N1_TO_1, HARD_SWISH, ELU,
// LEAKY_RELU).
#ifndef KILN_OPS_REFERENCE_ELEMENTWISE_H_
#define KILN_OPS_REFERENCE_ELEMENTWISE_H_

#include <cstdint>
#include <vector>

#include "ops/reference/common.h"

namespace kiln::ops::reference {

// PRELU is x for x >= 0, else x * alpha (a is x, b is alpha, broadcast like any operand).
enum class BinaryOp { kAdd, kSub, kMul, kDiv, kAtan2, kMaximum, kMinimum, kSquaredDifference, kPrelu };

// TFLite's broadcasting kernels go up to 6 dimensions (shared by every broadcasting op).
constexpr int kMaxBroadcastRank = 6;

// The numpy broadcast of two shapes: trailing dimensions are aligned, and each pair must be equal or contain
// a 1. Returns false if the shapes are incompatible.
bool BroadcastShape(const Dims& a, const Dims& b, Dims* out);

// Element strides of `dims` seen through the broadcast to `output_dims` (which `dims` broadcasts to): 0 along
// broadcast dimensions.
Dims BroadcastStrides(const Dims& dims, const Dims& output_dims);

struct BinaryParams {
  BinaryOp op = BinaryOp::kAdd;
  Activation activation = Activation::kNone;
  Dims output_dims;
  // For each output dimension, how far to move in `a` (`b`) when that output index grows by one: the
  // operand's element stride, or 0 where the operand is broadcast along that dimension.
  Dims a_strides;
  Dims b_strides;
};

// Fills `params` for `a op b`. Returns false if the shapes do not broadcast.
bool MakeBinaryParams(BinaryOp op, Activation activation, const Dims& a_dims, const Dims& b_dims,
                      BinaryParams* params);

// The broadcast walk of two operands for any binary op (comparisons, logical ops, ...): `op` and `activation` of
// the params stay at their defaults. Returns false if the shapes do not broadcast.
inline bool MakeBroadcastParams(const Dims& a_dims, const Dims& b_dims, BinaryParams* params) {
  return MakeBinaryParams(BinaryOp::kAdd, Activation::kNone, a_dims, b_dims, params);
}

// Calls visit(output_index, a_offset, b_offset) for every output element in row-major order, with the offsets
// of the operands' elements it is computed from (the walk every broadcasting kernel shares).
template <typename Visit>
void ForEachBroadcast(const BinaryParams& params, Visit&& visit) {
  const int64_t count = NumElements(params.output_dims);
  if (count == 0) return;
  const size_t rank = params.output_dims.size();
  std::vector<int64_t> index(rank, 0);
  int64_t a_offset = 0;
  int64_t b_offset = 0;
  for (int64_t i = 0; i < count; ++i) {
    visit(i, a_offset, b_offset);
    // Odometer step over the output index, moving each operand by its (possibly zero) stride.
    for (size_t d = rank; d-- > 0;) {
      ++index[d];
      a_offset += params.a_strides[d];
      b_offset += params.b_strides[d];
      if (index[d] < params.output_dims[d]) break;
      a_offset -= params.a_strides[d] * index[d];
      b_offset -= params.b_strides[d] * index[d];
      index[d] = 0;
    }
  }
}

// out = activation(a op b), broadcasting per `params`. ATAN2 computes atan2(a, b) (a is y, b is x).
void BinaryFloat(const BinaryParams& params, const float* a, const float* b, float* out);

// HARD_SWISH is x * relu6(x + 3) / 6; ELU is x for x >= 0, else exp(x) - 1 (TFLite's ELU has alpha 1).
enum class UnaryOp { kLogistic, kTanh, kRelu, kRelu6, kReluN1To1, kRelu0To1, kHardSwish, kElu, kExp };

void UnaryFloat(UnaryOp op, int64_t count, const float* in, float* out);

// GELU of one value, in float: 0.5 * x * (1 + erf(x / sqrt(2))), or with `approximate`
// 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), as LiteRT's kernel computes them.
float Gelu(bool approximate, float x);
void GeluFloat(bool approximate, int64_t count, const float* in, float* out);

// LEAKY_RELU: x for x >= 0, else alpha * x.
void LeakyReluFloat(float alpha, int64_t count, const float* in, float* out);

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_ELEMENTWISE_H_
