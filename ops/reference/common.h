// Shared vocabulary of the reference kernels: shapes and fused activations.
//
// The reference kernels are the correctness oracle for every faster path: they are written for clarity, take
// all their parameters in one struct, and know nothing about tensors, nodes or the C API.
#ifndef KILN_OPS_REFERENCE_COMMON_H_
#define KILN_OPS_REFERENCE_COMMON_H_

#include <cmath>
#include <cstdint>
#include <vector>

namespace kiln::ops::reference {

// A tensor shape, outermost dimension first. 64-bit so that products of dimensions cannot overflow.
using Dims = std::vector<int64_t>;

// The number of elements of a tensor of shape `dims` (1 for a scalar, 0 if any dimension is 0).
inline int64_t NumElements(const Dims& dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return count;
}

// The activation an op applies to each output element before storing it.
enum class Activation { kNone, kRelu, kReluN1To1, kRelu6, kTanh, kSigmoid };

inline float Activate(Activation activation, float x) {
  switch (activation) {
    case Activation::kNone:
      return x;
    case Activation::kRelu:
      return x < 0.0f ? 0.0f : x;
    case Activation::kReluN1To1:
      return x < -1.0f ? -1.0f : (x > 1.0f ? 1.0f : x);
    case Activation::kRelu6:
      return x < 0.0f ? 0.0f : (x > 6.0f ? 6.0f : x);
    case Activation::kTanh:
      return std::tanh(x);
    case Activation::kSigmoid:
      return 1.0f / (1.0f + std::exp(-x));
  }
  return x;
}

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_COMMON_H_
