// RIGHT_SHIFT and BITWISE_XOR (integer ops broadcasting as numpy does, up to 6-D) and BITCAST (the same bytes
// seen as another type).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/elementwise.h"
#include "ops/reference/matrix.h"

namespace kiln::ops {
namespace {

using reference::BinaryParams;

// ---- RIGHT_SHIFT, BITWISE_XOR: int8, uint8, int16, uint16, int32, uint32 (LiteRT's types), both inputs and the
// output of one type.

struct BitState {
  BinaryParams params;
  KilnType type = kKilnInt32;
};

template <bool kShift>
KilnStatus BitPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = kShift ? "RIGHT_SHIFT" : "BITWISE_XOR";
  KILN_OPS_GET_STATE(BitState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 1));
  const KilnOpaqueTensor *a, *b;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input 0", &a));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "input 1", &b));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  state->type = KilnOpaqueTensorType(a);
  switch (state->type) {
    case kKilnInt8:
    case kKilnUInt8:
    case kKilnInt16:
    case kKilnUInt16:
    case kKilnInt32:
    case kKilnUInt32: break;
    default:
      KilnOpaqueContextReportError(context,
                                   "%s: input 0 %s has type %s; expected int8, uint8, int16, uint16, int32 or uint32",
                                   op, TensorLabel(a).c_str(), KilnTypeGetName(state->type));
      return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "input 1", b, state->type));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "output", output, state->type));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input 0", a, 0, reference::kMaxBroadcastRank));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input 1", b, 0, reference::kMaxBroadcastRank));
  const Dims a_dims = TensorDims(a), b_dims = TensorDims(b);
  if (!reference::MakeBroadcastParams(a_dims, b_dims, &state->params)) {
    KilnOpaqueContextReportError(context, "%s: input shapes %s (%s) and %s (%s) do not broadcast", op,
                                 DimsToString(a_dims).c_str(), TensorLabel(a).c_str(), DimsToString(b_dims).c_str(),
                                 TensorLabel(b).c_str());
    return kKilnError;
  }
  return ResizeOutput(context, op, output, state->params.output_dims);
}

template <bool kShift, typename T>
KilnStatus RunBit(KilnOpaqueContext* context, KilnOpaqueNode* node, const BinaryParams& params, int64_t count) {
  constexpr const char* op = kShift ? "RIGHT_SHIFT" : "BITWISE_XOR";
  const KilnOpaqueTensor* ta = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* tb = KilnOpaqueNodeGetInput(context, node, 1);
  const T *a, *b;
  T* out;
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "input 0", ta, reference::NumElements(TensorDims(ta)), &a));
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "input 1", tb, reference::NumElements(TensorDims(tb)), &b));
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "output", KilnOpaqueNodeGetOutput(context, node, 0), count, &out));
  reference::ForEachBroadcast(params, [&](int64_t i, int64_t ia, int64_t ib) {
    out[i] = kShift ? reference::RightShift<T>(a[ia], b[ib]) : reference::BitwiseXor<T>(a[ia], b[ib]);
  });
  return kKilnOk;
}

template <bool kShift>
KilnStatus BitInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = kShift ? "RIGHT_SHIFT" : "BITWISE_XOR";
  KILN_OPS_GET_STATE(BitState, state, context, node, op);
  const int64_t count = reference::NumElements(state->params.output_dims);
  if (count == 0) return kKilnOk;
  switch (state->type) {
    case kKilnInt8: return RunBit<kShift, int8_t>(context, node, state->params, count);
    case kKilnUInt8: return RunBit<kShift, uint8_t>(context, node, state->params, count);
    case kKilnInt16: return RunBit<kShift, int16_t>(context, node, state->params, count);
    case kKilnUInt16: return RunBit<kShift, uint16_t>(context, node, state->params, count);
    case kKilnInt32: return RunBit<kShift, int32_t>(context, node, state->params, count);
    default: return RunBit<kShift, uint32_t>(context, node, state->params, count);
  }
}

// ---- BITCAST: the input's bytes as the output's type. Equal element sizes keep the shape; a wider input gains a
// last dimension of (input size / output size); a narrower input loses its last dimension, which must be
// (output size / input size).

bool IsBitcastType(KilnType type) {
  switch (type) {
    case kKilnFloat32:
    case kKilnInt32:
    case kKilnUInt8:
    case kKilnInt64:
    case kKilnBool:
    case kKilnInt16:
    case kKilnComplex64:
    case kKilnInt8:
    case kKilnFloat16:
    case kKilnFloat64:
    case kKilnComplex128:
    case kKilnUInt64:
    case kKilnUInt32:
    case kKilnUInt16: return true;
    default: return false;
  }
}

struct BitcastState {
  int64_t bytes = 0;
};

KilnStatus BitcastPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "BITCAST";
  KILN_OPS_GET_STATE(BitcastState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 1, 1, 1));
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  const KilnType in_type = KilnOpaqueTensorType(input), out_type = KilnOpaqueTensorType(output);
  for (const auto& [role, tensor, type] :
       {std::tuple{"input", static_cast<const KilnOpaqueTensor*>(input), in_type},
        std::tuple{"output", static_cast<const KilnOpaqueTensor*>(output), out_type}}) {
    if (!IsBitcastType(type)) {
      KilnOpaqueContextReportError(context, "%s: %s %s has type %s; expected a numeric or bool type", op, role,
                                   TensorLabel(tensor).c_str(), KilnTypeGetName(type));
      return kKilnError;
    }
  }
  const int64_t in_size = static_cast<int64_t>(KilnTypeGetSize(in_type));
  const int64_t out_size = static_cast<int64_t>(KilnTypeGetSize(out_type));
  Dims dims = TensorDims(input);
  if (in_size > out_size) {
    dims.push_back(in_size / out_size);
  } else if (in_size < out_size) {
    if (dims.empty() || dims.back() != out_size / in_size) {
      KilnOpaqueContextReportError(context,
                                   "%s: input %s of shape %s and type %s: its last dimension must be %lld to make "
                                   "one %s element",
                                   op, TensorLabel(input).c_str(), DimsToString(dims).c_str(), KilnTypeGetName(in_type),
                                   static_cast<long long>(out_size / in_size), KilnTypeGetName(out_type));
      return kKilnError;
    }
    dims.pop_back();
  }
  state->bytes = reference::NumElements(dims) * out_size;
  return ResizeOutput(context, op, output, dims);
}

KilnStatus BitcastInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "BITCAST";
  KILN_OPS_GET_STATE(BitcastState, state, context, node, op);
  if (state->bytes == 0) return kKilnOk;
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "input", input, state->bytes, 1));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, state->bytes, 1));
  if (KilnOpaqueTensorData(output) != KilnOpaqueTensorData(input)) {
    std::memcpy(KilnOpaqueTensorData(output), KilnOpaqueTensorData(input), static_cast<size_t>(state->bytes));
  }
  return kKilnOk;
}

}  // namespace

void AddBitwiseOps(std::vector<BuiltinOp>* table) {
  // LiteRT 2.3.0 registers RIGHT_SHIFT, BITWISE_XOR and BITCAST v1 only (measured in its Interpreter).
  table->push_back({kKilnBuiltinRightShift, 1, 1,
                    MakeOperator<BitState>(kKilnBuiltinRightShift, 1, &BitPrepare<true>, &BitInvoke<true>)});
  table->push_back({kKilnBuiltinBitwiseXor, 1, 1,
                    MakeOperator<BitState>(kKilnBuiltinBitwiseXor, 1, &BitPrepare<false>, &BitInvoke<false>)});
  table->push_back(
      {kKilnBuiltinBitcast, 1, 1, MakeOperator<BitcastState>(kKilnBuiltinBitcast, 1, &BitcastPrepare, &BitcastInvoke)});
}

}  // namespace kiln::ops
