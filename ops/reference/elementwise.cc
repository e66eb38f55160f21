// Elementwise binary ops with broadcasting and the unary activations (elementwise.h).

#include "ops/reference/elementwise.h"

#include <algorithm>
#include <cmath>

namespace kiln::ops::reference {

bool BroadcastShape(const Dims& a, const Dims& b, Dims* out) {
  const size_t rank = std::max(a.size(), b.size());
  Dims result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Dimensions missing on the left of the shorter shape behave as 1.
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1) {
      result[i] = da;
    } else if (da == 1) {
      result[i] = db;
    } else {
      return false;
    }
  }
  *out = std::move(result);
  return true;
}

Dims BroadcastStrides(const Dims& dims, const Dims& output_dims) {
  const size_t rank = output_dims.size();
  const size_t offset = rank - dims.size();
  Dims strides(rank, 0);
  int64_t stride = 1;
  for (size_t i = rank; i-- > offset;) {
    const int64_t d = dims[i - offset];
    strides[i] = (d == 1 && output_dims[i] != 1) ? 0 : stride;
    stride *= d;
  }
  return strides;
}

namespace {

float Apply(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::kAdd:
      return a + b;
    case BinaryOp::kSub:
      return a - b;
    case BinaryOp::kMul:
      return a * b;
    case BinaryOp::kDiv:
      return a / b;
    case BinaryOp::kAtan2:
      return std::atan2(a, b);
    case BinaryOp::kMaximum:
      return a > b || std::isnan(a) ? a : b;  // TFLite's: NaN propagates from either side
    case BinaryOp::kMinimum:
      return a < b || std::isnan(a) ? a : b;
    case BinaryOp::kSquaredDifference:
      return (a - b) * (a - b);
    case BinaryOp::kPrelu:
      return a >= 0.0f ? a : a * b;
  }
  return 0.0f;
}

}  // namespace

bool MakeBinaryParams(BinaryOp op, Activation activation, const Dims& a_dims, const Dims& b_dims,
                      BinaryParams* params) {
  Dims output_dims;
  if (!BroadcastShape(a_dims, b_dims, &output_dims)) return false;
  params->op = op;
  params->activation = activation;
  params->a_strides = BroadcastStrides(a_dims, output_dims);
  params->b_strides = BroadcastStrides(b_dims, output_dims);
  params->output_dims = std::move(output_dims);
  return true;
}

void BinaryFloat(const BinaryParams& params, const float* a, const float* b, float* out) {
  ForEachBroadcast(params, [&](int64_t i, int64_t a_offset, int64_t b_offset) {
    out[i] = Activate(params.activation, Apply(params.op, a[a_offset], b[b_offset]));
  });
}

void UnaryFloat(UnaryOp op, int64_t count, const float* in, float* out) {
  for (int64_t i = 0; i < count; ++i) {
    const float x = in[i];
    switch (op) {
      case UnaryOp::kLogistic:
        out[i] = 1.0f / (1.0f + std::exp(-x));
        break;
      case UnaryOp::kTanh:
        out[i] = std::tanh(x);
        break;
      case UnaryOp::kRelu:
        out[i] = Activate(Activation::kRelu, x);
        break;
      case UnaryOp::kRelu6:
        out[i] = Activate(Activation::kRelu6, x);
        break;
      case UnaryOp::kReluN1To1:
        out[i] = Activate(Activation::kReluN1To1, x);
        break;
      case UnaryOp::kRelu0To1:
        out[i] = std::min(std::max(x, 0.0f), 1.0f);
        break;
      case UnaryOp::kHardSwish:
        out[i] = x * std::min(std::max(x + 3.0f, 0.0f), 6.0f) / 6.0f;
        break;
      case UnaryOp::kElu:
        out[i] = x >= 0.0f ? x : std::expm1(x);
        break;
      case UnaryOp::kExp:
        out[i] = std::exp(x);
        break;
    }
  }
}

void LeakyReluFloat(float alpha, int64_t count, const float* in, float* out) {
  for (int64_t i = 0; i < count; ++i) out[i] = in[i] >= 0.0f ? in[i] : alpha * in[i];
}

float Gelu(bool approximate, float x) {
  if (approximate) {
    constexpr float kSqrt2OverPi = 0.7978845608028654f;
    return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
  }
  constexpr float kSqrtHalf = 0.7071067811865476f;
  return 0.5f * x * (1.0f + std::erf(x * kSqrtHalf));
}

void GeluFloat(bool approximate, int64_t count, const float* in, float* out) {
  for (int64_t i = 0; i < count; ++i) out[i] = Gelu(approximate, in[i]);
}

}  // namespace kiln::ops::reference
