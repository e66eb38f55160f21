// ADD, SUB, MUL, DIV, ATAN2, MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, PRELU (numpy broadcasting up to 6-D, fused
// activation where the op has one) and the unary activations LOGISTIC, TANH, RELU, RELU6, RELU_N1_TO_1,
// HARD_SWISH, ELU.
#include "kiln/builtin_op_data.h"
#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/quantized_kernels.h"
#include "ops/reference/elementwise.h"

namespace kiln::ops {
namespace {

using reference::BinaryOp;
using reference::UnaryOp;

// TFLite's broadcasting kernels go up to 6 dimensions.
constexpr int kMaxBroadcastRank = 6;

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
  bool is_int8 = false;  // ADD only: LiteRT's int8 scheme
  reference::AddInt8Params add_int8;
};

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
  state->is_int8 = kOp == BinaryOp::kAdd && KilnOpaqueTensorType(a) == kKilnInt8;
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
  if constexpr (kOp == BinaryOp::kAdd || kOp == BinaryOp::kSub) {
    if (auto* options = static_cast<const KilnAddParams*>(KilnOpaqueNodeGetBuiltinData(node))) {
      fused = options->activation;
    }
  } else if constexpr (kOp == BinaryOp::kMul || kOp == BinaryOp::kDiv) {
    if (auto* options = static_cast<const KilnMulParams*>(KilnOpaqueNodeGetBuiltinData(node))) {
      fused = options->activation;
    }
  }
  reference::Activation activation;
  KILN_OPAQUE_ENSURE_STATUS(ToActivation(context, op, fused, &activation));
  if (state->is_int8) {
    reference::AddInt8Params& q = state->add_int8;
    float a_scale, b_scale, output_scale;
    KILN_OPAQUE_ENSURE_STATUS(GetInt8Quantization(context, op, "input 0", a, &a_scale, &q.a_zero_point));
    KILN_OPAQUE_ENSURE_STATUS(GetInt8Quantization(context, op, "input 1", b, &b_scale, &q.b_zero_point));
    KILN_OPAQUE_ENSURE_STATUS(GetInt8Quantization(context, op, "output", output, &output_scale, &q.output_zero_point));
    if (!reference::QuantizedActivationRange(static_cast<int>(activation), output_scale, q.output_zero_point,
                                             &q.activation_min, &q.activation_max)) {
      KilnOpaqueContextReportError(context, "%s: the fused activation TANH/SIGMOID has no int8 kernel", op);
      return kKilnError;
    }
    reference::PrepareAddInt8(a_scale, b_scale, output_scale, &q);
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
    const int8_t *a_data, *b_data;
    int8_t* out_data;
    KILN_OPAQUE_ENSURE_STATUS(
        GetTypedData(context, op, "input 0", a, reference::NumElements(TensorDims(a)), &a_data));
    KILN_OPAQUE_ENSURE_STATUS(
        GetTypedData(context, op, "input 1", b, reference::NumElements(TensorDims(b)), &b_data));
    KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "output", output, count, &out_data));
    reference::AddInt8(state->params, state->add_int8, a_data, b_data, out_data);
    return kKilnOk;
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
    case UnaryOp::kHardSwish:
      return "HARD_SWISH";
    case UnaryOp::kElu:
      return "ELU";
  }
  return "?";
}

template <UnaryOp kOp>
KilnStatus UnaryPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = UnaryName(kOp);
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetFloatInputOutput(context, node, op, 1, 1, &input, &output));
  return ResizeOutput(context, op, output, TensorDims(input));
}

template <UnaryOp kOp>
KilnStatus UnaryInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = UnaryName(kOp);
  const int64_t count = reference::NumElements(TensorDims(KilnOpaqueNodeGetInput(context, node, 0)));
  if (count == 0) return kKilnOk;
  const float* input;
  float* output;
  KILN_OPAQUE_ENSURE_STATUS(GetFloatInvokeData(context, node, op, count, count, &input, &output));
  reference::UnaryFloat(kOp, count, input, output);
  return kKilnOk;
}

KilnStatus LeakyReluPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "LEAKY_RELU";
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetFloatInputOutput(context, node, op, 1, 1, &input, &output));
  return ResizeOutput(context, op, output, TensorDims(input));
}

KilnStatus LeakyReluInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "LEAKY_RELU";
  const int64_t count = reference::NumElements(TensorDims(KilnOpaqueNodeGetInput(context, node, 0)));
  if (count == 0) return kKilnOk;
  const float* input;
  float* output;
  KILN_OPAQUE_ENSURE_STATUS(GetFloatInvokeData(context, node, op, count, count, &input, &output));
  const auto* options = static_cast<const KilnLeakyReluParams*>(KilnOpaqueNodeGetBuiltinData(node));
  reference::LeakyReluFloat(options != nullptr ? options->alpha : 0.0f, count, input, output);
  return kKilnOk;
}

template <BinaryOp kOp>
void AddBinary(std::vector<BuiltinOp>* table, KilnBuiltinOperator code, int min_version, int max_version) {
  table->push_back({code, min_version, max_version,
                    MakeOperator<BinaryState>(code, max_version, &BinaryPrepare<kOp>, &BinaryInvoke<kOp>)});
}

template <UnaryOp kOp>
void AddUnary(std::vector<BuiltinOp>* table, KilnBuiltinOperator code, int min_version, int max_version) {
  table->push_back({code, min_version, max_version,
                    MakeOperator<NoState>(code, max_version, &UnaryPrepare<kOp>, &UnaryInvoke<kOp>)});
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
  AddBinary<BinaryOp::kMaximum>(table, kKilnBuiltinMaximum, 1, 4);
  AddBinary<BinaryOp::kMinimum>(table, kKilnBuiltinMinimum, 1, 4);
  AddBinary<BinaryOp::kSquaredDifference>(table, kKilnBuiltinSquaredDifference, 1, 2);
  AddBinary<BinaryOp::kPrelu>(table, kKilnBuiltinPrelu, 1, 1);
  AddUnary<UnaryOp::kHardSwish>(table, kKilnBuiltinHardSwish, 1, 1);
  AddUnary<UnaryOp::kElu>(table, kKilnBuiltinElu, 1, 1);
  table->push_back({kKilnBuiltinLeakyRelu, 1, 2,
                    MakeOperator<NoState>(kKilnBuiltinLeakyRelu, 2, &LeakyReluPrepare, &LeakyReluInvoke)});
}

}  // namespace kiln::ops
