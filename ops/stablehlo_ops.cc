// The StableHLO elementwise builtins LiteRT 2.3.0's resolver serves: STABLEHLO_ADD, STABLEHLO_MULTIPLY,
// STABLEHLO_MAXIMUM, STABLEHLO_MINIMUM, STABLEHLO_AND and STABLEHLO_SHIFT_LEFT. Two inputs of one shape (StableHLO
// does not broadcast) and one type, the output the same. Integer sums and products wrap (two's complement); bool
// ADD and MAXIMUM are OR, MULTIPLY and MINIMUM are AND, with any non-zero byte true.
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/matrix.h"

namespace kiln::ops {
namespace {

enum class HloOp { kAdd, kMultiply, kMaximum, kMinimum, kAnd, kShiftLeft };

constexpr const char* HloName(HloOp op) {
  switch (op) {
    case HloOp::kAdd: return "STABLEHLO_ADD";
    case HloOp::kMultiply: return "STABLEHLO_MULTIPLY";
    case HloOp::kMaximum: return "STABLEHLO_MAXIMUM";
    case HloOp::kMinimum: return "STABLEHLO_MINIMUM";
    case HloOp::kAnd: return "STABLEHLO_AND";
    case HloOp::kShiftLeft: return "STABLEHLO_SHIFT_LEFT";
  }
  return "?";
}

// The types LiteRT's kernels take (measured): the arithmetic ops every numeric type Kiln has but float16, AND the
// integers and bool, SHIFT_LEFT int8, int16 and int32.
bool HloTakes(HloOp op, KilnType type) {
  switch (type) {
    case kKilnInt8:
    case kKilnInt16:
    case kKilnInt32: return true;
    case kKilnFloat32: return op != HloOp::kAnd && op != HloOp::kShiftLeft;
    case kKilnUInt8:
    case kKilnUInt16:
    case kKilnUInt32:
    case kKilnInt64:
    case kKilnBool: return op != HloOp::kShiftLeft;
    default: return false;
  }
}

template <HloOp kOp, typename T>
T Apply(T a, T b) {
  if constexpr (kOp == HloOp::kMaximum) {
    return a < b ? b : a;  // std::max's order: max(NaN, x) is NaN, max(x, NaN) is x, as LiteRT
  } else if constexpr (kOp == HloOp::kMinimum) {
    return b < a ? b : a;  // std::min's order
  } else if constexpr (std::is_floating_point_v<T>) {
    return kOp == HloOp::kAdd ? a + b : a * b;
  } else if constexpr (kOp == HloOp::kShiftLeft) {
    // LiteRT shifts the int-promoted value by the raw count, undefined outside [0, bits): measured, its vectorised
    // and scalar loops then give different values by element position. Kiln follows StableHLO's definition (0).
    return reference::ShiftLeft<T>(a, b);
  } else if constexpr (kOp == HloOp::kAnd) {
    return static_cast<T>(a & b);
  } else if constexpr (kOp == HloOp::kAdd) {
    return reference::WrappingAdd<T>(a, b);
  } else {
    return reference::WrappingMul<T>(a, b);
  }
}

struct HloState {
  int64_t count = 0;
  KilnType type = kKilnFloat32;
};

template <HloOp kOp>
KilnStatus HloPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = HloName(kOp);
  KILN_OPS_GET_STATE(HloState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 1));
  const KilnOpaqueTensor *a, *b;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input 0", &a));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "input 1", &b));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  state->type = KilnOpaqueTensorType(a);
  if (!HloTakes(kOp, state->type)) {
    KilnOpaqueContextReportError(context, "%s: input 0 %s has type %s, which %s does not take", op,
                                 TensorLabel(a).c_str(), KilnTypeGetName(state->type), op);
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "input 1", b, state->type));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "output", output, state->type));
  const Dims dims = TensorDims(a);
  if (TensorDims(b) != dims) {
    KilnOpaqueContextReportError(context, "%s: input shapes %s (%s) and %s (%s) differ; StableHLO ops do not broadcast",
                                 op, DimsToString(dims).c_str(), TensorLabel(a).c_str(),
                                 DimsToString(TensorDims(b)).c_str(), TensorLabel(b).c_str());
    return kKilnError;
  }
  state->count = reference::NumElements(dims);
  return ResizeOutput(context, op, output, dims);
}

template <HloOp kOp, typename T>
KilnStatus RunHlo(KilnOpaqueContext* context, KilnOpaqueNode* node, int64_t count) {
  constexpr const char* op = HloName(kOp);
  const T *a, *b;
  T* out;
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "input 0", KilnOpaqueNodeGetInput(context, node, 0), count, &a));
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "input 1", KilnOpaqueNodeGetInput(context, node, 1), count, &b));
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "output", KilnOpaqueNodeGetOutput(context, node, 0), count, &out));
  if constexpr (std::is_same_v<T, bool>) {
    // Bool as bytes: any non-zero byte is true; OR for ADD and MAXIMUM, AND for MULTIPLY, MINIMUM and AND.
    const auto* ua = reinterpret_cast<const uint8_t*>(a);
    const auto* ub = reinterpret_cast<const uint8_t*>(b);
    auto* uo = reinterpret_cast<uint8_t*>(out);
    constexpr bool kOr = kOp == HloOp::kAdd || kOp == HloOp::kMaximum;
    for (int64_t i = 0; i < count; ++i) uo[i] = kOr ? (ua[i] != 0 || ub[i] != 0) : (ua[i] != 0 && ub[i] != 0);
  } else {
    for (int64_t i = 0; i < count; ++i) out[i] = Apply<kOp, T>(a[i], b[i]);
  }
  return kKilnOk;
}

template <HloOp kOp>
KilnStatus HloInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = HloName(kOp);
  KILN_OPS_GET_STATE(HloState, state, context, node, op);
  const int64_t n = state->count;
  if (n == 0) return kKilnOk;
  switch (state->type) {
    case kKilnInt8: return RunHlo<kOp, int8_t>(context, node, n);
    case kKilnInt16: return RunHlo<kOp, int16_t>(context, node, n);
    case kKilnInt32: return RunHlo<kOp, int32_t>(context, node, n);
    default: break;
  }
  if constexpr (kOp != HloOp::kShiftLeft) {
    switch (state->type) {
      case kKilnUInt8: return RunHlo<kOp, uint8_t>(context, node, n);
      case kKilnUInt16: return RunHlo<kOp, uint16_t>(context, node, n);
      case kKilnUInt32: return RunHlo<kOp, uint32_t>(context, node, n);
      case kKilnInt64: return RunHlo<kOp, int64_t>(context, node, n);
      case kKilnBool: return RunHlo<kOp, bool>(context, node, n);
      default: break;
    }
  }
  if constexpr (kOp != HloOp::kShiftLeft && kOp != HloOp::kAnd) return RunHlo<kOp, float>(context, node, n);
  KilnOpaqueContextReportError(context, "%s: unexpected type %s", op, KilnTypeGetName(state->type));
  return kKilnError;
}

template <HloOp kOp>
void AddHlo(std::vector<BuiltinOp>* table, KilnBuiltinOperator code) {
  table->push_back({code, 1, 1, MakeOperator<HloState>(code, 1, &HloPrepare<kOp>, &HloInvoke<kOp>)});
}

}  // namespace

void AddStablehloOps(std::vector<BuiltinOp>* table) {
  // LiteRT 2.3.0's builtin resolver serves these StableHLO elementwise ops at v1 (measured in its Interpreter; its
  // other StableHLO builtins are GATHER, SCATTER, PAD, REDUCE_WINDOW, CASE, COMPOSITE and RNG_BIT_GENERATOR).
  AddHlo<HloOp::kAdd>(table, kKilnBuiltinStablehloAdd);
  AddHlo<HloOp::kMultiply>(table, kKilnBuiltinStablehloMultiply);
  AddHlo<HloOp::kMaximum>(table, kKilnBuiltinStablehloMaximum);
  AddHlo<HloOp::kMinimum>(table, kKilnBuiltinStablehloMinimum);
  AddHlo<HloOp::kAnd>(table, kKilnBuiltinStablehloAnd);
  AddHlo<HloOp::kShiftLeft>(table, kKilnBuiltinStablehloShiftLeft);
}

}  // namespace kiln::ops
