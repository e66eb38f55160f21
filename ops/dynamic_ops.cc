// WHERE and UNIQUE: operators whose output shape depends on the input's values. Their output is dynamic (see
// KilnOpaqueTensorSetAllocationTypeToDynamic): sized at Invoke, once the values are known, as LiteRT does.
// A WHERE of a constant is sized in Prepare instead.
#include <cstdint>
#include <cstring>
#include <string>
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

}  // namespace

void AddDynamicOps(std::vector<BuiltinOp>* table) {
  // LiteRT 2.3.0 registers WHERE v1-v2 (v2 adds condition types) and UNIQUE v1.
  table->push_back({kKilnBuiltinWhere, 1, 2, MakeOperator<NoState>(kKilnBuiltinWhere, 2, &WherePrepare, &WhereInvoke)});
  table->push_back(
      {kKilnBuiltinUnique, 1, 1, MakeOperator<NoState>(kKilnBuiltinUnique, 1, &UniquePrepare, &UniqueInvoke)});
}

}  // namespace kiln::ops
