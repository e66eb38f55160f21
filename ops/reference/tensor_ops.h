// Ops that move or reduce data without arithmetic on pairs of tensors: RESHAPE and SQUEEZE (shape only),
// CONCATENATION, PAD, TRANSPOSE, MEAN. Each has a shape function (used by Prepare) and a kernel.
#ifndef KILN_OPS_REFERENCE_TENSOR_OPS_H_
#define KILN_OPS_REFERENCE_TENSOR_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ops/reference/common.h"

namespace kiln::ops::reference {

// RESHAPE: `requested` may hold one -1, inferred so that the element count is preserved. Returns false with
// a reason in `error` if the request is inconsistent with `input`.
bool ReshapeOutputShape(const Dims& input, const std::vector<int32_t>& requested, Dims* output,
                        std::string* error);

// SQUEEZE: removes the listed dimensions (negative counts from the back; each must have size 1), or every
// dimension of size 1 if `squeeze_dims` is empty.
bool SqueezeOutputShape(const Dims& input, const std::vector<int32_t>& squeeze_dims, Dims* output,
                        std::string* error);

// CONCATENATION along `axis` (already normalised to [0, rank)). Every input has the same rank and matches
// the others except along `axis`.
bool ConcatOutputShape(const std::vector<Dims>& inputs, int axis, Dims* output, std::string* error);

struct ConcatParams {
  int64_t outer = 0;                 // product of the dimensions before the axis
  std::vector<int64_t> slice_sizes;  // per input: its axis size times the product of the dimensions after it
  Activation activation = Activation::kNone;
};

ConcatParams MakeConcatParams(const std::vector<Dims>& inputs, int axis, Activation activation);
void ConcatFloat(const ConcatParams& params, const float* const* inputs, float* output);
// int8 CONCATENATION copies the stored values (the inputs are quantized as the output); the activation must be
// kNone.
void ConcatInt8(const ConcatParams& params, const int8_t* const* inputs, int8_t* output);

// PAD with a constant: output dim d = before[d] + input_dims[d] + after[d].
struct PadParams {
  Dims input_dims;
  Dims before;
  Dims after;
  float value = 0.0f;
};

Dims PadOutputShape(const PadParams& params);
void PadFloat(const PadParams& params, const float* input, float* output);
// int8 and uint8 (T): pads with `value` (the tensor's zero point: a quantized 0, as LiteRT pads).
template <typename T>
void PadQuantized(const PadParams& params, T value, const T* input, T* output);
inline void PadInt8(const PadParams& params, int8_t value, const int8_t* input, int8_t* output) {
  PadQuantized<int8_t>(params, value, input, output);
}

// TRANSPOSE: output dim d is input dim perm[d]. `perm` must be a permutation of [0, rank).
bool TransposeOutputShape(const Dims& input, const std::vector<int32_t>& perm, Dims* output,
                          std::string* error);

struct TransposeParams {
  Dims input_dims;
  std::vector<int32_t> perm;
};

void TransposeFloat(const TransposeParams& params, const float* input, float* output);
// int8 and uint8 (T): the stored values moved.
template <typename T>
void TransposeQuantized(const TransposeParams& params, const T* input, T* output);
inline void TransposeInt8(const TransposeParams& params, const int8_t* input, int8_t* output) {
  TransposeQuantized<int8_t>(params, input, output);
}

// MEAN over `axes` (negative counts from the back; duplicates allowed). With keep_dims the reduced
// dimensions stay as 1s, otherwise they are dropped.
struct MeanParams {
  Dims input_dims;
  std::vector<bool> reduced;  // per input dimension
};

bool MakeMeanParams(const Dims& input, const std::vector<int32_t>& axes, bool keep_dims, MeanParams* params,
                    Dims* output, std::string* error);
// A mean over zero elements is NaN.
void MeanFloat(const MeanParams& params, const float* input, float* output);

// SUM over the same axes: each output the sum of its inputs in input (row-major) order, as LiteRT's reference
// reduce adds them; a sum over zero elements is 0.
void SumFloat(const MeanParams& params, const float* input, float* output);

// The number of input elements that reduce into each output element (the product of the reduced dimensions).
int64_t ReducedCount(const MeanParams& params);

// The exact int64 sum of each output's int8 inputs (the quantized MEAN and SUM kernels start from it).
void SumInt8(const MeanParams& params, const int8_t* input, int64_t* sums);
void SumUInt8(const MeanParams& params, const uint8_t* input, int64_t* sums);
void SumInt16(const MeanParams& params, const int16_t* input, int64_t* sums);

// REDUCE_MAX, REDUCE_MIN and REDUCE_PROD (stored values, no arithmetic on quantization), REDUCE_ANY and REDUCE_ALL
// (bool, taken as its bytes: T = uint8_t, any non-zero byte true, outputs 0 or 1) over the same axes, as LiteRT's reference reduce folds them: in input (row-major) order from
// lowest() (MAX), max() (MIN), 1 (PROD), false (ANY) or true (ALL), so a reduction over zero elements gives that
// value. MAX and MIN keep the running value unless the next is strictly greater (smaller): a NaN never wins.
// Integer products wrap (two's complement), as LiteRT's compiled arithmetic does.
// CUMSUM along `axis` of a tensor of `dims`: the running sum from the start of the axis (from its end with
// `reverse`), each output including its own element unless `exclusive` (then the first is 0). Float sums run in
// order along the axis; integer sums wrap.
struct CumsumParams {
  Dims dims;
  int axis = 0;
  bool exclusive = false, reverse = false;
};
template <typename T>
void Cumsum(const CumsumParams& params, const T* input, T* output);

enum class ReduceKind { kMax, kMin, kProd, kAny, kAll };
template <typename T>
void ReduceElements(ReduceKind kind, const MeanParams& params, const T* input, T* output);

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_TENSOR_OPS_H_
