// STRIDED_SLICE, SLICE, EXPAND_DIMS and GATHER: operators that pick elements of any moved type (float32,
// int32, int64, int8, uint8, int16, bool), the output quantized as the input.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/slicing.h"

namespace kiln::ops {
namespace {

// The most input dimensions LiteRT's SLICE and STRIDED_SLICE accept.
constexpr int kMaxSliceRank = 5;

// Fails unless `tensor` is a 1-D tensor of one of the index types (int32 only where `int64_ok` is false).
KilnStatus CheckIndexVector(KilnOpaqueContext* context, const char* op, const char* role,
                            const KilnOpaqueTensor* tensor, bool int64_ok) {
  const KilnType type = KilnOpaqueTensorType(tensor);
  if (type != kKilnInt32 && !(int64_ok && type == kKilnInt64)) {
    KilnOpaqueContextReportError(context, "%s: %s %s has type %s; expected int32%s", op, role,
                                 TensorLabel(tensor).c_str(), KilnTypeGetName(type),
                                 int64_ok ? " or int64" : "");
    return kKilnError;
  }
  return CheckRank(context, op, role, tensor, 1, 1);
}

// The state of STRIDED_SLICE and SLICE: the plan where Prepare could make it, else what Invoke needs to make
// it.
struct SliceState {
  reference::StridedSlicePlan plan;
  bool plan_ready = false;  // false: Invoke plans from the run-time values and checks the shape Prepare set
  bool dynamic = false;     // the output's shape depends on run-time values: Invoke plans and resizes it
  Dims output_dims;
  size_t element_size = 0;
  reference::StridedSliceSpec spec;  // STRIDED_SLICE
  std::vector<int64_t> size;         // SLICE
};

// Copies the planned box, after checking the plan yields the shape Prepare gave the output.
KilnStatus InvokeSlicePlan(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op,
                           const SliceState& state, const reference::StridedSlicePlan& plan) {
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  if (plan.output_dims != state.output_dims) {
    KilnOpaqueContextReportError(
        context,
        "%s: begin %s at run time gives output shape %s, not the %s Prepare gave output %s "
        "(begin out of range)",
        op, TensorLabel(KilnOpaqueNodeGetInput(context, node, 1)).c_str(),
        DimsToString(plan.output_dims).c_str(), DimsToString(state.output_dims).c_str(),
        TensorLabel(output).c_str());
    return kKilnError;
  }
  const int64_t out_count = reference::NumElements(plan.output_dims);
  if (out_count == 0) return kKilnOk;
  const int64_t in_count = reference::NumElements(TensorDims(input));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "input", input, in_count, state.element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, out_count, state.element_size));
  reference::StridedSliceCopy(plan, state.element_size, KilnOpaqueTensorData(input),
                              KilnOpaqueTensorData(output));
  return kKilnOk;
}

KilnStatus StridedSlicePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "STRIDED_SLICE";
  KILN_OPS_GET_STATE(SliceState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 4, 4, 1));
  const KilnOpaqueTensor *input, *begin, *end, *strides;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "begin", &begin));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 2, "end", &end));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 3, "strides", &strides));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckMovedTypes(context, op, input, output, MovedTypes(), &state->element_size));
  // As LiteRT: begin, end and strides are int32 vectors; begin and end have as many entries.
  KILN_OPAQUE_ENSURE_STATUS(CheckIndexVector(context, op, "begin", begin, false));
  KILN_OPAQUE_ENSURE_STATUS(CheckIndexVector(context, op, "end", end, false));
  KILN_OPAQUE_ENSURE_STATUS(CheckIndexVector(context, op, "strides", strides, false));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", input, 0, kMaxSliceRank));
  const auto* options = static_cast<const KilnStridedSliceParams*>(KilnOpaqueNodeGetBuiltinData(node));
  reference::StridedSliceSpec& spec = state->spec;
  spec = reference::StridedSliceSpec();
  if (options != nullptr) {
    spec.begin_mask = static_cast<uint32_t>(options->begin_mask);
    spec.end_mask = static_cast<uint32_t>(options->end_mask);
    spec.ellipsis_mask = static_cast<uint32_t>(options->ellipsis_mask);
    spec.new_axis_mask = static_cast<uint32_t>(options->new_axis_mask);
    spec.shrink_axis_mask = static_cast<uint32_t>(options->shrink_axis_mask);
    spec.offset = options->offset;
  }
  // The output's shape is known in Prepare where strides and end are constant and, without the offset option,
  // begin too; otherwise the output is dynamic (as LiteRT): Invoke plans the slice and sizes it.
  state->dynamic = !IsConstant(strides) || !IsConstant(end) || (!spec.offset && !IsConstant(begin));
  if (state->dynamic) {
    state->plan_ready = false;
    return MakeOutputDynamic(context, op, output);
  }
  KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "end", end, &spec.end));
  KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "strides", strides, &spec.strides));
  const Dims input_dims = TensorDims(input);
  std::string error;
  state->plan_ready = IsConstant(begin);
  if (state->plan_ready) {
    KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "begin", begin, &spec.begin));
    if (!reference::MakeStridedSlicePlan(input_dims, spec, &state->plan, &error)) {
      KilnOpaqueContextReportError(context, "%s: input %s: %s", op, TensorLabel(input).c_str(),
                                   error.c_str());
      return kKilnError;
    }
  } else {
    spec.begin.assign(static_cast<size_t>(reference::NumElements(TensorDims(begin))), 0);
  }
  if (spec.offset) {
    // LiteRT sizes an offset slice as ceil(end / stride) whatever begin is; a begin that would clamp it
    // fails.
    if (!reference::StridedSliceOffsetShape(input_dims, spec, &state->output_dims, &error)) {
      KilnOpaqueContextReportError(context, "%s: input %s: %s", op, TensorLabel(input).c_str(),
                                   error.c_str());
      return kKilnError;
    }
    if (state->plan_ready && state->plan.output_dims != state->output_dims) {
      KilnOpaqueContextReportError(
          context, "%s: begin %s with offset end %s runs past input %s %s (slice %s, expected %s)", op,
          TensorLabel(begin).c_str(), TensorLabel(end).c_str(), TensorLabel(input).c_str(),
          DimsToString(input_dims).c_str(), DimsToString(state->plan.output_dims).c_str(),
          DimsToString(state->output_dims).c_str());
      return kKilnError;
    }
  } else {
    state->output_dims = state->plan.output_dims;
  }
  return ResizeOutput(context, op, output, state->output_dims);
}

KilnStatus StridedSliceInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "STRIDED_SLICE";
  KILN_OPS_GET_STATE(SliceState, state, context, node, op);
  if (state->plan_ready) return InvokeSlicePlan(context, node, op, *state, state->plan);
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  reference::StridedSliceSpec spec = state->spec;
  KILN_OPAQUE_ENSURE_STATUS(
      ReadIntValues(context, op, "begin", KilnOpaqueNodeGetInput(context, node, 1), &spec.begin));
  if (state->dynamic) {
    KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "end", KilnOpaqueNodeGetInput(context, node, 2), &spec.end));
    KILN_OPAQUE_ENSURE_STATUS(
        ReadIntValues(context, op, "strides", KilnOpaqueNodeGetInput(context, node, 3), &spec.strides));
  }
  reference::StridedSlicePlan plan;
  std::string error;
  if (!reference::MakeStridedSlicePlan(TensorDims(input), spec, &plan, &error)) {
    KilnOpaqueContextReportError(context, "%s: input %s with the run-time begin, end and strides: %s", op,
                                 TensorLabel(input).c_str(), error.c_str());
    return kKilnError;
  }
  if (state->dynamic) {
    if (spec.offset) {
      Dims offset_dims;
      if (!reference::StridedSliceOffsetShape(TensorDims(input), spec, &offset_dims, &error) ||
          offset_dims != plan.output_dims) {
        KilnOpaqueContextReportError(context, "%s: input %s: the run-time offset slice %s runs past the input%s%s", op,
                                     TensorLabel(input).c_str(), DimsToString(plan.output_dims).c_str(),
                                     error.empty() ? "" : ": ", error.c_str());
        return kKilnError;
      }
    }
    state->output_dims = plan.output_dims;
    KILN_OPAQUE_ENSURE_STATUS(ResizeOutput(context, op, KilnOpaqueNodeGetOutput(context, node, 0), plan.output_dims));
  }
  return InvokeSlicePlan(context, node, op, *state, plan);
}

KilnStatus SlicePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "SLICE";
  KILN_OPS_GET_STATE(SliceState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 3, 3, 1));
  const KilnOpaqueTensor *input, *begin, *size;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "begin", &begin));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 2, "size", &size));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckMovedTypes(context, op, input, output, MovedTypes(), &state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckIndexVector(context, op, "begin", begin, true));
  KILN_OPAQUE_ENSURE_STATUS(CheckIndexVector(context, op, "size", size, true));
  if (KilnOpaqueTensorType(begin) != KilnOpaqueTensorType(size)) {
    KilnOpaqueContextReportError(context, "%s: begin %s (%s) and size %s (%s) must have the same type", op,
                                 TensorLabel(begin).c_str(), KilnTypeGetName(KilnOpaqueTensorType(begin)),
                                 TensorLabel(size).c_str(), KilnTypeGetName(KilnOpaqueTensorType(size)));
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", input, 0, kMaxSliceRank));
  const Dims input_dims = TensorDims(input);
  // A run-time size, or a run-time begin with a -1 in size, makes the output dynamic (as LiteRT).
  state->plan_ready = false;
  state->dynamic = !IsConstant(size);
  if (!state->dynamic) {
    KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "size", size, &state->size));
    if (!IsConstant(begin)) {
      for (int64_t s : state->size) state->dynamic = state->dynamic || s == -1;
    }
  }
  if (state->dynamic) return MakeOutputDynamic(context, op, output);
  std::string error;
  state->plan_ready = IsConstant(begin);
  std::vector<int64_t> begin_values;
  if (state->plan_ready) {
    KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "begin", begin, &begin_values));
  } else {
    begin_values.assign(state->size.size(), 0);  // a run-time begin: the shape is the constant size
  }
  if (!reference::MakeSlicePlan(input_dims, begin_values, state->size, &state->plan, &error)) {
    KilnOpaqueContextReportError(context, "%s: input %s: %s", op, TensorLabel(input).c_str(), error.c_str());
    return kKilnError;
  }
  state->output_dims = state->plan.output_dims;
  return ResizeOutput(context, op, output, state->output_dims);
}

KilnStatus SliceInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "SLICE";
  KILN_OPS_GET_STATE(SliceState, state, context, node, op);
  if (state->plan_ready) return InvokeSlicePlan(context, node, op, *state, state->plan);
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  std::vector<int64_t> begin;
  KILN_OPAQUE_ENSURE_STATUS(
      ReadIntValues(context, op, "begin", KilnOpaqueNodeGetInput(context, node, 1), &begin));
  std::vector<int64_t> size = state->size;
  if (state->dynamic) {
    KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "size", KilnOpaqueNodeGetInput(context, node, 2), &size));
  }
  reference::StridedSlicePlan plan;
  std::string error;
  if (!reference::MakeSlicePlan(TensorDims(input), begin, size, &plan, &error)) {
    KilnOpaqueContextReportError(context, "%s: input %s with the run-time begin and size: %s", op,
                                 TensorLabel(input).c_str(), error.c_str());
    return kKilnError;
  }
  if (state->dynamic) {
    state->output_dims = plan.output_dims;
    KILN_OPAQUE_ENSURE_STATUS(ResizeOutput(context, op, KilnOpaqueNodeGetOutput(context, node, 0), plan.output_dims));
  }
  return InvokeSlicePlan(context, node, op, *state, plan);
}

// EXPAND_DIMS only adds a dimension of size 1: the data is copied as it is.
KilnStatus ExpandDimsResize(KilnOpaqueContext* context, const KilnOpaqueTensor* input, const KilnOpaqueTensor* axis,
                            KilnOpaqueTensor* output) {
  constexpr const char* op = "EXPAND_DIMS";
  std::vector<int64_t> values;
  KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "axis", axis, &values));
  Dims output_dims;
  std::string error;
  if (values.size() != 1 || !reference::ExpandDimsOutputShape(TensorDims(input), values[0], &output_dims, &error)) {
    KilnOpaqueContextReportError(context, "%s: axis %s: %s", op, TensorLabel(axis).c_str(),
                                 values.size() != 1 ? "expected a single value" : error.c_str());
    return kKilnError;
  }
  return ResizeOutput(context, op, output, output_dims);
}

KilnStatus ExpandDimsPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "EXPAND_DIMS";
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 1));
  const KilnOpaqueTensor *input, *axis;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "axis", &axis));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  size_t element_size = 0;
  std::vector<KilnType> types = MovedTypes();
  types.push_back(kKilnFloat16);
  KILN_OPAQUE_ENSURE_STATUS(CheckMovedTypes(context, op, input, output, types, &element_size));
  const KilnType axis_type = KilnOpaqueTensorType(axis);
  if (axis_type != kKilnInt32 && axis_type != kKilnInt64) {
    KilnOpaqueContextReportError(context, "%s: axis %s has type %s; expected int32 or int64", op,
                                 TensorLabel(axis).c_str(), KilnTypeGetName(axis_type));
    return kKilnError;
  }
  if (reference::NumElements(TensorDims(axis)) != 1) {
    KilnOpaqueContextReportError(context, "%s: axis %s has shape %s; expected a single value", op,
                                 TensorLabel(axis).c_str(), DimsToString(TensorDims(axis)).c_str());
    return kKilnError;
  }
  if (!IsConstant(axis)) return MakeOutputDynamic(context, op, output);  // sized at Invoke, as LiteRT
  return ExpandDimsResize(context, input, axis, output);
}

KilnStatus ExpandDimsInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "EXPAND_DIMS";
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  if (KilnOpaqueTensorGetAllocationType(output) == kKilnDynamic) {
    KILN_OPAQUE_ENSURE_STATUS(ExpandDimsResize(context, input, KilnOpaqueNodeGetInput(context, node, 1), output));
  }
  const size_t bytes = KilnOpaqueTensorByteSize(input);
  if (bytes == 0) return kKilnOk;
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "input", input, static_cast<int64_t>(bytes), 1));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, static_cast<int64_t>(bytes), 1));
  const void* src = KilnOpaqueTensorData(input);
  void* dst = KilnOpaqueTensorData(output);
  if (src != dst) std::memmove(dst, src, bytes);
  return kKilnOk;
}

struct GatherState {
  reference::GatherParams params;
  size_t element_size = 0;
  int axis = 0;
};

KilnStatus GatherPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "GATHER";
  KILN_OPS_GET_STATE(GatherState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 1));
  const KilnOpaqueTensor *input, *indices;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "indices", &indices));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckMovedTypes(context, op, input, output, MovedTypes(), &state->element_size));
  const KilnType index_type = KilnOpaqueTensorType(indices);
  if (index_type != kKilnInt32 && index_type != kKilnInt64) {
    KilnOpaqueContextReportError(context, "%s: indices %s have type %s; expected int32 or int64", op,
                                 TensorLabel(indices).c_str(), KilnTypeGetName(index_type));
    return kKilnError;
  }
  const auto* options = static_cast<const KilnGatherParams*>(KilnOpaqueNodeGetBuiltinData(node));
  const int axis = options != nullptr ? options->axis : 0;
  const int batch_dims = options != nullptr ? options->batch_dims : 0;
  Dims output_dims;
  std::string error;
  if (!reference::MakeGatherParams(TensorDims(input), TensorDims(indices), axis, batch_dims, &state->params,
                                   &output_dims, &error)) {
    KilnOpaqueContextReportError(context, "%s: input %s, indices %s: %s", op, TensorLabel(input).c_str(),
                                 TensorLabel(indices).c_str(), error.c_str());
    return kKilnError;
  }
  state->axis = axis < 0 ? axis + KilnOpaqueTensorNumDims(input) : axis;
  return ResizeOutput(context, op, output, output_dims);
}

// GATHER's copy (and EMBEDDING_LOOKUP's): input `input_index` gathered by the int32/int64 indices of input
// `indices_index` as `state` was prepared; `input_role` and `indices_role` name them in messages.
KilnStatus RunGather(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, const GatherState& state,
                     int input_index, const char* input_role, int indices_index, const char* indices_role) {
  const reference::GatherParams& p = state.params;
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, input_index);
  const KilnOpaqueTensor* indices = KilnOpaqueNodeGetInput(context, node, indices_index);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  const int64_t index_count = p.batch * p.num_indices;
  const int64_t in_count = p.batch * p.outer * p.axis_size * p.inner;
  const int64_t out_count = p.batch * p.outer * p.num_indices * p.inner;
  const bool is_int64 = KilnOpaqueTensorType(indices) == kKilnInt64;
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, indices_role, indices, index_count, is_int64 ? 8 : 4));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, input_role, input, in_count, state.element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, out_count, state.element_size));
  if (index_count == 0) return kKilnOk;
  // Index data may sit at any offset in a model file: read it unaligned-safe by copying into aligned memory
  // when it is not aligned.
  const void* raw = KilnOpaqueTensorData(indices);
  const size_t width = is_int64 ? 8 : 4;
  std::vector<int64_t> aligned64;
  std::vector<int32_t> aligned32;
  if (reinterpret_cast<uintptr_t>(raw) % width != 0) {
    if (is_int64) {
      aligned64.resize(static_cast<size_t>(index_count));
      std::memcpy(aligned64.data(), raw, aligned64.size() * 8);
      raw = aligned64.data();
    } else {
      aligned32.resize(static_cast<size_t>(index_count));
      std::memcpy(aligned32.data(), raw, aligned32.size() * 4);
      raw = aligned32.data();
    }
  }
  const void* in = KilnOpaqueTensorData(input);
  void* out = KilnOpaqueTensorData(output);
  int64_t bad = -1;
  const bool ok =
      is_int64
          ? reference::GatherCopy(p, state.element_size, in, static_cast<const int64_t*>(raw), out, &bad)
          : reference::GatherCopy(p, state.element_size, in, static_cast<const int32_t*>(raw), out, &bad);
  if (!ok) {
    const long long value = is_int64 ? static_cast<long long>(static_cast<const int64_t*>(raw)[bad])
                                     : static_cast<long long>(static_cast<const int32_t*>(raw)[bad]);
    KilnOpaqueContextReportError(
        context,
        "%s: index %lld at position %lld of %s %s is out of range [0, %lld) for "
        "axis %d of %s %s",
        op, value, static_cast<long long>(bad), indices_role, TensorLabel(indices).c_str(),
        static_cast<long long>(p.axis_size), state.axis, input_role, TensorLabel(input).c_str());
    return kKilnError;
  }
  return kKilnOk;
}

KilnStatus GatherInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  KILN_OPS_GET_STATE(GatherState, state, context, node, "GATHER");
  return RunGather(context, node, "GATHER", *state, 0, "input", 1, "indices");
}

// EMBEDDING_LOOKUP: rows of `value` (input 1) picked by the int32 ids of `lookup` (input 0, rank 1): GATHER along
// axis 0 where the output has the value's type; with an int8/uint8 value and a float32 output (hybrid), each row
// dequantized as LiteRT does: its bytes read as int8 (uint8 tables too) times the value's scale (one per tensor, or
// one per row), zero points 0.
struct EmbeddingLookupState : GatherState {
  bool hybrid = false;
  KilnType value_type = kKilnFloat32;
  std::vector<float> scales;  // hybrid: one, or one per row
  std::vector<int32_t> zero_points;  // all 0 (checked in Prepare)
};

KilnStatus EmbeddingLookupPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "EMBEDDING_LOOKUP";
  KILN_OPS_GET_STATE(EmbeddingLookupState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 1));
  const KilnOpaqueTensor *lookup, *value;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "lookup", &lookup));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "value", &value));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "lookup", lookup, kKilnInt32));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "lookup", lookup, 1, 1));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "value", value, 2, 8));
  state->value_type = KilnOpaqueTensorType(value);
  state->hybrid = (state->value_type == kKilnInt8 || state->value_type == kKilnUInt8) &&
                  KilnOpaqueTensorType(output) == kKilnFloat32;
  if (state->hybrid) {
    int dimension = 0;
    if (!GetQuantization(value, &state->scales, &state->zero_points, &dimension) ||
        (state->scales.size() != 1 &&
         (dimension != 0 || static_cast<int64_t>(state->scales.size()) != TensorDims(value)[0]))) {
      KilnOpaqueContextReportError(context,
                                   "%s: %s value %s needs one scale, or one per row along dimension 0, to give "
                                   "float32 output %s",
                                   op, KilnTypeGetName(state->value_type), TensorLabel(value).c_str(),
                                   TensorLabel(output).c_str());
      return kKilnError;
    }
    for (int32_t zero_point : state->zero_points) {
      if (zero_point != 0) {  // LiteRT's hybrid lookup is symmetric and refuses the model too
        KilnOpaqueContextReportError(context, "%s: %s value %s has zero point %d; a table giving float32 output %s "
                                     "must be symmetric (zero point 0)",
                                     op, KilnTypeGetName(state->value_type), TensorLabel(value).c_str(), zero_point,
                                     TensorLabel(output).c_str());
        return kKilnError;
      }
    }
    state->element_size = 4;
  } else {
    KILN_OPAQUE_ENSURE_STATUS(CheckMovedTypes(context, op, value, output, MovedTypes(), &state->element_size));
  }
  Dims output_dims;
  std::string error;
  if (!reference::MakeGatherParams(TensorDims(value), TensorDims(lookup), 0, 0, &state->params, &output_dims,
                                   &error)) {
    KilnOpaqueContextReportError(context, "%s: value %s, lookup %s: %s", op, TensorLabel(value).c_str(),
                                 TensorLabel(lookup).c_str(), error.c_str());
    return kKilnError;
  }
  state->axis = 0;
  return ResizeOutput(context, op, output, output_dims);
}

KilnStatus EmbeddingLookupInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "EMBEDDING_LOOKUP";
  KILN_OPS_GET_STATE(EmbeddingLookupState, state, context, node, op);
  if (!state->hybrid) return RunGather(context, node, op, *state, 1, "value", 0, "lookup");
  const reference::GatherParams& p = state->params;
  const KilnOpaqueTensor* lookup = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* value = KilnOpaqueNodeGetInput(context, node, 1);
  const int32_t* ids;
  float* output;
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "lookup", lookup, p.num_indices, &ids));
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "output", KilnOpaqueNodeGetOutput(context, node, 0), p.num_indices * p.inner, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "value", value, p.axis_size * p.inner, 1));
  const auto* bytes = static_cast<const uint8_t*>(KilnOpaqueTensorData(value));
  for (int64_t i = 0; i < p.num_indices; ++i) {
    int32_t id;
    std::memcpy(&id, ids + i, sizeof(id));
    if (id < 0 || id >= p.axis_size) {
      KilnOpaqueContextReportError(context, "%s: id %d at position %lld of lookup %s is out of range [0, %lld) for "
                                   "the rows of value %s",
                                   op, id, static_cast<long long>(i), TensorLabel(lookup).c_str(),
                                   static_cast<long long>(p.axis_size), TensorLabel(value).c_str());
      return kKilnError;
    }
    const size_t channel = state->scales.size() == 1 ? 0 : static_cast<size_t>(id);
    const float scale = state->scales[channel];
    const uint8_t* row = bytes + id * p.inner;
    for (int64_t k = 0; k < p.inner; ++k) {
      const int32_t q = static_cast<int8_t>(row[k]);  // uint8 tables too: LiteRT reads their bytes as int8
      output[i * p.inner + k] = scale * static_cast<float>(q);
    }
  }
  return kKilnOk;
}

}  // namespace

void AddSliceOps(std::vector<BuiltinOp>* table) {
  // LiteRT registers STRIDED_SLICE v1-v8, SLICE v1-v6, EXPAND_DIMS v1, GATHER v1-v6 (later versions add
  // types, ranks and options, not other float semantics).
  table->push_back(
      {kKilnBuiltinStridedSlice, 1, 8,
       MakeOperator<SliceState>(kKilnBuiltinStridedSlice, 8, &StridedSlicePrepare, &StridedSliceInvoke)});
  table->push_back(
      {kKilnBuiltinSlice, 1, 6, MakeOperator<SliceState>(kKilnBuiltinSlice, 6, &SlicePrepare, &SliceInvoke)});
  table->push_back({kKilnBuiltinExpandDims, 1, 1,
                    MakeOperator<NoState>(kKilnBuiltinExpandDims, 1, &ExpandDimsPrepare, &ExpandDimsInvoke)});
  table->push_back({kKilnBuiltinGather, 1, 6,
                    MakeOperator<GatherState>(kKilnBuiltinGather, 6, &GatherPrepare, &GatherInvoke)});
  // EMBEDDING_LOOKUP: LiteRT's v1-v3 (float32 and the uint8/int8 hybrid tables; v4's int4 tables are not here).
  table->push_back({kKilnBuiltinEmbeddingLookup, 1, 3,
                    MakeOperator<EmbeddingLookupState>(kKilnBuiltinEmbeddingLookup, 3, &EmbeddingLookupPrepare,
                                                       &EmbeddingLookupInvoke)});
}

}  // namespace kiln::ops
