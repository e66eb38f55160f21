// Helpers shared by the builtin op wrappers: validation with clear errors, shapes, constant inputs, and
// per-node state. Everything here goes through the public opaque C API only.
#ifndef KILN_OPS_OP_UTIL_H_
#define KILN_OPS_OP_UTIL_H_

#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/c_api_opaque.h"
#include "ops/reference/common.h"
#include "ops/reference/conv.h"

namespace kiln::ops {

using reference::Dims;

// The tensor's name for messages: "'name'" or "(unnamed)".
std::string TensorLabel(const KilnOpaqueTensor* tensor);

Dims TensorDims(const KilnOpaqueTensor* tensor);
std::string DimsToString(const Dims& dims);

bool IsConstant(const KilnOpaqueTensor* tensor);

// Checks the node has between min and max inputs (absent optional inputs count) and exactly `outputs`
// outputs.
KilnStatus CheckArity(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op, int min_inputs,
                      int max_inputs, int outputs);

// Fetches input `index`, which must be present. `role` names it in messages ("input", "filter").
KilnStatus GetRequiredInput(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op, int index,
                            const char* role, const KilnOpaqueTensor** tensor);
KilnStatus GetOutput(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op, int index,
                     KilnOpaqueTensor** tensor);

// Fails unless `tensor` has type `expected`, naming the op, role and tensor.
KilnStatus CheckType(KilnOpaqueContext* context, const char* op, const char* role,
                     const KilnOpaqueTensor* tensor, KilnType expected);
KilnStatus CheckFloat32(KilnOpaqueContext* context, const char* op, const char* role,
                        const KilnOpaqueTensor* tensor);
KilnStatus CheckRank(KilnOpaqueContext* context, const char* op, const char* role,
                     const KilnOpaqueTensor* tensor, int min_rank, int max_rank);

// Resizes `tensor` to `dims`; fails with a message if a dimension does not fit an int.
KilnStatus ResizeOutput(KilnOpaqueContext* context, const char* op, KilnOpaqueTensor* tensor,
                        const Dims& dims);

// Reads a constant integer tensor (int32, or int64 where `allow_int64`) whose data is available in Prepare;
// fails with a clear message if the tensor is not constant, has another type, or its data is missing.
KilnStatus ReadConstantInts(KilnOpaqueContext* context, const char* op, const char* role,
                            const KilnOpaqueTensor* tensor, bool allow_int64, std::vector<int32_t>* values);

KilnStatus ToActivation(KilnOpaqueContext* context, const char* op, KilnFusedActivation activation,
                        reference::Activation* out);
KilnStatus ToPadding(KilnOpaqueContext* context, const char* op, KilnPadding padding,
                     reference::Padding* out);

// Float weights for a float op: the tensor's own data when it is float32, or, for a constant int8 tensor
// (hybrid models), its values dequantized per tensor or per channel along `quantized_dimension` into
// `storage`, which the node owns. `*weights` is null when a float32 tensor is not constant (its data is read
// in Invoke instead).
KilnStatus PrepareFloatWeights(KilnOpaqueContext* context, const char* op, const char* role,
                               const KilnOpaqueTensor* tensor, int quantized_dimension,
                               std::vector<float>* storage, bool* dequantized);

// The data of a tensor as float, or null for an empty tensor.
inline const float* FloatData(const KilnOpaqueTensor* tensor) {
  return static_cast<const float*>(KilnOpaqueTensorData(tensor));
}
inline float* FloatData(KilnOpaqueTensor* tensor) {
  return static_cast<float*>(KilnOpaqueTensorData(tensor));
}

// Invoke-time check that a tensor with `count` elements has data; an op with nothing to compute passes.
KilnStatus CheckData(KilnOpaqueContext* context, const char* op, const char* role,
                     const KilnOpaqueTensor* tensor, int64_t count, size_t element_size);

// Per-node state: created by the operator's init, reached through the node's user data, deleted by free.
template <typename State>
void* InitState(KilnOpaqueContext*, const char*, size_t) {
  return new (std::nothrow) State();
}
template <typename State>
void FreeState(KilnOpaqueContext*, void* state) {
  delete static_cast<State*>(state);
}
template <typename State>
State* GetState(const KilnOpaqueNode* node) {
  return static_cast<State*>(KilnOpaqueNodeGetUserData(node));
}

// A builtin operator with per-node state of type State.
template <typename State>
KilnOperator* MakeOperator(KilnBuiltinOperator code, int version,
                           KilnStatus (*prepare)(KilnOpaqueContext*, KilnOpaqueNode*),
                           KilnStatus (*invoke)(KilnOpaqueContext*, KilnOpaqueNode*)) {
  KilnOperator* op = KilnOperatorCreate(code, nullptr, version);
  if (op == nullptr) return nullptr;
  KilnOperatorSetInit(op, &InitState<State>);
  KilnOperatorSetFree(op, &FreeState<State>);
  KilnOperatorSetPrepare(op, prepare);
  KilnOperatorSetInvoke(op, invoke);
  return op;
}

// Fetches the node's state or fails (init ran out of memory).
#define KILN_OPS_GET_STATE(State, var, context, node, op)                                   \
  State* var = ::kiln::ops::GetState<State>(node);                                          \
  if (var == nullptr) {                                                                     \
    KilnOpaqueContextReportError((context), "%s: node state missing (out of memory?)", op); \
    return kKilnError;                                                                      \
  }

}  // namespace kiln::ops

#endif  // KILN_OPS_OP_UTIL_H_
