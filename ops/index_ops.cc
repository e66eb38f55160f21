// ONE_HOT, GATHER_ND, SCATTER_ND, RANGE, TOPK_V2, the UNSORTED_SEGMENT ops and ADD_N: operators that build or
// read tensors by index (and ADD_N's plain sum).
// Index inputs are int32 or int64 and are read as int64; an index out of range fails Invoke naming it and its
// position, never reads or writes out of bounds.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/index.h"

namespace kiln::ops {
namespace {

size_t ElementSize(KilnType type) {
  switch (type) {
    case kKilnFloat32:
    case kKilnInt32: return 4;
    case kKilnInt64: return 8;
    case kKilnInt16: return 2;
    case kKilnInt8:
    case kKilnUInt8:
    case kKilnBool: return 1;
    default: return 0;
  }
}

KilnStatus CheckIndexType(KilnOpaqueContext* context, const char* op, const char* role, const KilnOpaqueTensor* tensor,
                          bool int64_ok) {
  const KilnType type = KilnOpaqueTensorType(tensor);
  if (type == kKilnInt32 || (int64_ok && type == kKilnInt64)) return kKilnOk;
  KilnOpaqueContextReportError(context, "%s: %s %s has type %s; expected int32%s", op, role,
                               TensorLabel(tensor).c_str(), KilnTypeGetName(type), int64_ok ? " or int64" : "");
  return kKilnError;
}

KilnStatus CheckSingleValue(KilnOpaqueContext* context, const char* op, const char* role,
                            const KilnOpaqueTensor* tensor) {
  if (reference::NumElements(TensorDims(tensor)) == 1) return kKilnOk;
  KilnOpaqueContextReportError(context, "%s: %s %s has shape %s; expected a single value", op, role,
                               TensorLabel(tensor).c_str(), DimsToString(TensorDims(tensor)).c_str());
  return kKilnError;
}

// The message for an index entry outside [0, dim) at flat position `bad` of `indices`.
KilnStatus ReportBadIndex(KilnOpaqueContext* context, const char* op, const reference::GatherNdParams& p,
                          const std::vector<int64_t>& indices, int64_t bad, const KilnOpaqueTensor* index_tensor,
                          const char* target_role, const KilnOpaqueTensor* target) {
  const int64_t d = bad % p.depth;
  KilnOpaqueContextReportError(context,
                               "%s: index %lld at position %lld of indices %s is out of range [0, %lld) for "
                               "dimension %lld of %s %s",
                               op, static_cast<long long>(indices[static_cast<size_t>(bad)]),
                               static_cast<long long>(bad), TensorLabel(index_tensor).c_str(),
                               static_cast<long long>(p.dims[static_cast<size_t>(d)]), static_cast<long long>(d),
                               target_role, TensorLabel(target).c_str());
  return kKilnError;
}

// ---- ONE_HOT ----

struct OneHotState {
  int axis = 0;
  int64_t depth = 0;
  int64_t outer = 1, inner = 1;
  size_t element_size = 0;
  bool dynamic = false;  // depth computed at run time: Invoke sizes the output
};

// Sizes ONE_HOT's output from depth's value (constant in Prepare, or at Invoke).
KilnStatus OneHotSize(KilnOpaqueContext* context, KilnOpaqueNode* node, OneHotState* state) {
  constexpr const char* op = "ONE_HOT";
  const KilnOpaqueTensor* indices = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* depth = KilnOpaqueNodeGetInput(context, node, 1);
  std::vector<int64_t> depth_value;
  KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "depth", depth, &depth_value));
  const auto* options = static_cast<const KilnOneHotParams*>(KilnOpaqueNodeGetBuiltinData(node));
  const int axis = options != nullptr ? options->axis : 0;  // the schema's default, as LiteRT
  const Dims index_dims = TensorDims(indices);
  Dims output_dims;
  std::string error;
  if (depth_value.size() != 1 ||
      !reference::OneHotOutputShape(index_dims, axis, depth_value[0], &output_dims, &state->axis, &error)) {
    KilnOpaqueContextReportError(context, "%s: indices %s, depth %s: %s", op, TensorLabel(indices).c_str(),
                                 TensorLabel(depth).c_str(),
                                 depth_value.size() != 1 ? "expected a single value" : error.c_str());
    return kKilnError;
  }
  state->depth = depth_value[0];
  state->outer = reference::NumElements(Dims(index_dims.begin(), index_dims.begin() + state->axis));
  state->inner = reference::NumElements(Dims(index_dims.begin() + state->axis, index_dims.end()));
  return ResizeOutput(context, op, KilnOpaqueNodeGetOutput(context, node, 0), output_dims);
}

KilnStatus OneHotPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "ONE_HOT";
  KILN_OPS_GET_STATE(OneHotState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 4, 4, 1));
  const KilnOpaqueTensor *indices, *depth, *on, *off;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "indices", &indices));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "depth", &depth));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 2, "on_value", &on));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 3, "off_value", &off));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckIndexType(context, op, "indices", indices, true));
  KILN_OPAQUE_ENSURE_STATUS(CheckIndexType(context, op, "depth", depth, true));
  KILN_OPAQUE_ENSURE_STATUS(CheckSingleValue(context, op, "depth", depth));
  KILN_OPAQUE_ENSURE_STATUS(CheckSingleValue(context, op, "on_value", on));
  KILN_OPAQUE_ENSURE_STATUS(CheckSingleValue(context, op, "off_value", off));
  const KilnType type = KilnOpaqueTensorType(output);
  state->element_size = ElementSize(type);
  if (state->element_size == 0 || type == kKilnInt16) {
    KilnOpaqueContextReportError(context,
                                 "%s: output %s has type %s; expected float32, int32, int64, int8, uint8 or bool", op,
                                 TensorLabel(output).c_str(), KilnTypeGetName(type));
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "on_value", on, type));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "off_value", off, type));
  state->dynamic = !IsConstant(depth);  // a run-time depth: a dynamic output, sized at Invoke (as LiteRT)
  if (state->dynamic) return MakeOutputDynamic(context, op, output);
  return OneHotSize(context, node, state);
}

KilnStatus OneHotInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "ONE_HOT";
  KILN_OPS_GET_STATE(OneHotState, state, context, node, op);
  if (state->dynamic) KILN_OPAQUE_ENSURE_STATUS(OneHotSize(context, node, state));
  const KilnOpaqueTensor* indices = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* on = KilnOpaqueNodeGetInput(context, node, 2);
  const KilnOpaqueTensor* off = KilnOpaqueNodeGetInput(context, node, 3);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  const int64_t out_count = state->outer * state->depth * state->inner;
  if (out_count == 0) return kKilnOk;
  std::vector<int64_t> index_values;
  KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "indices", indices, &index_values));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "on_value", on, 1, state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "off_value", off, 1, state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, out_count, state->element_size));
  if (static_cast<int64_t>(index_values.size()) != state->outer * state->inner) {
    KilnOpaqueContextReportError(context, "%s: indices %s hold %zu values; expected %lld", op,
                                 TensorLabel(indices).c_str(), index_values.size(),
                                 static_cast<long long>(state->outer * state->inner));
    return kKilnError;
  }
  // A bool on/off value is copied as a byte normalised to 0/1 (any non-zero byte is true).
  uint8_t on_bytes[8], off_bytes[8];
  std::memcpy(on_bytes, KilnOpaqueTensorData(on), state->element_size);
  std::memcpy(off_bytes, KilnOpaqueTensorData(off), state->element_size);
  if (KilnOpaqueTensorType(output) == kKilnBool) {
    on_bytes[0] = on_bytes[0] != 0;
    off_bytes[0] = off_bytes[0] != 0;
  }
  reference::OneHot(index_values.data(), state->outer, state->depth, state->inner, on_bytes, off_bytes,
                    state->element_size, KilnOpaqueTensorData(output));
  return kKilnOk;
}

// ---- GATHER_ND ----

struct GatherNdState {
  reference::GatherNdParams params;
  size_t element_size = 0;
  int64_t params_count = 0, output_count = 0;
};

KilnStatus GatherNdPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "GATHER_ND";
  KILN_OPS_GET_STATE(GatherNdState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 1));
  const KilnOpaqueTensor *params, *indices;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "params", &params));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "indices", &indices));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckMovedTypes(context, op, params, output, MovedTypes(), &state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckIndexType(context, op, "indices", indices, true));
  Dims output_dims;
  std::string error;
  if (!reference::MakeGatherNdParams(TensorDims(params), TensorDims(indices), &state->params, &output_dims, &error)) {
    KilnOpaqueContextReportError(context, "%s: params %s, indices %s: %s", op, TensorLabel(params).c_str(),
                                 TensorLabel(indices).c_str(), error.c_str());
    return kKilnError;
  }
  state->params_count = reference::NumElements(TensorDims(params));
  state->output_count = reference::NumElements(output_dims);
  return ResizeOutput(context, op, output, output_dims);
}

KilnStatus GatherNdInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "GATHER_ND";
  KILN_OPS_GET_STATE(GatherNdState, state, context, node, op);
  const reference::GatherNdParams& p = state->params;
  const KilnOpaqueTensor* params = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* indices = KilnOpaqueNodeGetInput(context, node, 1);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  if (p.count == 0) return kKilnOk;
  std::vector<int64_t> index_values;
  KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "indices", indices, &index_values));
  if (static_cast<int64_t>(index_values.size()) != p.count * p.depth) {
    KilnOpaqueContextReportError(context, "%s: indices %s hold %zu values; expected %lld", op,
                                 TensorLabel(indices).c_str(), index_values.size(),
                                 static_cast<long long>(p.count * p.depth));
    return kKilnError;
  }
  if (state->output_count == 0) return kKilnOk;
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "params", params, state->params_count, state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, state->output_count, state->element_size));
  int64_t bad = -1;
  if (!reference::GatherNdCopy(p, state->element_size, KilnOpaqueTensorData(params), index_values.data(),
                               KilnOpaqueTensorData(output), &bad)) {
    return ReportBadIndex(context, op, p, index_values, bad, indices, "params", params);
  }
  return kKilnOk;
}

// ---- SCATTER_ND ----

struct ScatterNdState {
  reference::GatherNdParams params;
  int64_t output_count = 0;
  bool dynamic = false;  // shape computed at run time: Invoke plans and sizes the output
};

// Plans SCATTER_ND from shape's values (each >= 0) and sizes the output.
KilnStatus ScatterNdSize(KilnOpaqueContext* context, KilnOpaqueNode* node, ScatterNdState* state) {
  constexpr const char* op = "SCATTER_ND";
  const KilnOpaqueTensor* indices = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* updates = KilnOpaqueNodeGetInput(context, node, 1);
  const KilnOpaqueTensor* shape = KilnOpaqueNodeGetInput(context, node, 2);
  std::vector<int64_t> shape_values;
  KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "shape", shape, &shape_values));
  for (size_t d = 0; d < shape_values.size(); ++d) {
    if (shape_values[d] < 0) {
      KilnOpaqueContextReportError(context, "%s: shape %s holds %lld at %zu; dimensions must be non-negative", op,
                                   TensorLabel(shape).c_str(), static_cast<long long>(shape_values[d]), d);
      return kKilnError;
    }
  }
  const Dims output_dims(shape_values.begin(), shape_values.end());
  std::string error;
  if (!reference::MakeScatterNdParams(output_dims, TensorDims(indices), TensorDims(updates), &state->params, &error)) {
    KilnOpaqueContextReportError(context, "%s: shape %s, indices %s, updates %s: %s", op, TensorLabel(shape).c_str(),
                                 TensorLabel(indices).c_str(), TensorLabel(updates).c_str(), error.c_str());
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(ResizeOutput(context, op, KilnOpaqueNodeGetOutput(context, node, 0), output_dims));
  state->output_count = reference::NumElements(output_dims);
  return kKilnOk;
}

KilnStatus ScatterNdPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "SCATTER_ND";
  KILN_OPS_GET_STATE(ScatterNdState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 3, 3, 1));
  const KilnOpaqueTensor *indices, *updates, *shape;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "indices", &indices));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "updates", &updates));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 2, "shape", &shape));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckIndexType(context, op, "indices", indices, false));
  KILN_OPAQUE_ENSURE_STATUS(CheckIndexType(context, op, "shape", shape, false));
  const KilnType type = KilnOpaqueTensorType(updates);
  if (type != kKilnFloat32 && type != kKilnInt32 && type != kKilnInt64 && type != kKilnInt8 && type != kKilnUInt8 &&
      type != kKilnBool) {
    KilnOpaqueContextReportError(context,
                                 "%s: updates %s have type %s; expected float32, int32, int64, int8, uint8 or bool", op,
                                 TensorLabel(updates).c_str(), KilnTypeGetName(type));
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "output", output, type));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "shape", shape, 1, 1));
  state->dynamic = !IsConstant(shape);  // a run-time shape: a dynamic output, sized at Invoke (as LiteRT)
  if (state->dynamic) return MakeOutputDynamic(context, op, output);
  return ScatterNdSize(context, node, state);
}

template <typename T>
bool RunScatterNd(const reference::GatherNdParams& p, const std::vector<int64_t>& indices, const void* updates,
                  int64_t output_count, void* output, int64_t* bad) {
  return reference::ScatterNd(p, indices.data(), static_cast<const T*>(updates), output_count, static_cast<T*>(output),
                              bad);
}

KilnStatus ScatterNdInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "SCATTER_ND";
  KILN_OPS_GET_STATE(ScatterNdState, state, context, node, op);
  if (state->dynamic) KILN_OPAQUE_ENSURE_STATUS(ScatterNdSize(context, node, state));
  const reference::GatherNdParams& p = state->params;
  const KilnOpaqueTensor* indices = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* updates = KilnOpaqueNodeGetInput(context, node, 1);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  if (state->output_count == 0) return kKilnOk;
  const KilnType type = KilnOpaqueTensorType(updates);
  const size_t element_size = ElementSize(type);
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, state->output_count, element_size));
  std::vector<int64_t> index_values;
  if (p.count != 0) {
    KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "indices", indices, &index_values));
    if (static_cast<int64_t>(index_values.size()) != p.count * p.depth) {
      KilnOpaqueContextReportError(context, "%s: indices %s hold %zu values; expected %lld", op,
                                   TensorLabel(indices).c_str(), index_values.size(),
                                   static_cast<long long>(p.count * p.depth));
      return kKilnError;
    }
    KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "updates", updates, p.count * p.slice, element_size));
  }
  const void* in = p.count != 0 ? KilnOpaqueTensorData(updates) : nullptr;
  void* out = KilnOpaqueTensorData(output);
  // Update data may sit unaligned in a model file: copy it into aligned memory first.
  std::vector<int64_t> aligned;
  if (in != nullptr && reinterpret_cast<uintptr_t>(in) % element_size != 0) {
    const size_t bytes = static_cast<size_t>(p.count * p.slice) * element_size;
    aligned.resize((bytes + 7) / 8);
    std::memcpy(aligned.data(), in, bytes);
    in = aligned.data();
  }
  int64_t bad = -1;
  bool ok = true;
  switch (type) {
    case kKilnFloat32: ok = RunScatterNd<float>(p, index_values, in, state->output_count, out, &bad); break;
    case kKilnInt32: ok = RunScatterNd<int32_t>(p, index_values, in, state->output_count, out, &bad); break;
    case kKilnInt64: ok = RunScatterNd<int64_t>(p, index_values, in, state->output_count, out, &bad); break;
    case kKilnInt8: ok = RunScatterNd<int8_t>(p, index_values, in, state->output_count, out, &bad); break;
    case kKilnUInt8: ok = RunScatterNd<uint8_t>(p, index_values, in, state->output_count, out, &bad); break;
    default:  // bool (checked in Prepare)
      ok = reference::ScatterNdBool(p, index_values.data(), static_cast<const uint8_t*>(in), state->output_count,
                                    static_cast<uint8_t*>(out), &bad);
      break;
  }
  if (!ok) return ReportBadIndex(context, op, p, index_values, bad, indices, "output", output);
  return kKilnOk;
}

// ---- ADD_N ----

KilnStatus AddNPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "ADD_N";
  const int count = KilnOpaqueNodeNumberOfInputs(node);
  if (count < 2) {
    KilnOpaqueContextReportError(context, "%s: has %d inputs; expected at least 2", op, count);
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, count, count, 1));
  const KilnOpaqueTensor* first;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &first));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  const KilnType type = KilnOpaqueTensorType(first);
  if (type != kKilnFloat32 && type != kKilnInt32) {
    KilnOpaqueContextReportError(context, "%s: input 0 %s has type %s; expected float32 or int32", op,
                                 TensorLabel(first).c_str(), KilnTypeGetName(type));
    return kKilnError;
  }
  const Dims dims = TensorDims(first);
  for (int i = 1; i < count; ++i) {
    const KilnOpaqueTensor* input;
    KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, i, "input", &input));
    if (KilnOpaqueTensorType(input) != type) {
      KilnOpaqueContextReportError(context, "%s: input %d %s has type %s; input 0 %s has %s", op, i,
                                   TensorLabel(input).c_str(), KilnTypeGetName(KilnOpaqueTensorType(input)),
                                   TensorLabel(first).c_str(), KilnTypeGetName(type));
      return kKilnError;
    }
    if (TensorDims(input) != dims) {
      KilnOpaqueContextReportError(context, "%s: input %d %s has shape %s; input 0 %s has %s (no broadcasting)", op, i,
                                   TensorLabel(input).c_str(), DimsToString(TensorDims(input)).c_str(),
                                   TensorLabel(first).c_str(), DimsToString(dims).c_str());
      return kKilnError;
    }
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "output", output, type));
  return ResizeOutput(context, op, output, dims);
}

template <typename T>
KilnStatus RunAddN(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, int64_t count) {
  const int n = KilnOpaqueNodeNumberOfInputs(node);
  std::vector<const T*> inputs(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    KILN_OPAQUE_ENSURE_STATUS(
        GetTypedData(context, op, "input", KilnOpaqueNodeGetInput(context, node, i), count, &inputs[i]));
  }
  T* output;
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "output", KilnOpaqueNodeGetOutput(context, node, 0), count, &output));
  reference::AddN(inputs, count, output);
  return kKilnOk;
}

KilnStatus AddNInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "ADD_N";
  const KilnOpaqueTensor* first = KilnOpaqueNodeGetInput(context, node, 0);
  const int64_t count = reference::NumElements(TensorDims(first));
  if (count == 0) return kKilnOk;
  if (KilnOpaqueTensorType(first) == kKilnFloat32) return RunAddN<float>(context, node, op, count);
  return RunAddN<int32_t>(context, node, op, count);
}

// ---- RANGE ----

struct RangeState {
  int64_t count = 0;
  int64_t int_start = 0, int_delta = 0;
  float float_start = 0, float_delta = 0;
  bool dynamic = false;  // an input computed at run time: Invoke counts and sizes the output
};

template <typename T>
KilnStatus PrepareRangeCount(KilnOpaqueContext* context, const char* op, const KilnOpaqueTensor* const* inputs,
                             RangeState* state) {
  T values[3];
  for (int k = 0; k < 3; ++k) std::memcpy(&values[k], KilnOpaqueTensorData(inputs[k]), sizeof(T));
  std::string error;
  if (!reference::RangeCount<T>(values[0], values[1], values[2], &state->count, &error)) {
    KilnOpaqueContextReportError(context, "%s: start %s, limit %s, delta %s: %s", op, TensorLabel(inputs[0]).c_str(),
                                 TensorLabel(inputs[1]).c_str(), TensorLabel(inputs[2]).c_str(), error.c_str());
    return kKilnError;
  }
  if constexpr (std::is_same_v<T, float>) {
    state->float_start = values[0];
    state->float_delta = values[2];
  } else {
    state->int_start = values[0];
    state->int_delta = values[2];
  }
  return kKilnOk;
}

KilnStatus RangeSize(KilnOpaqueContext* context, const KilnOpaqueTensor* const* inputs, KilnOpaqueTensor* output,
                     RangeState* state);

KilnStatus RangePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "RANGE";
  KILN_OPS_GET_STATE(RangeState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 3, 3, 1));
  const KilnOpaqueTensor* inputs[3];
  static constexpr const char* kRoles[3] = {"start", "limit", "delta"};
  for (int k = 0; k < 3; ++k) KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, k, kRoles[k], &inputs[k]));
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  const KilnType type = KilnOpaqueTensorType(inputs[0]);
  if (type != kKilnInt32 && type != kKilnInt64 && type != kKilnFloat32) {
    KilnOpaqueContextReportError(context, "%s: start %s has type %s; expected int32, int64 or float32", op,
                                 TensorLabel(inputs[0]).c_str(), KilnTypeGetName(type));
    return kKilnError;
  }
  for (int k = 0; k < 3; ++k) {
    KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, kRoles[k], inputs[k], type));
    KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, kRoles[k], inputs[k], 0, 0));  // scalars, as LiteRT
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "output", output, type));
  // An input computed at run time: a dynamic output, counted and sized at Invoke (as LiteRT).
  state->dynamic = !IsConstant(inputs[0]) || !IsConstant(inputs[1]) || !IsConstant(inputs[2]);
  if (state->dynamic) return MakeOutputDynamic(context, op, output);
  return RangeSize(context, inputs, output, state);
}

KilnStatus RangeSize(KilnOpaqueContext* context, const KilnOpaqueTensor* const* inputs, KilnOpaqueTensor* output,
                     RangeState* state) {
  constexpr const char* op = "RANGE";
  static constexpr const char* kRoles[3] = {"start", "limit", "delta"};
  const KilnType type = KilnOpaqueTensorType(inputs[0]);
  for (int k = 0; k < 3; ++k) {
    KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, kRoles[k], inputs[k], 1, ElementSize(type)));
  }
  if (type == kKilnInt32) {
    KILN_OPAQUE_ENSURE_STATUS(PrepareRangeCount<int32_t>(context, op, inputs, state));
  } else if (type == kKilnInt64) {
    KILN_OPAQUE_ENSURE_STATUS(PrepareRangeCount<int64_t>(context, op, inputs, state));
  } else {
    KILN_OPAQUE_ENSURE_STATUS(PrepareRangeCount<float>(context, op, inputs, state));
  }
  return ResizeOutput(context, op, output, Dims{state->count});
}

KilnStatus RangeInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "RANGE";
  KILN_OPS_GET_STATE(RangeState, state, context, node, op);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  if (state->dynamic) {
    const KilnOpaqueTensor* inputs[3] = {KilnOpaqueNodeGetInput(context, node, 0),
                                         KilnOpaqueNodeGetInput(context, node, 1),
                                         KilnOpaqueNodeGetInput(context, node, 2)};
    KILN_OPAQUE_ENSURE_STATUS(RangeSize(context, inputs, output, state));
  }
  if (state->count == 0) return kKilnOk;
  switch (KilnOpaqueTensorType(output)) {
    case kKilnInt32: {
      int32_t* out;
      KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "output", output, state->count, &out));
      reference::Range<int32_t>(static_cast<int32_t>(state->int_start), static_cast<int32_t>(state->int_delta),
                                state->count, out);
      return kKilnOk;
    }
    case kKilnInt64: {
      int64_t* out;
      KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "output", output, state->count, &out));
      reference::Range<int64_t>(state->int_start, state->int_delta, state->count, out);
      return kKilnOk;
    }
    default: {
      float* out;
      KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "output", output, state->count, &out));
      reference::Range<float>(state->float_start, state->float_delta, state->count, out);
      return kKilnOk;
    }
  }
}

// ---- TOPK_V2 ----

struct TopKState {
  int64_t rows = 0, n = 0, k = 0;
  bool dynamic = false;  // k computed at run time: Invoke sizes the outputs
};

// Sizes TOPK_V2's outputs from k's value (constant in Prepare, or at Invoke).
KilnStatus TopKSize(KilnOpaqueContext* context, KilnOpaqueNode* node, TopKState* state) {
  constexpr const char* op = "TOPK_V2";
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* k = KilnOpaqueNodeGetInput(context, node, 1);
  std::vector<int64_t> k_value;
  KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "k", k, &k_value));
  Dims dims = TensorDims(input);
  state->n = dims.back();
  if (k_value.size() != 1 || k_value[0] < 0 || k_value[0] > state->n) {
    KilnOpaqueContextReportError(context, "%s: k %s is %lld; input %s has %lld values along its last dimension", op,
                                 TensorLabel(k).c_str(), static_cast<long long>(k_value.empty() ? -1 : k_value[0]),
                                 TensorLabel(input).c_str(), static_cast<long long>(state->n));
    return kKilnError;
  }
  state->k = k_value[0];
  state->rows = reference::NumElements(Dims(dims.begin(), dims.end() - 1));
  dims.back() = state->k;
  KILN_OPAQUE_ENSURE_STATUS(ResizeOutput(context, op, KilnOpaqueNodeGetOutput(context, node, 0), dims));
  return ResizeOutput(context, op, KilnOpaqueNodeGetOutput(context, node, 1), dims);
}

KilnStatus TopKPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "TOPK_V2";
  KILN_OPS_GET_STATE(TopKState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 2));
  const KilnOpaqueTensor *input, *k;
  KilnOpaqueTensor *values, *indices;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "k", &k));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &values));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 1, &indices));
  const KilnType type = KilnOpaqueTensorType(input);
  if (type != kKilnFloat32 && type != kKilnInt8 && type != kKilnUInt8 && type != kKilnInt16 && type != kKilnInt32 &&
      type != kKilnInt64) {
    KilnOpaqueContextReportError(context,
                                 "%s: input %s has type %s; expected float32, int8, uint8, int16, int32 or "
                                 "int64",
                                 op, TensorLabel(input).c_str(), KilnTypeGetName(type));
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "values output", values, type));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "indices output", indices, kKilnInt32));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "k", k, kKilnInt32));
  KILN_OPAQUE_ENSURE_STATUS(CheckSingleValue(context, op, "k", k));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", input, 1, 8));
  state->dynamic = !IsConstant(k);  // a run-time k: dynamic outputs, sized at Invoke (as LiteRT)
  if (state->dynamic) {
    KILN_OPAQUE_ENSURE_STATUS(MakeOutputDynamic(context, op, values));
    return MakeOutputDynamic(context, op, indices);
  }
  return TopKSize(context, node, state);
}

template <typename T>
KilnStatus RunTopK(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, const TopKState& s) {
  const KilnOpaqueTensor* tensor = KilnOpaqueNodeGetInput(context, node, 0);
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "input", tensor, s.rows * s.n, sizeof(T)));
  // A constant int64 input may sit only 4-byte aligned in the model file: read it from an aligned copy then.
  const void* raw = KilnOpaqueTensorData(tensor);
  std::vector<T> aligned;
  if (reinterpret_cast<uintptr_t>(raw) % alignof(T) != 0) {
    aligned.resize(static_cast<size_t>(s.rows * s.n));
    std::memcpy(aligned.data(), raw, aligned.size() * sizeof(T));
    raw = aligned.data();
  }
  const T* input = static_cast<const T*>(raw);
  T* values;
  int32_t* indices;
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "values output", KilnOpaqueNodeGetOutput(context, node, 0), s.rows * s.k, &values));
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "indices output", KilnOpaqueNodeGetOutput(context, node, 1), s.rows * s.k, &indices));
  reference::TopK(input, s.rows, s.n, s.k, values, indices);
  return kKilnOk;
}

KilnStatus TopKInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "TOPK_V2";
  KILN_OPS_GET_STATE(TopKState, state, context, node, op);
  if (state->dynamic) KILN_OPAQUE_ENSURE_STATUS(TopKSize(context, node, state));
  if (state->rows * state->k == 0) return kKilnOk;
  switch (KilnOpaqueTensorType(KilnOpaqueNodeGetInput(context, node, 0))) {
    case kKilnFloat32: return RunTopK<float>(context, node, op, *state);
    case kKilnInt8: return RunTopK<int8_t>(context, node, op, *state);
    case kKilnUInt8: return RunTopK<uint8_t>(context, node, op, *state);
    case kKilnInt16: return RunTopK<int16_t>(context, node, op, *state);
    case kKilnInt32: return RunTopK<int32_t>(context, node, op, *state);
    default: return RunTopK<int64_t>(context, node, op, *state);
  }
}

// ---- UNSORTED_SEGMENT_SUM, _PROD, _MAX, _MIN: data rows folded by segment id (reference::UnsortedSegment).

using reference::SegmentOp;

constexpr const char* SegmentName(SegmentOp op) {
  switch (op) {
    case SegmentOp::kSum: return "UNSORTED_SEGMENT_SUM";
    case SegmentOp::kProd: return "UNSORTED_SEGMENT_PROD";
    case SegmentOp::kMax: return "UNSORTED_SEGMENT_MAX";
    case SegmentOp::kMin: return "UNSORTED_SEGMENT_MIN";
  }
  return "?";
}

struct SegmentState {
  int64_t num_ids = 0, inner = 1, num_segments = 0;
  KilnType type = kKilnFloat32;
  bool dynamic = false;  // num_segments computed at run time: Invoke sizes the output
};

// Reads num_segments (>= 0) and sizes the output [num_segments] + data's remaining dimensions.
KilnStatus SegmentSize(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, SegmentState* state) {
  const KilnOpaqueTensor* data = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* ids = KilnOpaqueNodeGetInput(context, node, 1);
  const KilnOpaqueTensor* num = KilnOpaqueNodeGetInput(context, node, 2);
  std::vector<int64_t> values;
  KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "num_segments", num, &values));
  if (values.size() != 1 || values[0] < 0 || values[0] > INT32_MAX) {
    KilnOpaqueContextReportError(context, "%s: num_segments %s is %lld; expected >= 0", op, TensorLabel(num).c_str(),
                                 static_cast<long long>(values.empty() ? -1 : values[0]));
    return kKilnError;
  }
  state->num_segments = values[0];
  const Dims data_dims = TensorDims(data);
  const Dims row(data_dims.begin() + static_cast<std::ptrdiff_t>(TensorDims(ids).size()), data_dims.end());
  Dims out_dims = {state->num_segments};
  out_dims.insert(out_dims.end(), row.begin(), row.end());
  return ResizeOutput(context, op, KilnOpaqueNodeGetOutput(context, node, 0), out_dims);
}

template <SegmentOp kOp>
KilnStatus SegmentPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = SegmentName(kOp);
  KILN_OPS_GET_STATE(SegmentState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 3, 3, 1));
  const KilnOpaqueTensor *data, *ids, *num;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "data", &data));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "segment_ids", &ids));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 2, "num_segments", &num));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  state->type = KilnOpaqueTensorType(data);
  if (state->type != kKilnFloat32 && state->type != kKilnInt32) {
    KilnOpaqueContextReportError(context, "%s: data %s has type %s; expected float32 or int32", op,
                                 TensorLabel(data).c_str(), KilnTypeGetName(state->type));
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "output", output, state->type));
  KILN_OPAQUE_ENSURE_STATUS(CheckIndexType(context, op, "segment_ids", ids, false));
  KILN_OPAQUE_ENSURE_STATUS(CheckIndexType(context, op, "num_segments", num, false));
  KILN_OPAQUE_ENSURE_STATUS(CheckSingleValue(context, op, "num_segments", num));
  // segment_ids' shape must begin data's: each id picks a row of the remaining dimensions.
  const Dims data_dims = TensorDims(data), id_dims = TensorDims(ids);
  if (id_dims.size() > data_dims.size() || !std::equal(id_dims.begin(), id_dims.end(), data_dims.begin())) {
    KilnOpaqueContextReportError(context, "%s: segment_ids %s %s must be a leading part of data %s's shape %s", op,
                                 TensorLabel(ids).c_str(), DimsToString(id_dims).c_str(), TensorLabel(data).c_str(),
                                 DimsToString(data_dims).c_str());
    return kKilnError;
  }
  state->num_ids = reference::NumElements(id_dims);
  const Dims row(data_dims.begin() + static_cast<std::ptrdiff_t>(id_dims.size()), data_dims.end());
  state->inner = reference::NumElements(row);
  state->dynamic = !IsConstant(num);  // a run-time num_segments: a dynamic output, sized at Invoke (as LiteRT)
  if (state->dynamic) return MakeOutputDynamic(context, op, output);
  return SegmentSize(context, node, op, state);
}

template <SegmentOp kOp>
KilnStatus SegmentInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = SegmentName(kOp);
  KILN_OPS_GET_STATE(SegmentState, state, context, node, op);
  if (state->dynamic) KILN_OPAQUE_ENSURE_STATUS(SegmentSize(context, node, op, state));
  const KilnOpaqueTensor* ids_tensor = KilnOpaqueNodeGetInput(context, node, 1);
  const int32_t* raw_ids;
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "segment_ids", ids_tensor, state->num_ids, &raw_ids));
  std::vector<int32_t> ids(static_cast<size_t>(state->num_ids));  // aligned copy: model data may sit anywhere
  if (!ids.empty()) std::memcpy(ids.data(), raw_ids, ids.size() * sizeof(int32_t));
  const auto run = [&](auto type_tag) {
    using T = decltype(type_tag);
    const T* data;
    T* output;
    KILN_OPAQUE_ENSURE_STATUS(GetInvokeData(context, node, op, state->num_ids * state->inner,
                                            state->num_segments * state->inner, &data, &output));
    int64_t bad = -1;
    if (!reference::UnsortedSegment<T>(kOp, data, ids.data(), state->num_ids, state->inner, state->num_segments,
                                       output, &bad)) {
      KilnOpaqueContextReportError(context,
                                   "%s: segment id %d at position %lld of segment_ids %s is not below num_segments "
                                   "%lld",
                                   op, ids[static_cast<size_t>(bad)], static_cast<long long>(bad),
                                   TensorLabel(ids_tensor).c_str(), static_cast<long long>(state->num_segments));
      return kKilnError;
    }
    return kKilnOk;
  };
  return state->type == kKilnInt32 ? run(int32_t{}) : run(float{});
}

template <SegmentOp kOp>
void AddSegmentOp(std::vector<BuiltinOp>* table, KilnBuiltinOperator code) {
  table->push_back(
      {code, 1, 1, MakeOperator<SegmentState>(code, 1, &SegmentPrepare<kOp>, &SegmentInvoke<kOp>)});
}

}  // namespace

void AddIndexOps(std::vector<BuiltinOp>* table) {
  // LiteRT 2.3.0 registers ONE_HOT v1, GATHER_ND v1-v6, SCATTER_ND v1, ADD_N v1 (later GATHER_ND versions add
  // element and index types, not other semantics).
  table->push_back(
      {kKilnBuiltinOneHot, 1, 1, MakeOperator<OneHotState>(kKilnBuiltinOneHot, 1, &OneHotPrepare, &OneHotInvoke)});
  table->push_back({kKilnBuiltinGatherNd, 1, 6,
                    MakeOperator<GatherNdState>(kKilnBuiltinGatherNd, 6, &GatherNdPrepare, &GatherNdInvoke)});
  table->push_back({kKilnBuiltinScatterNd, 1, 1,
                    MakeOperator<ScatterNdState>(kKilnBuiltinScatterNd, 1, &ScatterNdPrepare, &ScatterNdInvoke)});
  // RANGE v1-v2, TOPK_V2 v1-v3 (v3's int16 indices output is not here).
  table->push_back(
      {kKilnBuiltinRange, 1, 2, MakeOperator<RangeState>(kKilnBuiltinRange, 2, &RangePrepare, &RangeInvoke)});
  table->push_back(
      {kKilnBuiltinTopkV2, 1, 3, MakeOperator<TopKState>(kKilnBuiltinTopkV2, 3, &TopKPrepare, &TopKInvoke)});
  table->push_back({kKilnBuiltinAddN, 1, 1, MakeOperator<NoState>(kKilnBuiltinAddN, 1, &AddNPrepare, &AddNInvoke)});
  // The UNSORTED_SEGMENT ops: v1 only (measured: LiteRT 2.3.0 refuses v2), float32 and int32.
  AddSegmentOp<SegmentOp::kSum>(table, kKilnBuiltinUnsortedSegmentSum);
  AddSegmentOp<SegmentOp::kProd>(table, kKilnBuiltinUnsortedSegmentProd);
  AddSegmentOp<SegmentOp::kMax>(table, kKilnBuiltinUnsortedSegmentMax);
  AddSegmentOp<SegmentOp::kMin>(table, kKilnBuiltinUnsortedSegmentMin);
}

}  // namespace kiln::ops
