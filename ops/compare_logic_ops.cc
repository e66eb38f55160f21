// Comparisons (EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL), logical ops (LOGICAL_AND,
// LOGICAL_OR, LOGICAL_NOT), SELECT and SELECT_V2, ZEROS_LIKE and FILL, and the integer-aware arithmetic
// FLOOR_DIV, FLOOR_MOD, POW and SIGN. The binary ones broadcast as numpy does, up to 6-D (the walk of
// ops/reference/elementwise.h, shared with ADD and the others).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/compare_logic.h"
#include "ops/reference/elementwise.h"

namespace kiln::ops {
namespace {

using reference::BinaryParams;
using reference::CompareOp;
using reference::CompareScaling;
using reference::ForEachBroadcast;
using reference::kMaxBroadcastRank;

int64_t Count(const KilnOpaqueTensor* tensor) { return reference::NumElements(TensorDims(tensor)); }

// Fails unless `tensor`'s type is one of `allowed` ("expected one of ...").
KilnStatus CheckTypeIn(KilnOpaqueContext* context, const char* op, const char* role, const KilnOpaqueTensor* tensor,
                       std::initializer_list<KilnType> allowed) {
  const KilnType type = KilnOpaqueTensorType(tensor);
  std::string names;
  for (KilnType t : allowed) {
    if (t == type) return kKilnOk;
    names += std::string(names.empty() ? "" : ", ") + KilnTypeGetName(t);
  }
  KilnOpaqueContextReportError(context, "%s: %s %s has type %s; expected one of %s", op, role,
                               TensorLabel(tensor).c_str(), KilnTypeGetName(type), names.c_str());
  return kKilnError;
}

// Fails unless `tensor` has the type of `reference` (the ops whose operands share one type).
KilnStatus CheckSameType(KilnOpaqueContext* context, const char* op, const char* role, const KilnOpaqueTensor* tensor,
                         const char* reference_role, const KilnOpaqueTensor* reference) {
  if (KilnOpaqueTensorType(tensor) == KilnOpaqueTensorType(reference)) return kKilnOk;
  KilnOpaqueContextReportError(context, "%s: %s %s has type %s, but %s %s has type %s; they must match", op, role,
                               TensorLabel(tensor).c_str(), KilnTypeGetName(KilnOpaqueTensorType(tensor)),
                               reference_role, TensorLabel(reference).c_str(),
                               KilnTypeGetName(KilnOpaqueTensorType(reference)));
  return kKilnError;
}

// The start of a broadcasting binary op's Prepare: two inputs and one output, ranks within 6, the broadcast walk
// in `params` and the output resized to the broadcast shape.
KilnStatus PrepareBroadcast(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op,
                            const KilnOpaqueTensor** a, const KilnOpaqueTensor** b, KilnOpaqueTensor** output,
                            BinaryParams* params) {
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 1));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input 0", a));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "input 1", b));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, output));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input 0", *a, 0, kMaxBroadcastRank));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input 1", *b, 0, kMaxBroadcastRank));
  const Dims a_dims = TensorDims(*a), b_dims = TensorDims(*b);
  if (!reference::MakeBroadcastParams(a_dims, b_dims, params)) {
    KilnOpaqueContextReportError(context, "%s: input shapes %s (%s) and %s (%s) do not broadcast", op,
                                 DimsToString(a_dims).c_str(), TensorLabel(*a).c_str(), DimsToString(b_dims).c_str(),
                                 TensorLabel(*b).c_str());
    return kKilnError;
  }
  return kKilnOk;
}

// Invoke's data of a broadcasting binary op: inputs of In, output of Out.
template <typename In, typename Out>
KilnStatus GetBinaryData(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, int64_t count, const In** a,
                         const In** b, Out** out) {
  const KilnOpaqueTensor* ta = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* tb = KilnOpaqueNodeGetInput(context, node, 1);
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "input 0", ta, Count(ta), a));
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "input 1", tb, Count(tb), b));
  return GetTypedData(context, op, "output", KilnOpaqueNodeGetOutput(context, node, 0), count, out);
}

KilnStatus CheckBoolOutput(KilnOpaqueContext* context, const char* op, const KilnOpaqueTensor* output) {
  return CheckType(context, op, "output", output, kKilnBool);
}

// ---- Comparisons.

constexpr const char* CompareName(CompareOp op) {
  switch (op) {
    case CompareOp::kEqual: return "EQUAL";
    case CompareOp::kNotEqual: return "NOT_EQUAL";
    case CompareOp::kLess: return "LESS";
    case CompareOp::kLessEqual: return "LESS_EQUAL";
    case CompareOp::kGreater: return "GREATER";
    case CompareOp::kGreaterEqual: return "GREATER_EQUAL";
  }
  return "?";
}

struct CompareState {
  BinaryParams params;
  KilnType type = kKilnFloat32;
  bool rescale = false;  // int8, uint8 and quantized int16: compare the rescaled values
  CompareScaling a_scaling, b_scaling;
};

// An int16 input's quantization: none (false in *quantized), or one scale with a zero point in int16's range.
KilnStatus GetInt16CompareQuantization(KilnOpaqueContext* context, const char* op, const char* role,
                                       const KilnOpaqueTensor* tensor, bool* quantized, float* scale,
                                       int32_t* zero_point) {
  std::vector<float> scales;
  std::vector<int32_t> zero_points;
  int dimension = 0;
  *quantized = GetQuantization(tensor, &scales, &zero_points, &dimension);
  if (!*quantized) return kKilnOk;
  if (scales.size() != 1 || zero_points[0] < -32768 || zero_points[0] > 32767) {
    KilnOpaqueContextReportError(context,
                                 "%s: int16 %s %s must be quantized per tensor with a zero point in [-32768, 32767]",
                                 op, role, TensorLabel(tensor).c_str());
    return kKilnError;
  }
  *scale = scales[0];
  *zero_point = zero_points[0];
  return kKilnOk;
}

KilnStatus PrepareCompareScaling(KilnOpaqueContext* context, const char* op, const char* role,
                                 const KilnOpaqueTensor* tensor, KilnType type, CompareScaling* scaling) {
  float scale = 0.0f;
  int32_t zero_point = 0;
  if (type == kKilnInt16) {
    bool quantized = false;
    KILN_OPAQUE_ENSURE_STATUS(GetInt16CompareQuantization(context, op, role, tensor, &quantized, &scale, &zero_point));
  } else {
    KILN_OPAQUE_ENSURE_STATUS(GetQuantization8(context, op, role, tensor, type, &scale, &zero_point));
  }
  if (!reference::MakeCompareScaling(scale, zero_point, scaling)) {
    // LiteRT's rescaling takes the scale as a multiplier below one; with another it aborts or gives garbage.
    KilnOpaqueContextReportError(context, "%s: %s %s has scale %g; quantized comparisons need a scale below 1", op,
                                 role, TensorLabel(tensor).c_str(), static_cast<double>(scale));
    return kKilnError;
  }
  return kKilnOk;
}

template <CompareOp kOp>
KilnStatus ComparePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = CompareName(kOp);
  constexpr bool kEquality = kOp == CompareOp::kEqual || kOp == CompareOp::kNotEqual;
  KILN_OPS_GET_STATE(CompareState, state, context, node, op);
  const KilnOpaqueTensor *a, *b;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(PrepareBroadcast(context, node, op, &a, &b, &output, &state->params));
  if (kOp == CompareOp::kEqual) {
    KILN_OPAQUE_ENSURE_STATUS(
        CheckTypeIn(context, op, "input 0", a,
                    {kKilnFloat32, kKilnInt32, kKilnInt64, kKilnInt8, kKilnUInt8, kKilnInt16, kKilnBool}));
  } else if (kEquality) {
    // No int16: LiteRT's NOT_EQUAL on int16 gives results not matched here (all false on unquantized inputs,
    // measured).
    KILN_OPAQUE_ENSURE_STATUS(CheckTypeIn(context, op, "input 0", a,
                                          {kKilnFloat32, kKilnInt32, kKilnInt64, kKilnInt8, kKilnUInt8, kKilnBool}));
  } else {
    KILN_OPAQUE_ENSURE_STATUS(CheckTypeIn(context, op, "input 0", a,
                                          {kKilnFloat32, kKilnInt32, kKilnInt64, kKilnInt8, kKilnUInt8, kKilnInt16}));
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckSameType(context, op, "input 1", b, "input 0", a));
  KILN_OPAQUE_ENSURE_STATUS(CheckBoolOutput(context, op, output));
  state->type = KilnOpaqueTensorType(a);
  state->rescale = state->type == kKilnInt8 || state->type == kKilnUInt8;
  if (state->type == kKilnInt16 && kEquality) {
    // LiteRT's EQUAL rescales quantized int16 inputs as 8-bit ones and compares unquantized int16 as stored; its
    // ordering comparisons compare int16 as stored, quantized or not (both measured).
    bool a_quantized = false, b_quantized = false;
    float scale;
    int32_t zero_point;
    KILN_OPAQUE_ENSURE_STATUS(
        GetInt16CompareQuantization(context, op, "input 0", a, &a_quantized, &scale, &zero_point));
    KILN_OPAQUE_ENSURE_STATUS(
        GetInt16CompareQuantization(context, op, "input 1", b, &b_quantized, &scale, &zero_point));
    if (a_quantized != b_quantized) {
      KilnOpaqueContextReportError(context, "%s: int16 input 0 %s is %squantized but input 1 %s is %squantized", op,
                                   TensorLabel(a).c_str(), a_quantized ? "" : "not ", TensorLabel(b).c_str(),
                                   b_quantized ? "" : "not ");
      return kKilnError;
    }
    state->rescale = a_quantized;
  }
  if (state->rescale) {
    KILN_OPAQUE_ENSURE_STATUS(PrepareCompareScaling(context, op, "input 0", a, state->type, &state->a_scaling));
    KILN_OPAQUE_ENSURE_STATUS(PrepareCompareScaling(context, op, "input 1", b, state->type, &state->b_scaling));
  }
  return ResizeOutput(context, op, output, state->params.output_dims);
}

// Bool tensors are read as their bytes, any non-zero byte true: a byte other than 0 or 1 (a model's constant, or
// an input the application filled) is no valid bool to load.
constexpr bool Truth(uint8_t byte) { return byte != 0; }

template <CompareOp kOp, typename T>
KilnStatus RunCompare(KilnOpaqueContext* context, KilnOpaqueNode* node, const CompareState& state, int64_t count) {
  const T *a, *b;
  bool* out;
  KILN_OPAQUE_ENSURE_STATUS(GetBinaryData(context, node, CompareName(kOp), count, &a, &b, &out));
  if constexpr (std::is_same_v<T, bool>) {
    const auto* a8 = reinterpret_cast<const uint8_t*>(a);
    const auto* b8 = reinterpret_cast<const uint8_t*>(b);
    ForEachBroadcast(state.params, [&](int64_t i, int64_t ia, int64_t ib) {
      out[i] = reference::Compare<bool>(kOp, Truth(a8[ia]), Truth(b8[ib]));
    });
  } else if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t> || std::is_same_v<T, int16_t>) {
    if (!state.rescale) {
      ForEachBroadcast(state.params,
                       [&](int64_t i, int64_t ia, int64_t ib) { out[i] = reference::Compare<T>(kOp, a[ia], b[ib]); });
      return kKilnOk;
    }
    ForEachBroadcast(state.params, [&](int64_t i, int64_t ia, int64_t ib) {
      out[i] = reference::Compare<int32_t>(kOp, reference::ScaleForCompare(a[ia], state.a_scaling),
                                           reference::ScaleForCompare(b[ib], state.b_scaling));
    });
  } else {
    ForEachBroadcast(state.params,
                     [&](int64_t i, int64_t ia, int64_t ib) { out[i] = reference::Compare<T>(kOp, a[ia], b[ib]); });
  }
  return kKilnOk;
}

template <CompareOp kOp>
KilnStatus CompareInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = CompareName(kOp);
  KILN_OPS_GET_STATE(CompareState, state, context, node, op);
  const int64_t count = reference::NumElements(state->params.output_dims);
  if (count == 0) return kKilnOk;
  switch (state->type) {
    case kKilnInt32: return RunCompare<kOp, int32_t>(context, node, *state, count);
    case kKilnInt64: return RunCompare<kOp, int64_t>(context, node, *state, count);
    case kKilnInt8: return RunCompare<kOp, int8_t>(context, node, *state, count);
    case kKilnUInt8: return RunCompare<kOp, uint8_t>(context, node, *state, count);
    case kKilnInt16: return RunCompare<kOp, int16_t>(context, node, *state, count);
    case kKilnBool: return RunCompare<kOp, bool>(context, node, *state, count);
    default: return RunCompare<kOp, float>(context, node, *state, count);
  }
}

// ---- LOGICAL_AND, LOGICAL_OR (broadcast), LOGICAL_NOT: bool.

struct LogicalState {
  BinaryParams params;
};

template <bool kAnd>
KilnStatus LogicalPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = kAnd ? "LOGICAL_AND" : "LOGICAL_OR";
  KILN_OPS_GET_STATE(LogicalState, state, context, node, op);
  const KilnOpaqueTensor *a, *b;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(PrepareBroadcast(context, node, op, &a, &b, &output, &state->params));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "input 0", a, kKilnBool));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "input 1", b, kKilnBool));
  KILN_OPAQUE_ENSURE_STATUS(CheckBoolOutput(context, op, output));
  return ResizeOutput(context, op, output, state->params.output_dims);
}

template <bool kAnd>
KilnStatus LogicalInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = kAnd ? "LOGICAL_AND" : "LOGICAL_OR";
  KILN_OPS_GET_STATE(LogicalState, state, context, node, op);
  const int64_t count = reference::NumElements(state->params.output_dims);
  if (count == 0) return kKilnOk;
  const uint8_t *a, *b;  // bools as bytes (Truth)
  bool* out;
  KILN_OPAQUE_ENSURE_STATUS(GetBinaryData(context, node, op, count, &a, &b, &out));
  ForEachBroadcast(state->params, [&](int64_t i, int64_t ia, int64_t ib) {
    out[i] = kAnd ? (Truth(a[ia]) && Truth(b[ib])) : (Truth(a[ia]) || Truth(b[ib]));
  });
  return kKilnOk;
}

// The Prepare of an op of one input shaped as its output, whose input type is one of `allowed` and whose output
// has the input's type.
KilnStatus PrepareUnary(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op,
                        std::initializer_list<KilnType> allowed) {
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 1, 1, 1));
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckTypeIn(context, op, "input", input, allowed));
  KILN_OPAQUE_ENSURE_STATUS(CheckSameType(context, op, "output", output, "input", input));
  return ResizeOutput(context, op, output, TensorDims(input));
}

KilnStatus LogicalNotPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return PrepareUnary(context, node, "LOGICAL_NOT", {kKilnBool});
}

KilnStatus LogicalNotInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "LOGICAL_NOT";
  const int64_t count = Count(KilnOpaqueNodeGetInput(context, node, 0));
  if (count == 0) return kKilnOk;
  const uint8_t* in;  // bools as bytes (Truth)
  bool* out;
  KILN_OPAQUE_ENSURE_STATUS(GetInvokeData(context, node, op, count, count, &in, &out));
  for (int64_t i = 0; i < count; ++i) out[i] = !Truth(in[i]);
  return kKilnOk;
}

// ---- SELECT (v1: the condition shaped as x, or a scalar, or rank 1 matching x's dimension 0) and SELECT_V2
// (condition, x and y broadcast together). Elements are copied as bytes.

size_t SelectElementSize(KilnType type) {
  switch (type) {
    case kKilnBool:
    case kKilnInt8:
    case kKilnUInt8: return 1;
    case kKilnInt16: return 2;
    case kKilnFloat32:
    case kKilnInt32: return 4;
    case kKilnInt64: return 8;
    default: return 0;
  }
}

struct SelectState {
  size_t element_size = 4;
  Dims output_dims;
  // SELECT_V2 and same-shaped SELECT: the strides of condition, x and y through the broadcast.
  Dims c_strides, x_strides, y_strides;
  // SELECT with a scalar or rank-1 condition: one condition value per `inner` consecutive elements.
  bool low_rank_condition = false;
  int64_t inner = 1;
};

template <bool kV2>
KilnStatus SelectPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = kV2 ? "SELECT_V2" : "SELECT";
  KILN_OPS_GET_STATE(SelectState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 3, 3, 1));
  const KilnOpaqueTensor *c, *x, *y;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "condition", &c));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "x", &x));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 2, "y", &y));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "condition", c, kKilnBool));
  KILN_OPAQUE_ENSURE_STATUS(CheckTypeIn(
      context, op, "x", x, {kKilnFloat32, kKilnInt8, kKilnUInt8, kKilnInt16, kKilnInt32, kKilnInt64, kKilnBool}));
  KILN_OPAQUE_ENSURE_STATUS(CheckSameType(context, op, "y", y, "x", x));
  KILN_OPAQUE_ENSURE_STATUS(CheckSameType(context, op, "output", output, "x", x));
  state->element_size = SelectElementSize(KilnOpaqueTensorType(x));
  const Dims c_dims = TensorDims(c), x_dims = TensorDims(x), y_dims = TensorDims(y);
  state->low_rank_condition = false;
  if (!kV2 || (c_dims == x_dims && x_dims == y_dims)) {
    if (x_dims != y_dims) {
      KilnOpaqueContextReportError(context, "%s: x %s has shape %s but y %s has shape %s; they must match", op,
                                   TensorLabel(x).c_str(), DimsToString(x_dims).c_str(), TensorLabel(y).c_str(),
                                   DimsToString(y_dims).c_str());
      return kKilnError;
    }
    if (c_dims != x_dims) {
      const bool scalar = c_dims.empty();
      const bool rank_one = c_dims.size() == 1 && !x_dims.empty() && c_dims[0] == x_dims[0];
      if (!scalar && !rank_one) {
        KilnOpaqueContextReportError(context,
                                     "%s: condition %s has shape %s; it must have x's shape %s, be a scalar, or be "
                                     "rank 1 with x's first dimension",
                                     op, TensorLabel(c).c_str(), DimsToString(c_dims).c_str(),
                                     DimsToString(x_dims).c_str());
        return kKilnError;
      }
      state->low_rank_condition = true;
      const int64_t outer = scalar ? 1 : c_dims[0];
      state->inner = outer == 0 ? 0 : reference::NumElements(x_dims) / outer;
    }
    state->output_dims = x_dims;
    state->c_strides = state->x_strides = state->y_strides = reference::BroadcastStrides(x_dims, x_dims);
    return ResizeOutput(context, op, output, x_dims);
  }
  // SELECT_V2 with broadcasting, up to 6-D.
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "condition", c, 0, kMaxBroadcastRank));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "x", x, 0, kMaxBroadcastRank));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "y", y, 0, kMaxBroadcastRank));
  Dims cx, out;
  if (!reference::BroadcastShape(c_dims, x_dims, &cx) || !reference::BroadcastShape(cx, y_dims, &out)) {
    KilnOpaqueContextReportError(context, "%s: shapes %s (condition %s), %s (x %s) and %s (y %s) do not broadcast", op,
                                 DimsToString(c_dims).c_str(), TensorLabel(c).c_str(), DimsToString(x_dims).c_str(),
                                 TensorLabel(x).c_str(), DimsToString(y_dims).c_str(), TensorLabel(y).c_str());
    return kKilnError;
  }
  state->c_strides = reference::BroadcastStrides(c_dims, out);
  state->x_strides = reference::BroadcastStrides(x_dims, out);
  state->y_strides = reference::BroadcastStrides(y_dims, out);
  state->output_dims = out;
  return ResizeOutput(context, op, output, out);
}

template <bool kV2>
KilnStatus SelectInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = kV2 ? "SELECT_V2" : "SELECT";
  KILN_OPS_GET_STATE(SelectState, state, context, node, op);
  const int64_t count = reference::NumElements(state->output_dims);
  if (count == 0) return kKilnOk;
  const KilnOpaqueTensor* c = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* x = KilnOpaqueNodeGetInput(context, node, 1);
  const KilnOpaqueTensor* y = KilnOpaqueNodeGetInput(context, node, 2);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  const size_t size = state->element_size;
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "condition", c, Count(c), 1));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "x", x, Count(x), size));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "y", y, Count(y), size));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, count, size));
  const auto* cond = static_cast<const uint8_t*>(KilnOpaqueTensorData(c));  // bools as bytes (Truth)
  const char* xd = static_cast<const char*>(KilnOpaqueTensorData(x));
  const char* yd = static_cast<const char*>(KilnOpaqueTensorData(y));
  char* out = static_cast<char*>(KilnOpaqueTensorData(output));
  if (state->low_rank_condition) {
    for (int64_t i = 0; i < count; ++i) {
      const char* from = Truth(cond[i / state->inner]) ? xd : yd;
      std::memcpy(out + i * size, from + i * size, size);
    }
    return kKilnOk;
  }
  reference::ForEachBroadcast3(state->output_dims, state->c_strides, state->x_strides, state->y_strides,
                               [&](int64_t i, int64_t ic, int64_t ix, int64_t iy) {
                                 const char* from = Truth(cond[ic]) ? xd + ix * size : yd + iy * size;
                                 std::memcpy(out + i * size, from, size);
                               });
  return kKilnOk;
}

// ---- ZEROS_LIKE (float32, int32, int64) and FILL.

KilnStatus ZerosLikePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return PrepareUnary(context, node, "ZEROS_LIKE", {kKilnFloat32, kKilnInt32, kKilnInt64});
}

KilnStatus ZerosLikeInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "ZEROS_LIKE";
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  const int64_t count = Count(output);
  const size_t size = KilnOpaqueTensorType(output) == kKilnInt64 ? 8 : 4;
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, count, size));
  if (count > 0) std::memset(KilnOpaqueTensorData(output), 0, static_cast<size_t>(count) * size);  // 0 and 0.0f
  return kKilnOk;
}

struct FillState {
  size_t element_size = 4;
  int64_t count = 0;
  bool dynamic = false;  // dims computed at run time: Invoke sizes the output
};

// Sizes FILL's output from dims' values (each >= 0).
KilnStatus FillResize(KilnOpaqueContext* context, const KilnOpaqueTensor* dims, KilnOpaqueTensor* output,
                      FillState* state) {
  constexpr const char* op = "FILL";
  std::vector<int64_t> values;
  KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "dims", dims, &values));
  Dims out(values.begin(), values.end());
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] < 0 || out[i] > INT32_MAX) {
      KilnOpaqueContextReportError(context, "%s: dims %s holds %lld at element %zu; dimensions must be in [0, 2^31)",
                                   op, TensorLabel(dims).c_str(), static_cast<long long>(out[i]), i);
      return kKilnError;
    }
  }
  KILN_OPAQUE_ENSURE_STATUS(ResizeOutput(context, op, output, out));
  state->count = reference::NumElements(TensorDims(output));
  return kKilnOk;
}

KilnStatus FillPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "FILL";
  KILN_OPS_GET_STATE(FillState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 1));
  const KilnOpaqueTensor *dims, *value;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "dims", &dims));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "value", &value));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "dims", dims, 1, 1));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "value", value, 0, 0));
  // The value's type is the output's; int8, uint8 and int16 carry the value's quantization (as LiteRT checks).
  static const std::vector<KilnType> kTypes = {kKilnFloat32, kKilnInt32, kKilnInt64, kKilnBool,
                                               kKilnInt8,    kKilnUInt8, kKilnInt16};
  KILN_OPAQUE_ENSURE_STATUS(CheckMovedTypes(context, op, value, output, kTypes, &state->element_size));
  const KilnType dims_type = KilnOpaqueTensorType(dims);
  if (dims_type != kKilnInt32 && dims_type != kKilnInt64) {
    KilnOpaqueContextReportError(context, "%s: dims %s has type %s; expected int32 or int64", op,
                                 TensorLabel(dims).c_str(), KilnTypeGetName(dims_type));
    return kKilnError;
  }
  // dims computed at run time: the output is dynamic (as LiteRT), sized at Invoke.
  state->dynamic = !IsConstant(dims);
  if (state->dynamic) return MakeOutputDynamic(context, op, output);
  return FillResize(context, dims, output, state);
}

KilnStatus FillInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "FILL";
  KILN_OPS_GET_STATE(FillState, state, context, node, op);
  const KilnOpaqueTensor* value = KilnOpaqueNodeGetInput(context, node, 1);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  if (state->dynamic) {
    KILN_OPAQUE_ENSURE_STATUS(FillResize(context, KilnOpaqueNodeGetInput(context, node, 0), output, state));
  }
  if (state->count == 0) return kKilnOk;
  const size_t size = state->element_size;
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "value", value, 1, size));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, state->count, size));
  const char* v = static_cast<const char*>(KilnOpaqueTensorData(value));
  char* out = static_cast<char*>(KilnOpaqueTensorData(output));
  for (int64_t i = 0; i < state->count; ++i) std::memcpy(out + i * size, v, size);
  return kKilnOk;
}

// ---- FLOOR_DIV, FLOOR_MOD, POW (broadcast) and SIGN.

enum class ArithOp { kFloorDiv, kFloorMod, kPow };

constexpr const char* ArithName(ArithOp op) {
  switch (op) {
    case ArithOp::kFloorDiv: return "FLOOR_DIV";
    case ArithOp::kFloorMod: return "FLOOR_MOD";
    case ArithOp::kPow: return "POW";
  }
  return "?";
}

template <ArithOp kOp, typename T>
T Arith(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if constexpr (kOp == ArithOp::kFloorDiv) return std::floor(a / b);  // b != 0 (checked before)
    if constexpr (kOp == ArithOp::kFloorMod) return reference::FloorModFloat(a, b);
    return std::pow(a, b);
  } else {
    if constexpr (kOp == ArithOp::kFloorDiv) return reference::FloorDivInt(a, b);
    if constexpr (kOp == ArithOp::kFloorMod) return reference::FloorModInt(a, b);
    if constexpr (std::is_same_v<T, int32_t>) return reference::PowInt32(a, b);
    return T{0};  // POW has no other integer type (refused at Prepare)
  }
}

struct ArithState {
  BinaryParams params;
  KilnType type = kKilnFloat32;
};

template <ArithOp kOp>
KilnStatus ArithPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = ArithName(kOp);
  KILN_OPS_GET_STATE(ArithState, state, context, node, op);
  const KilnOpaqueTensor *a, *b;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(PrepareBroadcast(context, node, op, &a, &b, &output, &state->params));
  // LiteRT's types: FLOOR_DIV has no int64, FLOOR_MOD has; int8 and int16 are plain integers here.
  if (kOp == ArithOp::kPow) {
    KILN_OPAQUE_ENSURE_STATUS(CheckTypeIn(context, op, "input 0", a, {kKilnFloat32, kKilnInt32}));
  } else if (kOp == ArithOp::kFloorDiv) {
    KILN_OPAQUE_ENSURE_STATUS(
        CheckTypeIn(context, op, "input 0", a, {kKilnFloat32, kKilnInt32, kKilnInt8, kKilnInt16}));
  } else {
    KILN_OPAQUE_ENSURE_STATUS(
        CheckTypeIn(context, op, "input 0", a, {kKilnFloat32, kKilnInt32, kKilnInt64, kKilnInt8, kKilnInt16}));
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckSameType(context, op, "input 1", b, "input 0", a));
  KILN_OPAQUE_ENSURE_STATUS(CheckSameType(context, op, "output", output, "input 0", a));
  state->type = KilnOpaqueTensorType(a);
  return ResizeOutput(context, op, output, state->params.output_dims);
}

template <ArithOp kOp, typename T>
KilnStatus RunArith(KilnOpaqueContext* context, KilnOpaqueNode* node, const ArithState& state, int64_t count) {
  constexpr const char* op = ArithName(kOp);
  const T *a, *b;
  T* out;
  KILN_OPAQUE_ENSURE_STATUS(GetBinaryData(context, node, op, count, &a, &b, &out));
  const KilnOpaqueTensor* divisor = KilnOpaqueNodeGetInput(context, node, 1);
  const int64_t b_count = Count(divisor);
  // As LiteRT, Kiln fails FLOOR_DIV on a zero divisor (float32 too), integer FLOOR_MOD on a zero divisor (float32
  // FLOOR_MOD by zero gives NaN) and integer POW on a negative exponent, before writing anything.
  constexpr bool kCheckZero = kOp == ArithOp::kFloorDiv || (kOp == ArithOp::kFloorMod && !std::is_floating_point_v<T>);
  if constexpr (kCheckZero || (kOp == ArithOp::kPow && !std::is_floating_point_v<T>)) {
    for (int64_t i = 0; i < b_count; ++i) {
      if (kCheckZero && b[i] == 0) {
        KilnOpaqueContextReportError(context, "%s: input 1 %s holds 0 at element %lld: division by zero", op,
                                     TensorLabel(divisor).c_str(), static_cast<long long>(i));
        return kKilnError;
      }
      if (kOp == ArithOp::kPow && b[i] < 0) {
        KilnOpaqueContextReportError(context,
                                     "%s: input 1 %s holds %lld at element %lld: integers to negative powers are not "
                                     "allowed",
                                     op, TensorLabel(divisor).c_str(), static_cast<long long>(b[i]),
                                     static_cast<long long>(i));
        return kKilnError;
      }
    }
  }
  ForEachBroadcast(state.params, [&](int64_t i, int64_t ia, int64_t ib) { out[i] = Arith<kOp, T>(a[ia], b[ib]); });
  return kKilnOk;
}

template <ArithOp kOp>
KilnStatus ArithInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = ArithName(kOp);
  KILN_OPS_GET_STATE(ArithState, state, context, node, op);
  const int64_t count = reference::NumElements(state->params.output_dims);
  if (count == 0) return kKilnOk;
  switch (state->type) {
    case kKilnInt32: return RunArith<kOp, int32_t>(context, node, *state, count);
    case kKilnInt64: return RunArith<kOp, int64_t>(context, node, *state, count);
    case kKilnInt8: return RunArith<kOp, int8_t>(context, node, *state, count);
    case kKilnInt16: return RunArith<kOp, int16_t>(context, node, *state, count);
    default: return RunArith<kOp, float>(context, node, *state, count);
  }
}

KilnStatus SignPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return PrepareUnary(context, node, "SIGN", {kKilnFloat32, kKilnInt32});
}

KilnStatus SignInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "SIGN";
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  const int64_t count = Count(input);
  if (count == 0) return kKilnOk;
  const auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* in;
    T* out;
    KILN_OPAQUE_ENSURE_STATUS(GetInvokeData(context, node, op, count, count, &in, &out));
    for (int64_t i = 0; i < count; ++i) out[i] = reference::Sign(in[i]);
    return kKilnOk;
  };
  return KilnOpaqueTensorType(input) == kKilnInt32 ? run(int32_t{}) : run(float{});
}

template <typename State>
void Add(std::vector<BuiltinOp>* table, KilnBuiltinOperator code, int min_version, int max_version,
         KilnStatus (*prepare)(KilnOpaqueContext*, KilnOpaqueNode*),
         KilnStatus (*invoke)(KilnOpaqueContext*, KilnOpaqueNode*), int output_type_from_input = -1) {
  table->push_back({code, min_version, max_version, MakeOperator<State>(code, max_version, prepare, invoke),
                    output_type_from_input});
}

template <CompareOp kOp>
void AddCompare(std::vector<BuiltinOp>* table, KilnBuiltinOperator code, int max_version) {
  Add<CompareState>(table, code, 1, max_version, &ComparePrepare<kOp>, &CompareInvoke<kOp>);
}

template <ArithOp kOp>
void AddArith(std::vector<BuiltinOp>* table, KilnBuiltinOperator code, int max_version) {
  // LiteRT sets the output's type to the input's.
  Add<ArithState>(table, code, 1, max_version, &ArithPrepare<kOp>, &ArithInvoke<kOp>, 0);
}

}  // namespace

void AddCompareLogicOps(std::vector<BuiltinOp>* table) {
  // The versions LiteRT 2.3.0's resolver registers (later versions add types; types Kiln lacks fail Prepare).
  AddCompare<CompareOp::kEqual>(table, kKilnBuiltinEqual, 5);
  AddCompare<CompareOp::kNotEqual>(table, kKilnBuiltinNotEqual, 4);
  AddCompare<CompareOp::kLess>(table, kKilnBuiltinLess, 3);
  AddCompare<CompareOp::kLessEqual>(table, kKilnBuiltinLessEqual, 2);
  AddCompare<CompareOp::kGreater>(table, kKilnBuiltinGreater, 2);
  AddCompare<CompareOp::kGreaterEqual>(table, kKilnBuiltinGreaterEqual, 3);
  Add<LogicalState>(table, kKilnBuiltinLogicalAnd, 1, 1, &LogicalPrepare<true>, &LogicalInvoke<true>);
  Add<LogicalState>(table, kKilnBuiltinLogicalOr, 1, 1, &LogicalPrepare<false>, &LogicalInvoke<false>);
  Add<NoState>(table, kKilnBuiltinLogicalNot, 1, 1, &LogicalNotPrepare, &LogicalNotInvoke);
  Add<SelectState>(table, kKilnBuiltinSelect, 1, 4, &SelectPrepare<false>, &SelectInvoke<false>, 1);
  Add<SelectState>(table, kKilnBuiltinSelectV2, 1, 2, &SelectPrepare<true>, &SelectInvoke<true>, 1);
  Add<NoState>(table, kKilnBuiltinZerosLike, 1, 1, &ZerosLikePrepare, &ZerosLikeInvoke, 0);
  Add<FillState>(table, kKilnBuiltinFill, 1, 5, &FillPrepare, &FillInvoke, 1);
  AddArith<ArithOp::kFloorDiv>(table, kKilnBuiltinFloorDiv, 3);
  AddArith<ArithOp::kFloorMod>(table, kKilnBuiltinFloorMod, 2);
  AddArith<ArithOp::kPow>(table, kKilnBuiltinPow, 1);
  Add<NoState>(table, kKilnBuiltinSign, 1, 2, &SignPrepare, &SignInvoke, 0);
}

}  // namespace kiln::ops
