// WHERE, UNIQUE and NON_MAX_SUPPRESSION_V4/V5: operators whose output shape depends on the input's values. Their output
// is dynamic (see KilnOpaqueTensorSetAllocationTypeToDynamic): sized at Invoke, once the values are known, as LiteRT
// does. A WHERE of a constant is sized in Prepare instead.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/dynamic.h"

namespace kiln::ops {
namespace {

// Calls fn(T{}) with T the C type of `type`'s elements (bool as uint8_t bytes); false for other types.
template <typename Fn>
bool DispatchWhereType(KilnType type, Fn&& fn) {
  switch (type) {
    case kKilnBool:
    case kKilnUInt8: fn(uint8_t{}); return true;
    case kKilnFloat32: fn(float{}); return true;
    case kKilnInt32: fn(int32_t{}); return true;
    case kKilnInt64: fn(int64_t{}); return true;
    case kKilnInt8: fn(int8_t{}); return true;
    case kKilnUInt32: fn(uint32_t{}); return true;
    default: return false;
  }
}

size_t WhereElementSize(KilnType type) {
  size_t size = 0;
  DispatchWhereType(type, [&](auto t) { size = sizeof(t); });
  return size;
}

// Sizes WHERE's output [count of non-zero elements, rank] from the condition's data.
KilnStatus WhereResize(KilnOpaqueContext* context, const KilnOpaqueTensor* input, KilnOpaqueTensor* output,
                       const void** data) {
  constexpr const char* kOp = "WHERE";
  const Dims dims = TensorDims(input);
  const int64_t count = reference::NumElements(dims);
  const KilnType type = KilnOpaqueTensorType(input);
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, kOp, "condition", input, count, WhereElementSize(type)));
  *data = KilnOpaqueTensorData(input);
  int64_t true_count = 0;
  DispatchWhereType(
      type, [&](auto t) { true_count = reference::CountNonZero(static_cast<const decltype(t)*>(*data), count); });
  return ResizeOutput(context, kOp, output, {true_count, static_cast<int64_t>(dims.size())});
}

KilnStatus WherePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* kOp = "WHERE";
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, kOp, 1, 1, 1));
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, kOp, 0, "condition", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, kOp, 0, &output));
  if (WhereElementSize(KilnOpaqueTensorType(input)) == 0) {
    KilnOpaqueContextReportError(context,
                                 "%s: condition %s has type %s; Kiln implements it for bool, float32, int32, int64, "
                                 "int8, uint8 and uint32 (as LiteRT)",
                                 kOp, TensorLabel(input).c_str(), KilnTypeGetName(KilnOpaqueTensorType(input)));
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, kOp, "output", output, kKilnInt64));
  if (KilnOpaqueTensorNumDims(input) < 1) {  // LiteRT fails such a model at Invoke
    KilnOpaqueContextReportError(context, "%s: condition %s has rank 0; WHERE needs rank >= 1 (as LiteRT)", kOp,
                                 TensorLabel(input).c_str());
    return kKilnError;
  }
  if (IsConstant(input)) {
    const void* data;
    return WhereResize(context, input, output, &data);
  }
  return MakeOutputDynamic(context, kOp, output);
}

KilnStatus WhereInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* kOp = "WHERE";
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  const void* data;
  KILN_OPAQUE_ENSURE_STATUS(WhereResize(context, input, output, &data));
  const Dims out_dims = TensorDims(output);
  int64_t* coordinates;
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, kOp, "output", output, reference::NumElements(out_dims), &coordinates));
  DispatchWhereType(KilnOpaqueTensorType(input), [&](auto t) {
    reference::WhereCoordinates(static_cast<const decltype(t)*>(data), TensorDims(input), coordinates);
  });
  return kKilnOk;
}

// UNIQUE: value types as LiteRT's kernel; the index type is the idx output's type (int32 or int64), which the
// model's idx_out_type option names.
template <typename Fn>
bool DispatchUniqueType(KilnType type, Fn&& fn) {
  switch (type) {
    case kKilnFloat32: fn(float{}); return true;
    case kKilnInt8: fn(int8_t{}); return true;
    case kKilnUInt8: fn(uint8_t{}); return true;
    case kKilnInt16: fn(int16_t{}); return true;
    case kKilnInt32: fn(int32_t{}); return true;
    case kKilnInt64: fn(int64_t{}); return true;
    default: return false;
  }
}

KilnStatus UniquePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* kOp = "UNIQUE";
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, kOp, 1, 1, 2));
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* values;
  KilnOpaqueTensor* indices;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, kOp, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, kOp, 0, &values));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, kOp, 1, &indices));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, kOp, "input", input, 1, 1));
  const KilnType type = KilnOpaqueTensorType(input);
  if (!DispatchUniqueType(type, [](auto) {})) {
    KilnOpaqueContextReportError(context,
                                 "%s: input %s has type %s; Kiln implements it for float32, int8, uint8, int16, "
                                 "int32 and int64 (as LiteRT)",
                                 kOp, TensorLabel(input).c_str(), KilnTypeGetName(type));
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, kOp, "output", values, type));
  const KilnType index_type = KilnOpaqueTensorType(indices);
  if (index_type != kKilnInt32 && index_type != kKilnInt64) {
    KilnOpaqueContextReportError(context, "%s: idx output %s has type %s; it must be int32 or int64", kOp,
                                 TensorLabel(indices).c_str(), KilnTypeGetName(index_type));
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(ResizeOutput(context, kOp, indices, TensorDims(input)));
  return MakeOutputDynamic(context, kOp, values);
}

template <typename T, typename Index>
KilnStatus UniqueTyped(KilnOpaqueContext* context, const KilnOpaqueTensor* input, KilnOpaqueTensor* values,
                       KilnOpaqueTensor* indices) {
  constexpr const char* kOp = "UNIQUE";
  const int64_t count = reference::NumElements(TensorDims(input));
  const T* in;
  Index* idx;
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, kOp, "input", input, count, &in));
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, kOp, "idx output", indices, count, &idx));
  std::vector<T> distinct;
  reference::Unique(in, count, &distinct, idx);
  const int64_t n = static_cast<int64_t>(distinct.size());
  KILN_OPAQUE_ENSURE_STATUS(ResizeOutput(context, kOp, values, {n}));
  T* out;
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, kOp, "output", values, n, &out));
  if (n > 0) std::memcpy(out, distinct.data(), distinct.size() * sizeof(T));
  return kKilnOk;
}

KilnStatus UniqueInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  KilnOpaqueTensor* values = KilnOpaqueNodeGetOutput(context, node, 0);
  KilnOpaqueTensor* indices = KilnOpaqueNodeGetOutput(context, node, 1);
  const bool index64 = KilnOpaqueTensorType(indices) == kKilnInt64;
  KilnStatus status = kKilnError;
  DispatchUniqueType(KilnOpaqueTensorType(input), [&](auto t) {
    using T = decltype(t);
    status = index64 ? UniqueTyped<T, int64_t>(context, input, values, indices)
                     : UniqueTyped<T, int32_t>(context, input, values, indices);
  });
  return status;
}

// NON_MAX_SUPPRESSION_V4 (v5: true): boxes [n, 4], scores [n], max_output_size, iou_threshold, score_threshold
// (, soft_nms_sigma) -> selected_indices [max_output_size] (, selected_scores), valid_outputs (a scalar). The
// selected outputs are dynamic when max_output_size is computed at run time.
struct NmsState {
  bool dynamic = false;
};

KilnStatus NmsPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node, bool v5) {
  const char* op = v5 ? "NON_MAX_SUPPRESSION_V5" : "NON_MAX_SUPPRESSION_V4";
  KILN_OPS_GET_STATE(NmsState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, v5 ? 6 : 5, v5 ? 6 : 5, v5 ? 3 : 2));
  const KilnOpaqueTensor *boxes, *scores, *max_size, *iou, *score_threshold, *sigma = nullptr;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "boxes", &boxes));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "scores", &scores));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 2, "max_output_size", &max_size));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 3, "iou_threshold", &iou));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 4, "score_threshold", &score_threshold));
  if (v5) KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 5, "soft_nms_sigma", &sigma));
  KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "boxes", boxes));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "boxes", boxes, 2, 2));
  const Dims box_dims = TensorDims(boxes);
  if (box_dims[1] != 4) {
    KilnOpaqueContextReportError(context, "%s: boxes %s has shape %s; expected [num_boxes, 4]", op,
                                 TensorLabel(boxes).c_str(), DimsToString(box_dims).c_str());
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "scores", scores));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "scores", scores, 1, 1));
  if (TensorDims(scores)[0] != box_dims[0]) {
    KilnOpaqueContextReportError(context, "%s: scores %s has %lld values for %lld boxes in %s", op,
                                 TensorLabel(scores).c_str(), static_cast<long long>(TensorDims(scores)[0]),
                                 static_cast<long long>(box_dims[0]), TensorLabel(boxes).c_str());
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "max_output_size", max_size, kKilnInt32));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "max_output_size", max_size, 0, 0));
  const std::pair<const char*, const KilnOpaqueTensor*> scalars[] = {
      {"iou_threshold", iou}, {"score_threshold", score_threshold}, {"soft_nms_sigma", sigma}};
  for (const auto& [role, tensor] : scalars) {
    if (tensor == nullptr) continue;
    KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, role, tensor));
    KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, role, tensor, 0, 0));
  }
  KilnOpaqueTensor* indices;
  KilnOpaqueTensor* valid;
  KilnOpaqueTensor* selected_scores = nullptr;
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &indices));
  if (v5) KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 1, &selected_scores));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, v5 ? 2 : 1, &valid));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "selected_indices output", indices, kKilnInt32));
  if (v5) KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "selected_scores output", selected_scores));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "valid_outputs output", valid, kKilnInt32));
  KILN_OPAQUE_ENSURE_STATUS(ResizeOutput(context, op, valid, Dims{}));
  state->dynamic = !IsConstant(max_size);  // then the selected outputs are sized at Invoke (as LiteRT)
  if (state->dynamic) {
    KILN_OPAQUE_ENSURE_STATUS(MakeOutputDynamic(context, op, indices));
    return v5 ? MakeOutputDynamic(context, op, selected_scores) : kKilnOk;
  }
  const int32_t* size;
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "max_output_size", max_size, 1, &size));
  if (*size < 0) {
    KilnOpaqueContextReportError(context, "%s: max_output_size %s is %d; it must be >= 0", op,
                                 TensorLabel(max_size).c_str(), *size);
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(ResizeOutput(context, op, indices, Dims{*size}));
  return v5 ? ResizeOutput(context, op, selected_scores, Dims{*size}) : kKilnOk;
}

KilnStatus NmsInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node, bool v5) {
  const char* op = v5 ? "NON_MAX_SUPPRESSION_V5" : "NON_MAX_SUPPRESSION_V4";
  KILN_OPS_GET_STATE(NmsState, state, context, node, op);
  const KilnOpaqueTensor* boxes = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* scores = KilnOpaqueNodeGetInput(context, node, 1);
  const KilnOpaqueTensor* max_size = KilnOpaqueNodeGetInput(context, node, 2);
  KilnOpaqueTensor* indices = KilnOpaqueNodeGetOutput(context, node, 0);
  KilnOpaqueTensor* selected_scores = v5 ? KilnOpaqueNodeGetOutput(context, node, 1) : nullptr;
  KilnOpaqueTensor* valid = KilnOpaqueNodeGetOutput(context, node, v5 ? 2 : 1);
  const int32_t* size;
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "max_output_size", max_size, 1, &size));
  if (*size < 0) {
    KilnOpaqueContextReportError(context, "%s: max_output_size %s is %d; it must be >= 0", op,
                                 TensorLabel(max_size).c_str(), *size);
    return kKilnError;
  }
  if (state->dynamic) {
    KILN_OPAQUE_ENSURE_STATUS(ResizeOutput(context, op, indices, Dims{*size}));
    if (v5) KILN_OPAQUE_ENSURE_STATUS(ResizeOutput(context, op, selected_scores, Dims{*size}));
  }
  const int64_t n = TensorDims(boxes)[0];
  const int64_t out_count = reference::NumElements(TensorDims(indices));
  if (out_count != *size) {  // a constant max_output_size sized the output in Prepare
    KilnOpaqueContextReportError(context, "%s: selected_indices %s holds %lld values, not max_output_size %d", op,
                                 TensorLabel(indices).c_str(), static_cast<long long>(out_count), *size);
    return kKilnError;
  }
  const float *box_data, *score_data, *iou, *score_threshold, *sigma = nullptr;
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "boxes", boxes, n * 4, &box_data));
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "scores", scores, n, &score_data));
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "iou_threshold", KilnOpaqueNodeGetInput(context, node, 3), 1, &iou));
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "score_threshold", KilnOpaqueNodeGetInput(context, node, 4), 1, &score_threshold));
  if (v5) {
    KILN_OPAQUE_ENSURE_STATUS(
        GetTypedData(context, op, "soft_nms_sigma", KilnOpaqueNodeGetInput(context, node, 5), 1, &sigma));
    if (!(*sigma >= 0.0f)) {
      KilnOpaqueContextReportError(context, "%s: soft_nms_sigma %s is %g; it must be >= 0 (as LiteRT)", op,
                                   TensorLabel(KilnOpaqueNodeGetInput(context, node, 5)).c_str(),
                                   static_cast<double>(*sigma));
      return kKilnError;
    }
  }
  int32_t* out_indices;
  float* out_scores = nullptr;
  int32_t* out_valid;
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "selected_indices output", indices, *size, &out_indices));
  if (v5)
    KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "selected_scores output", selected_scores, *size, &out_scores));
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "valid_outputs output", valid, 1, &out_valid));
  if (n > INT32_MAX) {
    KilnOpaqueContextReportError(context, "%s: boxes %s has too many boxes", op, TensorLabel(boxes).c_str());
    return kKilnError;
  }
  // Unused entries are zero, as LiteRT leaves them.
  if (*size > 0) std::memset(out_indices, 0, static_cast<size_t>(*size) * sizeof(int32_t));
  if (out_scores != nullptr && *size > 0) std::memset(out_scores, 0, static_cast<size_t>(*size) * sizeof(float));
  *out_valid = reference::NonMaxSuppression(box_data, static_cast<int>(n), score_data, *size, *iou, *score_threshold,
                                            sigma != nullptr ? *sigma : 0.0f, out_indices, out_scores);
  return kKilnOk;
}

KilnStatus NmsV4Prepare(KilnOpaqueContext* context, KilnOpaqueNode* node) { return NmsPrepare(context, node, false); }
KilnStatus NmsV4Invoke(KilnOpaqueContext* context, KilnOpaqueNode* node) { return NmsInvoke(context, node, false); }
KilnStatus NmsV5Prepare(KilnOpaqueContext* context, KilnOpaqueNode* node) { return NmsPrepare(context, node, true); }
KilnStatus NmsV5Invoke(KilnOpaqueContext* context, KilnOpaqueNode* node) { return NmsInvoke(context, node, true); }

// BROADCAST_ARGS: two 1-D int32 or int64 shapes (computed at run time or not) -> their broadcast shape, of the
// longer one's length (known in Prepare); shapes that do not broadcast fail Invoke naming both tensors.
KilnStatus BroadcastArgsPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* kOp = "BROADCAST_ARGS";
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, kOp, 2, 2, 1));
  const KilnOpaqueTensor *a, *b;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, kOp, 0, "s0", &a));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, kOp, 1, "s1", &b));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, kOp, 0, &output));
  const KilnType type = KilnOpaqueTensorType(a);
  if (type != kKilnInt32 && type != kKilnInt64) {
    KilnOpaqueContextReportError(context, "%s: s0 %s has type %s; expected int32 or int64", kOp, TensorLabel(a).c_str(),
                                 KilnTypeGetName(type));
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, kOp, "s1", b, type));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, kOp, "output", output, type));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, kOp, "s0", a, 1, 1));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, kOp, "s1", b, 1, 1));
  return ResizeOutput(context, kOp, output, Dims{std::max(TensorDims(a)[0], TensorDims(b)[0])});
}

template <typename T>
KilnStatus BroadcastArgsTyped(KilnOpaqueContext* context, const KilnOpaqueTensor* a, const KilnOpaqueTensor* b,
                              KilnOpaqueTensor* output) {
  constexpr const char* kOp = "BROADCAST_ARGS";
  const int64_t na = TensorDims(a)[0], nb = TensorDims(b)[0];
  const T *pa, *pb;
  T* out;
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, kOp, "s0", a, na, &pa));
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, kOp, "s1", b, nb, &pb));
  // Copied: a constant int64 shape may sit only 4-byte aligned in the model file.
  std::vector<T> va(static_cast<size_t>(na)), vb(static_cast<size_t>(nb)), result;
  if (na > 0) std::memcpy(va.data(), static_cast<const void*>(pa), va.size() * sizeof(T));
  if (nb > 0) std::memcpy(vb.data(), static_cast<const void*>(pb), vb.size() * sizeof(T));
  size_t bad = 0;
  if (!reference::BroadcastShapes(va, vb, &result, &bad)) {
    KilnOpaqueContextReportError(context, "%s: shapes s0 %s and s1 %s do not broadcast (output dimension %zu)", kOp,
                                 TensorLabel(a).c_str(), TensorLabel(b).c_str(), bad);
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, kOp, "output", output, static_cast<int64_t>(result.size()), &out));
  if (!result.empty()) std::memcpy(static_cast<void*>(out), result.data(), result.size() * sizeof(T));
  return kKilnOk;
}

KilnStatus BroadcastArgsInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const KilnOpaqueTensor* a = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* b = KilnOpaqueNodeGetInput(context, node, 1);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  return KilnOpaqueTensorType(a) == kKilnInt64 ? BroadcastArgsTyped<int64_t>(context, a, b, output)
                                               : BroadcastArgsTyped<int32_t>(context, a, b, output);
}

}  // namespace

void AddDynamicOps(std::vector<BuiltinOp>* table) {
  // LiteRT 2.3.0 registers WHERE v1-v2 (v2 adds condition types) and UNIQUE v1.
  table->push_back({kKilnBuiltinWhere, 1, 2, MakeOperator<NoState>(kKilnBuiltinWhere, 2, &WherePrepare, &WhereInvoke)});
  table->push_back(
      {kKilnBuiltinUnique, 1, 1, MakeOperator<NoState>(kKilnBuiltinUnique, 1, &UniquePrepare, &UniqueInvoke)});
  // BROADCAST_ARGS v1.
  table->push_back({kKilnBuiltinBroadcastArgs, 1, 1,
                    MakeOperator<NoState>(kKilnBuiltinBroadcastArgs, 1, &BroadcastArgsPrepare, &BroadcastArgsInvoke)});
  // NON_MAX_SUPPRESSION_V4 and V5: v1 each (LiteRT 2.3.0), float32.
  table->push_back({kKilnBuiltinNonMaxSuppressionV4, 1, 1,
                    MakeOperator<NmsState>(kKilnBuiltinNonMaxSuppressionV4, 1, &NmsV4Prepare, &NmsV4Invoke)});
  table->push_back({kKilnBuiltinNonMaxSuppressionV5, 1, 1,
                    MakeOperator<NmsState>(kKilnBuiltinNonMaxSuppressionV5, 1, &NmsV5Prepare, &NmsV5Invoke)});
}

}  // namespace kiln::ops
