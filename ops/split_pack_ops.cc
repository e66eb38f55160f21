// SPLIT, SPLIT_V, PACK, UNPACK, TILE, BROADCAST_TO and SHAPE: operators that cut, join or repeat tensors of
// the moved types (outputs quantized as the input), and SHAPE, which reads only the input's shape.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/split_pack.h"

namespace kiln::ops {
namespace {

// LiteRT's BROADCAST_TO handles outputs of up to 8 dimensions.
constexpr int kMaxBroadcastRank = 8;

// The types LiteRT's SPLIT, SPLIT_V and PACK take (no bool).
const std::vector<KilnType>& SplitTypes() {
  static const std::vector<KilnType> types = {kKilnFloat32, kKilnInt32, kKilnInt64,
                                              kKilnInt8,    kKilnUInt8, kKilnInt16};
  return types;
}

KilnStatus CheckShapeInputType(KilnOpaqueContext* context, const char* op, const char* role,
                               const KilnOpaqueTensor* tensor) {
  const KilnType type = KilnOpaqueTensorType(tensor);
  if (type != kKilnInt32 && type != kKilnInt64) {
    KilnOpaqueContextReportError(context, "%s: %s %s has type %s; expected int32 or int64", op, role,
                                 TensorLabel(tensor).c_str(), KilnTypeGetName(type));
    return kKilnError;
  }
  return kKilnOk;
}

// An int32/int64 input's values (constant or computed at run time: its data must be there).
KilnStatus ReadShapeInput(KilnOpaqueContext* context, const char* op, const char* role, const KilnOpaqueTensor* tensor,
                          std::vector<int64_t>* values) {
  KILN_OPAQUE_ENSURE_STATUS(CheckShapeInputType(context, op, role, tensor));
  return ReadIntValues(context, op, role, tensor, values);
}

KilnStatus ReportShapeError(KilnOpaqueContext* context, const char* op, const KilnOpaqueTensor* input,
                            const std::string& error) {
  KilnOpaqueContextReportError(context, "%s: input %s: %s", op, TensorLabel(input).c_str(), error.c_str());
  return kKilnError;
}

// SPLIT, SPLIT_V and UNPACK: one input cut into the node's outputs.
struct SplitState {
  reference::AxisPieces pieces;
  size_t element_size = 0;
  int input_index = 0;  // SPLIT's input comes after its axis
  const char* op = "";  // for Invoke's messages
  std::vector<void*> outputs;
  bool dynamic = false;  // SPLIT/SPLIT_V: axis or size_splits computed at run time, the outputs sized at Invoke
};

// Checks every output against the input and sizes it.
KilnStatus PrepareSplitOutputs(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op,
                               const KilnOpaqueTensor* input, const std::vector<KilnType>& types,
                               const std::vector<Dims>& shapes, SplitState* state) {
  for (int i = 0; i < KilnOpaqueNodeNumberOfOutputs(node); ++i) {
    KilnOpaqueTensor* output;
    KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, i, &output));
    KILN_OPAQUE_ENSURE_STATUS(CheckMovedTypes(context, op, input, output, types, &state->element_size));
    KILN_OPAQUE_ENSURE_STATUS(ResizeOutput(context, op, output, shapes[static_cast<size_t>(i)]));
  }
  state->outputs.assign(static_cast<size_t>(KilnOpaqueNodeNumberOfOutputs(node)), nullptr);
  return kKilnOk;
}

// The node must have as many outputs as the op's option says.
KilnStatus CheckOutputCount(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op,
                            const char* option, int64_t expected) {
  const int outputs = KilnOpaqueNodeNumberOfOutputs(node);
  if (outputs == expected && outputs >= 1) return kKilnOk;
  KilnOpaqueContextReportError(context, "%s: the node has %d outputs but %s is %lld", op, outputs, option,
                               static_cast<long long>(expected));
  return kKilnError;
}

// A run-time axis or size_splits: every output dynamic (its type checked now), sized at Invoke.
KilnStatus MakeSplitOutputsDynamic(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op,
                                   const KilnOpaqueTensor* input, SplitState* state) {
  for (int i = 0; i < KilnOpaqueNodeNumberOfOutputs(node); ++i) {
    KilnOpaqueTensor* output;
    KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, i, &output));
    KILN_OPAQUE_ENSURE_STATUS(CheckMovedTypes(context, op, input, output, SplitTypes(), &state->element_size));
    KILN_OPAQUE_ENSURE_STATUS(MakeOutputDynamic(context, op, output));
  }
  state->outputs.assign(static_cast<size_t>(KilnOpaqueNodeNumberOfOutputs(node)), nullptr);
  return kKilnOk;
}

KilnStatus SplitSize(KilnOpaqueContext* context, KilnOpaqueNode* node, SplitState* state);
KilnStatus SplitVSize(KilnOpaqueContext* context, KilnOpaqueNode* node, SplitState* state);

KilnStatus SplitPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "SPLIT";
  KILN_OPS_GET_STATE(SplitState, state, context, node, op);
  state->op = op;
  const auto* options = static_cast<const KilnSplitParams*>(KilnOpaqueNodeGetBuiltinData(node));
  const int num_splits = options != nullptr ? options->num_splits : 0;
  KILN_OPAQUE_ENSURE_STATUS(CheckOutputCount(context, node, op, "num_splits", num_splits));
  if (KilnOpaqueNodeNumberOfInputs(node) != 2) {
    KilnOpaqueContextReportError(context, "%s: expected 2 inputs (axis, input), got %d", op,
                                 KilnOpaqueNodeNumberOfInputs(node));
    return kKilnError;
  }
  const KilnOpaqueTensor *axis, *input;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "axis", &axis));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "input", &input));
  state->input_index = 1;
  KILN_OPAQUE_ENSURE_STATUS(CheckShapeInputType(context, op, "axis", axis));
  state->dynamic = !IsConstant(axis);  // as LiteRT: every output dynamic, sized at Invoke
  if (state->dynamic) return MakeSplitOutputsDynamic(context, node, op, input, state);
  return SplitSize(context, node, state);
}

// Sizes SPLIT's outputs from the axis' value (constant in Prepare, or at Invoke).
KilnStatus SplitSize(KilnOpaqueContext* context, KilnOpaqueNode* node, SplitState* state) {
  constexpr const char* op = "SPLIT";
  const KilnOpaqueTensor* axis = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 1);
  const auto* options = static_cast<const KilnSplitParams*>(KilnOpaqueNodeGetBuiltinData(node));
  const int num_splits = options != nullptr ? options->num_splits : 0;
  std::vector<int64_t> axis_values;
  KILN_OPAQUE_ENSURE_STATUS(ReadShapeInput(context, op, "axis", axis, &axis_values));
  if (axis_values.size() != 1) {
    KilnOpaqueContextReportError(context, "%s: axis %s holds %zu values; expected one", op,
                                 TensorLabel(axis).c_str(), axis_values.size());
    return kKilnError;
  }
  const Dims dims = TensorDims(input);
  int64_t a = 0;
  std::string error;
  if (!reference::NormalizeAxis(axis_values[0], static_cast<int64_t>(dims.size()), &a, &error) ||
      !reference::MakeSplit(dims, a, num_splits, &state->pieces, &error)) {
    return ReportShapeError(context, op, input, error);
  }
  std::vector<Dims> shapes;
  for (int64_t s : state->pieces.sizes) shapes.push_back(reference::PieceShape(dims, a, s));
  return PrepareSplitOutputs(context, node, op, input, SplitTypes(), shapes, state);
}

KilnStatus SplitVPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "SPLIT_V";
  KILN_OPS_GET_STATE(SplitState, state, context, node, op);
  state->op = op;
  const auto* options = static_cast<const KilnSplitVParams*>(KilnOpaqueNodeGetBuiltinData(node));
  const int num_splits = options != nullptr ? options->num_splits : 0;
  KILN_OPAQUE_ENSURE_STATUS(CheckOutputCount(context, node, op, "num_splits", num_splits));
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 3, 3, num_splits));
  const KilnOpaqueTensor *input, *size_splits, *axis;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "size_splits", &size_splits));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 2, "axis", &axis));
  state->input_index = 0;
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "size_splits", size_splits, 1, 1));
  KILN_OPAQUE_ENSURE_STATUS(CheckShapeInputType(context, op, "size_splits", size_splits));
  KILN_OPAQUE_ENSURE_STATUS(CheckShapeInputType(context, op, "axis", axis));
  state->dynamic = !IsConstant(size_splits) || !IsConstant(axis);  // as LiteRT: outputs sized at Invoke
  if (state->dynamic) return MakeSplitOutputsDynamic(context, node, op, input, state);
  return SplitVSize(context, node, state);
}

// Sizes SPLIT_V's outputs from size_splits' and axis' values (constant in Prepare, or at Invoke).
KilnStatus SplitVSize(KilnOpaqueContext* context, KilnOpaqueNode* node, SplitState* state) {
  constexpr const char* op = "SPLIT_V";
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* size_splits = KilnOpaqueNodeGetInput(context, node, 1);
  const KilnOpaqueTensor* axis = KilnOpaqueNodeGetInput(context, node, 2);
  const auto* options = static_cast<const KilnSplitVParams*>(KilnOpaqueNodeGetBuiltinData(node));
  const int num_splits = options != nullptr ? options->num_splits : 0;
  std::vector<int64_t> sizes, axis_values;
  KILN_OPAQUE_ENSURE_STATUS(ReadShapeInput(context, op, "size_splits", size_splits, &sizes));
  KILN_OPAQUE_ENSURE_STATUS(ReadShapeInput(context, op, "axis", axis, &axis_values));
  if (static_cast<int64_t>(sizes.size()) != num_splits || axis_values.size() != 1) {
    KilnOpaqueContextReportError(context,
                                 "%s: size_splits %s holds %zu sizes and axis %s %zu values; expected %d "
                                 "and 1",
                                 op, TensorLabel(size_splits).c_str(), sizes.size(),
                                 TensorLabel(axis).c_str(), axis_values.size(), num_splits);
    return kKilnError;
  }
  const Dims dims = TensorDims(input);
  int64_t a = 0;
  std::string error;
  if (!reference::NormalizeAxis(axis_values[0], static_cast<int64_t>(dims.size()), &a, &error) ||
      !reference::MakeSplitV(dims, a, sizes, &state->pieces, &error)) {
    return ReportShapeError(context, op, input, error);
  }
  std::vector<Dims> shapes;
  for (int64_t s : state->pieces.sizes) shapes.push_back(reference::PieceShape(dims, a, s));
  return PrepareSplitOutputs(context, node, op, input, SplitTypes(), shapes, state);
}

KilnStatus UnpackPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "UNPACK";
  KILN_OPS_GET_STATE(SplitState, state, context, node, op);
  state->op = op;
  const auto* options = static_cast<const KilnUnpackParams*>(KilnOpaqueNodeGetBuiltinData(node));
  const int num = options != nullptr ? options->num : 0;
  const int axis = options != nullptr ? options->axis : 0;
  KILN_OPAQUE_ENSURE_STATUS(CheckOutputCount(context, node, op, "num", num));
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 1, 1, num));
  const KilnOpaqueTensor* input;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  state->input_index = 0;
  Dims output_dims;
  std::string error;
  if (!reference::MakeUnpack(TensorDims(input), axis, num, &state->pieces, &output_dims, &error)) {
    return ReportShapeError(context, op, input, error);
  }
  return PrepareSplitOutputs(context, node, op, input, MovedTypes(),
                             std::vector<Dims>(static_cast<size_t>(num), output_dims), state);
}

KilnStatus SplitInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  KILN_OPS_GET_STATE(SplitState, state, context, node, "SPLIT");
  const char* op = state->op;
  if (state->dynamic) {
    KILN_OPAQUE_ENSURE_STATUS(state->input_index == 1 ? SplitSize(context, node, state)
                                                      : SplitVSize(context, node, state));
  }
  const reference::AxisPieces& p = state->pieces;
  int64_t total = 0;
  for (size_t i = 0; i < p.sizes.size(); ++i) {
    const int64_t count = p.outer * p.sizes[i] * p.inner;
    KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, static_cast<int>(i));
    KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, count, state->element_size));
    state->outputs[i] = count == 0 ? nullptr : KilnOpaqueTensorData(output);
    total += count;
  }
  if (total == 0) return kKilnOk;
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, state->input_index);
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "input", input, total, state->element_size));
  reference::SplitCopy(p, state->element_size, KilnOpaqueTensorData(input), state->outputs.data());
  return kKilnOk;
}

struct PackState {
  reference::AxisPieces pieces;
  size_t element_size = 0;
  std::vector<const void*> inputs;
};

KilnStatus PackPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "PACK";
  KILN_OPS_GET_STATE(PackState, state, context, node, op);
  const auto* options = static_cast<const KilnPackParams*>(KilnOpaqueNodeGetBuiltinData(node));
  const int count = options != nullptr ? options->values_count : 0;
  const int axis = options != nullptr ? options->axis : 0;
  if (KilnOpaqueNodeNumberOfInputs(node) != count || count < 1) {
    KilnOpaqueContextReportError(context, "%s: the node has %d inputs but values_count is %d", op,
                                 KilnOpaqueNodeNumberOfInputs(node), count);
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, count, count, 1));
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  const KilnOpaqueTensor* first;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input 0", &first));
  const Dims dims = TensorDims(first);
  for (int i = 0; i < count; ++i) {
    const std::string role = "input " + std::to_string(i);
    const KilnOpaqueTensor* input;
    KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, i, role.c_str(), &input));
    KILN_OPAQUE_ENSURE_STATUS(
        CheckMovedTypes(context, op, input, output, SplitTypes(), &state->element_size));
    if (TensorDims(input) != dims) {
      KilnOpaqueContextReportError(context, "%s: %s %s has shape %s; input 0 %s has %s", op, role.c_str(),
                                   TensorLabel(input).c_str(), DimsToString(TensorDims(input)).c_str(),
                                   TensorLabel(first).c_str(), DimsToString(dims).c_str());
      return kKilnError;
    }
  }
  Dims output_dims;
  std::string error;
  if (!reference::MakePack(dims, axis, count, &state->pieces, &output_dims, &error)) {
    return ReportShapeError(context, op, first, error);
  }
  state->inputs.assign(static_cast<size_t>(count), nullptr);
  return ResizeOutput(context, op, output, output_dims);
}

KilnStatus PackInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "PACK";
  KILN_OPS_GET_STATE(PackState, state, context, node, op);
  const reference::AxisPieces& p = state->pieces;
  const int64_t each = p.outer * p.inner;
  if (each == 0) return kKilnOk;
  for (size_t i = 0; i < p.sizes.size(); ++i) {
    const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, static_cast<int>(i));
    KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "input", input, each, state->element_size));
    state->inputs[i] = KilnOpaqueTensorData(input);
  }
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output,
                                      each * static_cast<int64_t>(p.sizes.size()), state->element_size));
  reference::JoinCopy(p, state->element_size, state->inputs.data(), KilnOpaqueTensorData(output));
  return kKilnOk;
}

struct RepeatState {
  reference::RepeatParams params;
  size_t element_size = 0;
  bool dynamic = false;  // multiples or shape computed at run time: Invoke plans and sizes the output
  bool tile = false;
};

// Plans TILE or BROADCAST_TO from the values of `vector` (multiples or shape) and sizes the output.
KilnStatus RepeatPlan(KilnOpaqueContext* context, bool tile, const KilnOpaqueTensor* input,
                      const KilnOpaqueTensor* vector, KilnOpaqueTensor* output, RepeatState* state) {
  const char* op = tile ? "TILE" : "BROADCAST_TO";
  std::vector<int64_t> values;
  KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, tile ? "multiples" : "shape", vector, &values));
  if (!tile && values.size() > static_cast<size_t>(kMaxBroadcastRank)) {
    KilnOpaqueContextReportError(context, "%s: shape %s has %zu dimensions; at most %d are supported", op,
                                 TensorLabel(vector).c_str(), values.size(), kMaxBroadcastRank);
    return kKilnError;
  }
  std::string error;
  const bool ok = tile ? reference::MakeTile(TensorDims(input), values, &state->params, &error)
                       : reference::MakeBroadcastTo(TensorDims(input), values, &state->params, &error);
  if (!ok) return ReportShapeError(context, op, input, error);
  return ResizeOutput(context, op, output, state->params.output_dims);
}

// TILE (`tile` true) or BROADCAST_TO: input and a constant int32/int64 vector (multiples or shape).
KilnStatus RepeatPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node, bool tile) {
  const char* op = tile ? "TILE" : "BROADCAST_TO";
  const char* role = tile ? "multiples" : "shape";
  KILN_OPS_GET_STATE(RepeatState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 1));
  const KilnOpaqueTensor *input, *vector;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, role, &vector));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  std::vector<KilnType> types = MovedTypes();
  if (!tile) types.push_back(kKilnFloat16);
  KILN_OPAQUE_ENSURE_STATUS(CheckMovedTypes(context, op, input, output, types, &state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, role, vector, 1, 1));
  if (!tile) KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", input, 0, kMaxBroadcastRank));
  const KilnType vector_type = KilnOpaqueTensorType(vector);
  if (vector_type != kKilnInt32 && vector_type != kKilnInt64) {
    KilnOpaqueContextReportError(context, "%s: %s %s has type %s; expected int32 or int64", op, role,
                                 TensorLabel(vector).c_str(), KilnTypeGetName(vector_type));
    return kKilnError;
  }
  // Computed at run time: the output is dynamic (as LiteRT), planned and sized at Invoke.
  state->tile = tile;
  state->dynamic = !IsConstant(vector);
  if (state->dynamic) return MakeOutputDynamic(context, op, output);
  return RepeatPlan(context, tile, input, vector, output, state);
}

KilnStatus TilePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return RepeatPrepare(context, node, true);
}
KilnStatus BroadcastToPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return RepeatPrepare(context, node, false);
}

KilnStatus RepeatInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "TILE/BROADCAST_TO";
  KILN_OPS_GET_STATE(RepeatState, state, context, node, op);
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  if (state->dynamic) {
    KILN_OPAQUE_ENSURE_STATUS(
        RepeatPlan(context, state->tile, input, KilnOpaqueNodeGetInput(context, node, 1), output, state));
  }
  const int64_t out_count = reference::NumElements(state->params.output_dims);
  if (out_count == 0) return kKilnOk;
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "input", input,
                                      reference::NumElements(state->params.input_dims), state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, out_count, state->element_size));
  reference::RepeatCopy(state->params, state->element_size, KilnOpaqueTensorData(input),
                        KilnOpaqueTensorData(output));
  return kKilnOk;
}

// SHAPE: the input's dimensions as an int32 or int64 vector. The output's type must be the options' out_type
// (LiteRT sets the output's type from it; Kiln checks they agree, and goes by the output when the op has no
// options).
KilnStatus ShapePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "SHAPE";
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 1, 1, 1));
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  const auto* options = static_cast<const KilnShapeParams*>(KilnOpaqueNodeGetBuiltinData(node));
  const KilnType out_type = options != nullptr ? options->out_type : kKilnNoType;
  const KilnType type = KilnOpaqueTensorType(output);
  if (type != kKilnInt32 && type != kKilnInt64) {
    KilnOpaqueContextReportError(context, "%s: output %s has type %s; expected int32 or int64", op,
                                 TensorLabel(output).c_str(), KilnTypeGetName(type));
    return kKilnError;
  }
  if (out_type != kKilnNoType && out_type != type) {
    KilnOpaqueContextReportError(context, "%s: out_type option is %s but output %s has type %s", op,
                                 KilnTypeGetName(out_type), TensorLabel(output).c_str(),
                                 KilnTypeGetName(type));
    return kKilnError;
  }
  return ResizeOutput(context, op, output, Dims{KilnOpaqueTensorNumDims(input)});
}

KilnStatus ShapeInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "SHAPE";
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  const Dims dims = TensorDims(input);
  if (dims.empty()) return kKilnOk;
  const bool is_int64 = KilnOpaqueTensorType(output) == kKilnInt64;
  KILN_OPAQUE_ENSURE_STATUS(
      CheckData(context, op, "output", output, static_cast<int64_t>(dims.size()), is_int64 ? 8 : 4));
  auto* out = static_cast<unsigned char*>(KilnOpaqueTensorData(output));
  for (size_t i = 0; i < dims.size(); ++i) {
    if (is_int64) {
      const int64_t v = dims[i];
      std::memcpy(out + i * 8, &v, 8);
    } else {
      const int32_t v = static_cast<int32_t>(dims[i]);
      std::memcpy(out + i * 4, &v, 4);
    }
  }
  return kKilnOk;
}

// RANK: the input's rank as an int32 scalar (any input type).
KilnStatus RankPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "RANK";
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 1, 1, 1));
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "output", output, kKilnInt32));
  return ResizeOutput(context, op, output, Dims{});
}

KilnStatus RankInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "RANK";
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, 1, 4));
  const int32_t rank = KilnOpaqueTensorNumDims(KilnOpaqueNodeGetInput(context, node, 0));
  std::memcpy(KilnOpaqueTensorData(output), &rank, sizeof(rank));
  return kKilnOk;
}

}  // namespace

void AddSplitPackOps(std::vector<BuiltinOp>* table) {
  // LiteRT registers SPLIT v1-v4, SPLIT_V v1-v2, PACK v1-v4, UNPACK v1-v4, TILE v1-v3, BROADCAST_TO v2-v3 (v1
  // was withdrawn) and SHAPE v1; later versions add types.
  table->push_back(
      {kKilnBuiltinSplit, 1, 4, MakeOperator<SplitState>(kKilnBuiltinSplit, 4, &SplitPrepare, &SplitInvoke)});
  table->push_back({kKilnBuiltinSplitV, 1, 2,
                    MakeOperator<SplitState>(kKilnBuiltinSplitV, 2, &SplitVPrepare, &SplitInvoke)});
  table->push_back({kKilnBuiltinUnpack, 1, 4,
                    MakeOperator<SplitState>(kKilnBuiltinUnpack, 4, &UnpackPrepare, &SplitInvoke)});
  table->push_back(
      {kKilnBuiltinPack, 1, 4, MakeOperator<PackState>(kKilnBuiltinPack, 4, &PackPrepare, &PackInvoke)});
  table->push_back(
      {kKilnBuiltinTile, 1, 3, MakeOperator<RepeatState>(kKilnBuiltinTile, 3, &TilePrepare, &RepeatInvoke)});
  table->push_back(
      {kKilnBuiltinBroadcastTo, 2, 3,
       MakeOperator<RepeatState>(kKilnBuiltinBroadcastTo, 3, &BroadcastToPrepare, &RepeatInvoke)});
  table->push_back(
      {kKilnBuiltinShape, 1, 1, MakeOperator<NoState>(kKilnBuiltinShape, 1, &ShapePrepare, &ShapeInvoke)});
  table->push_back({kKilnBuiltinRank, 1, 1, MakeOperator<NoState>(kKilnBuiltinRank, 1, &RankPrepare, &RankInvoke)});
}

}  // namespace kiln::ops
