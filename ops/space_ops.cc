// DEPTH_TO_SPACE and SPACE_TO_DEPTH (elements of an NHWC tensor moved between its height and width and its depth;
// float32, uint8, int8, int32, int64), SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND (blocks of the spatial dimensions
// moved into and out of the batch; those types and int16), MIRROR_PAD (the SPACE_TO_BATCH_ND types) and REVERSE_V2
// (those and bool): the types LiteRT's kernels take, the output quantized as the input.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/space.h"

namespace kiln::ops {
namespace {

// The element types LiteRT's DEPTH_TO_SPACE and SPACE_TO_DEPTH kernels take.
const std::vector<KilnType>& SpaceDepthTypes() {
  static const std::vector<KilnType> types = {kKilnFloat32, kKilnUInt8, kKilnInt8, kKilnInt32, kKilnInt64};
  return types;
}

struct SpaceDepthState {
  Dims input_dims;
  int64_t block_size = 1;
  size_t element_size = 0;
};

using ShapeFn = bool (*)(const Dims&, int64_t, Dims*, std::string*);
using MoveFn = void (*)(const Dims&, int64_t, size_t, const void*, void*);

template <typename Params>
KilnStatus SpaceDepthPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, ShapeFn shape) {
  KILN_OPS_GET_STATE(SpaceDepthState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 1, 1, 1));
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckMovedTypes(context, op, input, output, SpaceDepthTypes(), &state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", input, 4, 4));
  const Params* options;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &options));
  state->input_dims = TensorDims(input);
  state->block_size = options->block_size;
  Dims output_dims;
  std::string error;
  if (!shape(state->input_dims, state->block_size, &output_dims, &error)) {
    KilnOpaqueContextReportError(context, "%s: input %s %s: %s", op, TensorLabel(input).c_str(),
                                 DimsToString(state->input_dims).c_str(), error.c_str());
    return kKilnError;
  }
  return ResizeOutput(context, op, output, output_dims);
}

KilnStatus SpaceDepthInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, MoveFn move) {
  KILN_OPS_GET_STATE(SpaceDepthState, state, context, node, op);
  const int64_t count = reference::NumElements(state->input_dims);
  if (count == 0) return kKilnOk;
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "input", input, count, state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, count, state->element_size));
  move(state->input_dims, state->block_size, state->element_size, KilnOpaqueTensorData(input),
       KilnOpaqueTensorData(output));
  return kKilnOk;
}

KilnStatus DepthToSpacePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return SpaceDepthPrepare<KilnDepthToSpaceParams>(context, node, "DEPTH_TO_SPACE", &reference::DepthToSpaceShape);
}
KilnStatus DepthToSpaceInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return SpaceDepthInvoke(context, node, "DEPTH_TO_SPACE", &reference::DepthToSpace);
}
KilnStatus SpaceToDepthPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return SpaceDepthPrepare<KilnSpaceToDepthParams>(context, node, "SPACE_TO_DEPTH", &reference::SpaceToDepthShape);
}
KilnStatus SpaceToDepthInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return SpaceDepthInvoke(context, node, "SPACE_TO_DEPTH", &reference::SpaceToDepth);
}

// The element types LiteRT's SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND kernels take.
const std::vector<KilnType>& BatchSpaceTypes() {
  static const std::vector<KilnType> types = {kKilnFloat32, kKilnUInt8, kKilnInt8, kKilnInt16, kKilnInt32, kKilnInt64};
  return types;
}

struct BatchSpaceState {
  reference::BatchSpaceParams params;
  size_t element_size = 0;
  int64_t pad = 0;  // SPACE_TO_BATCH_ND's fill: 0, or the output's zero point for a quantized type
  bool dynamic = false;    // block_shape or paddings/crops computed at run time: Invoke prepares again, sizing
  bool at_invoke = false;  // Prepare running from Invoke (PrepareAtInvoke)
};

// SPACE_TO_BATCH_ND (`to_batch`) and BATCH_TO_SPACE_ND: input, an int32 block_shape [rank - 2] and int32 paddings
// or crops [rank - 2, 2], read here; where either is computed at run time, the output is dynamic (as LiteRT) and
// Invoke runs this again to read them.
KilnStatus BatchSpacePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, bool to_batch) {
  KILN_OPS_GET_STATE(BatchSpaceState, state, context, node, op);
  const char* pads_role = to_batch ? "paddings" : "crops";
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 3, 3, 1));
  const KilnOpaqueTensor *input, *block, *pads;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "block_shape", &block));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 2, pads_role, &pads));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckMovedTypes(context, op, input, output, BatchSpaceTypes(), &state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", input, 3, 4));
  const KilnType type = KilnOpaqueTensorType(input);
  state->pad = 0;
  if (type == kKilnInt8 || type == kKilnUInt8 || type == kKilnInt16) {
    std::vector<float> scales;
    std::vector<int32_t> zero_points;
    int dim = 0;
    if (GetQuantization(output, &scales, &zero_points, &dim) && !zero_points.empty()) state->pad = zero_points[0];
    // As LiteRT: int16 is symmetric.
    if (type == kKilnInt16 && state->pad != 0) {
      KilnOpaqueContextReportError(context, "%s: int16 output %s has zero point %lld; int16 must have zero point 0", op,
                                   TensorLabel(output).c_str(), static_cast<long long>(state->pad));
      return kKilnError;
    }
    if (state->pad < TypeMin(type) || state->pad > TypeMax(type)) {
      KilnOpaqueContextReportError(context, "%s: output %s has zero point %lld, outside %s's range", op,
                                   TensorLabel(output).c_str(), static_cast<long long>(state->pad),
                                   KilnTypeGetName(type));
      return kKilnError;
    }
  }
  const Dims input_dims = TensorDims(input);
  const int64_t spatial = static_cast<int64_t>(input_dims.size()) - 2;
  const Dims block_dims = TensorDims(block);
  const Dims pads_dims = TensorDims(pads);
  if (block_dims != Dims{spatial} || pads_dims != Dims{spatial, 2}) {
    KilnOpaqueContextReportError(context,
                                 "%s: block_shape %s has shape %s and %s %s %s; expected [%lld] and [%lld, 2] "
                                 "for input %s",
                                 op, TensorLabel(block).c_str(), DimsToString(block_dims).c_str(), pads_role,
                                 TensorLabel(pads).c_str(), DimsToString(pads_dims).c_str(),
                                 static_cast<long long>(spatial), static_cast<long long>(spatial),
                                 TensorLabel(input).c_str());
    return kKilnError;
  }
  // LiteRT reads both as int32.
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "block_shape", block, kKilnInt32));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, pads_role, pads, kKilnInt32));
  state->dynamic = !IsConstant(block) || !IsConstant(pads);
  if (state->dynamic && !state->at_invoke) return MakeOutputDynamic(context, op, output);
  std::vector<int32_t> block_values, pad_values;
  KILN_OPAQUE_ENSURE_STATUS(ReadInt32Values(context, op, "block_shape", block, false, &block_values));
  KILN_OPAQUE_ENSURE_STATUS(ReadInt32Values(context, op, pads_role, pads, false, &pad_values));
  const std::vector<int64_t> block64(block_values.begin(), block_values.end());
  const std::vector<int64_t> pads64(pad_values.begin(), pad_values.end());
  Dims output_dims;
  std::string error;
  const bool ok = to_batch
                      ? reference::MakeSpaceToBatch(input_dims, block64, pads64, &state->params, &output_dims, &error)
                      : reference::MakeBatchToSpace(input_dims, block64, pads64, &state->params, &output_dims, &error);
  if (!ok) {
    KilnOpaqueContextReportError(context, "%s: input %s %s: %s", op, TensorLabel(input).c_str(),
                                 DimsToString(input_dims).c_str(), error.c_str());
    return kKilnError;
  }
  return ResizeOutput(context, op, output, output_dims);
}

KilnStatus BatchSpaceInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, bool to_batch) {
  KILN_OPS_GET_STATE(BatchSpaceState, state, context, node, op);
  if (state->dynamic) {
    KILN_OPAQUE_ENSURE_STATUS(PrepareAtInvoke(state, [&] { return BatchSpacePrepare(context, node, op, to_batch); }));
  }
  const reference::BatchSpaceParams& p = state->params;
  const int64_t in_count = reference::NumElements(p.input);
  const int64_t out_count = reference::NumElements(p.output);
  if (out_count == 0) return kKilnOk;
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "input", input, in_count, state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, out_count, state->element_size));
  if (!to_batch) {
    reference::BatchToSpace(p, state->element_size, KilnOpaqueTensorData(input), KilnOpaqueTensorData(output));
    return kKilnOk;
  }
  // The fill value in the element's own type (its bytes).
  union {
    float f;
    uint8_t u8;
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
  } pad{};
  switch (KilnOpaqueTensorType(input)) {
    case kKilnUInt8: pad.u8 = static_cast<uint8_t>(state->pad); break;
    case kKilnInt8: pad.i8 = static_cast<int8_t>(state->pad); break;
    case kKilnInt16: pad.i16 = static_cast<int16_t>(state->pad); break;
    default: pad.i64 = 0; break;  // float32 0.0, int32 0, int64 0: all bytes zero
  }
  reference::SpaceToBatch(p, state->element_size, &pad, KilnOpaqueTensorData(input), KilnOpaqueTensorData(output));
  return kKilnOk;
}

KilnStatus SpaceToBatchPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return BatchSpacePrepare(context, node, "SPACE_TO_BATCH_ND", true);
}
KilnStatus SpaceToBatchInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return BatchSpaceInvoke(context, node, "SPACE_TO_BATCH_ND", true);
}
KilnStatus BatchToSpacePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return BatchSpacePrepare(context, node, "BATCH_TO_SPACE_ND", false);
}
KilnStatus BatchToSpaceInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return BatchSpaceInvoke(context, node, "BATCH_TO_SPACE_ND", false);
}

// The element types LiteRT's MIRROR_PAD kernel takes.
const std::vector<KilnType>& MirrorPadTypes() {
  static const std::vector<KilnType> types = {kKilnFloat32, kKilnUInt8, kKilnInt8, kKilnInt16, kKilnInt32, kKilnInt64};
  return types;
}

struct MirrorPadState {
  Dims input_dims;
  std::vector<int64_t> before, after;
  bool reflect = true;
  size_t element_size = 0;
  bool dynamic = false;  // paddings computed at run time: Invoke reads them and sizes the output
};

// Reads MIRROR_PAD's paddings ([rank, 2]) and sizes the output; bad paddings fail naming the op and tensors.
KilnStatus MirrorPadSize(KilnOpaqueContext* context, const KilnOpaqueTensor* input, const KilnOpaqueTensor* paddings,
                         KilnOpaqueTensor* output, MirrorPadState* state) {
  constexpr const char* op = "MIRROR_PAD";
  const int64_t rank = static_cast<int64_t>(state->input_dims.size());
  std::vector<int64_t> values;
  KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "paddings", paddings, &values));
  if (static_cast<int64_t>(values.size()) != 2 * rank) {
    KilnOpaqueContextReportError(context, "%s: paddings %s has %zu values; expected %lld", op,
                                 TensorLabel(paddings).c_str(), values.size(), static_cast<long long>(2 * rank));
    return kKilnError;
  }
  state->before.assign(static_cast<size_t>(rank), 0);
  state->after.assign(static_cast<size_t>(rank), 0);
  for (int64_t d = 0; d < rank; ++d) {
    state->before[d] = values[2 * d];
    state->after[d] = values[2 * d + 1];
  }
  Dims output_dims;
  std::string error;
  if (!reference::MirrorPadShape(state->input_dims, state->before, state->after, state->reflect, &output_dims,
                                 &error)) {
    KilnOpaqueContextReportError(context, "%s: input %s %s, paddings %s: %s", op, TensorLabel(input).c_str(),
                                 DimsToString(state->input_dims).c_str(), TensorLabel(paddings).c_str(), error.c_str());
    return kKilnError;
  }
  return ResizeOutput(context, op, output, output_dims);
}

KilnStatus MirrorPadPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "MIRROR_PAD";
  KILN_OPS_GET_STATE(MirrorPadState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 1));
  const KilnOpaqueTensor *input, *paddings;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "paddings", &paddings));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckMovedTypes(context, op, input, output, MirrorPadTypes(), &state->element_size));
  const KilnMirrorPadParams* options;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &options));
  if (options->mode != kKilnMirrorPadReflect && options->mode != kKilnMirrorPadSymmetric) {
    KilnOpaqueContextReportError(context, "%s: mode %d is neither REFLECT (0) nor SYMMETRIC (1)", op,
                                 static_cast<int>(options->mode));
    return kKilnError;
  }
  state->reflect = options->mode == kKilnMirrorPadReflect;
  state->input_dims = TensorDims(input);
  const int64_t rank = static_cast<int64_t>(state->input_dims.size());
  const Dims padding_dims = TensorDims(paddings);
  if (padding_dims != Dims{rank, 2}) {
    KilnOpaqueContextReportError(context, "%s: paddings %s has shape %s; expected [%lld, 2] for input %s", op,
                                 TensorLabel(paddings).c_str(), DimsToString(padding_dims).c_str(),
                                 static_cast<long long>(rank), TensorLabel(input).c_str());
    return kKilnError;
  }
  const KilnType paddings_type = KilnOpaqueTensorType(paddings);
  if (paddings_type != kKilnInt32 && paddings_type != kKilnInt64) {
    KilnOpaqueContextReportError(context, "%s: paddings %s has type %s; expected int32 or int64", op,
                                 TensorLabel(paddings).c_str(), KilnTypeGetName(paddings_type));
    return kKilnError;
  }
  // Paddings computed at run time: a dynamic output, sized at Invoke (as LiteRT).
  state->dynamic = !IsConstant(paddings);
  if (state->dynamic) {
    state->before.assign(static_cast<size_t>(rank), 0);
    state->after.assign(static_cast<size_t>(rank), 0);
    return MakeOutputDynamic(context, op, output);
  }
  return MirrorPadSize(context, input, paddings, output, state);
}

KilnStatus MirrorPadInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "MIRROR_PAD";
  KILN_OPS_GET_STATE(MirrorPadState, state, context, node, op);
  if (state->dynamic) {
    KILN_OPAQUE_ENSURE_STATUS(MirrorPadSize(context, KilnOpaqueNodeGetInput(context, node, 0),
                                            KilnOpaqueNodeGetInput(context, node, 1),
                                            KilnOpaqueNodeGetOutput(context, node, 0), state));
  }
  Dims output_dims = state->input_dims;
  for (size_t d = 0; d < output_dims.size(); ++d) output_dims[d] += state->before[d] + state->after[d];
  const int64_t out_count = reference::NumElements(output_dims);
  if (out_count == 0) return kKilnOk;
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  KILN_OPAQUE_ENSURE_STATUS(
      CheckData(context, op, "input", input, reference::NumElements(state->input_dims), state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, out_count, state->element_size));
  reference::MirrorPad(state->input_dims, state->before, state->after, state->reflect, state->element_size,
                       KilnOpaqueTensorData(input), KilnOpaqueTensorData(output));
  return kKilnOk;
}

// The element types LiteRT's REVERSE_V2 kernel takes.
const std::vector<KilnType>& ReverseTypes() {
  static const std::vector<KilnType> types = {kKilnFloat32, kKilnUInt8, kKilnInt8, kKilnInt16,
                                              kKilnInt32,   kKilnInt64, kKilnBool};
  return types;
}

constexpr int kMaxReverseRank = 8;

struct ReverseState {
  Dims input_dims;
  int64_t first = 0, last = -1;  // the reversed axes, consecutive; none where first > last
  size_t element_size = 0;
  bool run_time_axis = false;  // axis computed at run time: Invoke prepares again to read it (same output shape)
  bool at_invoke = false;      // Prepare running from Invoke (PrepareAtInvoke)
};

KilnStatus ReversePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "REVERSE_V2";
  KILN_OPS_GET_STATE(ReverseState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 1));
  const KilnOpaqueTensor *input, *axis;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "axis", &axis));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckMovedTypes(context, op, input, output, ReverseTypes(), &state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", input, 0, kMaxReverseRank));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "axis", axis, 1, 1));
  // As LiteRT: int32 axes, constant or computed at run time (read at Invoke; the output keeps the input's shape).
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "axis", axis, kKilnInt32));
  state->input_dims = TensorDims(input);
  state->run_time_axis = !IsConstant(axis);
  if (state->run_time_axis && !state->at_invoke) {
    state->first = 0;
    state->last = -1;
    return ResizeOutput(context, op, output, state->input_dims);
  }
  std::vector<int32_t> values;
  KILN_OPAQUE_ENSURE_STATUS(ReadInt32Values(context, op, "axis", axis, false, &values));
  const int64_t rank = static_cast<int64_t>(state->input_dims.size());
  if (static_cast<int64_t>(values.size()) > rank) {
    KilnOpaqueContextReportError(context, "%s: axis %s has %zu entries, more than input %s has dimensions (%lld)", op,
                                 TensorLabel(axis).c_str(), values.size(), TensorLabel(input).c_str(),
                                 static_cast<long long>(rank));
    return kKilnError;
  }
  std::vector<int64_t> axes;
  for (int32_t v : values) {
    if (v < -rank || v >= rank) {
      KilnOpaqueContextReportError(context, "%s: axis %s holds %d, outside [%lld, %lld) for input %s", op,
                                   TensorLabel(axis).c_str(), v, static_cast<long long>(-rank),
                                   static_cast<long long>(rank), TensorLabel(input).c_str());
      return kKilnError;
    }
    axes.push_back(v < 0 ? v + rank : v);
  }
  std::sort(axes.begin(), axes.end());
  for (size_t i = 1; i < axes.size(); ++i) {
    if (axes[i] != axes[i - 1] + 1) {
      KilnOpaqueContextReportError(context,
                                   "%s: axis %s names dimensions %lld and %lld; REVERSE_V2 reverses one axis or "
                                   "consecutive distinct axes only (LiteRT refuses the others too)",
                                   op, TensorLabel(axis).c_str(), static_cast<long long>(axes[i - 1]),
                                   static_cast<long long>(axes[i]));
      return kKilnError;
    }
  }
  state->first = axes.empty() ? 0 : axes.front();
  state->last = axes.empty() ? -1 : axes.back();
  if (state->at_invoke) return kKilnOk;  // the output already has the input's shape
  return ResizeOutput(context, op, output, state->input_dims);
}

KilnStatus ReverseInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "REVERSE_V2";
  KILN_OPS_GET_STATE(ReverseState, state, context, node, op);
  if (state->run_time_axis) {
    KILN_OPAQUE_ENSURE_STATUS(PrepareAtInvoke(state, [&] { return ReversePrepare(context, node); }));
  }
  const int64_t count = reference::NumElements(state->input_dims);
  if (count == 0) return kKilnOk;
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "input", input, count, state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, count, state->element_size));
  reference::Reverse(state->input_dims, state->first, state->last, state->element_size, KilnOpaqueTensorData(input),
                     KilnOpaqueTensorData(output));
  return kKilnOk;
}

}  // namespace

void AddSpaceOps(std::vector<BuiltinOp>* table) {
  // LiteRT registers DEPTH_TO_SPACE and SPACE_TO_DEPTH at versions 1-2 (v2 adds int8).
  table->push_back(
      {kKilnBuiltinDepthToSpace, 1, 2,
       MakeOperator<SpaceDepthState>(kKilnBuiltinDepthToSpace, 2, &DepthToSpacePrepare, &DepthToSpaceInvoke)});
  table->push_back(
      {kKilnBuiltinSpaceToDepth, 1, 2,
       MakeOperator<SpaceDepthState>(kKilnBuiltinSpaceToDepth, 2, &SpaceToDepthPrepare, &SpaceToDepthInvoke)});
  // SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND: LiteRT registers v1-v4 (its reference resolver v1-v3).
  table->push_back(
      {kKilnBuiltinSpaceToBatchNd, 1, 4,
       MakeOperator<BatchSpaceState>(kKilnBuiltinSpaceToBatchNd, 4, &SpaceToBatchPrepare, &SpaceToBatchInvoke)});
  table->push_back(
      {kKilnBuiltinBatchToSpaceNd, 1, 4,
       MakeOperator<BatchSpaceState>(kKilnBuiltinBatchToSpaceNd, 4, &BatchToSpacePrepare, &BatchToSpaceInvoke)});
  // REVERSE_V2: LiteRT 2.3.0's default resolver loads v1-v4 (its reference resolver v1-v2).
  table->push_back({kKilnBuiltinReverseV2, 1, 4,
                    MakeOperator<ReverseState>(kKilnBuiltinReverseV2, 4, &ReversePrepare, &ReverseInvoke)});
  // MIRROR_PAD: LiteRT registers v1-v3.
  table->push_back({kKilnBuiltinMirrorPad, 1, 3,
                    MakeOperator<MirrorPadState>(kKilnBuiltinMirrorPad, 3, &MirrorPadPrepare, &MirrorPadInvoke)});
}

}  // namespace kiln::ops
