// ARG_MAX, ARG_MIN and CAST: operators over the numeric element types and bool (kernels in
// ops/reference/arg_cast.h).
#include <string>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/arg_cast.h"

namespace kiln::ops {
namespace {

using reference::ElementType;

bool ToElementType(KilnType type, ElementType* out) {
  switch (type) {
    case kKilnBool:
      *out = ElementType::kBool;
      return true;
    case kKilnUInt8:
      *out = ElementType::kUInt8;
      return true;
    case kKilnInt8:
      *out = ElementType::kInt8;
      return true;
    case kKilnInt16:
      *out = ElementType::kInt16;
      return true;
    case kKilnUInt16:
      *out = ElementType::kUInt16;
      return true;
    case kKilnInt32:
      *out = ElementType::kInt32;
      return true;
    case kKilnUInt32:
      *out = ElementType::kUInt32;
      return true;
    case kKilnInt64:
      *out = ElementType::kInt64;
      return true;
    case kKilnFloat32:
      *out = ElementType::kFloat32;
      return true;
    case kKilnFloat64:
      *out = ElementType::kFloat64;
      return true;
    default:
      return false;
  }
}

struct ArgState {
  reference::ArgParams params;
  ElementType input_type = ElementType::kFloat32;
  ElementType index_type = ElementType::kInt32;
  int64_t input_count = 0;
  int64_t output_count = 0;
  bool is_max = true;
  bool dynamic = false;    // axis computed at run time: Invoke prepares again and sizes the output
  bool at_invoke = false;  // Prepare running from Invoke (PrepareAtInvoke)
};

KilnStatus ArgPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node, bool is_max) {
  const char* op = is_max ? "ARG_MAX" : "ARG_MIN";
  KILN_OPS_GET_STATE(ArgState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 1));
  const KilnOpaqueTensor *input, *axis;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "axis", &axis));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  // LiteRT's types, and bool (beyond the LiteRT arg_min_max.cc consulted, which takes float32, uint8, int8,
  // int32).
  const KilnType type = KilnOpaqueTensorType(input);
  if (type != kKilnFloat32 && type != kKilnUInt8 && type != kKilnInt8 && type != kKilnInt32 &&
      type != kKilnBool) {
    KilnOpaqueContextReportError(context,
                                 "%s: input %s has type %s; expected float32, uint8, int8, int32 or bool", op,
                                 TensorLabel(input).c_str(), KilnTypeGetName(type));
    return kKilnError;
  }
  ToElementType(type, &state->input_type);
  // The index type: the output tensor's, which must match the options' output_type where the op has options.
  const KilnType out_type = KilnOpaqueTensorType(output);
  KilnType option_type = kKilnNoType;
  if (is_max) {
    const auto* o = static_cast<const KilnArgMaxParams*>(KilnOpaqueNodeGetBuiltinData(node));
    if (o != nullptr) option_type = o->output_type;
  } else {
    const auto* o = static_cast<const KilnArgMinParams*>(KilnOpaqueNodeGetBuiltinData(node));
    if (o != nullptr) option_type = o->output_type;
  }
  if (out_type != kKilnInt32 && out_type != kKilnInt64) {
    KilnOpaqueContextReportError(context, "%s: output %s has type %s; expected int32 or int64", op,
                                 TensorLabel(output).c_str(), KilnTypeGetName(out_type));
    return kKilnError;
  }
  if (option_type != kKilnNoType && option_type != out_type) {
    KilnOpaqueContextReportError(context, "%s: output_type option is %s but output %s has type %s", op,
                                 KilnTypeGetName(option_type), TensorLabel(output).c_str(),
                                 KilnTypeGetName(out_type));
    return kKilnError;
  }
  state->index_type = out_type == kKilnInt64 ? ElementType::kInt64 : ElementType::kInt32;
  const KilnType axis_type = KilnOpaqueTensorType(axis);
  if ((axis_type != kKilnInt32 && axis_type != kKilnInt64) || reference::NumElements(TensorDims(axis)) != 1) {
    KilnOpaqueContextReportError(context, "%s: axis %s (%s, shape %s) must be a single int32 or int64 value",
                                 op, TensorLabel(axis).c_str(), KilnTypeGetName(axis_type),
                                 DimsToString(TensorDims(axis)).c_str());
    return kKilnError;
  }
  // An axis computed at run time: a dynamic output, sized at Invoke (as LiteRT), which runs this again.
  state->is_max = is_max;
  state->dynamic = !IsConstant(axis);
  if (state->dynamic && !state->at_invoke) return MakeOutputDynamic(context, op, output);
  std::vector<int64_t> axis_values;
  KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "axis", axis, &axis_values));
  const Dims dims = TensorDims(input);
  Dims output_dims;
  std::string error;
  if (!reference::MakeArgParams(dims, axis_values[0], is_max, &state->params, &output_dims, &error)) {
    KilnOpaqueContextReportError(context, "%s: input %s: %s", op, TensorLabel(input).c_str(), error.c_str());
    return kKilnError;
  }
  state->input_count = reference::NumElements(dims);
  state->output_count = reference::NumElements(output_dims);
  return ResizeOutput(context, op, output, output_dims);
}

KilnStatus ArgMaxPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return ArgPrepare(context, node, true);
}
KilnStatus ArgMinPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return ArgPrepare(context, node, false);
}

KilnStatus ArgInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "ARG_MAX/ARG_MIN";
  KILN_OPS_GET_STATE(ArgState, state, context, node, op);
  if (state->dynamic) {
    KILN_OPAQUE_ENSURE_STATUS(PrepareAtInvoke(state, [&] { return ArgPrepare(context, node, state->is_max); }));
  }
  if (state->output_count == 0) return kKilnOk;
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  KILN_OPAQUE_ENSURE_STATUS(
      CheckData(context, op, "input", input, state->input_count, reference::ElementSize(state->input_type)));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, state->output_count,
                                      reference::ElementSize(state->index_type)));
  reference::ArgMinMax(state->params, state->input_type, KilnOpaqueTensorData(input), state->index_type,
                       KilnOpaqueTensorData(output));
  return kKilnOk;
}

struct CastState {
  ElementType from = ElementType::kFloat32;
  ElementType to = ElementType::kFloat32;
  int64_t count = 0;
};

KilnStatus CastPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "CAST";
  KILN_OPS_GET_STATE(CastState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 1, 1, 1));
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  const struct {
    const char* role;
    const KilnOpaqueTensor* tensor;
    ElementType* type;
  } ends[] = {{"input", input, &state->from}, {"output", output, &state->to}};
  for (const auto& e : ends) {
    const KilnType type = KilnOpaqueTensorType(e.tensor);
    if (!ToElementType(type, e.type)) {
      KilnOpaqueContextReportError(
          context,
          "%s: %s %s has type %s; Kiln casts between bool, uint8, int8, int16, uint16, "
          "int32, uint32, int64, float32 and float64",
          op, e.role, TensorLabel(e.tensor).c_str(), KilnTypeGetName(type));
      return kKilnError;
    }
  }
  const Dims dims = TensorDims(input);
  state->count = reference::NumElements(dims);
  return ResizeOutput(context, op, output, dims);
}

KilnStatus CastInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "CAST";
  KILN_OPS_GET_STATE(CastState, state, context, node, op);
  if (state->count == 0) return kKilnOk;
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  KILN_OPAQUE_ENSURE_STATUS(
      CheckData(context, op, "input", input, state->count, reference::ElementSize(state->from)));
  KILN_OPAQUE_ENSURE_STATUS(
      CheckData(context, op, "output", output, state->count, reference::ElementSize(state->to)));
  reference::Cast(state->from, KilnOpaqueTensorData(input), state->to, KilnOpaqueTensorData(output),
                  state->count);
  return kKilnOk;
}

}  // namespace

void AddArgCastOps(std::vector<BuiltinOp>* table) {
  // LiteRT registers ARG_MAX and ARG_MIN v1-v3 and CAST v1-v5 (later versions add types).
  table->push_back(
      {kKilnBuiltinArgMax, 1, 3, MakeOperator<ArgState>(kKilnBuiltinArgMax, 3, &ArgMaxPrepare, &ArgInvoke)});
  table->push_back(
      {kKilnBuiltinArgMin, 1, 3, MakeOperator<ArgState>(kKilnBuiltinArgMin, 3, &ArgMinPrepare, &ArgInvoke)});
  table->push_back(
      {kKilnBuiltinCast, 1, 5, MakeOperator<CastState>(kKilnBuiltinCast, 5, &CastPrepare, &CastInvoke)});
}

}  // namespace kiln::ops
