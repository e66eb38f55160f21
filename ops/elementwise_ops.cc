// ADD, SUB, MUL, DIV, ATAN2, MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, PRELU (numpy broadcasting up to 6-D, fused
// activation where the op has one) and the unary activations LOGISTIC, TANH, RELU, RELU6, RELU_N1_TO_1,
// HARD_SWISH, ELU.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kiln/builtin_op_data.h"
#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/elementwise.h"
#include "ops/reference/quantized_elementwise.h"
#include "ops/reference/quantized_int16.h"
#include "ops/reference/quantized_kernels.h"

namespace kiln::ops {
namespace {

using reference::BinaryOp;
using reference::kMaxBroadcastRank;
using reference::UnaryOp;

constexpr const char* BinaryName(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd:
      return "ADD";
    case BinaryOp::kSub:
      return "SUB";
    case BinaryOp::kMul:
      return "MUL";
    case BinaryOp::kDiv:
      return "DIV";
    case BinaryOp::kAtan2:
      return "ATAN2";
    case BinaryOp::kMaximum:
      return "MAXIMUM";
    case BinaryOp::kMinimum:
      return "MINIMUM";
    case BinaryOp::kSquaredDifference:
      return "SQUARED_DIFFERENCE";
    case BinaryOp::kPrelu:
      return "PRELU";
  }
  return "?";
}

struct BinaryState {
  reference::BinaryParams params;
  bool is_int8 = false;  // an 8-bit quantized path: int8, or uint8 (`type`)
  KilnType type = kKilnFloat32;
  reference::AddInt8Params add_int8;  // ADD, SUB
  reference::MulInt8Params mul_int8;
  reference::PreluInt8Params prelu_int8;
};

constexpr bool HasInt8Kernel(BinaryOp op) {
  return op == BinaryOp::kAdd || op == BinaryOp::kSub || op == BinaryOp::kMul || op == BinaryOp::kMaximum ||
         op == BinaryOp::kMinimum || op == BinaryOp::kPrelu;
}
// The ops with a uint8 kernel too (LiteRT's uint8 paths: the int8 arithmetic on uint8 storage), and with an int16
// one (LiteRT's general int16 paths: symmetric tensors, ADD/SUB with left_shift 15).
constexpr bool HasUInt8Kernel(BinaryOp op) { return HasInt8Kernel(op); }
constexpr bool HasInt16Kernel(BinaryOp op) { return HasInt8Kernel(op) && op != BinaryOp::kPrelu; }

bool IsPowerOfTwo(float scale) {
  int exponent = 0;
  return std::frexp(scale, &exponent) == 0.5f;
}

// Fails unless `tensor` is quantized exactly as `reference` (ops that compare or copy stored values).
KilnStatus CheckSameQuantization(KilnOpaqueContext* context, const char* op, const char* role,
                                 const KilnOpaqueTensor* tensor, float scale, int32_t zero_point,
                                 const char* reference_role, const KilnOpaqueTensor* reference,
                                 float reference_scale, int32_t reference_zero_point) {
  if (scale == reference_scale && zero_point == reference_zero_point) return kKilnOk;
  KilnOpaqueContextReportError(context,
                               "%s: int8 %s %s (scale %g, zero point %d) must have the quantization of %s %s "
                               "(scale %g, zero point %d)",
                               op, role, TensorLabel(tensor).c_str(), static_cast<double>(scale),
                               static_cast<int>(zero_point), reference_role, TensorLabel(reference).c_str(),
                               static_cast<double>(reference_scale), static_cast<int>(reference_zero_point));
  return kKilnError;
}

// The int8 part of a binary op's Prepare: reads the three quantizations and fills the op's parameters.
template <BinaryOp kOp>
KilnStatus PrepareBinaryInt8(KilnOpaqueContext* context, const char* op, const KilnOpaqueTensor* a,
                             const KilnOpaqueTensor* b, const KilnOpaqueTensor* output,
                             reference::Activation activation, bool pot_scale_int16, BinaryState* state) {
  float a_scale, b_scale, output_scale;
  int32_t a_zero_point, b_zero_point, output_zero_point;
  const KilnType type = state->type;
  KILN_OPAQUE_ENSURE_STATUS(GetQuantization8(context, op, "input 0", a, type, &a_scale, &a_zero_point));
  // PRELU's alpha has the input's type (int8 or uint8), its own scale and zero point.
  KILN_OPAQUE_ENSURE_STATUS(GetQuantization8(context, op, "input 1", b, type, &b_scale, &b_zero_point));
  KILN_OPAQUE_ENSURE_STATUS(
      GetQuantization8(context, op, "output", output, type, &output_scale, &output_zero_point));
  if (type == kKilnInt16 && kOp != BinaryOp::kMaximum && kOp != BinaryOp::kMinimum) {
    // LiteRT's int16 kernels take symmetric tensors only.
    KILN_OPAQUE_ENSURE_STATUS(GetInt16Quantization(context, op, "input 0", a, &a_scale));
    KILN_OPAQUE_ENSURE_STATUS(GetInt16Quantization(context, op, "input 1", b, &b_scale));
    KILN_OPAQUE_ENSURE_STATUS(GetInt16Quantization(context, op, "output", output, &output_scale));
    if ((kOp == BinaryOp::kAdd || kOp == BinaryOp::kSub) && pot_scale_int16 && IsPowerOfTwo(a_scale) &&
        IsPowerOfTwo(b_scale) && IsPowerOfTwo(output_scale)) {
      KilnOpaqueContextReportError(context,
                                   "%s: int16 output %s: power-of-two scales with pot_scale_int16 select LiteRT's "
                                   "power-of-two int16 kernel, which Kiln does not implement",
                                   op, TensorLabel(output).c_str());
      return kKilnError;
    }
    state->add_int8.left_shift = 15;
  }
  int32_t activation_min = TypeMin(type), activation_max = TypeMax(type);
  if (!reference::QuantizedActivationRange(static_cast<int>(activation), output_scale, output_zero_point,
                                           &activation_min, &activation_max, TypeMin(type), TypeMax(type))) {
    KilnOpaqueContextReportError(context, "%s: the fused activation TANH/SIGMOID has no int8 kernel", op);
    return kKilnError;
  }
  if constexpr (kOp == BinaryOp::kAdd || kOp == BinaryOp::kSub) {
    reference::AddInt8Params& q = state->add_int8;
    q.a_zero_point = a_zero_point;
    q.b_zero_point = b_zero_point;
    q.output_zero_point = output_zero_point;
    q.activation_min = activation_min;
    q.activation_max = activation_max;
    reference::PrepareAddInt8(a_scale, b_scale, output_scale, &q);
  } else if constexpr (kOp == BinaryOp::kMul) {
    reference::MulInt8Params& q = state->mul_int8;
    q.a_zero_point = a_zero_point;
    q.b_zero_point = b_zero_point;
    q.output_zero_point = output_zero_point;
    q.activation_min = activation_min;
    q.activation_max = activation_max;
    reference::PrepareMulInt8(a_scale, b_scale, output_scale, &q);
  } else if constexpr (kOp == BinaryOp::kPrelu) {
    reference::PreluInt8Params& q = state->prelu_int8;
    q.input_zero_point = a_zero_point;
    q.alpha_zero_point = b_zero_point;
    q.output_zero_point = output_zero_point;
    reference::PreparePreluInt8(a_scale, b_scale, output_scale, &q);
  } else {  // MAXIMUM, MINIMUM compare stored values: one quantization for all three
    KILN_OPAQUE_ENSURE_STATUS(CheckSameQuantization(context, op, "input 1", b, b_scale, b_zero_point,
                                                    "input 0", a, a_scale, a_zero_point));
    KILN_OPAQUE_ENSURE_STATUS(CheckSameQuantization(context, op, "output", output, output_scale,
                                                    output_zero_point, "input 0", a, a_scale, a_zero_point));
  }
  return kKilnOk;
}

template <BinaryOp kOp>
KilnStatus BinaryPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = BinaryName(kOp);
  KILN_OPS_GET_STATE(BinaryState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 1));
  const KilnOpaqueTensor* a;
  const KilnOpaqueTensor* b;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input 0", &a));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "input 1", &b));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  state->type = KilnOpaqueTensorType(a);
  state->is_int8 = (HasInt8Kernel(kOp) && state->type == kKilnInt8) ||
                   (HasUInt8Kernel(kOp) && state->type == kKilnUInt8) ||
                   (HasInt16Kernel(kOp) && state->type == kKilnInt16);
  if (!state->is_int8) {
    KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "input 0", a));
    KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "input 1", b));
    KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "output", output));
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input 0", a, 0, kMaxBroadcastRank));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input 1", b, 0, kMaxBroadcastRank));

  // ADD/SUB and MUL/DIV options both start with the activation; the others have none. Absent options mean
  // none.
  KilnFusedActivation fused = kKilnActNone;
  bool pot_scale_int16 = true;  // the schema's default
  if constexpr (kOp == BinaryOp::kAdd || kOp == BinaryOp::kSub) {
    if (auto* options = static_cast<const KilnAddParams*>(KilnOpaqueNodeGetBuiltinData(node))) {
      fused = options->activation;
      pot_scale_int16 = options->pot_scale_int16;
    }
  } else if constexpr (kOp == BinaryOp::kMul || kOp == BinaryOp::kDiv) {
    if (auto* options = static_cast<const KilnMulParams*>(KilnOpaqueNodeGetBuiltinData(node))) {
      fused = options->activation;
    }
  }
  reference::Activation activation;
  KILN_OPAQUE_ENSURE_STATUS(ToActivation(context, op, fused, &activation));
  if (state->is_int8) {
    KILN_OPAQUE_ENSURE_STATUS(PrepareBinaryInt8<kOp>(context, op, a, b, output, activation, pot_scale_int16, state));
  }

  const Dims a_dims = TensorDims(a);
  const Dims b_dims = TensorDims(b);
  if (!reference::MakeBinaryParams(kOp, activation, a_dims, b_dims, &state->params)) {
    KilnOpaqueContextReportError(context, "%s: input shapes %s (%s) and %s (%s) do not broadcast", op,
                                 DimsToString(a_dims).c_str(), TensorLabel(a).c_str(),
                                 DimsToString(b_dims).c_str(), TensorLabel(b).c_str());
    return kKilnError;
  }
  return ResizeOutput(context, op, output, state->params.output_dims);
}

// Invoke of a binary op's 8-bit quantized kernel on storage type T.
template <BinaryOp kOp, typename T>
KilnStatus InvokeBinaryQuantized(KilnOpaqueContext* context, const char* op, const BinaryState& state,
                                 const KilnOpaqueTensor* a, const KilnOpaqueTensor* b, KilnOpaqueTensor* output,
                                 int64_t count) {
  const T *a_data, *b_data;
  T* out_data;
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "input 0", a, reference::NumElements(TensorDims(a)), &a_data));
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "input 1", b, reference::NumElements(TensorDims(b)), &b_data));
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "output", output, count, &out_data));
  if constexpr (kOp == BinaryOp::kAdd) {
    reference::AddQuantized<T>(state.params, state.add_int8, a_data, b_data, out_data);
  } else if constexpr (kOp == BinaryOp::kSub) {
    reference::SubQuantized<T>(state.params, state.add_int8, a_data, b_data, out_data);
  } else if constexpr (kOp == BinaryOp::kMul) {
    reference::MulQuantized<T>(state.params, state.mul_int8, a_data, b_data, out_data);
  } else if constexpr (kOp == BinaryOp::kPrelu) {
    if constexpr (!std::is_same_v<T, int16_t>) {  // PRELU has no int16 kernel: never reached for int16
      reference::PreluQuantized<T>(state.params, state.prelu_int8, a_data, b_data, out_data);
    }
  } else {
    reference::MaximumMinimumQuantized<T>(state.params, a_data, b_data, out_data);
  }
  return kKilnOk;
}

template <BinaryOp kOp>
KilnStatus BinaryInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = BinaryName(kOp);
  KILN_OPS_GET_STATE(BinaryState, state, context, node, op);
  const KilnOpaqueTensor* a = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* b = KilnOpaqueNodeGetInput(context, node, 1);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  const int64_t count = reference::NumElements(state->params.output_dims);
  if (count == 0) return kKilnOk;
  if (state->is_int8) {
    if (state->type == kKilnUInt8) return InvokeBinaryQuantized<kOp, uint8_t>(context, op, *state, a, b, output, count);
    if (state->type == kKilnInt16) return InvokeBinaryQuantized<kOp, int16_t>(context, op, *state, a, b, output, count);
    return InvokeBinaryQuantized<kOp, int8_t>(context, op, *state, a, b, output, count);
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "input 0", a, reference::NumElements(TensorDims(a)), 4));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "input 1", b, reference::NumElements(TensorDims(b)), 4));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, count, 4));
  reference::BinaryFloat(state->params, FloatData(a), FloatData(b), FloatData(output));
  return kKilnOk;
}

constexpr const char* UnaryName(UnaryOp op) {
  switch (op) {
    case UnaryOp::kLogistic:
      return "LOGISTIC";
    case UnaryOp::kTanh:
      return "TANH";
    case UnaryOp::kRelu:
      return "RELU";
    case UnaryOp::kRelu6:
      return "RELU6";
    case UnaryOp::kReluN1To1:
      return "RELU_N1_TO_1";
    case UnaryOp::kRelu0To1:
      return "RELU_0_TO_1";
    case UnaryOp::kHardSwish:
      return "HARD_SWISH";
    case UnaryOp::kElu:
      return "ELU";
    case UnaryOp::kExp:
      return "EXP";
  }
  return "?";
}

// The int8 kernel of a unary op: a requantize with a clamp (RELU, RELU6, RELU_N1_TO_1, LEAKY_RELU), a lookup
// table (LOGISTIC, TANH, ELU) or HARD_SWISH's fixed-point arithmetic.
struct UnaryState {
  // A quantized path: int8, or `type` (uint8: the RELUs, LOGISTIC, TANH, HARD_SWISH, LEAKY_RELU; int16: the
  // RELUs, LEAKY_RELU, LOGISTIC and TANH).
  bool is_int8 = false;
  KilnType type = kKilnFloat32;
  reference::RequantizeClampInt8Params relu;
  reference::LookupTableInt8 table;
  reference::LookupTable<uint8_t> table_uint8;
  reference::HardSwishInt8Params hard_swish;
  reference::LeakyReluInt8Params leaky_relu;
  reference::SigmoidTanhInt16Params sigmoid_tanh_int16;  // LOGISTIC and TANH int16
  reference::Int16Table gelu_int16;                      // GELU int16
};

// The start of an activation's Prepare: one input and one output, both float32, or both int8 (their scales
// and zero points returned); the output shaped as the input.
KilnStatus PrepareActivation(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, bool* is_int8,
                             float* input_scale, int32_t* input_zero_point, float* output_scale,
                             int32_t* output_zero_point, KilnOpaqueTensor** output, bool allow_uint8 = false,
                             KilnType* type = nullptr) {
  const KilnOpaqueTensor* input;
  KilnType quantized = Quantized8InputType(context, node);
  // int16 where the op allows it (`allow_uint8` also allows int16: the RELUs, LOGISTIC and TANH).
  const KilnOpaqueTensor* first = KilnOpaqueNodeNumberOfInputs(node) > 0 ? KilnOpaqueNodeGetInput(context, node, 0)
                                                                          : nullptr;
  if (allow_uint8 && type != nullptr && first != nullptr && KilnOpaqueTensorType(first) == kKilnInt16) {
    quantized = kKilnInt16;
  }
  *is_int8 = quantized == kKilnInt8 || (allow_uint8 && (quantized == kKilnUInt8 || quantized == kKilnInt16));
  if (type != nullptr) *type = *is_int8 ? quantized : kKilnFloat32;
  if (!*is_int8) {
    KILN_OPAQUE_ENSURE_STATUS(GetFloatInputOutput(context, node, op, 1, 1, &input, output));
    return ResizeOutput(context, op, *output, TensorDims(input));
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 1, 1, 1));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, output));
  KILN_OPAQUE_ENSURE_STATUS(GetQuantization8(context, op, "input", input, quantized, input_scale, input_zero_point));
  KILN_OPAQUE_ENSURE_STATUS(
      GetQuantization8(context, op, "output", *output, quantized, output_scale, output_zero_point));
  return ResizeOutput(context, op, *output, TensorDims(input));
}

// The unary ops with a uint8 kernel (LiteRT's uint8 paths: the int8 arithmetic on uint8 storage), and with an
// int16 one (the RELUs: LiteRT's requantize-and-clamp on int16; LOGISTIC and TANH: LiteRT's interpolated sigmoid
// table, quantized_int16.h).
constexpr bool HasUInt8Kernel(UnaryOp op) {
  return op == UnaryOp::kRelu || op == UnaryOp::kRelu6 || op == UnaryOp::kReluN1To1 || op == UnaryOp::kRelu0To1 ||
         op == UnaryOp::kLogistic || op == UnaryOp::kTanh || op == UnaryOp::kHardSwish;
}
constexpr bool HasInt16Kernel(UnaryOp op) {
  return op == UnaryOp::kRelu || op == UnaryOp::kRelu6 || op == UnaryOp::kReluN1To1 || op == UnaryOp::kLogistic ||
         op == UnaryOp::kTanh;
}

// LOGISTIC and TANH int16, LiteRT's Prepare checks: both tensors symmetric, the output quantized 2^-15
// (LOGISTIC: exactly 1/32768; TANH: a power of two within LiteRT's CheckedLog2 tolerance), and an input scale
// whose multiplier LiteRT's arithmetic can hold.
template <UnaryOp kOp>
KilnStatus PrepareSigmoidTanhInt16(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op,
                                   KilnOpaqueTensor* output, UnaryState* state) {
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  float input_scale = 0.0f, output_scale = 0.0f;
  KILN_OPAQUE_ENSURE_STATUS(GetInt16Quantization(context, op, "input", input, &input_scale));
  KILN_OPAQUE_ENSURE_STATUS(GetInt16Quantization(context, op, "output", output, &output_scale));
  int output_log2 = 0;
  const bool output_ok = kOp == UnaryOp::kLogistic
                             ? output_scale == 1.0f / 32768
                             : reference::CheckedLog2(output_scale, &output_log2) && output_log2 == -15;
  if (!output_ok) {
    KilnOpaqueContextReportError(context, "%s: int16 output %s has scale %g; %s needs 2^-15 (1/32768)", op,
                                 TensorLabel(output).c_str(), static_cast<double>(output_scale), op);
    return kKilnError;
  }
  const bool input_ok = kOp == UnaryOp::kLogistic
                            ? reference::PrepareLogisticInt16(input_scale, &state->sigmoid_tanh_int16)
                            : reference::PrepareTanhInt16(input_scale, &state->sigmoid_tanh_int16);
  if (!input_ok) {
    KilnOpaqueContextReportError(context,
                                 "%s: int16 input %s has scale %g, outside the range of LiteRT's int16 %s kernel "
                                 "(its input multiplier, scale * 12288 doubled to above 16383, must fit int32)",
                                 op, TensorLabel(input).c_str(), static_cast<double>(input_scale), op);
    return kKilnError;
  }
  return kKilnOk;
}

template <UnaryOp kOp>
KilnStatus UnaryPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = UnaryName(kOp);
  KILN_OPS_GET_STATE(UnaryState, state, context, node, op);
  KilnOpaqueTensor* output;
  float input_scale = 0.0f, output_scale = 0.0f;
  int32_t input_zero_point = 0, output_zero_point = 0;
  KILN_OPAQUE_ENSURE_STATUS(PrepareActivation(context, node, op, &state->is_int8, &input_scale,
                                              &input_zero_point, &output_scale, &output_zero_point, &output,
                                              HasUInt8Kernel(kOp), &state->type));
  if (state->type == kKilnInt16 && !HasInt16Kernel(kOp)) {
    KilnOpaqueContextReportError(context, "%s: int16 input %s: Kiln has no int16 %s kernel", op,
                                 TensorLabel(KilnOpaqueNodeGetInput(context, node, 0)).c_str(), op);
    return kKilnError;
  }
  if (!state->is_int8) return kKilnOk;
  if constexpr (kOp == UnaryOp::kLogistic || kOp == UnaryOp::kTanh) {
    if (state->type == kKilnInt16) return PrepareSigmoidTanhInt16<kOp>(context, node, op, output, state);
  }
  const int32_t type_min = TypeMin(state->type), type_max = TypeMax(state->type);
  // The table for the input's type.
  const auto prepare_table = [&](reference::LookupFunction f) {
    if (state->type == kKilnUInt8) {
      reference::PrepareLookupTable(f, input_scale, input_zero_point, output_scale, output_zero_point,
                                    &state->table_uint8);
    } else {
      reference::PrepareLookupTableInt8(f, input_scale, input_zero_point, output_scale, output_zero_point,
                                        &state->table);
    }
  };
  using reference::Activation;
  using reference::LookupFunction;
  switch (kOp) {
    case UnaryOp::kRelu:
    case UnaryOp::kRelu6:
    case UnaryOp::kReluN1To1: {
      const Activation clamp = kOp == UnaryOp::kRelu    ? Activation::kRelu
                               : kOp == UnaryOp::kRelu6 ? Activation::kRelu6
                                                        : Activation::kReluN1To1;
      reference::PrepareReluInt8(static_cast<int>(clamp), input_scale, output_scale, input_zero_point,
                                 output_zero_point, &state->relu, type_min, type_max);
      return kKilnOk;
    }
    case UnaryOp::kRelu0To1:
      // LiteRT's QuantizedReluX(0, 1): RELU's requantize, clamped above at 1 quantized as the output.
      reference::PrepareReluInt8(static_cast<int>(Activation::kRelu), input_scale, output_scale, input_zero_point,
                                 output_zero_point, &state->relu, type_min, type_max);
      state->relu.activation_max =
          std::min(type_max, output_zero_point + static_cast<int32_t>(std::round(1.0f / output_scale)));
      return kKilnOk;
    case UnaryOp::kLogistic:
      // LiteRT's int8 LOGISTIC requires this output scale exactly (the converter also sets zero point -128).
      if (output_scale != 1.0f / 256) {
        KilnOpaqueContextReportError(context, "%s: int8 output %s has scale %g; LOGISTIC needs 1/256", op,
                                     TensorLabel(output).c_str(), static_cast<double>(output_scale));
        return kKilnError;
      }
      prepare_table(LookupFunction::kLogistic);
      return kKilnOk;
    case UnaryOp::kTanh:
      prepare_table(LookupFunction::kTanh);
      return kKilnOk;
    case UnaryOp::kElu:
      reference::PrepareLookupTableInt8(LookupFunction::kElu, input_scale, input_zero_point, output_scale,
                                        output_zero_point, &state->table);
      return kKilnOk;
    case UnaryOp::kExp:
      reference::PrepareLookupTableInt8(LookupFunction::kExp, input_scale, input_zero_point, output_scale,
                                        output_zero_point, &state->table);
      return kKilnOk;
    case UnaryOp::kHardSwish:
      state->hard_swish.input_zero_point = input_zero_point;
      state->hard_swish.output_zero_point = output_zero_point;
      if (!reference::PrepareHardSwishInt8(input_scale, output_scale, &state->hard_swish)) {
        KilnOpaqueContextReportError(context,
                                     "%s: %s output %s has scale %g; the quantized kernel needs it above input scale "
                                     "%g / 128 (as LiteRT)",
                                     op, KilnTypeGetName(state->type), TensorLabel(output).c_str(),
                                     static_cast<double>(output_scale), static_cast<double>(input_scale));
        return kKilnError;
      }
      return kKilnOk;
  }
  return kKilnOk;
}

// Invoke of a unary op's quantized kernel on storage type T: int8, uint8 (the ops of HasUInt8Kernel), int16 (the
// RELUs); the same arithmetic on each.
template <UnaryOp kOp, typename T>
KilnStatus InvokeUnaryQuantized(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op,
                                const UnaryState& state, int64_t count) {
  const T* input;
  T* output;
  KILN_OPAQUE_ENSURE_STATUS(GetInvokeData(context, node, op, count, count, &input, &output));
  if constexpr (kOp == UnaryOp::kRelu || kOp == UnaryOp::kRelu6 || kOp == UnaryOp::kReluN1To1 ||
                kOp == UnaryOp::kRelu0To1) {
    reference::RequantizeClampQuantized<T>(state.relu, count, input, output);
  } else if constexpr (std::is_same_v<T, int16_t>) {
    // The RELUs (above), LOGISTIC and TANH have an int16 kernel: Prepare refuses the others.
    if constexpr (kOp == UnaryOp::kLogistic) reference::LogisticInt16(state.sigmoid_tanh_int16, count, input, output);
    if constexpr (kOp == UnaryOp::kTanh) reference::TanhInt16(state.sigmoid_tanh_int16, count, input, output);
  } else if constexpr (kOp == UnaryOp::kHardSwish) {
    reference::HardSwishQuantized<T>(state.hard_swish, count, input, output);
  } else if constexpr (std::is_same_v<T, uint8_t>) {
    reference::Lookup<uint8_t>(state.table_uint8, count, input, output);
  } else {
    reference::LookupInt8(state.table, count, input, output);
  }
  return kKilnOk;
}

template <UnaryOp kOp>
KilnStatus UnaryInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = UnaryName(kOp);
  KILN_OPS_GET_STATE(UnaryState, state, context, node, op);
  const int64_t count = reference::NumElements(TensorDims(KilnOpaqueNodeGetInput(context, node, 0)));
  if (count == 0) return kKilnOk;
  if (state->is_int8) {
    if constexpr (HasInt16Kernel(kOp)) {
      if (state->type == kKilnInt16) return InvokeUnaryQuantized<kOp, int16_t>(context, node, op, *state, count);
    }
    if constexpr (HasUInt8Kernel(kOp)) {
      if (state->type == kKilnUInt8) return InvokeUnaryQuantized<kOp, uint8_t>(context, node, op, *state, count);
    }
    return InvokeUnaryQuantized<kOp, int8_t>(context, node, op, *state, count);
  }
  const float* input;
  float* output;
  KILN_OPAQUE_ENSURE_STATUS(GetFloatInvokeData(context, node, op, count, count, &input, &output));
  reference::UnaryFloat(kOp, count, input, output);
  return kKilnOk;
}

KilnStatus LeakyReluPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "LEAKY_RELU";
  KILN_OPS_GET_STATE(UnaryState, state, context, node, op);
  KilnOpaqueTensor* output;
  float input_scale = 0.0f, output_scale = 0.0f;
  int32_t input_zero_point = 0, output_zero_point = 0;
  KILN_OPAQUE_ENSURE_STATUS(PrepareActivation(context, node, op, &state->is_int8, &input_scale, &input_zero_point,
                                              &output_scale, &output_zero_point, &output,
                                              /*allow_uint8=*/true, &state->type));
  if (state->type == kKilnInt16) {
    // LiteRT's int16 kernel needs both tensors symmetric (zero point 0).
    KILN_OPAQUE_ENSURE_STATUS(
        GetInt16Quantization(context, op, "input", KilnOpaqueNodeGetInput(context, node, 0), &input_scale));
    KILN_OPAQUE_ENSURE_STATUS(GetInt16Quantization(context, op, "output", output, &output_scale));
  }
  if (state->is_int8) {  // int8, uint8 or int16: LiteRT's QuantizeLeakyRelu<T>, one arithmetic
    const auto* options = static_cast<const KilnLeakyReluParams*>(KilnOpaqueNodeGetBuiltinData(node));
    state->leaky_relu.input_zero_point = input_zero_point;
    state->leaky_relu.output_zero_point = output_zero_point;
    reference::PrepareLeakyReluInt8(input_scale, options != nullptr ? options->alpha : 0.0f, output_scale,
                                    &state->leaky_relu);
  }
  return kKilnOk;
}

KilnStatus LeakyReluInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "LEAKY_RELU";
  KILN_OPS_GET_STATE(UnaryState, state, context, node, op);
  const int64_t count = reference::NumElements(TensorDims(KilnOpaqueNodeGetInput(context, node, 0)));
  if (count == 0) return kKilnOk;
  if (state->is_int8) {
    const auto run = [&](auto type_tag) {
      using T = decltype(type_tag);
      const T* input;
      T* output;
      KILN_OPAQUE_ENSURE_STATUS(GetInvokeData(context, node, op, count, count, &input, &output));
      reference::LeakyReluQuantized<T>(state->leaky_relu, count, input, output);
      return kKilnOk;
    };
    if (state->type == kKilnInt16) return run(int16_t{});
    return state->type == kKilnUInt8 ? run(uint8_t{}) : run(int8_t{});
  }
  const float* input;
  float* output;
  KILN_OPAQUE_ENSURE_STATUS(GetFloatInvokeData(context, node, op, count, count, &input, &output));
  const auto* options = static_cast<const KilnLeakyReluParams*>(KilnOpaqueNodeGetBuiltinData(node));
  reference::LeakyReluFloat(options != nullptr ? options->alpha : 0.0f, count, input, output);
  return kKilnOk;
}

// GELU: float32, or int8/uint8 through LiteRT's table of the same float function (either form, the option
// `approximate`), int16 through its 513-entry interpolated table of it.
KilnStatus GeluPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "GELU";
  KILN_OPS_GET_STATE(UnaryState, state, context, node, op);
  KilnOpaqueTensor* output;
  float input_scale = 0.0f, output_scale = 0.0f;
  int32_t input_zero_point = 0, output_zero_point = 0;
  KILN_OPAQUE_ENSURE_STATUS(PrepareActivation(context, node, op, &state->is_int8, &input_scale, &input_zero_point,
                                              &output_scale, &output_zero_point, &output,
                                              /*allow_uint8=*/true, &state->type));
  if (!state->is_int8) return kKilnOk;
  const auto* options = static_cast<const KilnGeluParams*>(KilnOpaqueNodeGetBuiltinData(node));
  const bool approximate = options != nullptr && options->approximate;
  if (state->type == kKilnInt16) {  // LiteRT's 513-entry interpolated table of the float function
    reference::PrepareGeluInt16(approximate, input_scale, input_zero_point, output_scale, output_zero_point,
                                &state->gelu_int16);
    return kKilnOk;
  }
  const auto function = approximate ? reference::LookupFunction::kGeluApproximate : reference::LookupFunction::kGelu;
  if (state->type == kKilnUInt8) {
    reference::PrepareLookupTable(function, input_scale, input_zero_point, output_scale, output_zero_point,
                                  &state->table_uint8);
  } else {
    reference::PrepareLookupTableInt8(function, input_scale, input_zero_point, output_scale, output_zero_point,
                                      &state->table);
  }
  return kKilnOk;
}

KilnStatus GeluInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "GELU";
  KILN_OPS_GET_STATE(UnaryState, state, context, node, op);
  const int64_t count = reference::NumElements(TensorDims(KilnOpaqueNodeGetInput(context, node, 0)));
  if (count == 0) return kKilnOk;
  if (state->type == kKilnUInt8) {
    const uint8_t* input;
    uint8_t* output;
    KILN_OPAQUE_ENSURE_STATUS(GetInvokeData(context, node, op, count, count, &input, &output));
    reference::Lookup<uint8_t>(state->table_uint8, count, input, output);
    return kKilnOk;
  }
  if (state->type == kKilnInt16) {
    const int16_t* input;
    int16_t* output;
    KILN_OPAQUE_ENSURE_STATUS(GetInvokeData(context, node, op, count, count, &input, &output));
    reference::LookupInt16(state->gelu_int16, count, input, output);
    return kKilnOk;
  }
  if (state->is_int8) {
    const int8_t* input;
    int8_t* output;
    KILN_OPAQUE_ENSURE_STATUS(GetInvokeData(context, node, op, count, count, &input, &output));
    reference::LookupInt8(state->table, count, input, output);
    return kKilnOk;
  }
  const float* input;
  float* output;
  KILN_OPAQUE_ENSURE_STATUS(GetFloatInvokeData(context, node, op, count, count, &input, &output));
  const auto* options = static_cast<const KilnGeluParams*>(KilnOpaqueNodeGetBuiltinData(node));
  reference::GeluFloat(options != nullptr && options->approximate, count, input, output);
  return kKilnOk;
}

// LiteRT's ADD, SUB, DIV and SQUARED_DIFFERENCE set their output's type to input 1's in Prepare.
constexpr bool OutputTakesInputType(BinaryOp op) {
  return op == BinaryOp::kAdd || op == BinaryOp::kSub || op == BinaryOp::kDiv ||
         op == BinaryOp::kSquaredDifference;
}

template <BinaryOp kOp>
void AddBinary(std::vector<BuiltinOp>* table, KilnBuiltinOperator code, int min_version, int max_version) {
  table->push_back({code, min_version, max_version,
                    MakeOperator<BinaryState>(code, max_version, &BinaryPrepare<kOp>, &BinaryInvoke<kOp>),
                    OutputTakesInputType(kOp) ? 1 : -1});
}

template <UnaryOp kOp>
void AddUnary(std::vector<BuiltinOp>* table, KilnBuiltinOperator code, int min_version, int max_version) {
  table->push_back({code, min_version, max_version,
                    MakeOperator<UnaryState>(code, max_version, &UnaryPrepare<kOp>, &UnaryInvoke<kOp>)});
}

// ---- Float32 math of one input (LiteRT's float kernels): ABS, NEG, SQRT, RSQRT, SQUARE, LOG, SIN, COS, FLOOR,
// CEIL, ROUND. Other input types are refused at Prepare, naming the tensor.

enum class MathOp { kAbs, kNeg, kSqrt, kRsqrt, kSquare, kLog, kSin, kCos, kFloor, kCeil, kRound };

constexpr const char* MathName(MathOp op) {
  switch (op) {
    case MathOp::kAbs: return "ABS";
    case MathOp::kNeg: return "NEG";
    case MathOp::kSqrt: return "SQRT";
    case MathOp::kRsqrt: return "RSQRT";
    case MathOp::kSquare: return "SQUARE";
    case MathOp::kLog: return "LOG";
    case MathOp::kSin: return "SIN";
    case MathOp::kCos: return "COS";
    case MathOp::kFloor: return "FLOOR";
    case MathOp::kCeil: return "CEIL";
    case MathOp::kRound: return "ROUND";
  }
  return "?";
}

template <MathOp kOp>
float ApplyMath(float x) {
  switch (kOp) {
    case MathOp::kAbs: return std::fabs(x);
    case MathOp::kNeg: return -x;
    case MathOp::kSqrt: return std::sqrt(x);
    case MathOp::kRsqrt: return 1.0f / std::sqrt(x);
    case MathOp::kSquare: return x * x;
    case MathOp::kLog: return std::log(x);
    case MathOp::kSin: return std::sin(x);
    case MathOp::kCos: return std::cos(x);
    case MathOp::kFloor: return std::floor(x);
    case MathOp::kCeil: return std::ceil(x);
    case MathOp::kRound: return std::nearbyint(x);  // half to even, as LiteRT's ROUND (the default rounding mode)
  }
  return x;
}

struct MathState {};

template <MathOp kOp>
KilnStatus MathPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = MathName(kOp);
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetFloatInputOutput(context, node, op, 1, 1, &input, &output));
  return ResizeOutput(context, op, output, TensorDims(input));
}

template <MathOp kOp>
KilnStatus MathInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = MathName(kOp);
  const int64_t count = reference::NumElements(TensorDims(KilnOpaqueNodeGetInput(context, node, 0)));
  if (count == 0) return kKilnOk;
  const float* in;
  float* out;
  KILN_OPAQUE_ENSURE_STATUS(GetFloatInvokeData(context, node, op, count, count, &in, &out));
  for (int64_t i = 0; i < count; ++i) out[i] = ApplyMath<kOp>(in[i]);
  return kKilnOk;
}

template <MathOp kOp>
void AddMath(std::vector<BuiltinOp>* table, KilnBuiltinOperator code, int min_version, int max_version) {
  table->push_back({code, min_version, max_version,
                    MakeOperator<MathState>(code, max_version, &MathPrepare<kOp>, &MathInvoke<kOp>)});
}

}  // namespace

void AddElementwiseOps(std::vector<BuiltinOp>* table) {
  // Versions as LiteRT registers them; the higher versions add integer types, not float behaviour.
  AddBinary<BinaryOp::kAdd>(table, kKilnBuiltinAdd, 1, 5);
  AddBinary<BinaryOp::kSub>(table, kKilnBuiltinSub, 1, 5);
  AddBinary<BinaryOp::kMul>(table, kKilnBuiltinMul, 1, 7);
  AddBinary<BinaryOp::kDiv>(table, kKilnBuiltinDiv, 1, 2);
  AddBinary<BinaryOp::kAtan2>(table, kKilnBuiltinAtan2, 1, 1);
  AddUnary<UnaryOp::kLogistic>(table, kKilnBuiltinLogistic, 1, 3);
  AddUnary<UnaryOp::kTanh>(table, kKilnBuiltinTanh, 1, 3);
  AddUnary<UnaryOp::kRelu>(table, kKilnBuiltinRelu, 1, 3);
  AddUnary<UnaryOp::kRelu6>(table, kKilnBuiltinRelu6, 1, 3);
  AddUnary<UnaryOp::kReluN1To1>(table, kKilnBuiltinReluN1To1, 1, 1);
  AddUnary<UnaryOp::kRelu0To1>(table, kKilnBuiltinRelu0To1, 1, 1);
  AddBinary<BinaryOp::kMaximum>(table, kKilnBuiltinMaximum, 1, 4);
  AddBinary<BinaryOp::kMinimum>(table, kKilnBuiltinMinimum, 1, 4);
  AddBinary<BinaryOp::kSquaredDifference>(table, kKilnBuiltinSquaredDifference, 1, 2);
  AddBinary<BinaryOp::kPrelu>(table, kKilnBuiltinPrelu, 1, 1);
  AddUnary<UnaryOp::kHardSwish>(table, kKilnBuiltinHardSwish, 1, 1);
  AddUnary<UnaryOp::kElu>(table, kKilnBuiltinElu, 1, 2);
  AddUnary<UnaryOp::kExp>(table, kKilnBuiltinExp, 1, 2);
  table->push_back({kKilnBuiltinLeakyRelu, 1, 2,
                    MakeOperator<UnaryState>(kKilnBuiltinLeakyRelu, 2, &LeakyReluPrepare, &LeakyReluInvoke)});
  // LiteRT: GELU v1-2 (v2 adds int8 and uint8).
  table->push_back({kKilnBuiltinGelu, 1, 2, MakeOperator<UnaryState>(kKilnBuiltinGelu, 2, &GeluPrepare, &GeluInvoke)});
  // Float32 only; the versions LiteRT registers (the later ones add quantized types, refused at Prepare).
  AddMath<MathOp::kAbs>(table, kKilnBuiltinAbs, 1, 5);
  AddMath<MathOp::kNeg>(table, kKilnBuiltinNeg, 1, 2);
  AddMath<MathOp::kSqrt>(table, kKilnBuiltinSqrt, 1, 1);
  AddMath<MathOp::kRsqrt>(table, kKilnBuiltinRsqrt, 1, 3);
  AddMath<MathOp::kSquare>(table, kKilnBuiltinSquare, 1, 1);
  AddMath<MathOp::kLog>(table, kKilnBuiltinLog, 1, 2);
  AddMath<MathOp::kSin>(table, kKilnBuiltinSin, 1, 1);
  AddMath<MathOp::kCos>(table, kKilnBuiltinCos, 1, 1);
  AddMath<MathOp::kFloor>(table, kKilnBuiltinFloor, 1, 1);
  AddMath<MathOp::kCeil>(table, kKilnBuiltinCeil, 1, 1);
  AddMath<MathOp::kRound>(table, kKilnBuiltinRound, 1, 1);
}

}  // namespace kiln::ops
